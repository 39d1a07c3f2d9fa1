package risky

import (
	"context"
	_ "embed"
	"errors"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/worker"
)

//go:embed run_shell.md
var runShellDescription string

type runShellArgs struct {
	Command string `json:"command" jsonschema:"the shell command line, run with /bin/sh -c in the workspace"`
}

// maxCommand caps a command line.
const maxCommand = 8 << 10

func checkCommand(cmd string) error {
	switch {
	case strings.TrimSpace(cmd) == "":
		return errors.New("run_shell: the command is empty")
	case len(cmd) > maxCommand:
		return errors.New("run_shell: the command is longer than 8 KiB")
	case strings.ContainsRune(cmd, 0):
		return errors.New("run_shell: the command contains a NUL byte")
	}
	return nil
}

func runShellTool(env Env) (*worker.Tool, error) {
	t, err := worker.NewBuiltin(contracts.ToolRunShell, runShellDescription,
		func(ctx context.Context, in runShellArgs) (string, error) {
			if err := checkCommand(in.Command); err != nil {
				return "", err
			}
			res, err := env.Sandbox.Run(ctx, sandbox.Policy{
				Argv:          []string{"/bin/sh", "-c", in.Command},
				Workspace:     env.Workspace.Path(),
				Env:           sandbox.Env(),
				Timeout:       timeout(ctx),
				MaxOutput:     maxOutput,
				AllowDegraded: env.AllowDegraded,
				MinFreeDisk:   env.MinFreeDisk,
			})
			if err != nil {
				return "", err
			}
			out := report(res)
			if !res.OK() {
				return "", errors.New(out)
			}
			return out, nil
		})
	if err != nil {
		return nil, err
	}
	t.Guard = "the command check"
	t.Check = decodeCheck(func(in runShellArgs) error { return checkCommand(in.Command) })
	return t, nil
}
