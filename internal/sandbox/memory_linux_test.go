//go:build linux

package sandbox_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/sandbox"
)

// sharedMemoryScript makes memory that RLIMIT_DATA does not count, every way
// the tester found, and the mappings that must keep working, and prints
// what each did. Whatever it gets it gives back at once.
const sharedMemoryScript = `
import ctypes, errno, json, mmap, os, re, tempfile
out = {}
def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))
def try_(what, f):
    try:
        f()
        out[what] = "ok"
    except OSError as e:
        out[what] = name(e)
def anon(size, flags):
    m = mmap.mmap(-1, size, flags=flags)
    m[0] = 1
    m.close()
try_("mmap shared anonymous 4 GiB", lambda: anon(4 << 30, mmap.MAP_SHARED))
try_("mmap shared anonymous 256 MiB", lambda: anon(256 << 20, mmap.MAP_SHARED))
try_("mmap private anonymous", lambda: anon(1 << 20, mmap.MAP_PRIVATE))
def shared_file(dir):
    with tempfile.TemporaryFile(dir=dir) as f:
        f.truncate(1 << 20)
        m = mmap.mmap(f.fileno(), 1 << 20, flags=mmap.MAP_SHARED)
        m[0] = 1
        m.close()
try_("mmap shared file in /tmp", lambda: shared_file("/tmp"))
try_("mmap shared file in /dev/shm", lambda: shared_file("/dev/shm"))
def memfd():
    fd = os.memfd_create("probe")
    os.ftruncate(fd, 1 << 20)
    m = mmap.mmap(fd, 1 << 20)
    m[0] = 1
    m.close()
    os.close(fd)
try_("memfd_create", memfd)
libc = ctypes.CDLL(None, use_errno=True)
IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0
def sysv(get, ctl, *args):
    def f():
        id = get(IPC_PRIVATE, *args)
        if id == -1:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        ctl(id, IPC_RMID, None)
    return f
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
try_("shmget 256 MiB", sysv(libc.shmget, libc.shmctl, 256 << 20, IPC_CREAT | 0o600))
try_("msgget", sysv(libc.msgget, libc.msgctl, IPC_CREAT | 0o600))
def devzero():
    with open("/dev/zero", "r+b") as f:
        m = mmap.mmap(f.fileno(), 1 << 20, flags=mmap.MAP_SHARED)
        m[0] = 1
        m.close()
try_("mmap shared /dev/zero", devzero)
out["json, re"] = json.loads(json.dumps(re.findall("a+", "caab")))[0]
print(json.dumps(out))
`

// TestSharedMemoryRefused: what escaped RLIMIT_DATA (a shared anonymous
// mapping, a memfd, SysV shared memory) fails in the sandbox, whatever the
// policy, where the host makes each of them; private mappings and shared
// mappings of files in /tmp and /dev/shm still work.
func TestSharedMemoryRefused(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no " + python)
	}
	if err := os.WriteFile(filepath.Join(b.workspace, "shm.py"), []byte(sharedMemoryScript), 0o644); err != nil {
		t.Fatal(err)
	}
	// The control: the host makes every one of them (none is touched past
	// its first page; 4 GiB may be more than a small host would give).
	data, err := exec.Command(python, filepath.Join(b.workspace, "shm.py")).Output()
	if err != nil {
		t.Fatalf("the control: %v", err)
	}
	control := map[string]string{}
	if err := json.Unmarshal(data, &control); err != nil {
		t.Fatalf("the control printed %q: %v", data, err)
	}
	for what, o := range control {
		if o != "ok" && what != "json, re" && what != "mmap shared anonymous 4 GiB" {
			t.Fatalf("the control: %s: %s; the probe proves nothing", what, o)
		}
	}
	want := map[string]string{
		"mmap shared anonymous 4 GiB":   "EPERM",
		"mmap shared anonymous 256 MiB": "EPERM",
		"memfd_create":                  "ENOSYS",
		"shmget 256 MiB":                "ENOSYS",
		"msgget":                        "ENOSYS",
		"mmap private anonymous":        "ok",
		"mmap shared file in /tmp":      "ok",
		"mmap shared file in /dev/shm":  "ok",
		"json, re":                      "aa",
	}
	landlock := false
	for _, l := range b.r.Probe(context.Background()).Layers {
		landlock = landlock || l.Name == sandbox.LayerLandlock && l.OK
	}
	for name, mod := range policyKinds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := b.with(t)
			res := b.sh("python3 shm.py", mod)
			got := map[string]string{}
			if err := json.Unmarshal(res.Stdout, &got); err != nil {
				t.Fatalf("shm.py printed %q: %v", out(res), err)
			}
			for what, w := range want {
				if got[what] != w {
					t.Errorf("%s: %s, want %s", what, got[what], w)
				}
			}
			// seccomp cannot tell /dev/zero from a file, and a writable
			// shared mapping of it is shared anonymous memory. Landlock
			// keeps /dev/zero read-only, and a read-only mapping of it
			// allocates nothing; a nested builder (the worker) goes without
			// Landlock, and so does a kernel without it.
			devzero := got["mmap shared /dev/zero"]
			if landlock && name != "nested" && devzero != "EACCES" {
				t.Errorf("mmap shared /dev/zero: %s, want EACCES (Landlock)", devzero)
			}
			t.Logf("mmap shared /dev/zero: %s", devzero)
		})
	}
}

// TestToolsUnderFilter: what a sandbox runs most (sh, git, python3 with
// json and re, a Go program) works under the filter, plain and nested.
func TestToolsUnderFilter(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	for _, bin := range []string{"/usr/bin/git", "/usr/bin/python3"} {
		if _, err := os.Stat(bin); err != nil {
			t.Skip("no " + bin)
		}
	}
	script := `set -e
git init -q repo && cd repo
echo hello > a.txt && git add a.txt
git -c user.name=n -c user.email=n@example.com commit -qm first
git gc -q
echo "git log: $(git log --oneline | wc -l)"
python3 -c 'import json, re; print("python:", json.dumps(re.findall("a+", "caab")))'
echo "go: $("$HOSTILE" fds | head -c 9)"`
	for name, mod := range policyKinds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := b.with(t)
			bin := hostile(t)
			res := b.sh(script, mod, func(p *sandbox.Policy) {
				p.Env = append(p.Env, "HOSTILE="+bin)
				p.ReadOnly = append(p.ReadOnly, filepath.Dir(bin))
				p.Workspace = t.TempDir()
				p.Dir = p.Workspace
			})
			for _, w := range []string{"git log: 1", `python: ["aa"]`, `go: {"Open":[`} {
				if !strings.Contains(out(res), w) {
					t.Errorf("%q missing: exit %d: %s", w, res.ExitCode, out(res))
				}
			}
		})
	}
}
