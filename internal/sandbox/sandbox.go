// Package sandbox contains every process that runs code shelldon did not
// write: shell commands, git, the self-coding gate's tests and self-coded
// tools. Run starts the shelldon binary in its sandbox helper mode
// (`shelldon be-child sandbox`) inside new user, mount, PID, network, IPC
// and UTS namespaces; the helper builds a read-only view of the system with
// only the policy's workspace and a private, size- and inode-bounded /tmp
// writable, pivots into it, applies rlimits, drops every capability,
// restricts itself with Landlock (where the kernel has it) and a seccomp
// filter (which also limits sockets to the families the policy needs), and
// then starts the target with descriptors 0, 1 and 2 only. The helper is
// PID 1 of the sandbox: when the target exits, or the deadline kills the
// helper, the kernel kills every process left in it, so nothing a sandboxed
// command started (setsid, nohup, double fork) survives.
//
// The helper's report (how the target ended) is out of the target's reach:
// its status pipe is closed on exec like every descriptor beyond stdio; the
// helper is not dumpable, so /proc/1/{mem,environ,fd,...} are closed to the
// target, and the sandbox's /proc (hidepid=2) does not even list it; it
// catches every signal the target can send it (the kernel keeps SIGKILL and
// SIGSTOP from a PID namespace's own processes away from its PID 1), and
// seccomp refuses fault signals with a made-up siginfo, which the Go runtime
// would take for a crash. A target that signals PID 1 is reported by its own
// exit.
//
// With Policy.MinFreeDisk the Runner also watches the free space of the
// workspace's file system: it refuses to start below it (ErrDiskLow) and
// kills the sandbox when a run brings it below (Result.DiskLow). The watch
// polls, so a run may overshoot by what it writes in one interval.
//
// Invariant: nothing runs with fewer layers than the kernel offers, and
// never silently: Probe reports each layer; when a required one is missing,
// Run refuses unless the policy allows a degraded sandbox, and says so.
package sandbox

import (
	"errors"
	"time"
)

// Policy says what to run and what it may touch.
type Policy struct {
	Argv []string // the program (looked up in the sandbox's PATH) and its arguments
	// Mode, when set, names an in-process mode of the helper binary (see
	// Helper) that runs in the sandbox instead of Argv: shelldon's own worker
	// starts that way, saving a second process start per turn.
	Mode      string
	Dir       string   // working directory inside the sandbox; default Workspace, else /tmp
	Env       []string // the target's environment; see Env for a safe default
	Workspace string   // host directory mounted read-write at the same path; "" for none
	ReadOnly  []string // more host paths visible read-only at the same path
	// Network false: an empty network namespace, AF_UNIX sockets only
	// (seccomp) and, with Landlock, no TCP at all. True: the host's network,
	// and AF_INET, AF_INET6 and NETLINK_ROUTE sockets too.
	Network   bool
	Nested    bool   // the command may build sandboxes of its own (the worker); seccomp then allows namespaces
	Stdin     []byte // the target's standard input; nil means /dev/null
	Timeout   time.Duration
	MaxOutput int // bytes kept of stdout and of stderr each
	Limits    Limits
	// AllowDegraded runs with the layers the kernel has when a required
	// one is missing, instead of refusing (the owner's sandbox.allow_degraded).
	AllowDegraded bool
	// MinFreeDisk, when not 0 and the policy has a Workspace, is the free
	// space (bytes available to the daemon's user) the workspace's file
	// system must keep: below it the run does not start (ErrDiskLow), and a
	// run that brings it below is killed (Result.DiskLow). The space is
	// polled every DiskPollInterval, so a run may overshoot by what it
	// writes in one interval; RLIMIT_FSIZE (Limits.FileBytes) bounds each
	// file on its own.
	MinFreeDisk uint64
}

// Limits are the rlimits of every process in the sandbox. Zero means the default.
type Limits struct {
	CPUSeconds uint64 // RLIMIT_CPU per process
	DataBytes  uint64 // RLIMIT_DATA: heap and private mappings (RLIMIT_AS would kill Go and other runtimes)
	FileBytes  uint64 // RLIMIT_FSIZE: the largest file it may write
	OpenFiles  uint64 // RLIMIT_NOFILE
	Processes  uint64 // RLIMIT_NPROC: tasks of the sandbox's user
}

// Defaults for a Policy's zero fields.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxOutput = 64 << 10
	DefaultTmpSize   = 64 << 20
	// DiskPollInterval is how often a run with MinFreeDisk checks the
	// workspace's free space.
	DiskPollInterval = 50 * time.Millisecond
)

// DefaultLimits fit a Raspberry Pi Zero 2W: a command may use 256 MiB.
var DefaultLimits = Limits{
	CPUSeconds: 30,
	DataBytes:  256 << 20,
	FileBytes:  64 << 20,
	OpenFiles:  256,
	Processes:  64,
}

// Result is how a sandboxed run ended.
type Result struct {
	ExitCode        int    // the target's exit status; -1 when a signal ended it
	Signal          string // the signal that ended it ("killed", ...), if any
	Stdout, Stderr  []byte // at most Policy.MaxOutput bytes each
	StdoutTruncated bool
	StderrTruncated bool
	TimedOut        bool // the deadline killed the sandbox
	// DiskLow: the workspace's free space fell below Policy.MinFreeDisk
	// during the run, and the sandbox was killed (ExitCode -1, Signal
	// "killed", unless the target had ended just before). What it wrote is
	// still there.
	DiskLow  bool
	Duration time.Duration
}

// OK reports whether the target exited with status 0 in time, and left the
// disk space the policy asked for.
func (r Result) OK() bool {
	return r.ExitCode == 0 && !r.TimedOut && !r.DiskLow && r.Signal == ""
}

// Errors of Run. A target that fails is a Result, not an error.
var (
	ErrUnsupported = errors.New("sandbox: sandboxed execution needs Linux")
	ErrDegraded    = errors.New("sandbox: a required layer is missing")
	ErrBadPolicy   = errors.New("sandbox: bad policy")
	// ErrDiskLow: the workspace's file system had less free space than
	// Policy.MinFreeDisk, so nothing ran.
	ErrDiskLow = errors.New("sandbox: free disk space is below the minimum")
)

// Env returns a minimal environment for a sandboxed command, plus extra.
func Env(extra ...string) []string {
	return append([]string{
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
		"HOME=/tmp",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"TMPDIR=/tmp",
	}, extra...)
}

func (p *Policy) defaults() {
	if p.Timeout <= 0 {
		p.Timeout = DefaultTimeout
	}
	if p.MaxOutput <= 0 {
		p.MaxOutput = DefaultMaxOutput
	}
	d := DefaultLimits
	if p.Limits.CPUSeconds == 0 {
		p.Limits.CPUSeconds = d.CPUSeconds
	}
	if p.Limits.DataBytes == 0 {
		p.Limits.DataBytes = d.DataBytes
	}
	if p.Limits.FileBytes == 0 {
		p.Limits.FileBytes = d.FileBytes
	}
	if p.Limits.OpenFiles == 0 {
		p.Limits.OpenFiles = d.OpenFiles
	}
	if p.Limits.Processes == 0 {
		p.Limits.Processes = d.Processes
	}
	if p.Env == nil {
		p.Env = Env()
	}
	if p.Dir == "" {
		p.Dir = p.Workspace
	}
	if p.Dir == "" {
		p.Dir = "/tmp"
	}
}
