package risky

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/gitguard"
	"github.com/shelldon/shelldon/internal/inert"
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

// parseGit splits and checks a git argument string: a local command, or
// (net set) a fetch, pull or push naming one of remotes.
func parseGit(args string, remotes []gitguard.Remote) (cmd gitguard.Command, net *gitguard.NetCommand, err error) {
	argv, err := gitguard.Split(args)
	if err != nil {
		return gitguard.Command{}, nil, err
	}
	if gitguard.IsNet(argv) {
		nc, err := gitguard.ParseNet(argv, remotes)
		if err != nil {
			return gitguard.Command{}, nil, err
		}
		return gitguard.Command{}, &nc, nil
	}
	cmd, err = gitguard.Parse(argv, workspace.CheckName)
	return cmd, nil, err
}

// GitArgv is the argv the owner approves for a local git call, rendered
// for display, or why it would be refused (a network command among them:
// see GitNet).
func GitArgv(args string) (string, error) {
	cmd, _, err := parseGit(args, nil)
	if err != nil {
		return "", err
	}
	return gitguard.Render(cmd), nil
}

// GitNet parses args as a git fetch, pull or push against the owner's remotes,
// for the approval card: ok is false when args is not a network command
// (see GitArgv).
func GitNet(args string, remotes []gitguard.Remote) (nc gitguard.NetCommand, ok bool, err error) {
	argv, err := gitguard.Split(args)
	if err != nil || !gitguard.IsNet(argv) {
		return gitguard.NetCommand{}, false, nil
	}
	_, net, err := parseGit(args, remotes)
	if err != nil {
		return gitguard.NetCommand{}, true, err
	}
	return *net, true, nil
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
			cmd, nc, err := parseGit(in.Args, env.Remotes)
			if err != nil {
				return "", err
			}
			covers, err := gitCovers(env.Workspace.Path())
			if err != nil {
				return "", err
			}
			if nc != nil {
				return gitNet(ctx, env, in.Args, *nc, covers)
			}
			return runGit(ctx, env, gitguard.Argv(cmd), covers, nil)
		})
	if err != nil {
		return nil, err
	}
	t.Guard = "the git guard (allowed subcommands and options, denied paths)"
	t.Check = decodeCheck(func(in gitArgs) error {
		_, _, err := parseGit(in.Args, env.Remotes)
		return err
	})
	// A push is bound to the commits its refs name when the owner is
	// asked: the card shows those, and only those leave.
	t.Bind = func(ctx context.Context, raw json.RawMessage) (string, error) {
		var in gitArgs
		if err := json.Unmarshal(raw, &in); err != nil {
			return "", err
		}
		_, nc, err := parseGit(in.Args, env.Remotes)
		if err != nil || nc == nil || nc.Sub != "push" {
			return "", err
		}
		return pushBinding(ctx, env, *nc)
	}
	return t, nil
}

// runGit runs a guarded git command line in the sandbox, with readOnly
// (the daemon's mirror of a remote) visible besides the workspace.
func runGit(ctx context.Context, env Env, argv []string, covers []sandbox.Cover, readOnly []string) (string, error) {
	genv := append(gitguard.Env(gitHome),
		"GIT_AUTHOR_NAME=shelldon", "GIT_AUTHOR_EMAIL=shelldon@localhost",
		"GIT_COMMITTER_NAME=shelldon", "GIT_COMMITTER_EMAIL=shelldon@localhost")
	res, err := env.Sandbox.Run(ctx, sandbox.Policy{
		Argv:          append([]string{"/bin/sh", "-c", gitScript, "sh"}, argv...),
		Dir:           env.Workspace.Path(),
		Workspace:     env.Workspace.Path(),
		ReadOnly:      readOnly,
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
}

// gitNet runs an approved git fetch or pull: the daemon fetches from the
// remote into its own mirror (the network half, with the credential, out
// of the sandbox's reach), then git in the sandbox, with no network,
// fetches from the mirror into refs/remotes/<remote>/ and, for a pull,
// merges.
func gitNet(ctx context.Context, env Env, args string, nc gitguard.NetCommand, covers []sandbox.Cover) (string, error) {
	if env.Git == nil {
		return "", fmt.Errorf("git %s: not available here", nc.Sub)
	}
	if nc.Sub == "push" {
		if worker.BindingFrom(ctx) == "" {
			return "", errors.New("git push runs only as the call the owner approved, bound to its commits")
		}
		got, err := env.Git.GitPush(ctx, contracts.GitPush{Args: args})
		if err != nil {
			return "", fmt.Errorf("git push %s: %w", nc.Remote.Name, err)
		}
		out := "pushed to " + nc.Remote.Name + ":\n" + got.Output
		// The workspace's refs/remotes/<remote>/ follow, as after a push
		// of git's own: the pushed commits are the workspace's.
		if commits, err := gitguard.ParsePushBinding(nc, worker.BindingFrom(ctx)); err == nil {
			for _, argv := range gitguard.TrackingArgv(nc, commits) {
				if _, err := runGitQuiet(ctx, env, argv, covers); err != nil {
					out += "\n(the workspace's refs/remotes/" + nc.Remote.Name + "/ were not updated: " + inert.Line(err.Error()) + ")"
					break
				}
			}
		}
		return out, nil
	}
	got, err := env.Git.GitFetch(ctx, contracts.GitFetch{Args: args})
	if err != nil {
		return "", fmt.Errorf("git %s %s: %w", nc.Sub, nc.Remote.Name, err)
	}
	if !filepath.IsAbs(got.Mirror) || filepath.Clean(got.Mirror) != got.Mirror {
		return "", fmt.Errorf("git %s: the daemon named no mirror", nc.Sub)
	}
	out, err := runGit(ctx, env, gitguard.FetchArgv(nc, got.Mirror), covers, []string{got.Mirror})
	if err != nil {
		return "", fmt.Errorf("fetched from %s, but the workspace's fetch failed: %w", nc.Remote.Name, err)
	}
	out = "fetched from " + nc.Remote.Name + " into refs/remotes/" + nc.Remote.Name + "/: " + out
	if nc.Sub != "pull" {
		return out, nil
	}
	merged, err := runGit(ctx, env, gitguard.MergeArgv(nc), covers, nil)
	if err != nil {
		return "", fmt.Errorf("%s\nthe merge failed: %w", out, err)
	}
	return out + "\nmerged: " + merged, nil
}

// pushBinding resolves each ref a push names to its commit, with git in
// the sandbox: the binding the owner approves (gitguard.PushBinding).
func pushBinding(ctx context.Context, env Env, nc gitguard.NetCommand) (string, error) {
	covers, err := gitCovers(env.Workspace.Path())
	if err != nil {
		return "", err
	}
	var commits []string
	for _, r := range nc.Refs {
		if r.Delete {
			commits = append(commits, "-")
			continue
		}
		out, err := runGitQuiet(ctx, env, gitguard.RevParseArgv(r.Src), covers)
		if err != nil || !gitguard.IsObjectName(out) {
			return "", fmt.Errorf("git push: %q names no commit in the workspace", r.Src)
		}
		commits = append(commits, out)
	}
	return gitguard.PushBinding(commits), nil
}

// runGitQuiet runs a guarded git command line in the sandbox and returns
// its standard output, trimmed.
func runGitQuiet(ctx context.Context, env Env, argv []string, covers []sandbox.Cover) (string, error) {
	res, err := env.Sandbox.Run(ctx, sandbox.Policy{
		Argv:          append([]string{"/bin/sh", "-c", gitScript, "sh"}, argv...),
		Dir:           env.Workspace.Path(),
		Workspace:     env.Workspace.Path(),
		Env:           gitguard.Env(gitHome),
		Timeout:       timeout(ctx),
		MaxOutput:     maxOutput,
		AllowDegraded: env.AllowDegraded,
		MinFreeDisk:   env.MinFreeDisk,
		Covers:        covers,
	})
	if err != nil {
		return "", err
	}
	if !res.OK() {
		return "", errors.New(report(res))
	}
	return strings.TrimSpace(string(res.Stdout)), nil
}
