package risky

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/gitguard"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/workspace"
)

//go:embed git.md
var gitDescription string

type gitArgs struct {
	Args string `json:"args" jsonschema:"the git arguments as one string, e.g. 'status' or 'commit -m \"fix typo\"'; split without a shell"`
}

// gitHome is git's HOME inside the sandbox (a private tmpfs).
const gitHome = "/tmp/git-home"

// gitScript prepares git's exclude file from the credential deny list (so
// 'add -A' leaves credentials out) and runs git with the checked argv,
// passed as positional parameters: the model's words are never shell text.
const gitScript = `mkdir -p "$HOME/.config/git" && cat > "$HOME/.config/git/ignore" && exec "$@"`

// parseGit splits and checks a git argument string.
func parseGit(args string) (gitguard.Command, error) {
	argv, err := gitguard.Split(args)
	if err != nil {
		return gitguard.Command{}, err
	}
	if gitguard.IsNet(argv) {
		// gitguard.ParseNet checks these against the owner's git.remotes;
		// the path that runs them (the remote's credential and network
		// served from outside the sandbox) is not in the worker yet.
		return gitguard.Command{}, fmt.Errorf("git %s: %w: network commands reach only the remotes the owner configured (git.remotes), and this build does not run them from the git tool yet", argv[0], gitguard.ErrRefused)
	}
	return gitguard.Parse(argv, workspace.CheckName)
}

// GitArgv is the argv the owner approves for a git call, rendered for
// display, or why it would be refused.
func GitArgv(args string) (string, error) {
	cmd, err := parseGit(args)
	if err != nil {
		return "", err
	}
	return gitguard.Render(cmd), nil
}

// gitCovers is what git sees of the workspace's repository configurations:
// each reduced to the variables that name no program (gitguard.ConfigView),
// shown read-only in place of the file by the sandbox. A repository whose
// configuration cannot be vouched for refuses the call.
func gitCovers(workspace string) ([]sandbox.Cover, error) {
	files, err := gitguard.ConfigView(workspace)
	if err != nil {
		return nil, fmt.Errorf("git refused: %w", err)
	}
	covers := make([]sandbox.Cover, len(files))
	for i, f := range files {
		covers[i] = sandbox.Cover{Path: f.Path, Data: f.Data}
	}
	return covers, nil
}

func gitTool(env Env) (*worker.Tool, error) {
	t, err := worker.NewBuiltin(contracts.ToolGit, gitDescription,
		func(ctx context.Context, in gitArgs) (string, error) {
			cmd, err := parseGit(in.Args)
			if err != nil {
				return "", err
			}
			covers, err := gitCovers(env.Workspace.Path())
			if err != nil {
				return "", err
			}
			genv := append(gitguard.Env(gitHome),
				"GIT_AUTHOR_NAME=shelldon", "GIT_AUTHOR_EMAIL=shelldon@localhost",
				"GIT_COMMITTER_NAME=shelldon", "GIT_COMMITTER_EMAIL=shelldon@localhost")
			res, err := env.Sandbox.Run(ctx, sandbox.Policy{
				Argv:          append([]string{"/bin/sh", "-c", gitScript, "sh"}, gitguard.Argv(cmd)...),
				Dir:           env.Workspace.Path(),
				Workspace:     env.Workspace.Path(),
				Env:           genv,
				Stdin:         []byte(strings.Join(workspace.DenyPatterns(), "\n") + "\n"),
				Timeout:       timeout(ctx),
				MaxOutput:     maxOutput,
				AllowDegraded: env.AllowDegraded,
				MinFreeDisk:   env.MinFreeDisk,
				Covers:        covers,
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
	t.Guard = "the git guard (allowed subcommands and options, denied paths)"
	t.Check = decodeCheck(func(in gitArgs) error {
		_, err := parseGit(in.Args)
		return err
	})
	return t, nil
}
