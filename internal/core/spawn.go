package core

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/wire"
)

// Spawner starts a worker process for one turn.
type Spawner interface {
	Spawn(ctx context.Context) (Process, error)
}

// Process is a running worker: frames over its stdin and stdout.
type Process interface {
	Conn() *wire.Conn
	Wait() error
	Kill() error
	Pid() int
}

// ExecSpawner re-executes a binary in its worker child mode.
type ExecSpawner struct {
	Path   string   // the binary; os.Executable() in the daemon
	Args   []string // the child-mode arguments, e.g. ["be-child", "worker"]
	Env    []string // the worker's whole environment; see WorkerEnv
	Logger *slog.Logger
}

var _ Spawner = (*ExecSpawner)(nil)

// WorkerEnv builds a worker's environment from the daemon's: only a fixed
// PATH and the locale and time zone survive, so no credential, token or key
// reaches the worker whatever the daemon's environment holds.
func WorkerEnv(parent []string) []string {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	for _, kv := range parent {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "TZ", "LANG", "LC_ALL", "LC_CTYPE":
			env = append(env, kv)
		}
	}
	return env
}

// Spawn starts the worker. ctx bounds its whole life: when ctx ends, the
// worker is killed.
func (s *ExecSpawner) Spawn(ctx context.Context) (Process, error) {
	cmd := exec.CommandContext(ctx, s.Path, s.Args...)
	cmd.Env = s.Env
	if cmd.Env == nil {
		cmd.Env = WorkerEnv(nil)
	}
	cmd.Dir = "/"
	cmd.SysProcAttr = groupAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("worker stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("worker stdout: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("worker stderr: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker %s: %w", s.Path, err)
	}
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	go relayStderr(stderr, log.With("worker_pid", cmd.Process.Pid))
	return &execProcess{cmd: cmd, conn: wire.NewConn(stdout, stdin, 0), stdin: stdin}, nil
}

// relayStderr logs what a worker writes to stderr, line by line, capped.
func relayStderr(r io.Reader, log *slog.Logger) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64<<10)
	for n := 0; sc.Scan(); n++ {
		if n < 200 {
			log.Warn("worker stderr", "line", sc.Text())
		}
	}
}

type execProcess struct {
	cmd   *exec.Cmd
	conn  *wire.Conn
	stdin io.Closer
}

func (p *execProcess) Conn() *wire.Conn { return p.conn }
func (p *execProcess) Pid() int         { return p.cmd.Process.Pid }

func (p *execProcess) Wait() error {
	p.stdin.Close()
	return p.cmd.Wait()
}

// Kill ends the worker's whole process group and reaps it.
func (p *execProcess) Kill() error {
	p.stdin.Close()
	killGroup(p.cmd.Process)
	if p.cmd.ProcessState == nil {
		p.cmd.Wait()
	}
	return nil
}

// Executable is os.Executable, resolved once for spawning children.
func Executable() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find own binary: %w", err)
	}
	return p, nil
}

// SandboxSpawner starts each worker inside the sandbox: its own user, mount,
// PID, network and IPC namespaces, a read-only view of the system with only
// the workspace writable, rlimits, no view of shelldon's home (database,
// config, .env) or of the daemon. The worker may build nested sandboxes for
// the code it runs.
type SandboxSpawner struct {
	Runner    *sandbox.Runner
	Path      string   // the shelldon binary
	Args      []string // the worker child-mode arguments
	Env       []string // see WorkerEnv
	Workspace string
	ReadOnly  []string // more paths the worker reads (the live self-coded tools)
	Logger    *slog.Logger
}

var _ Spawner = (*SandboxSpawner)(nil)

// WorkerLimits bound a worker process: generous for Go and a few children,
// small enough for a 416 MB board. The processes of the sandboxes the
// worker builds count against its own process limit (they are its user's,
// and its pids cgroup's), so it has room for its own threads beyond the
// largest of theirs (sandbox.DefaultLimits.Processes): a fork bomb in an
// approved command stops at that command's limit, not at the worker's.
var WorkerLimits = sandbox.Limits{
	CPUSeconds: 120,
	DataBytes:  256 << 20,
	FileBytes:  64 << 20,
	OpenFiles:  256,
	Processes:  sandbox.DefaultLimits.Processes + 96,
}

// WorkerMode is the helper's in-process mode that serves a turn: the worker
// runs inside the sandbox helper itself, one process start per turn.
const WorkerMode = "worker"

// WorkerPolicy is the sandbox policy of a turn's worker.
func WorkerPolicy(binary string, args, env []string, workspace string, timeout time.Duration) sandbox.Policy {
	return sandbox.Policy{
		Argv:      append([]string{binary}, args...),
		Mode:      WorkerMode,
		Env:       env,
		Workspace: workspace,
		ReadOnly:  []string{binary},
		Nested:    true,
		// http_get runs in the worker, behind its own dial-time address
		// check; the commands the worker runs get no network.
		Network: true,
		Timeout: timeout,
		Limits:  WorkerLimits,
		// The worker is shelldon's own code: on a kernel without a required
		// layer it still runs, with the layers there are (the daemon says so
		// at start); code the model chose never gets this allowance.
		AllowDegraded: true,
	}
}

// Spawn starts the worker in a sandbox that lives until ctx's deadline.
func (s *SandboxSpawner) Spawn(ctx context.Context) (Process, error) {
	timeout := time.Minute
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("worker pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("worker pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("worker pipe: %w", err)
	}
	pol := WorkerPolicy(s.Path, s.Args, s.Env, s.Workspace, timeout)
	pol.ReadOnly = append(pol.ReadOnly, s.ReadOnly...)
	pr, err := s.Runner.Start(ctx, pol, inR, outW, errW)
	// The child's ends now belong to the child.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("start sandboxed worker: %w", err)
	}
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	go func() {
		relayStderr(errR, log.With("worker_pid", pr.Pid()))
		errR.Close()
	}()
	return &sandboxProcess{pr: pr, conn: wire.NewConn(outR, inW, 0), stdin: inW, stdout: outR}, nil
}

type sandboxProcess struct {
	pr     *sandbox.Process
	conn   *wire.Conn
	stdin  io.Closer
	stdout io.Closer
	once   sync.Once
	err    error
}

func (p *sandboxProcess) Conn() *wire.Conn { return p.conn }
func (p *sandboxProcess) Pid() int         { return p.pr.Pid() }

func (p *sandboxProcess) Wait() error {
	p.once.Do(func() {
		p.stdin.Close()
		res, err := p.pr.Wait()
		p.stdout.Close()
		switch {
		case err != nil:
			p.err = err
		case res.Signal != "":
			p.err = fmt.Errorf("worker ended by %s", res.Signal)
		case res.ExitCode != 0:
			p.err = fmt.Errorf("worker exit status %d", res.ExitCode)
		}
	})
	return p.err
}

// Kill ends the worker's sandbox, and everything in it, and reaps it.
func (p *sandboxProcess) Kill() error {
	p.pr.Kill()
	p.Wait()
	return nil
}
