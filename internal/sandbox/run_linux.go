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
	cgroups bool   // put each sandbox in a pids cgroup (probed)
	memcg   string // make each sandbox a memory cgroup in this one (probed), or ""
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
	// disk is the floor the run must keep on its workspace's file system;
	// nil when the policy asks for none.
	disk *diskFloor
	// diskKilled: the workspace's file system fell below its floor and the
	// watch killed the sandbox; diskLow says how (diskFloor.low).
	diskKilled atomic.Bool
	diskLow    atomic.Pointer[string]
	cgroup     *sandboxCgroups
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
	if p.Network && p.Loopback {
		return spec{}, fmt.Errorf("%w: Network and Loopback are exclusive (the host's network, or the sandbox's own loopback only)", ErrBadPolicy)
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
	if err := checkCovers(*p); err != nil {
		return spec{}, err
	}
	if len(p.Covers) > 0 && !tier.has(LayerUserNS) {
		return spec{}, fmt.Errorf("%w: covering workspace files needs the mount namespace", ErrDegraded)
	}
	// Without namespaces there is no network namespace of the sandbox's
	// own: the sockets Loopback allows would reach the host's network.
	if p.Loopback && !tier.has(LayerUserNS) {
		return spec{}, fmt.Errorf("%w: a loopback-only network needs the network namespace", ErrDegraded)
	}
	if f := floorOf(*p); f != nil {
		low, err := f.low()
		if err != nil {
			return spec{}, fmt.Errorf("sandbox: free space of the workspace: %w", err)
		}
		if low != "" {
			return spec{}, fmt.Errorf("%w: %s", ErrDiskLow, low)
		}
	}
	return spec{
		Argv: p.Argv, Dir: p.Dir, Env: p.Env, Workspace: p.Workspace, ReadOnly: p.ReadOnly,
		Network: p.Network, Loopback: p.Loopback, Nested: p.Nested, Limits: p.Limits, Namespaces: tier.has(LayerUserNS), TmpSize: DefaultTmpSize,
		Mode: p.Mode, Covers: p.Covers,
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

	pr := &Process{cmd: cmd, ctx: ctx, cancel: cancel, stDone: make(chan error, 1), start: time.Now(), disk: floorOf(p)}
	if err := startDumpable(cmd, sp.Namespaces); err != nil {
		cancel()
		statR.Close()
		return nil, fmt.Errorf("sandbox: start helper: %w", err)
	}
	// The helper waits for its spec before it starts anything, so every
	// process of the sandbox is born inside its cgroups.
	cg, err := r.joinCgroups(cmd.Process.Pid, sp)
	if err != nil {
		pr.Kill()
		pr.Wait()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	pr.cgroup = cg
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
	if pr.disk != nil {
		go pr.watchDisk()
	}
	return pr, nil
}

// diskFloor is what a run must leave free on its workspace's file system:
// MinFreeDisk bytes, and inodeFloor of its inodes.
type diskFloor struct {
	path  string
	bytes uint64
}

// floorOf is p's disk floor, or nil when p asks for none.
func floorOf(p Policy) *diskFloor {
	if p.MinFreeDisk == 0 || p.Workspace == "" {
		return nil
	}
	return &diskFloor{path: p.Workspace, bytes: p.MinFreeDisk}
}

// inodeFloor is how many free inodes a file system of files inodes must
// keep: 2% of them. A file system that does not count inodes (btrfs, a
// tmpfs without nr_inodes) reports 0 and gets no floor.
func inodeFloor(files uint64) uint64 { return files / 50 }

// diskPollMin is the shortest interval of the disk watch, close to a floor;
// diskPoll its longest, DiskPollInterval (a test lengthens it to see what
// the check at the end finds alone).
const diskPollMin = 2 * time.Millisecond

var diskPollNs atomic.Int64

func diskPoll() time.Duration {
	if d := time.Duration(diskPollNs.Load()); d > 0 {
		return d
	}
	return DiskPollInterval
}

// diskState is one look at a file system.
type diskState struct {
	avail uint64 // bytes available to this process's user, as df shows them
	ffree uint64 // free inodes
	files uint64 // inodes in all; 0 when the file system does not count them
}

func statDisk(path string) (diskState, error) {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		return diskState{}, err
	}
	unit := uint64(fs.Frsize)
	if unit == 0 {
		unit = uint64(fs.Bsize)
	}
	return diskState{avail: fs.Bavail * unit, ffree: fs.Ffree, files: fs.Files}, nil
}

// FreeSpace is the space of path's file system available to this process's
// user, as df shows it.
func FreeSpace(path string) (uint64, error) {
	s, err := statDisk(path)
	return s.avail, err
}

// FreeInodes is the free inodes of path's file system, the inode floor a
// sandbox keeps there (0 where the file system counts no inodes), and the
// total.
func FreeInodes(path string) (free, floor, total uint64, err error) {
	s, err := statDisk(path)
	return s.ffree, inodeFloor(s.files), s.files, err
}

// low looks at the file system and says which floor it is below, as a
// sentence for the owner and the model ("free space ..." or "free inodes
// ..."), or "" when it is above both.
func (f *diskFloor) low() (string, error) {
	s, err := statDisk(f.path)
	if err != nil {
		return "", err
	}
	return f.below(s), nil
}

// below says which floor s is below, or "".
func (f *diskFloor) below(s diskState) string {
	if s.avail < f.bytes {
		return fmt.Sprintf("free space on %s is %d MiB, below the minimum of %d MiB (sandbox.min_free_disk)", f.path, s.avail>>20, f.bytes>>20)
	}
	if floor := inodeFloor(s.files); s.ffree < floor {
		return fmt.Sprintf("free inodes on %s are %d of %d, below the minimum of %d (2%% of them, kept with sandbox.min_free_disk)", f.path, s.ffree, s.files, floor)
	}
	return ""
}

// diskWatch is one run's watch: its last look at the file system, and the
// fastest rates, per second, at which the run has used space and inodes.
type diskWatch struct {
	f                    *diskFloor
	last                 diskState
	at                   time.Time
	bytesRate, inodeRate float64
}

// see takes in a look made at now and says how long to wait for the next:
// diskPoll, or less when, at the fastest rate the run has used space or
// inodes so far, half the room left above a floor would go sooner, but
// never less than diskPollMin. A writer is thus seen within about
// diskPollMin of crossing a floor, not a whole interval after, even if it
// pauses on its way (the fastest rate, not the last, is what counts).
func (w *diskWatch) see(cur diskState, now time.Time) time.Duration {
	if dt := now.Sub(w.at).Seconds(); dt > 0 && !w.at.IsZero() {
		if cur.avail < w.last.avail {
			w.bytesRate = max(w.bytesRate, float64(w.last.avail-cur.avail)/dt)
		}
		if cur.ffree < w.last.ffree {
			w.inodeRate = max(w.inodeRate, float64(w.last.ffree-cur.ffree)/dt)
		}
	}
	w.last, w.at = cur, now
	wait := diskPoll()
	limit := func(free, floor uint64, rate float64) {
		if rate > 0 && free > floor {
			d := time.Duration(float64(free-floor) / (2 * rate) * float64(time.Second))
			wait = min(wait, max(d, diskPollMin))
		}
	}
	limit(cur.avail, w.f.bytes, w.bytesRate)
	limit(cur.ffree, inodeFloor(cur.files), w.inodeRate)
	return wait
}

// watchDisk kills the sandbox when the workspace's file system falls below
// its floor, polling it until the sandbox ends: every DiskPollInterval, more
// often when the run uses space or inodes fast enough to reach a floor
// sooner (diskWatch.see). A burst may still overshoot by what it writes or
// creates before the next poll, and the kill takes effect when the helper
// next runs; Wait checks once more when the sandbox has ended.
func (pr *Process) watchDisk() {
	w := diskWatch{f: pr.disk}
	if s, err := statDisk(w.f.path); err == nil {
		w.see(s, time.Now())
	}
	timer := time.NewTimer(diskPoll())
	defer timer.Stop()
	for {
		select {
		case <-pr.ctx.Done():
			return
		case <-timer.C:
		}
		cur, err := statDisk(w.f.path)
		if err != nil {
			timer.Reset(diskPoll())
			continue
		}
		if low := w.f.below(cur); low != "" {
			pr.diskLow.Store(&low)
			pr.diskKilled.Store(true)
			pr.Kill()
			return
		}
		timer.Reset(w.see(cur, time.Now()))
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
	res := Result{Duration: time.Since(pr.start)}
	// The watch polls, so a run can go below the floor and end between two
	// polls: everything in the sandbox is gone now, so check once more.
	if pr.disk != nil && !pr.diskKilled.Load() {
		if low, err := pr.disk.low(); err == nil && low != "" {
			pr.diskLow.Store(&low)
		}
	}
	if low := pr.diskLow.Load(); low != nil {
		res.DiskLow, res.DiskLowDetail = true, *low
	}
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
	case pr.diskKilled.Load():
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
// can make cgroups is still checked here: inside a sandbox it cannot.
func (r *Runner) Known(t Tier) {
	r.once.Do(func() {
		r.tier = t
		r.cgroups = t.has(LayerCgroup) && pidsAvailable() == nil
		if t.has(LayerMemCgroup) {
			r.memcg, _ = memoryAvailable()
		}
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
