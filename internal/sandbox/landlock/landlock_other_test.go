//go:build !linux

package landlock

import (
	"errors"
	"testing"
)

func TestNotLinux(t *testing.T) {
	t.Parallel()
	if abi, err := ABI(); abi != 0 || !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("ABI() = %d, %v; want 0 and an unsupported error", abi, err)
	}
	if _, err := RestrictThread(Rules{}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("RestrictThread: %v; want an unsupported error", err)
	}
}
