// Package childproc holds the child modes of the shelldon binary. The daemon
// re-executes its own binary as `shelldon be-child <mode>` for work that must
// happen in a separate process; Dispatch runs the named mode. Children start
// with a scrubbed environment and hold no credential.
package childproc

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/gitremote"
	"github.com/shelldon/shelldon/internal/redact"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/wire"
	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/worker/builtin"
	"github.com/shelldon/shelldon/internal/worker/memorytools"
	"github.com/shelldon/shelldon/internal/worker/risky"
	"github.com/shelldon/shelldon/internal/worker/scheduletools"
	"github.com/shelldon/shelldon/internal/worker/selftools"
	"github.com/shelldon/shelldon/internal/worker/skilltools"
	"github.com/shelldon/shelldon/internal/workspace"
)

// Arg is the first argument that selects a child mode.
const Arg = "be-child"

// WorkerArgs are the arguments that start a turn's worker.
var WorkerArgs = []string{Arg, "worker"}

// Dispatch runs the child mode named in args (the arguments after Arg) and
// returns the process exit status.
func Dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "shelldon be-child: missing mode")
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	switch args[0] {
	case "worker":
		return workerExit(runWorker(stdin, stdout, logger), logger)
	case "sandbox":
		// The worker may run inside the helper once the sandbox is built.
		return sandbox.Helper(map[string]func() int{
			"worker":           func() int { return workerExit(runWorker(stdin, stdout, logger), logger) },
			selftools.GateMode: func() int { return gateMode(stdin, stdout, logger) },
		})
	case "gate":
		return gateMode(stdin, stdout, logger)
	// git against an owner's remote, inside its sandbox (package gitremote).
	case "git-net":
		return gitremote.NetMain(args[1:], stderr)
	case "git-ssh":
		return gitremote.SSHMain(args[1:], stdin, stdout, stderr)
	case "git-cred":
		return gitremote.CredMain(args[1:], stdin, stdout, stderr)
	case "toolcall":
		if err := hideFromChildren(); err != nil {
			return exitOf(err, logger)
		}
		return exitOf(runToolCall(stdin, stdout), logger)
	case "eval":
		if err := runEval(stdin, stdout); err != nil {
			logger.Error("eval failed", "err", err)
			return 1
		}
		return 0
	default:
		fmt.Fprintf(stderr, "shelldon be-child: unknown mode %q\n", args[0])
		return 2
	}
}

func exitOf(err error, logger *slog.Logger) int {
	if err != nil {
		logger.Error("child failed", "err", err)
		return 1
	}
	return 0
}

func workerExit(err error, logger *slog.Logger) int {
	if err != nil {
		logger.Error("worker failed", "err", err)
		return 1
	}
	return 0
}

// runWorker serves one turn over stdin and stdout. A worker whose job is
// not there yet (one started ahead of need, agent.warm_worker) rehearses
// the turn while it waits (worker.Rehearse), building its tools against the
// root directory, which it only opens: no tool is called.
func runWorker(stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	red := redact.New()
	if f, ok := stdin.(*os.File); ok {
		worker.Rehearse(buildTools, red.JSONArgs, "/", jobArrived(f))
	}
	conn := wire.NewConn(stdin, stdout, 0)
	return worker.Serve(context.Background(), conn, buildTools, red.JSONArgs, logger)
}

// buildTools makes the registry of built-in tools for a turn.
func buildTools(job contracts.Job, d worker.Daemon) (*worker.Registry, func(), error) {
	ws, err := workspace.Open(job.Workspace)
	if err != nil {
		return nil, nil, fmt.Errorf("open workspace: %w", err)
	}
	reg := worker.NewRegistry()
	if err := builtin.Register(reg, builtin.Env{Workspace: ws, Eval: evalInChild}); err != nil {
		ws.Close()
		return nil, nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		ws.Close()
		return nil, nil, err
	}
	runner, err := sandbox.NewRunner(exe)
	if err != nil {
		ws.Close()
		return nil, nil, err
	}
	sb := &knownLater{runner: runner, know: func() {
		if len(job.SandboxLayers) > 0 {
			runner.Known(sandbox.TierOf(job.SandboxLayers))
		}
	}}
	lan, err := lanOf(job.LANHosts)
	if err != nil {
		ws.Close()
		return nil, nil, err
	}
	gitd, _ := d.(risky.GitDaemon) // the daemon's client is one
	if err := risky.Register(reg, risky.Env{Workspace: ws, Sandbox: sb, AllowDegraded: job.AllowDegraded, MinFreeDisk: job.MinFreeDisk, Config: d, Providers: job.Providers, LAN: lan,
		Remotes: gitRemotesOf(job.GitRemotes), Git: gitd}); err != nil {
		ws.Close()
		return nil, nil, err
	}
	if err := skilltools.Register(reg, d); err != nil {
		ws.Close()
		return nil, nil, err
	}
	if err := memorytools.Register(reg, d); err != nil {
		ws.Close()
		return nil, nil, err
	}
	if err := scheduletools.Register(reg, d); err != nil {
		ws.Close()
		return nil, nil, err
	}
	_, perr := exec.LookPath("python3")
	finder, _ := d.(worker.ToolFinder) // the daemon's client is one
	if err := selftools.Register(reg, selftools.Env{Daemon: d, Sandbox: sb, Binary: exe, Tools: job.SelfTools,
		AllowDegraded: job.AllowDegraded, Python: perr == nil, Search: job.ToolSearch, Finder: finder, PyCache: job.PyGateCache, LAN: lan}); err != nil {
		ws.Close()
		return nil, nil, err
	}
	return reg, func() { ws.Close() }, nil
}

// IsChild reports whether the process was started as a child mode.
func IsChild(args []string) bool { return len(args) > 1 && args[1] == Arg }

// Main is the entry of a child process: it dispatches and exits.
func Main() {
	os.Exit(Dispatch(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
}
