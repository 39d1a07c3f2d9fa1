//go:build linux && (amd64 || arm64 || arm)

package seccomp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// requireSeccomp skips t, saying why, where the kernel has no seccomp filter.
func requireSeccomp(t *testing.T) {
	t.Helper()
	if err := Supported(); err != nil {
		t.Skipf("the kernel lacks the seccomp layer: %v", err)
	}
}

func TestSupported(t *testing.T) {
	t.Parallel()
	requireSeccomp(t)
	// Supported only asks; the test process itself stays unfiltered.
	mode, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	if err != nil || mode != unix.SECCOMP_MODE_DISABLED {
		t.Errorf("PR_GET_SECCOMP = %d, %v after Supported; want %d", mode, err, unix.SECCOMP_MODE_DISABLED)
	}
}

// user is who a child runs as.
type user struct {
	name string
	cred *syscall.Credential // nil: the test's own user
}

var nobody = user{"nobody", &syscall.Credential{Uid: 65534, Gid: 65534}}

// childBinary returns this test binary and a directory the child may work and
// create files in, both reachable by u: for another user, a copy in a fresh
// 0755 directory and a sticky, world-writable directory beside it.
func childBinary(t *testing.T, u user) (bin, dir string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if u.cred == nil {
		return self, t.TempDir()
	}
	if os.Geteuid() != 0 {
		t.Skip("running a child as another user needs root")
	}
	dir, err = os.MkdirTemp("", "seccomp-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "seccomp.test")
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	// No fork may happen while the copy is open for writing: a child of
	// another test would hold the write descriptor until its exec, and
	// executing the copy would fail with "text file busy" (ETXTBSY).
	syscall.ForkLock.Lock()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err == nil {
		_, err = io.Copy(dst, src)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(work, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	return bin, work
}

// startChild runs the test binary as a child in mode and returns its stdout
// and how it ended.
func startChild(t *testing.T, u user, mode string) ([]byte, error) {
	t.Helper()
	bin, dir := childBinary(t, u)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin)
	cmd.Dir = dir
	cmd.Env = []string{
		childEnv + "=" + mode,
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		"TMPDIR=" + dir,
		// A race-enabled child would otherwise sleep a second at exit.
		"GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"),
	}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred}
	err := cmd.Run()
	if stderr.Len() > 0 {
		t.Logf("%s child as %s, stderr:\n%s", mode, u.name, stderr.Bytes())
	}
	return stdout.Bytes(), err
}

// probeChild runs the probes in a child in mode and returns their outcomes.
func probeChild(t *testing.T, u user, mode string) map[string]string {
	t.Helper()
	out, err := startChild(t, u, mode)
	if err != nil {
		t.Fatalf("%s child as %s: %v", mode, u.name, err)
	}
	var outcomes map[string]string
	if err := json.Unmarshal(out, &outcomes); err != nil {
		t.Fatalf("%s child as %s printed %q: %v", mode, u.name, out, err)
	}
	return outcomes
}

// denyWant is what each probe must get under the default filter. A value
// beginning with "~" is a substring of the outcome.
func denyWant() map[string]string {
	return map[string]string{
		"ptrace":           "EPERM",
		"process_vm_readv": "EPERM",
		"bpf":              "EPERM",
		"perf_event_open":  "EPERM",
		"userfaultfd":      "EPERM",
		"keyctl":           "EPERM",
		"request_key":      "EPERM",
		"mount":            "EPERM",
		"umount2":          "EPERM",
		"pivot_root":       "EPERM",
		"chroot":           "EPERM",
		"fsopen":           "EPERM",
		"io_uring_setup":   "EPERM",
		"unshare":          "EPERM",
		"setns":            "EPERM",
		"clone_newuser":    "EPERM",
		"clone3":           "ENOSYS",
		"unshare_cmd":      "~Operation not permitted",
		"tiocsti":          "EPERM",
		"tiocsti_master":   "EPERM",
		"tioclinux":        "EPERM",
		"personality_aslr": "EPERM",

		"socket_unix":          "ok",
		"socket_unix_dgram":    "ok",
		"socketpair_unix":      "ok",
		"socket_inet":          "EAFNOSUPPORT",
		"socket_inet_udp":      "EAFNOSUPPORT",
		"socket_inet6":         "EAFNOSUPPORT",
		"socket_netlink_route": "EAFNOSUPPORT",
		"socket_netlink_audit": "EAFNOSUPPORT",
		"socket_vsock":         "EAFNOSUPPORT",
		"socket_packet":        "EAFNOSUPPORT",
		"sigqueue_segv":        "EPERM",
		"sigqueue_usr1":        "ok",
		"pidfd_segv":           "EPERM",
		"setsig_segv":          "EPERM",
		"setsig_rt":            "ok",

		"mmap_shared_anon": "EPERM",
		"memfd_create":     "ENOSYS",
		"shmget":           "ENOSYS",
		"msgget":           "ENOSYS",
		// EOPNOTSUPP, which unix.ErrnoName calls by its other name.
		"fallocate":           "ENOTSUP",
		"fallocate_keep_size": "ENOTSUP",
		"ioctl_resvsp64":      "ENOTSUP",
		"mmap_private_anon":   "ok",
		"mmap_droppable_anon": "ok",
		"mmap_shared_file":    "ok",
		"mremap_grow":         "ok",

		"ioctl_tiocgwinsz":  "ok",
		"personality_query": "ok",
		"personality_linux": "ok",
		"file":              "ok",
		"getpid":            "ok",
		"sh":                "ok",
		"go_runtime":        "ok",
		"threads_filtered":  "ok",
	}
}

// namespaceProbes are the probes AllowNamespaces lets through to the kernel.
var namespaceProbes = []string{"unshare", "setns", "clone_newuser", "clone3", "unshare_cmd", "mount", "umount2", "pivot_root", "fsopen"}

// inetProbes are the probes AllowInet lets through to the kernel.
var inetProbes = []string{"socket_inet", "socket_inet_udp", "socket_inet6", "socket_netlink_route"}

// mattersUnprivileged are the denials an unprivileged process would otherwise
// get through: the control run as nobody must show them succeeding or failing
// differently, so the filtered EPERM is the filter's.
var mattersUnprivileged = []string{
	"ptrace", "process_vm_readv", "perf_event_open", "userfaultfd", "keyctl",
	"request_key", "umount2", "chroot", "io_uring_setup", "unshare", "setns",
	"clone_newuser", "clone3", "unshare_cmd", "tioclinux", "personality_aslr",
	"socket_inet", "socket_inet_udp", "socket_netlink_route", "socket_netlink_audit",
	"sigqueue_segv", "pidfd_segv", "setsig_segv",
	"mmap_shared_anon", "memfd_create", "shmget", "msgget",
	"fallocate", "fallocate_keep_size", "ioctl_resvsp64",
}

func matches(got, want string) bool {
	if sub, ok := strings.CutPrefix(want, "~"); ok {
		return strings.Contains(got, sub)
	}
	return got == want
}

func checkOutcomes(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if !matches(got[name], want[name]) {
			t.Errorf("%s: %s = %q, want %q", what, name, got[name], want[name])
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: probe %s has no expectation", what, name)
		}
	}
}

// TestInstall runs the probes in children: unfiltered (the control), under
// the default filter, under AllowNamespaces and under AllowInet, as root and
// as nobody.
func TestInstall(t *testing.T) {
	t.Parallel()
	requireSeccomp(t)
	for _, u := range []user{{name: "self"}, nobody} {
		t.Run(u.name, func(t *testing.T) {
			t.Parallel()
			control := probeChild(t, u, modeNone)
			deny := probeChild(t, u, modeDeny)
			allowNS := probeChild(t, u, modeAllowNamespaces)
			allowInet := probeChild(t, u, modeAllowInet)

			want := denyWant()
			checkOutcomes(t, "default filter", deny, want)

			// AllowNamespaces hands the namespace calls to the kernel,
			// which answers as it does unfiltered; the rest stays denied.
			for _, name := range namespaceProbes {
				want[name] = control[name]
			}
			checkOutcomes(t, "AllowNamespaces", allowNS, want)

			// AllowInet hands AF_INET, AF_INET6 and NETLINK_ROUTE to the
			// kernel; every other family stays denied.
			want = denyWant()
			for _, name := range inetProbes {
				want[name] = control[name]
			}
			checkOutcomes(t, "AllowInet", allowInet, want)
			if control["socket_inet"] != "ok" || control["socket_netlink_route"] != "ok" {
				t.Errorf("control: AF_INET %q, NETLINK_ROUTE %q; want both ok", control["socket_inet"], control["socket_netlink_route"])
			}
			if u.cred == nil && os.Geteuid() == 0 {
				for _, name := range []string{"clone_newuser", "unshare_cmd"} {
					if allowNS[name] != "ok" {
						t.Errorf("AllowNamespaces: %s = %q, want ok", name, allowNS[name])
					}
				}
			}

			// The control proves the denials are the filter's doing.
			mustDiffer := mattersUnprivileged
			if u.cred == nil && os.Geteuid() == 0 {
				mustDiffer = nil
				for name, w := range denyWant() {
					if w != "ok" {
						mustDiffer = append(mustDiffer, name)
					}
				}
			}
			for _, name := range mustDiffer {
				if matches(control[name], denyWant()[name]) {
					t.Errorf("control: %s = %q unfiltered too; the probe proves nothing", name, control[name])
				}
			}
			for name, w := range denyWant() {
				if w == "ok" && name != "threads_filtered" && control[name] != "ok" {
					t.Errorf("control: %s = %q, want ok", name, control[name])
				}
			}
			if control["threads_filtered"] == "ok" {
				t.Error("control: threads report a filter that was never installed")
			}
			t.Logf("control as %s: %v", u.name, control)
		})
	}
}

// TestInstallX32 makes an x32 syscall under the filter: the kernel must kill
// the process, while the no-syscall -1 still gets ENOSYS.
func TestInstallX32(t *testing.T) {
	t.Parallel()
	if runtime.GOARCH != "amd64" {
		t.Skip("x32 exists on amd64 only")
	}
	requireSeccomp(t)
	out, err := startChild(t, user{name: "self"}, modeX32)
	if !strings.Contains(string(out), "nr -1: ENOSYS\n") {
		t.Errorf("child printed %q, want the -1 syscall to get ENOSYS", out)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("child ended with %v, want death by SIGSYS", err)
	}
	status := exit.Sys().(syscall.WaitStatus)
	if !status.Signaled() || status.Signal() != syscall.SIGSYS {
		t.Errorf("child ended with %v, want death by SIGSYS", err)
	}
}
