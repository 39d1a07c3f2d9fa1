//go:build !linux || !(amd64 || arm64 || arm)

package seccomp

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

func TestUnavailable(t *testing.T) {
	t.Parallel()
	where := runtime.GOOS + "/" + runtime.GOARCH
	for name, err := range map[string]error{"Supported": Supported(), "Install": Install(Options{})} {
		if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "seccomp is not available on "+where) {
			t.Errorf("%s() = %v, want seccomp is not available on %s", name, err, where)
		}
	}
	if got := Denied(Options{}); got != nil {
		t.Errorf("Denied() = %v, want nil", got)
	}
}
