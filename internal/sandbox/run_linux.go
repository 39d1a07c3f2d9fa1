//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Runner runs policies through a helper binary.
type Runner struct {
	helper  string
	once    sync.Once
	tier    Tier
	cgroups bool // put each sandbox in a pids cgroup (probed)
}

// NewRunner returns a Runner whose helper is the given binary (one that
// dispatches `be-child sandbox` to Helper); "" means this process's own
// binary.
func NewRunner(helper string) (*Runner, error) {
	if helper == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("sandbox: find own binary: %w", err)
		}
		helper = exe
	}
	return &Runner{helper: helper}, nil
}

// Process is a sandboxed process started with Start, whose standard
// streams belong to the caller.
type Process struct {
	cmd    *exec.Cmd
	ctx    context.Context // bounded by the policy's timeout
	cancel context.CancelFunc
	st     status
	stDone chan error
	start  time.Time
	killed atomic.Bool
	// diskLow: the workspace's free space fell below the policy's
	// MinFreeDisk and the watch killed the sandbox.
	diskLow atomic.Bool
	cgroup  *pidsCgroup
}

// Start starts p's command in a sandbox with the given standard streams
// (nil stdin means /dev/null) and returns at once; Wait collects the end.
// The policy's timeout bounds the whole life of the process.
func (r *Runner) Start(ctx context.Context, p Policy, stdin io.Reader, stdout, stderr io.Writer) (*Process, error) {
	sp, err := r.prepare(ctx, &p)
	if err != nil {
		return nil, err
	}
	return r.start(ctx, sp, p, stdin, stdout, stderr)
}

// prepare checks and completes a policy and turns it into the helper's spec.
func (r *Runner) prepare(ctx context.Context, p *Policy) (spec, error) {
	if p.Mode == "" && (len(p.Argv) == 0 || p.Argv[0] == "") {
		return spec{}, fmt.Errorf("%w: no command", ErrBadPolicy)
	}
	for _, path := range append([]string{p.Workspace}, p.ReadOnly...) {
		if path != "" && !filepath.IsAbs(path) {
			return spec{}, fmt.Errorf("%w: %q is not an absolute path", ErrBadPolicy, path)
		}
	}
	p.defaults()
	tier := r.Probe(ctx)
	if !tier.Full() && !p.AllowDegraded {
		return spec{}, fmt.Errorf("%w: %s; set sandbox.allow_degraded: true to run with less", ErrDegraded, tier.Missing())
	}
	if watchesDisk(*p) {
		if err := checkFreeSpace(p.Workspace, p.MinFreeDisk); err != nil {
			return spec{}, err
		}
	}
	return spec{
		Argv: p.Argv, Dir: p.Dir, Env: p.Env, Workspace: p.Workspace, ReadOnly: p.ReadOnly,
		Network: p.Network, Nested: p.Nested, Limits: p.Limits, Namespaces: tier.has(LayerUserNS), TmpSize: DefaultTmpSize,
		Mode: p.Mode,
	}, nil
}

// dumpMu serializes the moments the daemon is made dumpable for a fork.
var dumpMu sync.Mutex

// start runs the helper with sp.
func (r *Runner) start(ctx context.Context, sp spec, p Policy, stdin io.Reader, stdout, stderr io.Writer) (*Process, error) {
	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	defer specR.Close()
	defer specW.Close()
	statR, statW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	defer statW.Close()

	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.Timeout)
	cmd := exec.CommandContext(ctx, r.helper, helperArgs...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{specR, statW}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if sp.Namespaces {
		flags := syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
		if !sp.Network {
			flags |= syscall.CLONE_NEWNET
		}
		cmd.SysProcAttr.Cloneflags = uintptr(flags)
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	// Killing the helper, PID 1 of the sandbox, kills everything in it; the
	// process group covers a degraded run without a PID namespace.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A grandchild that kept an output pipe open cannot hold Wait past this.
	cmd.WaitDelay = 2 * time.Second

	pr := &Process{cmd: cmd, ctx: ctx, cancel: cancel, stDone: make(chan error, 1), start: time.Now()}
	if err := startDumpable(cmd, sp.Namespaces); err != nil {
		cancel()
		statR.Close()
		return nil, fmt.Errorf("sandbox: start helper: %w", err)
	}
	// The helper waits for its spec before it starts anything, so every
	// process of the sandbox is born inside the pids cgroup. Its threads
	// count too, hence the margin.
	if r.cgroups {
		cg, err := newPidsCgroup(cmd.Process.Pid, int(sp.Limits.Processes)+16)
		if err != nil {
			pr.Kill()
			pr.Wait()
			return nil, fmt.Errorf("sandbox: pids cgroup: %w", err)
		}
		pr.cgroup = cg
	}
	go func() {
		data, err := io.ReadAll(io.LimitReader(statR, 1<<20))
		if err == nil && len(bytes.TrimSpace(data)) > 0 {
			err = json.Unmarshal(lastLine(data), &pr.st)
		}
		statR.Close()
		pr.stDone <- err
	}()
	if err := json.NewEncoder(specW).Encode(sp); err != nil {
		pr.Kill()
		pr.Wait()
		return nil, fmt.Errorf("sandbox: send policy: %w", err)
	}
	if watchesDisk(p) {
		go pr.watchDisk(p.Workspace, p.MinFreeDisk)
	}
	return pr, nil
}

// watchesDisk reports whether p asks for its workspace's free space to be
// watched.
func watchesDisk(p Policy) bool { return p.MinFreeDisk > 0 && p.Workspace != "" }

// FreeSpace is the space of path's file system available to this process's
// user, as df shows it.
func FreeSpace(path string) (uint64, error) {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		return 0, err
	}
	return fs.Bavail * uint64(fs.Bsize), nil
}

// checkFreeSpace fails with ErrDiskLow when path's file system has less
// than floor bytes free.
func checkFreeSpace(path string, floor uint64) error {
	free, err := FreeSpace(path)
	if err != nil {
		return fmt.Errorf("sandbox: free space of the workspace: %w", err)
	}
	if free < floor {
		return fmt.Errorf("%w: %s has %d MiB free, the minimum is %d MiB (sandbox.min_free_disk)", ErrDiskLow, path, free>>20, floor>>20)
	}
	return nil
}

// watchDisk kills the sandbox when the free space of the workspace's file
// system falls below floor, polling every DiskPollInterval until the
// sandbox ends. A run may overshoot by what it writes in one interval.
func (pr *Process) watchDisk(workspace string, floor uint64) {
	tick := time.NewTicker(DiskPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-pr.ctx.Done():
			return
		case <-tick.C:
		}
		if free, err := FreeSpace(workspace); err == nil && free < floor {
			pr.diskLow.Store(true)
			pr.Kill()
			return
		}
	}
}

// startDumpable starts cmd. Creating a user namespace needs the parent to
// write the child's uid map, which the kernel refuses when the parent (and
// so the child, until exec) is not dumpable; a hardened daemon is made
// dumpable for just that fork. Everything a sandbox runs is in its own PID
// namespace and cannot see the daemon in that instant.
func startDumpable(cmd *exec.Cmd, userns bool) error {
	if !userns {
		return cmd.Start()
	}
	dumpMu.Lock()
	defer dumpMu.Unlock()
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err == nil && d == 0 {
		unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
		defer unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	}
	return cmd.Start()
}

// Pid is the helper's process id (in the daemon's PID namespace).
func (pr *Process) Pid() int { return pr.cmd.Process.Pid }

// Kill ends the sandbox and everything in it.
func (pr *Process) Kill() {
	pr.killed.Store(true)
	pr.cmd.Cancel()
}

// Wait waits for the sandbox to end and says how: the target's exit status
// or signal, or that the deadline or Kill ended it. An error means the
// sandbox itself failed (it could not be built, or the helper died).
func (pr *Process) Wait() (Result, error) {
	defer pr.cancel()
	waitErr := pr.cmd.Wait()
	// Nothing of the sandbox may outlive it (a degraded run has no PID
	// namespace to take its processes down).
	syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGKILL)
	defer pr.cgroup.remove()
	select {
	case <-pr.stDone:
	case <-time.After(2 * time.Second):
	}
	res := Result{Duration: time.Since(pr.start), DiskLow: pr.diskLow.Load()}
	st := pr.st
	switch {
	case st.Error != "":
		return res, fmt.Errorf("sandbox: %s", st.Error)
	case st.Done:
		res.ExitCode, res.Signal = st.Exit, st.Signal
		return res, nil
	}
	// The helper ended before the target did: the deadline or Kill, or a
	// broken helper.
	res.ExitCode, res.Signal = -1, "killed"
	switch {
	case res.DiskLow:
	case errors.Is(pr.ctx.Err(), context.DeadlineExceeded):
		res.TimedOut = true
	case pr.killed.Load():
	default:
		return res, fmt.Errorf("sandbox: the helper ended without a status (%v)", waitErr)
	}
	return res, nil
}

// Known sets the tier the daemon's probe already found, so this Runner
// does not probe again (a worker building nested sandboxes). Whether it
// can make pids cgroups is still checked here: inside a sandbox it cannot.
func (r *Runner) Known(t Tier) {
	r.once.Do(func() {
		r.tier = t
		r.cgroups = t.has(LayerCgroup) && pidsAvailable() == nil
	})
}

// Run runs p's command in a sandbox and returns how it ended, with its
// output capped. A command that fails, times out or is killed is a Result;
// an error means the sandbox could not be built or a required layer is
// missing.
func (r *Runner) Run(ctx context.Context, p Policy) (Result, error) {
	sp, err := r.prepare(ctx, &p)
	if err != nil {
		return Result{}, err
	}
	return r.run(ctx, sp, p)
}

func (r *Runner) run(ctx context.Context, sp spec, p Policy) (Result, error) {
	var stdin io.Reader
	if p.Stdin != nil {
		stdin = bytes.NewReader(p.Stdin)
	}
	stdout := &capped{max: p.MaxOutput}
	stderr := &capped{max: p.MaxOutput}
	pr, err := r.start(ctx, sp, p, stdin, stdout, stderr)
	if err != nil {
		return Result{}, err
	}
	stop := context.AfterFunc(ctx, pr.Kill)
	defer stop()
	res, err := pr.Wait()
	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	res.StdoutTruncated, res.StderrTruncated = stdout.truncated, stderr.truncated
	return res, err
}

func lastLine(data []byte) []byte {
	data = bytes.TrimSpace(data)
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		return data[i+1:]
	}
	return data
}

// capped keeps the first max bytes written and counts the rest away, so a
// flood of output costs no memory and never blocks the writer.
type capped struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room < len(p) {
		c.truncated = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

func (c *capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}
