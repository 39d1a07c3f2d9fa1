//go:build linux

package sandbox

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// inheritable returns a descriptor without FD_CLOEXEC, as a process
// inherits them.
func inheritable(t *testing.T) int {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	unix.Close(p[1])
	fd, err := unix.FcntlInt(uintptr(p[0]), unix.F_DUPFD, 900) // dup: no FD_CLOEXEC
	unix.Close(p[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if flags, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC != 0 {
		t.Fatal("the test descriptor is already close-on-exec")
	}
	return fd
}

// TestCloexec: both ways of closing the helper's descriptors on exec,
// close_range and the fallback for kernels before 5.11, mark every one.
func TestCloexec(t *testing.T) {
	for name, f := range map[string]func(int) (string, error){"cloexecFrom": cloexecFrom, "cloexecEach": cloexecEach} {
		t.Run(name, func(t *testing.T) {
			fd := inheritable(t)
			how, err := f(fd)
			if err != nil {
				t.Fatal(err)
			}
			if flags, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC == 0 {
				t.Errorf("%s (%s) left fd %d open across exec", name, how, fd)
			}
			if name == "cloexecEach" && strings.HasPrefix(how, "close_range") {
				t.Errorf("the fallback used close_range: %s", how)
			}
			t.Log(how)
		})
	}
}

// TestTmpfsOptions: each private tmpfs is bounded in inodes as in bytes.
func TestTmpfsOptions(t *testing.T) {
	t.Parallel()
	for size, want := range map[int64]string{
		DefaultTmpSize: "mode=1777,size=67108864,nr_inodes=16384",
		shmSize:        "mode=1777,size=16777216,nr_inodes=4096",
		1 << 20:        "mode=1777,size=1048576,nr_inodes=256",
	} {
		if got := tmpfsOptions(size); got != want {
			t.Errorf("tmpfsOptions(%d) = %q, want %q", size, got, want)
		}
	}
}
