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
	"syscall"
	"time"

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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
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
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
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
