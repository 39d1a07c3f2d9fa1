//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/testbin"
)

// unprivEnv marks the re-run of the suite as an unprivileged user.
const unprivEnv = "SHELLDON_SANDBOX_TEST_UNPRIVILEGED"

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	removeHostile()
	removeProber()
	os.Exit(code)
}

var (
	runnerOnce sync.Once
	runner     *sandbox.Runner
)

// newRunner uses a real shelldon binary as the helper.
func newRunner(t *testing.T) *sandbox.Runner {
	t.Helper()
	helper := os.Getenv("SHELLDON_TEST_HELPER")
	if helper == "" {
		helper = testbin.Shelldon(t)
	}
	runnerOnce.Do(func() {
		var err error
		runner, err = sandbox.NewRunner(helper)
		if err != nil {
			t.Fatal(err)
		}
	})
	tier := runner.Probe(context.Background())
	if !tier.Full() {
		// The required layers are what this suite proves; say which one the
		// kernel lacks rather than pass vacuously.
		t.Skipf("this kernel lacks a required sandbox layer: %s", tier)
	}
	return runner
}

// box is one test's world: a workspace, and host directories standing in
// for the owner's home and shelldon's home, full of secrets.
type box struct {
	t         *testing.T
	r         *sandbox.Runner
	workspace string
	ownerHome string
	shHome    string
}

const secret = "sk-ant-SECRET-0123456789"

func newBox(t *testing.T) *box {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	b := &box{t: t, r: newRunner(t),
		workspace: filepath.Join(dir, "workspace"),
		ownerHome: filepath.Join(dir, "owner"),
		shHome:    filepath.Join(dir, "owner", ".shelldon"),
	}
	for _, d := range []string{b.workspace, b.shHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(b.ownerHome, ".bashrc"):   "# the owner's shell\n",
		filepath.Join(b.ownerHome, "diary.txt"): secret,
		filepath.Join(b.shHome, ".env"):         "ANTHROPIC_API_KEY=" + secret,
		filepath.Join(b.shHome, "config.yaml"):  "provider: {kind: anthropic}\n",
		filepath.Join(b.workspace, "hello.txt"): "hello from the workspace\n",
	}
	for name, content := range files {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func (b *box) sh(script string, mod ...func(*sandbox.Policy)) sandbox.Result {
	b.t.Helper()
	p := sandbox.Policy{
		Argv:      []string{"/bin/sh", "-c", script},
		Workspace: b.workspace,
		Env:       sandbox.Env("OWNER="+b.ownerHome, "SHHOME="+b.shHome, "WS="+b.workspace),
		Timeout:   20 * time.Second,
	}
	for _, m := range mod {
		m(&p)
	}
	res, err := b.r.Run(context.Background(), p)
	if err != nil {
		b.t.Fatalf("Run(%q): %v", script, err)
	}
	return res
}

func out(r sandbox.Result) string { return string(r.Stdout) + string(r.Stderr) }

func TestRunBasics(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	cases := []struct {
		name   string
		script string
		mod    func(*sandbox.Policy)
		exit   int
		signal string
		want   string
	}{
		{name: "exit status", script: "echo hi; exit 3", exit: 3, want: "hi"},
		{name: "signal", script: "kill -SEGV $$", exit: -1, signal: "SIGSEGV"},
		{name: "workspace readable", script: "cat hello.txt", want: "hello from the workspace"},
		{name: "workspace writable", script: "echo made > new.txt && cat new.txt", want: "made"},
		{name: "private tmp writable", script: "echo t > /tmp/x && cat /tmp/x", want: "t"},
		{name: "stdin is /dev/null", script: "cat; echo end", want: "end"},
		{name: "stdin given", script: "cat", mod: func(p *sandbox.Policy) { p.Stdin = []byte("piped in") }, want: "piped in"},
		{name: "uid 0 without capabilities", script: "id -u; grep CapEff /proc/self/status", want: "CapEff:\t0000000000000000"},
		{name: "no_new_privs", script: "grep NoNewPrivs /proc/self/status", want: "NoNewPrivs:\t1"},
		{name: "seccomp filter on", script: "grep '^Seccomp:' /proc/self/status", want: "Seccomp:\t2"},
		{name: "own hostname", script: "hostname 2>/dev/null || cat /proc/sys/kernel/hostname", want: "sandbox"},
		{name: "command not found", script: "exec no-such-command", exit: 127},
		{name: "python runs", script: "python3 -c 'print(6*7)'", want: "42"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mods []func(*sandbox.Policy)
			if tc.mod != nil {
				mods = append(mods, tc.mod)
			}
			res := b.sh(tc.script, mods...)
			if res.ExitCode != tc.exit || res.Signal != tc.signal || !strings.Contains(out(res), tc.want) {
				t.Fatalf("exit %d signal %q output %q; want exit %d signal %q containing %q",
					res.ExitCode, res.Signal, out(res), tc.exit, tc.signal, tc.want)
			}
		})
	}
}

func TestEnvironmentIsOnlyThePolicys(t *testing.T) {
	b := newBox(t)
	t.Setenv("ANTHROPIC_API_KEY", secret) // the daemon's environment
	res := b.sh("env")
	if strings.Contains(out(res), secret) || strings.Contains(out(res), "ANTHROPIC") {
		t.Fatalf("the daemon's environment leaked: %s", out(res))
	}
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		name, _, _ := strings.Cut(line, "=")
		switch name {
		case "PATH", "HOME", "LANG", "TERM", "TMPDIR", "OWNER", "SHHOME", "WS", "PWD", "SHLVL", "_":
		default:
			t.Errorf("unexpected variable %q", line)
		}
	}
}

// TestNetworkContained: no TCP to loopback or outside, no DNS.
func TestNetworkContained(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	cases := map[string]string{
		"bash /dev/tcp loopback": fmt.Sprintf("exec bash -c 'echo x > /dev/tcp/127.0.0.1/%d'", port),
		"python loopback":        fmt.Sprintf("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", %d), 2)'", port),
		"ipv6 loopback":          fmt.Sprintf("python3 -c 'import socket; socket.create_connection((\"::1\", %d), 2)'", port),
		// A documentation address (RFC 5737): nothing can leave an empty
		// network namespace, and nothing is sent from this machine.
		"outside":     "exec bash -c 'echo x > /dev/tcp/192.0.2.1/80'",
		"dns":         "getent hosts example.com",
		"python dns":  "python3 -c 'import socket; socket.getaddrinfo(\"example.com\", 80)'",
		"udp":         "python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\"x\", (\"192.0.2.1\", 53))'",
		"bring lo up": "ip link set lo up",
	}
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if res := b.sh(script); res.OK() {
				t.Fatalf("%q succeeded: %s", script, out(res))
			}
		})
	}
	select {
	case <-accepted:
		t.Fatal("a sandboxed command connected to the host's loopback")
	case <-time.After(100 * time.Millisecond):
	}
	// Control: with the network allowed, the same command does connect, so
	// the refusals above are the sandbox's and not a broken script.
	res := b.sh(cases["bash /dev/tcp loopback"], func(p *sandbox.Policy) { p.Network = true })
	if !res.OK() {
		t.Fatalf("with the network allowed the connect failed: %s", out(res))
	}
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("with the network allowed nothing connected")
	}
}

// TestFilesContained: nothing outside the workspace and /tmp is writable,
// and the owner's home, shelldon's home and the daemon's /proc are unseen.
func TestFilesContained(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	cases := map[string]string{
		"read owner's home":        `cat "$OWNER/diary.txt"`,
		"list owner's home":        `ls "$OWNER"`,
		"read shelldon's .env":     `cat "$SHHOME/.env"`,
		"read shelldon's config":   `cat "$SHHOME/config.yaml"`,
		"read /root":               `ls /root`,
		"read /etc/shadow":         `cat /etc/shadow`,
		"read host /home":          `ls /home`,
		"daemon's environ":         fmt.Sprintf(`cat /proc/%d/environ`, os.Getpid()),
		"daemon's memory":          fmt.Sprintf(`cat /proc/%d/maps`, os.Getpid()),
		"write /etc":               `echo x > /etc/evil`,
		"write /usr":               `echo x > /usr/bin/evil`,
		"write /":                  `echo x > /evil`,
		"write owner's .bashrc":    `echo evil >> "$OWNER/.bashrc"`,
		"write /root/.bashrc":      `echo evil >> /root/.bashrc`,
		"write /root/.profile":     `mkdir -p /root && echo evil >> /root/.profile`,
		"symlink out of workspace": `ln -s "$OWNER/diary.txt" leak && cat leak`,
		"hard link out":            `ln "$OWNER/diary.txt" leak2 && cat leak2`,
		"remount rw":               `mount -o remount,rw /`,
		"mount proc":               `mkdir -p /tmp/p && mount -t proc proc /tmp/p`,
		"new user namespace":       `unshare -U -r true`,
		"chroot":                   `chroot / true`,
		"mknod":                    `mknod /tmp/sda b 8 0`,
	}
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := b.sh(script)
			if res.OK() || strings.Contains(out(res), secret) {
				t.Fatalf("%q was allowed: exit %d, %s", script, res.ExitCode, out(res))
			}
			if res.ExitCode == 127 {
				t.Fatalf("%q failed only because a command is missing: %s", script, out(res))
			}
		})
	}
	if data, _ := os.ReadFile(filepath.Join(b.ownerHome, ".bashrc")); string(data) != "# the owner's shell\n" {
		t.Errorf("the owner's .bashrc changed: %q", data)
	}
	if _, err := os.Stat("/evil"); err == nil {
		t.Error("/evil was created on the host")
	}
	// Only the sandbox's own processes are visible.
	res := b.sh(`ls /proc | grep -c '^[0-9]'`)
	if n, _ := strconv.Atoi(strings.TrimSpace(string(res.Stdout))); n == 0 || n > 5 {
		t.Errorf("the sandbox sees %d processes: %s", n, out(res))
	}
}

// processesWith lists host processes whose command line contains marker.
func processesWith(marker string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(data), marker) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(data), "\x00", " "))
		}
	}
	return found
}

// TestNothingSurvives: whatever a command leaves behind dies with it.
func TestNothingSurvives(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	cases := map[string]string{
		"setsid":      "setsid sleep %s & echo started",
		"nohup":       "nohup sleep %s >/dev/null 2>&1 & echo started",
		"double fork": "(sh -c 'sleep %s &' &) ; echo started",
		"daemonized":  "(setsid sh -c 'trap \"\" HUP TERM; sleep %s' &) ; echo started",
	}
	i := 0
	for name, script := range cases {
		i++
		marker := fmt.Sprintf("%d.%d%d", 4000+i, os.Getpid(), i) // a sleep length no one else uses
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := b.sh(fmt.Sprintf(script, marker))
			if !strings.Contains(out(res), "started") {
				t.Fatalf("output %q", out(res))
			}
			if res.TimedOut {
				t.Fatal("the run waited for the left-behind process")
			}
			if left := processesWith(marker); len(left) > 0 {
				t.Fatalf("processes survived the sandbox: %v", left)
			}
		})
	}
}

// TestGrandchildHoldingStdout: a grandchild that keeps the output pipe open
// does not hold the run past the target's exit.
func TestGrandchildHoldingStdout(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	marker := fmt.Sprintf("5%d.77", os.Getpid())
	res := b.sh(fmt.Sprintf("sleep %s & echo parent-done", marker), func(p *sandbox.Policy) { p.Timeout = 15 * time.Second })
	if res.TimedOut || !strings.Contains(string(res.Stdout), "parent-done") {
		t.Fatalf("result %+v", res)
	}
	if left := processesWith(marker); len(left) > 0 {
		t.Fatalf("the grandchild survived: %v", left)
	}
}

func TestResourceBombs(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	t.Run("fork bomb", func(t *testing.T) {
		t.Parallel()
		// The function's name is unique to this test process, so processes
		// of another test run are not mistaken for survivors.
		bomb := fmt.Sprintf("bomb_%d_%d", os.Getpid(), time.Now().UnixNano())
		// While the bomb goes off, the host must still be able to fork: the
		// sandbox's process limit holds even for the host's root user
		// (RLIMIT_NPROC does not bind root; the pids cgroup does).
		hostFailures := make(chan [2]int, 1)
		go func() {
			failed, most := 0, 0
			time.Sleep(300 * time.Millisecond)
			for range 20 {
				if err := exec.Command("true").Run(); err != nil {
					failed++
				}
				most = max(most, len(processesWith(bomb)))
				time.Sleep(50 * time.Millisecond)
			}
			hostFailures <- [2]int{failed, most}
		}()
		res := b.sh(fmt.Sprintf(`%[1]s() { %[1]s | %[1]s & }; %[1]s; sleep 2; echo survived`, bomb), func(p *sandbox.Policy) {
			p.Timeout = 4 * time.Second
			p.Limits.Processes = 32
		})
		if got := <-hostFailures; got[0] > 0 || got[1] > 64 {
			t.Errorf("during the bomb the host failed to fork %d times, and saw up to %d bomb processes (limit 32)", got[0], got[1])
		}
		// However the run ended (the shell giving up, the deadline), the
		// bomb must be gone with it, and the host must still fork.
		if left := processesWith(bomb); len(left) > 0 {
			t.Fatalf("fork bomb processes left: %d (run ended: %+v)", len(left), res)
		}
		if err := exec.Command("true").Run(); err != nil {
			t.Fatalf("the host cannot fork after the bomb: %v", err)
		}
	})
	t.Run("memory bomb", func(t *testing.T) {
		t.Parallel()
		res := b.sh(`python3 -c 'x = bytearray(1 << 30); print("allocated")'`)
		if res.OK() || strings.Contains(string(res.Stdout), "allocated") {
			t.Fatalf("1 GiB allocated under a 256 MiB limit: %s", out(res))
		}
		if !strings.Contains(out(res), "MemoryError") {
			t.Errorf("expected a MemoryError: %s", out(res))
		}
	})
	t.Run("cpu spin", func(t *testing.T) {
		t.Parallel()
		res := b.sh(`while :; do :; done`, func(p *sandbox.Policy) {
			p.Limits.CPUSeconds = 1
			p.Timeout = 20 * time.Second
		})
		if res.TimedOut || res.Signal == "" {
			t.Fatalf("the spin was not stopped by its CPU limit: %+v", res)
		}
	})
	t.Run("output flood", func(t *testing.T) {
		t.Parallel()
		res := b.sh(`yes flood | head -c 50000000; echo; echo tail-marker`, func(p *sandbox.Policy) { p.MaxOutput = 4096 })
		if len(res.Stdout) != 4096 || !res.StdoutTruncated {
			t.Fatalf("stdout %d bytes, truncated %v", len(res.Stdout), res.StdoutTruncated)
		}
		if res.ExitCode != 0 {
			t.Errorf("exit %d", res.ExitCode)
		}
	})
	t.Run("file size", func(t *testing.T) {
		t.Parallel()
		res := b.sh(`head -c 10000000 /dev/zero > big.bin`, func(p *sandbox.Policy) { p.Limits.FileBytes = 1 << 20 })
		if res.OK() {
			t.Fatal("wrote 10 MB under a 1 MiB file limit")
		}
		if fi, err := os.Stat(filepath.Join(b.workspace, "big.bin")); err == nil && fi.Size() > 1<<20 {
			t.Fatalf("big.bin is %d bytes", fi.Size())
		}
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		res := b.sh(`sleep 60`, func(p *sandbox.Policy) { p.Timeout = time.Second })
		if !res.TimedOut || res.Signal != "killed" {
			t.Fatalf("result %+v", res)
		}
	})
}

func TestBadPolicy(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	for name, p := range map[string]sandbox.Policy{
		"no argv":            {},
		"relative workspace": {Argv: []string{"true"}, Workspace: "ws"},
		"relative read-only": {Argv: []string{"true"}, ReadOnly: []string{"bin"}},
	} {
		if _, err := r.Run(context.Background(), p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestProbeFullTier(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	tier := r.Probe(context.Background())
	for _, l := range tier.Layers {
		if l.Required && !l.OK {
			t.Errorf("required layer %s missing: %s", l.Name, l.Detail)
		}
		if l.Name == sandbox.LayerLandlock && !l.OK {
			t.Errorf("this kernel has Landlock, but the probe says: %s", l.Detail)
		}
	}
	if !strings.HasPrefix(tier.String(), "full (") {
		t.Errorf("tier = %s", tier)
	}
}

// TestUnprivileged runs the containment tests again as an unprivileged user
// (nobody): the sandbox must not depend on running as root.
func TestUnprivileged(t *testing.T) {
	if os.Getenv(unprivEnv) != "" {
		t.Skip("already unprivileged")
	}
	if os.Getuid() != 0 {
		t.Skip("already running as an unprivileged user; the other tests cover it")
	}
	tests := []string{"TestRunBasics", "TestNetworkContained", "TestFilesContained", "TestNothingSurvives", "TestResourceBombs",
		"TestProbeFullTier", "TestTargetGetsOnlyStdio", "TestHelperSurvivesSignals", "TestHelperHidden", "TestSocketFamilies",
		"TestTmpBounded", "TestDiskLowPrecheck", "TestNestedInProcessMode", "TestProcHardened", "TestProcHardenedNested",
		"TestResolvConf", "TestIPCLimits", "TestCovers",
		"TestLoopbackEcho", "TestLoopbackHostUnreachable", "TestLoopbackNamespace", "TestLoopbackPolicy"}
	testbin.AsNobody(t, tests, unprivEnv+"=1", hostileEnv+"="+hostile(t), proberEnv+"="+prober(t))
}
