//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
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
func Helper(modes map[string]func() int) int {
	// Landlock, capabilities and no_new_privs are per thread: everything
	// from here on, the target's fork included, happens on this one.
	runtime.LockOSThread()
	specIn := os.NewFile(specFD, "spec")
	statOut := os.NewFile(statusFD, "status")
	if specIn == nil || statOut == nil {
		fmt.Fprintln(os.Stderr, "shelldon be-child sandbox: started without its pipes")
		return exitSetupFailed
	}
	h := &helper{out: statOut}
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

// setup builds the sandbox around this process, in order: the file system
// view (namespaces), rlimits, capabilities dropped, Landlock, seccomp.
func (h *helper) setup(sp spec) error {
	if sp.Namespaces {
		if err := buildRoot(sp); err != nil {
			return err
		}
		if err := unix.Sethostname([]byte("sandbox")); err != nil {
			return fmt.Errorf("set hostname: %w", err)
		}
		h.layer(LayerUserNS)
		h.layer(LayerMountNS)
		h.layer(LayerPIDNS)
		h.layer(LayerIPCNS)
		if !sp.Network {
			h.layer(LayerNetNS)
		}
	} else {
		h.skip("no namespaces: the command sees the host's files, processes and network")
	}
	if err := setLimits(sp.Limits); err != nil {
		return err
	}
	h.layer(LayerRlimits)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if sp.Nested {
		// Building a nested sandbox maps uid 0, which needs CAP_SETFCAP in
		// this namespace: a process that builds sandboxes (the worker, which
		// is shelldon's code) keeps the capabilities of its own user
		// namespace, which reach nothing outside it.
		h.skip("capabilities: kept within the sandbox's own user namespace, to build nested sandboxes")
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
		rules := landlock.Rules{ReadOnly: []string{"/"}, ReadWrite: []string{"/tmp", "/dev/null"}, AllowTCP: sp.Network, Scope: true}
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
	if err := seccomp.Install(seccomp.Options{AllowNamespaces: sp.Nested}); err != nil {
		if seccomp.Supported() != nil {
			h.skip("seccomp: " + err.Error())
			return nil
		}
		return fmt.Errorf("seccomp: %w", err)
	}
	h.layer(LayerSeccomp)
	return nil
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
