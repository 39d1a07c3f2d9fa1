//go:build linux && (amd64 || arm64 || arm)

package seccomp

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNumbersMatchUnix checks the running arch's column of the syscall table
// against golang.org/x/sys/unix; sysnum_<arch>_test.go hold that arch's
// names. Cross-compiled `go vet` keeps the other arches' files honest, and
// the tests check them when run there.
func TestNumbersMatchUnix(t *testing.T) {
	t.Parallel()
	fromUnix := unixNumbers()
	for _, r := range rules() {
		got, ok := r.nr.on(runtime.GOARCH)
		want, known := fromUnix[r.name]
		switch {
		case !ok && known:
			t.Errorf("%s: absent from the table, unix has %d", r.name, want)
		case ok && !known && !notInUnix[r.name]:
			t.Errorf("%s: the table has %d, unix has no such syscall on %s", r.name, got, runtime.GOARCH)
		case ok && known && int(got) != want:
			t.Errorf("%s: the table has %d, unix has %d", r.name, got, want)
		}
	}
	if unix.TIOCSTI != tiocsti || unix.TIOCLINUX != tioclinux {
		t.Errorf("TIOCSTI, TIOCLINUX are %#x, %#x on %s; the filter uses %#x, %#x",
			unix.TIOCSTI, unix.TIOCLINUX, runtime.GOARCH, tiocsti, tioclinux)
	}
}

// notInUnix are syscalls in the table that x/sys/unix does not name.
var notInUnix = map[string]bool{
	"umount":     true, // arm OABI only
	"socketcall": true, // arm OABI only
}
