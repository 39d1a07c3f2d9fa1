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
	if unix.MAP_SHARED != mapShared || unix.MAP_ANONYMOUS != mapAnonymous ||
		unix.MAP_SHARED_VALIDATE&mapShared == 0 || unix.MAP_PRIVATE&mapShared != 0 || unix.MAP_DROPPABLE&mapShared != 0 {
		t.Errorf("MAP_SHARED %#x, MAP_SHARED_VALIDATE %#x, MAP_PRIVATE %#x, MAP_DROPPABLE %#x, MAP_ANONYMOUS %#x on %s; "+
			"the filter takes bit %#x for shared and %#x for anonymous",
			unix.MAP_SHARED, unix.MAP_SHARED_VALIDATE, unix.MAP_PRIVATE, unix.MAP_DROPPABLE, unix.MAP_ANONYMOUS, runtime.GOARCH, mapShared, mapAnonymous)
	}
	// The preallocation ioctls are _IOW('X', nr, struct space_resv), 48
	// bytes: the _IOW encoding of the running arch must give the filter's
	// numbers.
	iow := func(nr uint32) uint32 { return 1<<30 | 48<<16 | 'X'<<8 | nr }
	for i, nr := range []uint32{40, 42, 57, 10, 36} {
		if iow(nr) != preallocIoctls[i] {
			t.Errorf("_IOW('X', %d, 48 bytes) is %#x; the filter has %#x", nr, iow(nr), preallocIoctls[i])
		}
	}
	if unix.FS_IOC_GETFLAGS>>30 != 2 || unix.FICLONE>>30 != 1 {
		t.Errorf("the ioctl direction bits of %s are not the generic ones", runtime.GOARCH)
	}
}

// notInUnix are syscalls in the table that x/sys/unix does not name.
var notInUnix = map[string]bool{
	"umount":     true, // arm OABI only
	"socketcall": true, // arm OABI only
	"ipc":        true, // arm OABI only
}
