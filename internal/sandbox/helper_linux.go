//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/shelldon/shelldon/internal/sandbox/landlock"
	"github.com/shelldon/shelldon/internal/sandbox/seccomp"
)

// Helper is the sandbox helper mode of the binary (`be-child sandbox`). It
// runs as PID 1 of fresh namespaces, reads its spec from fd 3, builds the
// sandbox, starts the target and reports on fd 4. It returns the exit
// status for the helper process. modes are the in-process targets a
// Policy.Mode may name; they run in the helper itself once the sandbox is
// built.
//
// The report is the helper's alone: its pipes are close-on-exec (os.NewFile
// on an inherited descriptor keeps it open across exec), the process is not
// dumpable (no /proc/1/mem, fd, environ for the target), and it catches
// every signal the target could end it with.
func Helper(modes map[string]func() int) int {
	// Landlock, capabilities and no_new_privs are per thread: everything
	// from here on, the target's fork included, happens on this one.
	runtime.LockOSThread()
	unix.CloseOnExec(specFD)
	unix.CloseOnExec(statusFD)
	specIn := os.NewFile(specFD, "spec")
	statOut := os.NewFile(statusFD, "status")
	if specIn == nil || statOut == nil {
		fmt.Fprintln(os.Stderr, "shelldon be-child sandbox: started without its pipes")
		return exitSetupFailed
	}
	h := &helper{out: statOut, st: status{Detail: map[string]string{}}}
	catchSignals()
	// The parent wrote the uid map before this process ran (it needs the
	// child dumpable for that); from here on the target, which runs as the
	// same uid, may not trace it or read its /proc files. A target regains
	// dumpable on execve; an in-process mode that builds nested sandboxes
	// turns it on for each fork (startDumpable).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return h.fail("make the helper non-dumpable", err)
	}
	h.layer(LayerHelperHidden)
	h.st.Detail[LayerHelperHidden] = "PR_SET_DUMPABLE 0: no ptrace, no /proc/1/mem, environ, fd"
	var sp spec
	if err := json.NewDecoder(io.LimitReader(specIn, 1<<20)).Decode(&sp); err != nil {
		return h.fail("read spec", err)
	}
	specIn.Close()
	if err := h.setup(sp); err != nil {
		return h.fail("", err)
	}
	if sp.Probe {
		h.st.Done = true
		h.report()
		return 0
	}
	if sp.Mode != "" {
		fn, ok := modes[sp.Mode]
		if !ok {
			return h.fail("", fmt.Errorf("unknown in-process mode %q", sp.Mode))
		}
		// The mode sees the policy's environment and directory, as a
		// target would.
		os.Clearenv()
		for _, kv := range sp.Env {
			if k, v, ok := strings.Cut(kv, "="); ok {
				os.Setenv(k, v)
			}
		}
		if err := os.Chdir(sp.Dir); err != nil {
			return h.fail("enter "+sp.Dir, err)
		}
		h.st.Exit = fn()
		h.st.Done = true
		h.report()
		return h.st.Exit
	}
	return h.run(sp)
}

type helper struct {
	out io.Writer
	st  status
}

// catchSignals relays every signal the Go runtime would die of to a
// drained channel. The helper is PID 1 of its PID namespace, so the kernel
// never delivers SIGKILL or SIGSTOP to it from the sandbox, nor a signal
// whose action is the default; but the runtime has a handler for most
// signals, and that handler exits on SIGTERM, SIGHUP, SIGINT, SIGPIPE and
// the like, dumps and exits on SIGQUIT, and crashes on a SIGSEGV, SIGBUS,
// ... that kill(2) sent. Notified, a signal from kill or tgkill is only a
// message; a real fault of the helper still panics, since the runtime tells
// a fault from a kill by its siginfo. Fault signals with a made-up siginfo
// (rt_sigqueueinfo, pidfd_send_signal, fcntl F_SETSIG) are what seccomp
// refuses the target. Left out: SIGCHLD, SIGURG (the runtime's preemption),
// SIGPROF and SIGWINCH, which the runtime ignores anyway, and 32-34, which
// belong to the C library.
func catchSignals() {
	var sigs []os.Signal
	for s := unix.Signal(1); s <= 64; s++ {
		switch {
		case s == unix.SIGKILL, s == unix.SIGSTOP, s == unix.SIGCHLD, s == unix.SIGURG,
			s == unix.SIGPROF, s == unix.SIGWINCH, s >= 32 && s <= 34:
			continue
		}
		sigs = append(sigs, s)
	}
	c := make(chan os.Signal, 16)
	signal.Notify(c, sigs...)
	go func() {
		for range c {
		}
	}()
}

func (h *helper) layer(name string) { h.st.Layers = append(h.st.Layers, name) }
func (h *helper) skip(why string)   { h.st.Skip = append(h.st.Skip, why) }

func (h *helper) report() {
	if h.st.Layers == nil {
		h.st.Layers = []string{}
	}
	json.NewEncoder(h.out).Encode(h.st)
}

func (h *helper) fail(stage string, err error) int {
	if stage != "" {
		err = fmt.Errorf("%s: %w", stage, err)
	}
	h.st.Error = err.Error()
	h.report()
	return exitSetupFailed
}

// setup builds the sandbox around this process, in order: descriptors
// close-on-exec, the file system view (namespaces), rlimits, capabilities
// dropped, Landlock, seccomp.
func (h *helper) setup(sp spec) error {
	// Run refuses these too; the helper checks again because allowing inet
	// sockets outside a network namespace of the sandbox's own would open
	// the host's network.
	if sp.Loopback && (sp.Network || !sp.Namespaces) {
		return errors.New("a loopback-only network needs a network namespace of its own (no Network, namespaces)")
	}
	// Before Landlock, which may hide /proc (the fallback reads it).
	how, err := cloexecFrom(3)
	if err != nil {
		return fmt.Errorf("close descriptors on exec: %w", err)
	}
	h.layer(LayerFDsClosed)
	h.st.Detail[LayerFDsClosed] = how
	if sp.Namespaces {
		root, err := buildRoot(sp)
		if err != nil {
			return err
		}
		switch procOpts := root.procOpts; {
		case strings.Contains(procOpts, "gid="):
			h.st.Detail[LayerHelperHidden] += "; /proc " + procOpts + ": no /proc/1 at all"
		case procOpts != "":
			h.st.Detail[LayerHelperHidden] += "; /proc " + procOpts + ": no /proc/1 but for the daemon's group"
		}
		for _, s := range root.skipped {
			h.skip(s)
		}
		if err := unix.Sethostname([]byte("sandbox")); err != nil {
			return fmt.Errorf("set hostname: %w", err)
		}
		h.layer(LayerUserNS)
		h.layer(LayerMountNS)
		h.layer(LayerPIDNS)
		h.layer(LayerIPCNS)
		if root.ipc != "" {
			h.st.Detail[LayerIPCNS] = root.ipc
		}
		h.layer(LayerProcMasked)
		h.st.Detail[LayerProcMasked] = root.masked
		if sp.Nested {
			// The builder keeps the capabilities of its user namespace, in
			// which these mounts were made: it could undo them.
			h.skip("proc-masked: a process that builds nested sandboxes could remount or unmount the masks (its own user namespace made them)")
		}
		if !sp.Network {
			h.layer(LayerNetNS)
		}
		if sp.Loopback {
			// Still with CAP_NET_ADMIN over the namespace, which its user
			// namespace owns. The target has none; a builder of nested
			// sandboxes keeps it, over this namespace alone, which holds
			// nothing that leads out.
			if err := loopbackUp(); err != nil {
				return fmt.Errorf("bring the loopback interface up: %w", err)
			}
			h.st.Detail[LayerNetNS] = "own network namespace, loopback only"
		}
	} else {
		h.skip("no namespaces: the command sees the host's files, processes and network")
	}
	if err := setLimits(sp.Limits); err != nil {
		return err
	}
	h.layer(LayerRlimits)
	if !sp.Nested {
		// Out of memory, in its cgroup or on the host, what the sandbox
		// runs goes first: before a nested sandbox's builder (the worker,
		// whose memory cgroup it shares) and before the daemon. Raising it
		// needs no privilege.
		if err := os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0); err != nil {
			h.skip("oom_score_adj: " + err.Error())
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if sp.Nested {
		// Building a nested sandbox maps uid 0, which needs CAP_SETFCAP in
		// this namespace: a process that builds sandboxes (the worker, which
		// is shelldon's code) keeps the capabilities of its own user
		// namespace, which reach nothing outside it. All but CAP_SYS_PTRACE,
		// which would open the helper's /proc/1/mem to it.
		if err := dropCapability(unix.CAP_SYS_PTRACE); err != nil {
			return err
		}
		h.skip("capabilities: kept within the sandbox's own user namespace, to build nested sandboxes (all but CAP_SYS_PTRACE)")
	} else if err := dropCapabilities(); err != nil {
		return err
	} else {
		h.layer(LayerNoCaps)
	}
	if abi, err := landlock.ABI(); err != nil {
		h.skip("landlock: " + err.Error())
	} else if sp.Nested && sp.Namespaces {
		// A Landlock domain may not change its mount topology, so a process
		// that builds sandboxes of its own (the worker, which is shelldon's
		// code) goes without; its mount view keeps shelldon's home out, and
		// the sandboxes it builds get Landlock. Without namespaces (a
		// degraded kernel) there is no mount view and no nesting, so
		// Landlock is what keeps the home out: it applies then.
		h.skip("landlock: not applied to a process that builds nested sandboxes")
	} else {
		rules := landlock.Rules{ReadOnly: []string{"/"}, ReadWrite: []string{"/tmp", "/dev/shm", "/dev/null"}, AllowTCP: sp.inet(), Scope: true}
		if !sp.Namespaces {
			// Without a mount view, Landlock alone draws the line on the
			// host's file system: the system directories, the device nodes
			// and the workspace; not /tmp (shared with every program of
			// the host), not /proc, not any home.
			rules.ReadOnly = append(append([]string{}, systemDirs...), sp.ReadOnly...)
			rules.ReadOnly = append(rules.ReadOnly, etcFiles...)
			rules.ReadWrite = append([]string{}, devices...)
			if sp.Nested {
				// The worker's own children (the gate) stage files in /tmp.
				rules.ReadWrite = append(rules.ReadWrite, "/tmp")
			}
		}
		if sp.Workspace != "" {
			rules.ReadWrite = append(rules.ReadWrite, sp.Workspace)
		}
		applied, err := landlock.RestrictThread(rules)
		if err != nil {
			return fmt.Errorf("landlock (ABI %d): %w", abi, err)
		}
		h.layer(fmt.Sprintf("%s-v%d", LayerLandlock, applied.ABI))
		for _, m := range applied.Missing {
			h.skip("landlock: " + m)
		}
	}
	if err := seccomp.Install(seccomp.Options{AllowNamespaces: sp.Nested, AllowInet: sp.inet()}); err != nil {
		if seccomp.Supported() != nil {
			h.skip("seccomp: " + err.Error())
			h.skip("socket families: not filtered without seccomp")
			h.skip("helper signals: fault signals with a made-up siginfo are not refused without seccomp")
			return nil
		}
		return fmt.Errorf("seccomp: %w", err)
	}
	h.layer(LayerSeccomp)
	h.layer(LayerSockets)
	h.st.Detail[LayerSockets] = "AF_UNIX; AF_INET, AF_INET6 and NETLINK_ROUTE only with the network or loopback"
	if sp.Namespaces {
		h.layer(LayerHelperSignals)
		h.st.Detail[LayerHelperSignals] = "PID 1 catches every signal; fault signals with a made-up siginfo refused"
	} else {
		h.skip("helper signals: without a PID namespace the helper is no init, and the target can kill it")
	}
	return nil
}

// loopbackUp sets IFF_UP on lo, the only interface of a new network
// namespace, which the kernel creates down. The socket is only a handle for
// the ioctl (seccomp, which would refuse an AF_INET one, is not installed
// yet); nothing is sent.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("SIOCGIFFLAGS: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("SIOCSIFFLAGS: %w", err)
	}
	return nil
}

// cloexecFrom marks every descriptor from first on close-on-exec and says
// how: close_range(CLOSE_RANGE_CLOEXEC) where the kernel has it (Linux
// 5.11), else each descriptor listed in /proc/self/fd, else each number up
// to the kernel's limit (fs.nr_open).
func cloexecFrom(first int) (string, error) {
	err := unix.CloseRange(uint(first), math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return "close_range(CLOSE_RANGE_CLOEXEC)", nil
	}
	if err != unix.ENOSYS && err != unix.EINVAL {
		return "", fmt.Errorf("close_range: %w", err)
	}
	return cloexecEach(first)
}

// cloexecEach is cloexecFrom without close_range.
func cloexecEach(first int) (string, error) {
	if fds, err := openFDs(); err == nil {
		for _, fd := range fds {
			if fd < first {
				continue
			}
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
				return "", fmt.Errorf("fd %d: %w", fd, err)
			}
		}
		return "each fd of /proc/self/fd (no close_range)", nil
	}
	limit := 1 << 20 // the default fs.nr_open: no descriptor is above it
	if data, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && n > 0 {
			limit = n
		}
	}
	for fd := first; fd < limit; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return "", fmt.Errorf("fd %d: %w", fd, err)
		}
	}
	return fmt.Sprintf("each fd up to %d (no close_range, no /proc)", limit), nil
}

// openFDs lists this process's descriptors from /proc/self/fd (the one
// used to read it included; it is closed by then).
func openFDs() ([]int, error) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil {
			fds = append(fds, fd)
		}
	}
	return fds, nil
}

// run starts the target, reaps every process of the sandbox until the
// target ends, and reports how it ended. Returning ends PID 1, and with it
// everything still running in the sandbox.
func (h *helper) run(sp spec) int {
	cmd := exec.Command(sp.Argv[0], sp.Argv[1:]...)
	cmd.Env = sp.Env
	cmd.Dir = sp.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if lp, err := lookPath(sp.Argv[0], sp.Env); err == nil {
		cmd.Path = lp
		cmd.Err = nil
	}
	if err := cmd.Start(); err != nil {
		h.st.Exit = 127
		if errors.Is(err, os.ErrPermission) {
			h.st.Exit = 126
		}
		fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
		h.st.Done = true
		h.report()
		return h.st.Exit
	}
	target := cmd.Process.Pid
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			h.st.Error = "wait: " + err.Error()
			h.report()
			return exitSetupFailed
		}
		if pid != target {
			continue // an orphan of the sandbox, reaped
		}
		switch {
		case ws.Exited():
			h.st.Exit = ws.ExitStatus()
		case ws.Signaled():
			h.st.Exit = -1
			h.st.Signal = unix.SignalName(ws.Signal())
			if h.st.Signal == "" {
				h.st.Signal = ws.Signal().String()
			}
		}
		h.st.Done = true
		h.report()
		return 0
	}
}

// lookPath finds file in the PATH of env, as the target would.
func lookPath(file string, env []string) (string, error) {
	for _, kv := range env {
		if len(kv) > 5 && kv[:5] == "PATH=" {
			os.Setenv("PATH", kv[5:])
		}
	}
	return exec.LookPath(file)
}

func setLimits(l Limits) error {
	set := []struct {
		name string
		res  int
		val  uint64
	}{
		{"RLIMIT_CPU", unix.RLIMIT_CPU, l.CPUSeconds},
		{"RLIMIT_DATA", unix.RLIMIT_DATA, l.DataBytes},
		{"RLIMIT_FSIZE", unix.RLIMIT_FSIZE, l.FileBytes},
		{"RLIMIT_NOFILE", unix.RLIMIT_NOFILE, l.OpenFiles},
		{"RLIMIT_NPROC", unix.RLIMIT_NPROC, l.Processes},
		{"RLIMIT_CORE", unix.RLIMIT_CORE, 0},
	}
	for _, s := range set {
		if err := unix.Setrlimit(s.res, &unix.Rlimit{Cur: s.val, Max: s.val}); err != nil {
			return fmt.Errorf("set %s to %d: %w", s.name, s.val, err)
		}
	}
	return nil
}

// dropCapabilities empties this thread's bounding, ambient, inheritable,
// permitted and effective sets, so the target (uid 0 of the user namespace)
// starts with no capability at all, even across execve.
func dropCapabilities() error {
	for c := 0; c <= lastCap(); c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// dropCapability removes one capability from this thread's bounding,
// inheritable, permitted and effective sets (and so from its ambient set).
func dropCapability(c int) error {
	if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	i, bit := c/32, uint32(1)<<(c%32)
	data[i].Effective &^= bit
	data[i].Permitted &^= bit
	data[i].Inheritable &^= bit
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capability %d: %w", c, err)
	}
	return nil
}

func lastCap() int {
	data, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 63
	}
	n := 0
	for _, c := range data {
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
		}
	}
	return n
}
