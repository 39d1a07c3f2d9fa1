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
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shelldon/shelldon/internal/sandbox"
)

// hostileEnv names a prebuilt testdata/hostile binary (the unprivileged
// re-run cannot build one).
const hostileEnv = "SHELLDON_TEST_HOSTILE"

var (
	hostileOnce sync.Once
	hostileBin  string
	hostileErr  error
)

// hostile returns the path of testdata/hostile, built once (without the
// race detector, whose shadow memory does not fit the sandbox's limits) in
// a directory every user may enter.
func hostile(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(hostileEnv); p != "" {
		return p
	}
	hostileOnce.Do(func() {
		var dir string
		dir, hostileErr = os.MkdirTemp("", "sandbox-hostile")
		if hostileErr != nil {
			return
		}
		if hostileErr = os.Chmod(dir, 0o755); hostileErr != nil {
			return
		}
		hostileBin = filepath.Join(dir, "hostile")
		cmd := exec.Command("go", "build", "-o", hostileBin, "./testdata/hostile")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			hostileErr = fmt.Errorf("build testdata/hostile: %v\n%s", err, out)
		}
	})
	if hostileErr != nil {
		t.Fatal(hostileErr)
	}
	return hostileBin
}

func removeHostile() {
	if hostileBin != "" {
		os.RemoveAll(filepath.Dir(hostileBin))
	}
}

// with is b for the subtest t: its failures are t's.
func (b *box) with(t *testing.T) *box {
	c := *b
	c.t = t
	return &c
}

// attack runs the hostile binary in b's sandbox and decodes what it printed
// into v; it returns the result.
func (b *box) attack(v any, args []string, mod ...func(*sandbox.Policy)) sandbox.Result {
	b.t.Helper()
	bin := hostile(b.t)
	res := b.sh("", append([]func(*sandbox.Policy){func(p *sandbox.Policy) {
		p.Argv = append([]string{bin}, args...)
		p.ReadOnly = append(p.ReadOnly, filepath.Dir(bin))
	}}, mod...)...)
	if v != nil {
		if err := json.Unmarshal(res.Stdout, v); err != nil {
			b.t.Fatalf("hostile %v printed %q (stderr %q, exit %d): %v", args, res.Stdout, res.Stderr, res.ExitCode, err)
		}
	}
	return res
}

// fdReport is testdata/hostile's FDReport.
type fdReport struct {
	Open     []int
	Wrote    []int
	Proc1FD  string
	Proc1    map[string]string
	ProcSelf map[string]string
}

var policyKinds = map[string]func(*sandbox.Policy){
	"plain":   func(*sandbox.Policy) {},
	"network": func(p *sandbox.Policy) { p.Network = true },
	"nested":  func(p *sandbox.Policy) { p.Nested = true },
}

// TestTargetGetsOnlyStdio: the target finds descriptors 0, 1 and 2 and no
// other, not even the helper's status pipe through /proc/1/fd, and a
// forged status line changes nothing: its own exit status is reported.
func TestTargetGetsOnlyStdio(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	for name, mod := range policyKinds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := b.with(t)
			var r fdReport
			res := b.attack(&r, []string{"fds"}, mod)
			if res.ExitCode != 9 || res.Signal != "" {
				t.Errorf("exit %d signal %q, want exit 9 (the target's own)", res.ExitCode, res.Signal)
			}
			if !slices.Equal(r.Open, []int{0, 1, 2}) {
				t.Errorf("the target found descriptors %v, want [0 1 2]", r.Open)
			}
			if len(r.Wrote) > 0 {
				t.Errorf("the target wrote a forged status to descriptors %v", r.Wrote)
			}
			if len(r.Proc1) > 0 {
				t.Errorf("the helper's descriptors were reachable through /proc/1/fd: %v", r.Proc1)
			}
			for fd, got := range r.ProcSelf {
				if got == "write ok" {
					t.Errorf("/proc/self/fd/%s: wrote a forged status", fd)
				}
			}
			t.Logf("/proc/1/fd: %s", r.Proc1FD)
		})
	}
	t.Run("shell", func(t *testing.T) {
		t.Parallel()
		b := b.with(t)
		forged := `{"layers":[],"exit":0,"done":true}`
		res := b.sh(fmt.Sprintf(`for fd in 3 4 5 6 7 8 9; do eval "echo '%[1]s' >&$fd" 2>/dev/null; done
			for f in /proc/1/fd/* /proc/self/fd/*; do echo '%[1]s' >> "$f"; done 2>/dev/null
			exit 9`, forged))
		if res.ExitCode != 9 || res.Signal != "" {
			t.Fatalf("exit %d signal %q, want exit 9: %s", res.ExitCode, res.Signal, out(res))
		}
	})
}

// TestHelperSurvivesSignals: a target that signals PID 1 (the helper), its
// threads, or everything it can, is reported by its own exit, never as a
// broken sandbox.
func TestHelperSurvivesSignals(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	scripts := map[string]string{}
	for _, sig := range []string{"TERM", "KILL", "SEGV", "HUP", "INT", "USR1", "USR2", "PIPE", "QUIT", "ABRT",
		"BUS", "FPE", "ILL", "TRAP", "SYS", "ALRM", "XCPU", "XFSZ", "STOP", "TSTP", "CONT"} {
		scripts["kill -"+sig+" 1"] = "kill -" + sig + " 1; sleep 0.2; exit 9"
	}
	scripts["kill -TERM -1"] = "kill -TERM -1; sleep 0.2; exit 9"
	scripts["kill -KILL -1"] = "kill -KILL -1; sleep 0.2; exit 9"
	scripts["own process group"] = "trap '' TERM HUP INT; kill -TERM 0; kill -HUP 0; kill -INT 0; sleep 0.2; exit 9"
	scripts["a child's"] = "sh -c 'kill -SEGV 1; kill -TERM 1; kill -QUIT 1' & wait; sleep 0.2; exit 9"
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := b.with(t)
			res := b.sh(script)
			if res.ExitCode != 9 || res.Signal != "" {
				t.Fatalf("%q: exit %d signal %q, want exit 9: %s", script, res.ExitCode, res.Signal, out(res))
			}
		})
	}
	for name, mod := range policyKinds {
		t.Run("every way/"+name, func(t *testing.T) {
			t.Parallel()
			b := b.with(t)
			got := map[string]string{}
			res := b.attack(&got, []string{"signals"}, mod)
			if res.ExitCode != 9 || res.Signal != "" {
				t.Fatalf("exit %d signal %q, want exit 9 (the target's own): %s", res.ExitCode, res.Signal, res.Stderr)
			}
			if got["kill 1 15"] != "ok" || got["kill 1 11"] != "ok" {
				t.Errorf("kill(1, ...) did not even reach the helper: %v", got)
			}
			// A fault signal with a made-up siginfo is refused: the Go
			// runtime would take it for a crash of its own.
			for what, o := range got {
				fault := false
				for _, s := range []string{" 4", " 5", " 7", " 8", " 11", " 16", " 31"} {
					fault = fault || strings.HasSuffix(what, s) || strings.HasSuffix(what, s+" info")
				}
				queued := strings.HasPrefix(what, "sigqueue") || strings.HasPrefix(what, "tgsigqueue") ||
					strings.HasPrefix(what, "F_SETSIG") || strings.HasPrefix(what, "pidfd_send_signal")
				if fault && queued && o != "EPERM" {
					t.Errorf("%s: %s, want EPERM", what, o)
				}
			}
			if got["F_SETSIG 15"] != "ok" || got["sigqueue 1 10"] != "ok" {
				t.Errorf("ordinary signals were refused: F_SETSIG 15 %s, sigqueue SIGUSR1 %s", got["F_SETSIG 15"], got["sigqueue 1 10"])
			}
			t.Logf("helper threads: %s", got["helper threads"])
		})
	}
}

// TestHelperHidden: the target can neither read nor trace PID 1, the
// helper, whatever its policy: the sandbox's /proc has no entry for it
// (hidepid=2), and a proc the target mounts itself (a nested sandbox's
// builder keeps the capabilities to) shows it but opens nothing secret,
// since the helper is not dumpable and that target has no CAP_SYS_PTRACE.
func TestHelperHidden(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	controls := func(t *testing.T, got map[string]string) {
		t.Helper()
		for _, c := range []string{"read self/environ", "read self/status"} {
			if !strings.HasSuffix(got[c], "bytes") {
				t.Fatalf("the control %s: %q: %v", c, got[c], got)
			}
		}
		if _, ok := got["read mem"]; !ok {
			t.Fatalf("mem was not tried: %v", got)
		}
	}
	for name, mod := range policyKinds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := b.with(t)
			got := map[string]string{}
			b.attack(&got, []string{"proc1"}, mod)
			controls(t, got)
			if got["stat"] != "ENOENT" || slices.Contains(strings.Fields(got["self/pids"]), "1") {
				t.Errorf("/proc/1 exists for the target: stat %s, pids %q", got["stat"], got["self/pids"])
			}
			for what, o := range got {
				if strings.HasPrefix(what, "self/") || strings.HasPrefix(what, "read self/") || what == "stat" {
					continue
				}
				if o != "ENOENT" {
					t.Errorf("%s: %s, want ENOENT", what, o)
				}
			}
		})
	}
	t.Run("own proc", func(t *testing.T) {
		t.Parallel()
		b := b.with(t)
		got := map[string]string{}
		b.attack(&got, []string{"proc1", "/tmp/proc"}, policyKinds["nested"])
		if got["mount"] != "ok" {
			t.Fatalf("a nested sandbox's builder could not mount a proc: %v", got)
		}
		controls(t, got)
		if !strings.HasSuffix(got["read status"], "bytes") {
			t.Fatalf("PID 1 is not in the target's own proc: %v", got)
		}
		for what, o := range got {
			if what == "mount" || what == "stat" || strings.HasPrefix(what, "self/") || strings.HasPrefix(what, "read self/") {
				continue
			}
			public := strings.HasSuffix(what, "/status") || strings.HasSuffix(what, "/cmdline") ||
				what == "read status" || what == "read cmdline" || what == "list " || what == "list task"
			switch {
			case public:
			case what == "list fd" || what == "list fdinfo" || what == "list ns":
				// The names may show (the directory is the target's
				// uid's); what is behind them may not.
				if !strings.HasPrefix(o, "listed") && o != "EACCES" && o != "EPERM" {
					t.Errorf("%s: %s", what, o)
				}
			case o != "EACCES" && o != "EPERM":
				t.Errorf("%s: %s, want EACCES or EPERM: the helper is readable", what, o)
			}
		}
	})
	t.Run("shell", func(t *testing.T) {
		t.Parallel()
		b := b.with(t)
		res := b.sh(`for f in mem environ maps cmdline task/1/mem task/1/environ fdinfo/4; do cat /proc/1/$f >/dev/null 2>&1 && echo "LEAK $f"; done
			ls /proc/1/root/ >/dev/null 2>&1 && echo "LEAK root"
			ls /proc/1/cwd/ >/dev/null 2>&1 && echo "LEAK cwd"
			ls /proc/1/fd/ >/dev/null 2>&1 && echo "LEAK fd"
			readlink /proc/1/fd/4 && echo "LEAK fd/4"
			cat /proc/self/status >/dev/null && echo control-ok`)
		if strings.Contains(out(res), "LEAK") || !strings.Contains(out(res), "control-ok") {
			t.Fatalf("%s", out(res))
		}
	})
}

// hostSockets runs testdata/hostile's socket sweep outside any sandbox:
// the control.
func hostSockets(t *testing.T) map[string]string {
	t.Helper()
	data, err := exec.Command(hostile(t), "sockets").Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSocketFamilies: without the network a target makes AF_UNIX sockets
// only; with it also AF_INET, AF_INET6 and NETLINK_ROUTE ones. Every other
// family (AF_VSOCK, AF_PACKET, AF_ALG, AF_XDP, the other netlink protocols,
// ...) fails with EAFNOSUPPORT, even where the kernel has it.
func TestSocketFamilies(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	control := hostSockets(t)
	if control["family 2"] != "ok" || control["netlink 0"] != "ok" {
		t.Fatalf("the control makes no AF_INET or NETLINK_ROUTE socket: %v", control)
	}
	proven := 0
	for k, v := range control {
		if v != "EAFNOSUPPORT" && k != "family 1" && k != "socketpair unix" {
			proven++
		}
	}
	t.Logf("the host makes or refuses otherwise %d families and protocols the sandbox must deny", proven)
	for _, network := range []bool{false, true} {
		t.Run(fmt.Sprintf("network=%v", network), func(t *testing.T) {
			t.Parallel()
			b := b.with(t)
			got := map[string]string{}
			b.attack(&got, []string{"sockets"}, func(p *sandbox.Policy) { p.Network = network })
			allowed := map[string]bool{"family 1": true, "socketpair unix": true}
			if network {
				// "family 16" is AF_NETLINK with protocol 0, NETLINK_ROUTE.
				for _, k := range []string{"family 2", "family 10", "family 16", "netlink 0", "socketpair inet"} {
					allowed[k] = true
				}
			}
			for k, v := range got {
				switch {
				case allowed[k]:
					if v != control[k] {
						t.Errorf("%s: %s, the host %s", k, v, control[k])
					}
				case v != "EAFNOSUPPORT":
					t.Errorf("%s: %s, want EAFNOSUPPORT (the host: %s)", k, v, control[k])
				}
			}
			if got["family 1"] != "ok" || got["socketpair unix"] != "ok" {
				t.Errorf("AF_UNIX: %s, socketpair: %s", got["family 1"], got["socketpair unix"])
			}
			if network && (got["family 2"] != "ok" || got["netlink 0"] != "ok") {
				t.Errorf("with the network: AF_INET %s, NETLINK_ROUTE %s", got["family 2"], got["netlink 0"])
			}
		})
	}
	t.Run("python", func(t *testing.T) {
		t.Parallel()
		b := b.with(t)
		if _, err := os.Stat("/usr/bin/python3"); err != nil {
			t.Skip("no /usr/bin/python3")
		}
		for script, want := range map[string]string{
			`import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); print("made")`:  "Address family not supported",
			`import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW); print("made")`:    "Address family not supported",
			`import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM); print("made")`:   "Address family not supported",
			`import socket; a, b = socket.socketpair(); a.send(b"x"); print("unix", b.recv(1))`: "unix b'x'",
		} {
			res := b.sh("python3 -c '" + script + "'")
			if !strings.Contains(out(res), want) || strings.Contains(out(res), "made") {
				t.Errorf("%s: %s, want %q", script, out(res), want)
			}
		}
	})
}

// TestTmpBounded: the private /tmp and /dev/shm are memory, bounded in
// bytes and in inodes, whatever the target writes.
func TestTmpBounded(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	for dir, limit := range map[string]int{"/tmp": sandbox.DefaultTmpSize, "/dev/shm": 16 << 20} {
		t.Run("bytes "+dir, func(t *testing.T) {
			t.Parallel()
			b := b.with(t)
			// Each file stays under RLIMIT_FSIZE; together they would
			// take 128 MiB.
			res := b.sh(fmt.Sprintf(`for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
				head -c 8388608 /dev/zero > %[1]s/f$i || break; done; cat %[1]s/f* | wc -c`, dir))
			if !strings.Contains(string(res.Stderr), "No space left on device") {
				t.Errorf("no ENOSPC: %s", out(res))
			}
			n, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
			if err != nil {
				t.Fatalf("wc printed %q: %s", res.Stdout, res.Stderr)
			}
			if n > limit || n < limit/2 {
				t.Errorf("%s holds %d bytes; its limit is %d", dir, n, limit)
			}
		})
		t.Run("inodes "+dir, func(t *testing.T) {
			t.Parallel()
			b := b.with(t)
			got := map[string]string{}
			b.attack(&got, []string{"inodes", dir})
			n, _ := strconv.Atoi(got["created"])
			if got["error"] != "ENOSPC" || n > limit/4096 {
				t.Errorf("made %d empty files in %s, then %s; want ENOSPC by %d", n, dir, got["error"], limit/4096)
			}
		})
	}
}

// TestDiskLowPrecheck: below Policy.MinFreeDisk nothing runs, through Run
// and Start alike.
func TestDiskLowPrecheck(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	var fs unix.Statfs_t
	if err := unix.Statfs(b.workspace, &fs); err != nil {
		t.Fatal(err)
	}
	p := sandbox.Policy{
		Argv:        []string{"/bin/sh", "-c", "touch ran"},
		Workspace:   b.workspace,
		MinFreeDisk: fs.Bavail*uint64(fs.Bsize) + 1<<40,
		Timeout:     10 * time.Second,
	}
	if _, err := b.r.Run(context.Background(), p); !errors.Is(err, sandbox.ErrDiskLow) {
		t.Errorf("Run: %v, want ErrDiskLow", err)
	}
	if pr, err := b.r.Start(context.Background(), p, nil, nil, nil); !errors.Is(err, sandbox.ErrDiskLow) || pr != nil {
		t.Errorf("Start: %v, want ErrDiskLow", err)
	}
	if _, err := os.Stat(filepath.Join(b.workspace, "ran")); err == nil {
		t.Error("the command ran")
	}
	// With room to spare the same policy runs.
	p.MinFreeDisk = 1 << 20
	if res, err := b.r.Run(context.Background(), p); err != nil || !res.OK() || res.DiskLow {
		t.Errorf("with room: %+v, %v", res, err)
	}
}

// TestDiskLowKills: a run that brings the workspace's free space below
// Policy.MinFreeDisk is killed and says so, through Run and Start alike.
// The workspace is a 96 MiB tmpfs, so it needs root.
func TestDiskLowKills(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system for the workspace needs root")
	}
	r := newRunner(t)
	const size, minFree, total = 96 << 20, 64 << 20, 80
	// 80 files of 1 MiB, a little apart: the free space crosses 64 MiB
	// after 32 of them, and a run that is not stopped prints "finished".
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do head -c 1048576 /dev/zero > f$i || exit 3; i=$((i+1)); sleep 0.01; done; echo finished`, total)
	for _, how := range []string{"Run", "Start"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			if err := unix.Mount("tmpfs", ws, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0777", size)); err != nil {
				t.Skipf("mount a tmpfs: %v", err)
			}
			t.Cleanup(func() { unix.Unmount(ws, unix.MNT_DETACH) })
			p := sandbox.Policy{Argv: []string{"/bin/sh", "-c", script}, Workspace: ws, MinFreeDisk: minFree, Timeout: 30 * time.Second}
			var res sandbox.Result
			var err error
			if how == "Run" {
				res, err = r.Run(context.Background(), p)
			} else {
				var stdout strings.Builder
				var pr *sandbox.Process
				if pr, err = r.Start(context.Background(), p, nil, &stdout, nil); err == nil {
					res, err = pr.Wait()
					res.Stdout = []byte(stdout.String())
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.DiskLow || res.OK() || res.ExitCode != -1 || res.Signal != "killed" || res.TimedOut {
				t.Errorf("result %+v, want DiskLow, exit -1, killed", res)
			}
			if strings.Contains(string(res.Stdout), "finished") {
				t.Error("the writer finished: nothing stopped it")
			}
			var fs unix.Statfs_t
			if err := unix.Statfs(ws, &fs); err != nil {
				t.Fatal(err)
			}
			used := int64(size) - int64(fs.Bavail*uint64(fs.Bsize))
			t.Logf("stopped with %d MiB written, %d MiB past the minimum", used>>20, (used-(size-minFree))>>20)
			if used >= total<<20 {
				t.Errorf("%d MiB written, the whole run", used>>20)
			}
		})
	}
}

// TestNestedInProcessMode: a helper whose in-process mode builds nested
// sandboxes (as shelldon's worker does) still can, non-dumpable as it is,
// and each nested sandbox holds against its own target.
func TestNestedInProcessMode(t *testing.T) {
	t.Parallel()
	newRunner(t) // skips where the kernel lacks a layer
	bin := hostile(t)
	r, err := sandbox.NewRunner(bin)
	if err != nil {
		t.Fatal(err)
	}
	tier := r.Probe(context.Background())
	if !tier.Full() {
		t.Fatalf("the hostile helper's tier: %s", tier)
	}
	res, err := r.Run(context.Background(), sandbox.Policy{
		Mode:     "nest",
		Nested:   true,
		ReadOnly: []string{filepath.Dir(bin)},
		Env:      sandbox.Env("NEST_LAYERS=" + strings.Join(tier.InPlace(), ",")),
		Timeout:  60 * time.Second,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("nest: %+v, %v", res, err)
	}
	var runs []struct {
		Name                        string
		Exit                        int
		Signal, Stdout, Stderr, Err string
		Dumpable                    int
	}
	if err := json.Unmarshal(res.Stdout, &runs); err != nil {
		t.Fatalf("nest printed %q (%s): %v", res.Stdout, res.Stderr, err)
	}
	want := map[string]int{"fds": 9, "signals": 7, "proc1": 5}
	for _, run := range runs {
		if run.Err != "" || run.Exit != want[run.Name] || run.Signal != "" {
			t.Errorf("nested %s: exit %d signal %q err %q, want exit %d; %s %s", run.Name, run.Exit, run.Signal, run.Err, want[run.Name], run.Stdout, run.Stderr)
		}
		if run.Dumpable != 0 {
			t.Errorf("after nested %s the helper is dumpable again", run.Name)
		}
		delete(want, run.Name)
	}
	if len(want) > 0 {
		t.Errorf("nested runs missing: %v", want)
	}
	for _, run := range runs {
		switch run.Name {
		case "fds":
			var r fdReport
			if err := json.Unmarshal([]byte(run.Stdout), &r); err != nil || !slices.Equal(r.Open, []int{0, 1, 2}) || len(r.Wrote) > 0 {
				t.Errorf("nested fds: %+v %v", r, err)
			}
		case "proc1":
			if !strings.Contains(run.Stdout, "denied") {
				t.Errorf("nested /proc/1/environ: %q", run.Stdout)
			}
		}
	}
}
