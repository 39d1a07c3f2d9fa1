// Package risky holds the RISKY built-in tools of DESIGN section 3:
// write_file, run_shell, http_get and git, and update_config. Each call runs only after the
// owner approved exactly that call (the worker's loop parks the turn; see
// package worker); each tool also keeps its own guards, approved or not:
// write_file the workspace jail and its protected names, run_shell and git
// the sandbox, http_get the dial-time address check.
package risky

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/gitguard"
	"github.com/shelldon/shelldon/internal/netguard"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/workspace"
)

// Sandbox runs a command in the sandbox.
type Sandbox interface {
	Run(ctx context.Context, p sandbox.Policy) (sandbox.Result, error)
}

// Env is what the RISKY tools work with.
type Env struct {
	Workspace *workspace.Root
	Sandbox   Sandbox
	// AllowDegraded passes the owner's sandbox.allow_degraded to every
	// sandboxed run; without it a degraded kernel refuses them.
	AllowDegraded bool
	// MinFreeDisk passes the owner's sandbox.min_free_disk (bytes) to every
	// sandboxed command: it does not start, or is stopped, when the
	// workspace's file system has less free space. 0 means no check.
	MinFreeDisk uint64
	// HTTP is http_get's client; nil means the default SSRF-safe one,
	// reaching the hosts of LAN besides public ones.
	HTTP *netguard.Client
	// LAN is the owner's http.allow_hosts (from the job the daemon wrote,
	// never from the model): the hosts of the owner's network http_get may
	// reach. Used when HTTP is nil.
	LAN netguard.LAN
	// Config applies an approved update_config (the daemon).
	Config Configurer
	// Providers are the names of the providers the owner configured, for
	// update_config's check; nil means not known (the daemon checks).
	Providers []string
	// Remotes are the owner's git.remotes (from the job the daemon wrote):
	// the git tool's fetch and pull name one of them; none means they are
	// refused.
	Remotes []gitguard.Remote
	// Git carries out the network half of an approved git fetch, pull or
	// push (the daemon); nil means they are unavailable.
	Git GitDaemon
}

// GitDaemon is what the git tool asks of the daemon: fetch what an
// approved git fetch or pull names into its mirror of the remote, or
// carry out an approved push.
type GitDaemon interface {
	GitFetch(ctx context.Context, req contracts.GitFetch) (contracts.GitFetched, error)
	GitPush(ctx context.Context, req contracts.GitPush) (contracts.GitPushed, error)
}

// Register adds the RISKY tools to reg.
func Register(reg *worker.Registry, env Env) error {
	if env.Workspace == nil || env.Sandbox == nil {
		return fmt.Errorf("risky: the workspace and the sandbox are required")
	}
	for _, build := range []func(Env) (*worker.Tool, error){runShellTool, writeFileTool, httpGetTool, gitTool, updateConfigTool} {
		t, err := build(env)
		if err != nil {
			return fmt.Errorf("risky: %w", err)
		}
		if err := reg.Add(t); err != nil {
			return fmt.Errorf("risky: %w", err)
		}
	}
	return nil
}

// Output caps of a sandboxed command, per stream, as the model sees them.
const maxOutput = 16 << 10

// commandTimeout bounds one sandboxed command; the turn's own deadline may
// be sooner.
const commandTimeout = 30 * time.Second

// report turns a sandboxed run into the text the model reads.
func report(res sandbox.Result) string {
	var b strings.Builder
	switch {
	case res.DiskLow:
		low := res.DiskLowDetail
		if low == "" {
			low = "free space on the workspace's file system fell below sandbox.min_free_disk"
		}
		switch res.Signal {
		case "killed":
			fmt.Fprintf(&b, "stopped after %s: %s (what it wrote so far is still there)\n", res.Duration.Round(time.Millisecond), low)
		case "":
			fmt.Fprintf(&b, "exit status %d, but it took the workspace's file system below its floor: %s (what it wrote is still there)\n", res.ExitCode, low)
		default:
			fmt.Fprintf(&b, "killed by %s, and it took the workspace's file system below its floor: %s (what it wrote is still there)\n", res.Signal, low)
		}
	case res.TimedOut:
		fmt.Fprintf(&b, "timed out after %s and was killed (with everything it started)\n", res.Duration.Round(time.Millisecond))
	case res.Signal != "":
		fmt.Fprintf(&b, "killed by %s\n", res.Signal)
	default:
		fmt.Fprintf(&b, "exit status %d\n", res.ExitCode)
	}
	section := func(name string, data []byte, truncated bool) {
		if len(data) == 0 && !truncated {
			return
		}
		fmt.Fprintf(&b, "%s:\n%s", name, strings.ToValidUTF8(string(data), "\uFFFD"))
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		if truncated {
			fmt.Fprintf(&b, "[%s truncated at %d bytes]\n", name, len(data))
		}
	}
	section("stdout", res.Stdout, res.StdoutTruncated)
	section("stderr", res.Stderr, res.StderrTruncated)
	return strings.TrimRight(b.String(), "\n")
}

// timeout is the command's time: its own cap, or what the turn has left.
func timeout(ctx context.Context) time.Duration {
	d := commandTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		d = time.Until(dl)
	}
	return d
}
