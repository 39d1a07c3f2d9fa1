// Package sandbox contains every process that runs code shelldon did not
// write: shell commands, git, the self-coding gate's tests and self-coded
// tools. Run starts the shelldon binary in its sandbox helper mode
// (`shelldon be-child sandbox`) inside new user, mount, PID, network, IPC
// and UTS namespaces (the network one left out with Policy.Network, given
// only its own loopback interface with Policy.Loopback); the helper builds
// a read-only view of the system with only the policy's workspace and a
// private, size- and inode-bounded /tmp writable, pivots into it, applies
// rlimits, drops every capability, restricts itself with Landlock (where
// the kernel has it) and a seccomp filter (which also limits sockets to the
// families the policy needs), and then starts the target with descriptors
// 0, 1 and 2 only. The helper is PID 1 of the sandbox: when the target
// exits, or the deadline kills the helper, the kernel kills every process
// left in it, so nothing a sandboxed command started (setsid, nohup, double
// fork) survives.
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
// With Policy.MinFreeDisk the Runner also watches the workspace's file
// system, its free space and its free inodes (at least 2% of them): it
// refuses to start below either floor (ErrDiskLow), kills the sandbox when
// a run brings it below (Result.DiskLow), and checks once more when the
// sandbox has ended, so a run that went below between two polls is reported
// too. The watch polls (more often as a run nears a floor fast), so a burst
// may overshoot a floor; seccomp refuses fallocate, so space costs real
// writes.
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
	Network bool
	// Loopback, with Network false, is a third mode: the target's own new
	// network namespace with its loopback interface up and nothing else in
	// it, and AF_INET, AF_INET6 and NETLINK_ROUTE sockets and (Landlock)
	// TCP bind and connect allowed. It is for a command that must talk TCP
	// to a relay the sandbox itself runs: git, with an in-sandbox SOCKS
	// relay on 127.0.0.1 that forwards over a unix socket to the daemon,
	// which dials only the owner's git host. The kernel, not the relay,
	// keeps the rest of the network out of reach: 127.0.0.1 and ::1 there
	// are the sandbox's own, not the host's. Setting both Network and
	// Loopback is a bad policy; a degraded run without namespaces refuses
	// Loopback (ErrDegraded), since sockets allowed there would be the
	// host's network.
	Loopback  bool
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
	// system must keep; it also turns on a floor of free inodes, 2% of the
	// file system's (none where the file system does not count them, as
	// btrfs). Below either floor the run does not start (ErrDiskLow); a run
	// that brings the file system below one is killed, and one found below
	// when the sandbox has ended is reported all the same (Result.DiskLow).
	// The file system is polled every DiskPollInterval, and down to every
	// 2 ms as a run nears a floor at the fastest rate it has written or
	// created at, so a burst may still overshoot by what it writes or
	// creates before the next poll; RLIMIT_FSIZE (Limits.FileBytes) bounds
	// each file on its own, and seccomp refuses fallocate, so space is only
	// had by writing it.
	MinFreeDisk uint64
	// Covers show other content, read-only, in place of files of the
	// workspace (git's view of a repository's configuration; see Cover).
	// They need the mount namespace: a degraded run without one refuses a
	// policy that has any.
	Covers []Cover
}

// Cover is a file of the workspace that the target sees with other
// content: Data, read-only, at Path. Path must be absolute and inside the
// Workspace, and name an existing regular file reached without symbolic
// links when the sandbox is built, or the run fails to start. The file
// itself is untouched; a rename or write over Path inside the sandbox
// fails (EBUSY, EROFS).
type Cover struct {
	Path string `json:"path"`
	Data []byte `json:"data"`
}

// Limits of Policy.Covers: they travel in the helper's spec.
const (
	MaxCovers     = 256
	MaxCoverBytes = 64 << 10  // each
	MaxCoverTotal = 256 << 10 // together
)

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
	// workspace's free space and inodes when it is far from their floors.
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
	// DiskLow: the workspace's file system went below its floor of free
	// space (Policy.MinFreeDisk) or of free inodes during the run. Either
	// the watch saw it and killed the sandbox (ExitCode -1, Signal
	// "killed", unless the target had ended just before), or the check
	// after the end found it (the target's own exit status stays: it may
	// be 0, but OK is false). What it wrote is still there. The workspace
	// is shared with the owner and other runs, whose writes count too.
	DiskLow bool
	// DiskLowDetail says which floor and by how much, as "free space on
	// /ws is 40 MiB, below the minimum of 512 MiB (sandbox.min_free_disk)"
	// or "free inodes on /ws are ...".
	DiskLowDetail string
	Duration      time.Duration
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
	// Policy.MinFreeDisk, or fewer free inodes than its inode floor, so
	// nothing ran. The error's text says which.
	ErrDiskLow = errors.New("sandbox: the workspace's file system is low on free space or inodes")
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
