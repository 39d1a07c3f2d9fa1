//go:build linux

package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shelldon/shelldon/internal/sandbox"
)

// smallFS mounts a tmpfs with opts (size=, nr_inodes=) on a fresh directory
// for the test's workspace. It needs root.
func smallFS(t *testing.T, opts string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system for the workspace needs root")
	}
	ws := t.TempDir()
	if err := unix.Mount("tmpfs", ws, "tmpfs", 0, "mode=0777,"+opts); err != nil {
		t.Skipf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(ws, unix.MNT_DETACH) })
	return ws
}

func statfs(t *testing.T, path string) unix.Statfs_t {
	t.Helper()
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		t.Fatal(err)
	}
	return fs
}

// fallocateScript tries every way to allocate disk space without writing
// it, and the glibc fallback that writes it, and prints what each did.
const fallocateScript = `
import ctypes, errno, fcntl, json, os, struct
out = {}
def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))
libc = ctypes.CDLL(None, use_errno=True)
fallocate = libc.fallocate64  # 64-bit offsets on 32-bit arm too
fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]
for mode, what in ((0, "fallocate"), (1, "fallocate KEEP_SIZE")):
    fd = os.open(what.replace(" ", "_"), os.O_CREAT | os.O_RDWR, 0o644)
    r = fallocate(fd, mode, 0, 32 << 20)
    out[what] = "ok" if r == 0 else errno.errorcode[ctypes.get_errno()]
    out[what + " blocks"] = os.fstat(fd).st_blocks * 512
for req, what in ((0x4030582a, "FS_IOC_RESVSP64"), (0x40305828, "FS_IOC_RESVSP"), (0x40305839, "FS_IOC_ZERO_RANGE")):
    fd = os.open(what, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.ioctl(fd, req, struct.pack("hhqqiI4i", 0, 0, 0, 32 << 20, 0, 0, 0, 0, 0, 0))
        out[what] = "ok"
    except OSError as e:
        out[what] = name(e)
    out[what + " blocks"] = os.fstat(fd).st_blocks * 512
fd = os.open("posix", os.O_CREAT | os.O_RDWR, 0o644)
try:
    os.posix_fallocate(fd, 0, 8 << 20)
    out["posix_fallocate"] = "ok"
except OSError as e:
    out["posix_fallocate"] = name(e)
st = os.fstat(fd)
out["posix_fallocate size"], out["posix_fallocate blocks"] = st.st_size, st.st_blocks * 512
fd = os.open("posix_big", os.O_CREAT | os.O_RDWR, 0o644)
try:
    os.posix_fallocate(fd, 0, 64 << 20)
    out["posix_fallocate past FSIZE"] = "ok"
except OSError as e:
    out["posix_fallocate past FSIZE"] = name(e)
out["posix_fallocate past FSIZE size"] = os.fstat(fd).st_size
print(json.dumps(out))
`

// TestFallocateRefused: a sandboxed process cannot reserve disk space
// without writing it, through fallocate or the preallocation ioctls
// (EOPNOTSUPP, where the host's own fallocate works on the same file
// system); glibc's posix_fallocate falls back to writing a byte per block,
// which still stops at RLIMIT_FSIZE.
func TestFallocateRefused(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	// The control: the workspace's file system has fallocate.
	f, err := os.Create(filepath.Join(b.workspace, "control"))
	if err != nil {
		t.Fatal(err)
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, 1<<20)
	f.Close()
	if err != nil {
		t.Skipf("the workspace's file system has no fallocate (%v): nothing to refuse", err)
	}
	if err := os.WriteFile(filepath.Join(b.workspace, "falloc.py"), []byte(fallocateScript), 0o644); err != nil {
		t.Fatal(err)
	}
	res := b.sh("python3 falloc.py", func(p *sandbox.Policy) { p.Limits.FileBytes = 16 << 20 })
	got := map[string]any{}
	if err := json.Unmarshal(res.Stdout, &got); err != nil {
		t.Fatalf("falloc.py printed %q: %v", out(res), err)
	}
	t.Logf("%v", got)
	for _, what := range []string{"fallocate", "fallocate KEEP_SIZE", "FS_IOC_RESVSP64", "FS_IOC_RESVSP", "FS_IOC_ZERO_RANGE"} {
		if got[what] != "EOPNOTSUPP" && got[what] != "ENOTSUP" {
			t.Errorf("%s: %v, want EOPNOTSUPP", what, got[what])
		}
		if got[what+" blocks"] != float64(0) {
			t.Errorf("%s allocated %v bytes", what, got[what+" blocks"])
		}
	}
	// The fallback wrote the blocks: the space was had by writing it.
	if got["posix_fallocate"] != "ok" || got["posix_fallocate size"] != float64(8<<20) || got["posix_fallocate blocks"].(float64) < 8<<20 {
		t.Errorf("posix_fallocate of 8 MiB: %v, size %v, %v bytes allocated; want the fallback to write them",
			got["posix_fallocate"], got["posix_fallocate size"], got["posix_fallocate blocks"])
	}
	if got["posix_fallocate past FSIZE"] != "EFBIG" || got["posix_fallocate past FSIZE size"] != float64(16<<20) {
		t.Errorf("posix_fallocate of 64 MiB under a 16 MiB RLIMIT_FSIZE: %v, size %v; want EFBIG at 16 MiB",
			got["posix_fallocate past FSIZE"], got["posix_fallocate past FSIZE size"])
	}
	if _, err := exec.LookPath("fallocate"); err == nil {
		res := b.sh(`fallocate -l 32M big; echo "status $?"; stat -c 'blocks %b' big`)
		if !strings.Contains(out(res), "Operation not supported") || !strings.Contains(out(res), "blocks 0") {
			t.Errorf("fallocate(1): %s", out(res))
		}
	}
}

// TestInodeFloor: with Policy.MinFreeDisk, a run that creates empty files
// until the workspace's file system would run out of inodes is killed at
// its inode floor (2% of them), with plenty of space left, and a run does
// not start below it. Not parallel: the kill takes effect when the helper,
// PID 1 of the sandbox, next gets a CPU, and a suite of parallel sandboxes
// on two cores can keep it waiting while the target goes on creating.
func TestInodeFloor(t *testing.T) {
	r := newRunner(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	t.Run("killed", func(t *testing.T) {
		const inodes = 50000
		ws := smallFS(t, fmt.Sprintf("size=%d,nr_inodes=%d", 256<<20, inodes))
		script := `import os
i = 0
while True:
    try:
        os.close(os.open("e%d" % i, os.O_CREAT | os.O_WRONLY, 0o644))
    except OSError as e:
        print("ran out after", i, e)
        break
    i += 1
`
		res, err := r.Run(context.Background(), sandbox.Policy{
			Argv: []string{"python3", "-c", script}, Workspace: ws, MinFreeDisk: 1 << 20, Timeout: 60 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		fs := statfs(t, ws)
		t.Logf("stopped with %d of %d inodes free (floor %d), %d MiB free, after %s: %s",
			fs.Ffree, fs.Files, sandbox.InodeFloor(fs.Files), fs.Bavail*uint64(fs.Bsize)>>20, res.Duration, res.DiskLowDetail)
		if !res.DiskLow || res.OK() || res.Signal != "killed" || res.TimedOut {
			t.Errorf("result %+v, want DiskLow, killed", res)
		}
		if !strings.Contains(res.DiskLowDetail, "free inodes") {
			t.Errorf("DiskLowDetail %q does not say inodes ran low", res.DiskLowDetail)
		}
		if strings.Contains(string(res.Stdout), "ran out") || fs.Ffree == 0 {
			t.Errorf("the file system ran out of inodes before the floor stopped the run: %s", out(res))
		}
	})
	t.Run("refused", func(t *testing.T) {
		const inodes = 1000
		ws := smallFS(t, fmt.Sprintf("size=%d,nr_inodes=%d", 64<<20, inodes))
		for i := range inodes - 1 - sandbox.InodeFloor(inodes) + 5 {
			if err := os.WriteFile(filepath.Join(ws, fmt.Sprint("e", i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p := sandbox.Policy{Argv: []string{"/bin/sh", "-c", "touch ran"}, Workspace: ws, MinFreeDisk: 1 << 20, Timeout: 10 * time.Second}
		_, err := r.Run(context.Background(), p)
		if !errors.Is(err, sandbox.ErrDiskLow) || !strings.Contains(err.Error(), "free inodes") {
			t.Errorf("Run with %d inodes free: %v, want ErrDiskLow saying inodes ran low", statfs(t, ws).Ffree, err)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Error("the command ran")
		}
		// Space is reported as space.
		p.MinFreeDisk = 1 << 30
		if _, err := r.Run(context.Background(), p); !errors.Is(err, sandbox.ErrDiskLow) || !strings.Contains(err.Error(), "free space") {
			t.Errorf("Run with less space than MinFreeDisk: %v, want ErrDiskLow saying space ran low", err)
		}
	})
}

// TestDiskLowAfterExit: a run that takes the workspace's file system below
// a floor and exits before the watch looks is still reported DiskLow, with
// its own exit status. The watch is slowed to an hour, so only the check at
// the end can see it; not parallel, since the watch's interval is global.
func TestDiskLowAfterExit(t *testing.T) {
	r := newRunner(t)
	defer sandbox.SetDiskPoll(time.Hour)()
	for _, c := range []struct {
		name, opts, script, low string
		minFree                 uint64
	}{
		{"space", fmt.Sprintf("size=%d", 96<<20), "head -c 41943040 /dev/zero > f && exit 0", "free space", 64 << 20},
		{"inodes", "size=16m,nr_inodes=1000", `i=0; while [ $i -lt 990 ]; do : > f$i || exit 3; i=$((i+1)); done; exit 0`, "free inodes", 1 << 20},
		{"above the floors", fmt.Sprintf("size=%d", 96<<20), "head -c 8388608 /dev/zero > f && exit 0", "", 64 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := smallFS(t, c.opts)
			res, err := r.Run(context.Background(), sandbox.Policy{
				Argv: []string{"/bin/sh", "-c", c.script}, Workspace: ws, MinFreeDisk: c.minFree, Timeout: 30 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 || res.Signal != "" || res.TimedOut {
				t.Fatalf("result %+v, want the target's own exit 0: %s", res, out(res))
			}
			if c.low == "" {
				if res.DiskLow || !res.OK() {
					t.Errorf("result %+v, want OK", res)
				}
				return
			}
			if !res.DiskLow || res.OK() || !strings.Contains(res.DiskLowDetail, c.low) {
				t.Errorf("result %+v, want DiskLow (%s)", res, c.low)
			}
			t.Logf("%s", res.DiskLowDetail)
		})
	}
}
