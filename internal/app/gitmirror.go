package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/gitguard"
	"github.com/shelldon/shelldon/internal/gitremote"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/sandbox"
)

// gitMirrorTimeout bounds the daemon's fetch from a remote.
const gitMirrorTimeout = 5 * time.Minute

// gitMirrors is the directory of the daemon's bare mirrors of the owner's
// remotes, <home>/cache/git-remotes: outside the workspace, written only
// by the daemon, and visible read-only to the workers (the sandboxed git
// fetches from it with no network). A cache: backups leave it out, and a
// mirror lost is fetched again.
func gitMirrors(home string) string { return filepath.Join(home, "cache", "git-remotes") }

// ensureGitMirrors makes the mirrors' directory, so the workers' sandbox
// can show it from their start. A workspace that holds it (one configured
// as the home itself) gets none: the model must never write a mirror.
func ensureGitMirrors(cfg *config.Config) (string, error) {
	dir := gitMirrors(cfg.Home)
	inside := func(ws, d string) error {
		if rel, err := filepath.Rel(ws, d); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return fmt.Errorf("git remotes: the mirrors (%s) would be inside the workspace (%s); move the workspace out of shelldon's home", dir, cfg.Workspace)
		}
		return nil
	}
	if err := inside(cfg.Workspace, dir); err != nil {
		return "", err
	}
	// Once more as the kernel resolves them: a workspace reached through
	// a symbolic link (or a home that is one) must not hide that they meet.
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	if err := inside(real(cfg.Workspace), filepath.Join(real(cfg.Home), "cache", "git-remotes")); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("git mirrors: %w", err)
	}
	if err := inside(real(cfg.Workspace), real(dir)); err != nil {
		return "", err
	}
	return dir, nil
}

// gitRemotes is the owner's git.remotes for a turn's job: names, schemes,
// hosts and allow flags, never a URL's path or a credential.
func gitRemotes(cfg *config.Config) []contracts.GitRemote {
	var out []contracts.GitRemote
	for _, r := range cfg.Git.Remotes {
		out = append(out, contracts.GitRemote{Name: r.Name, Scheme: r.Scheme, Host: r.Host, AllowForce: r.AllowForce, AllowDelete: r.AllowDelete})
	}
	return out
}

// remotes is the owner's git.remotes in force, for the git tool's card.
func (a *App) remotes() []gitguard.Remote {
	if cfg := a.current(); cfg != nil {
		return core.GitRemotes(gitRemotes(cfg))
	}
	return nil
}

// remoteOf is r as gitremote runs it, with its credential.
func remoteOf(cfg *config.Config, r config.GitRemote) gitremote.Remote {
	return gitremote.Remote{
		Name: r.Name, URL: r.URL, Scheme: r.Scheme, Host: r.Host,
		Username: r.Username, Token: cfg.GitToken(r),
		User: r.User, Path: r.Path, SSHKey: r.SSHKey, HostKey: r.HostKey,
	}
}

// gitJail is where git against a remote runs: the daemon's sandbox.
func (a *App) gitJail(cfg *config.Config) gitremote.Jail {
	j := gitremote.Jail{Exe: a.exe, AllowDegraded: cfg.Sandbox.AllowDegraded, MinFreeDisk: uint64(cfg.Sandbox.MinFreeDisk)}
	if a.Sandbox != nil {
		j.Sandbox = a.Sandbox
	}
	return j
}

// approvedRemote is the config in force, nc's remote as it configures it
// and the remote's mirror, or an error when the remote is no longer the
// one the card named (gone, another scheme or host, or no longer allowing
// the force or deletion nc asks for).
func (a *App) approvedRemote(nc gitguard.NetCommand) (*config.Config, config.GitRemote, string, error) {
	cfg := a.current()
	if cfg == nil {
		return nil, config.GitRemote{}, "", fmt.Errorf("no config in force")
	}
	r, ok := cfg.GitRemote(nc.Remote.Name)
	if !ok || r.Scheme != nc.Remote.Scheme || r.Host != nc.Remote.Host || (!r.AllowForce && hasForce(nc)) || (!r.AllowDelete && hasDelete(nc)) {
		return nil, config.GitRemote{}, "", fmt.Errorf("the remote %s changed since the call was approved; ask again", nc.Remote.Name)
	}
	dir, err := ensureGitMirrors(cfg)
	if err != nil {
		return nil, config.GitRemote{}, "", err
	}
	return cfg, r, filepath.Join(dir, r.Name+".git"), nil
}

// gitFetch is the network half of an approved git fetch or pull (the core
// checked the call is the approved one and parsed it): the remote as the
// config in force has it, which must still be the one the card named,
// fetched into its mirror with its credential bound to its host.
func (a *App) gitFetch(ctx context.Context, nc gitguard.NetCommand) (string, error) {
	cfg, r, mirror, err := a.approvedRemote(nc)
	if err != nil {
		return "", err
	}
	a.gitMu.Lock()
	defer a.gitMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, gitMirrorTimeout)
	defer cancel()
	err = gitremote.Fetch(ctx, a.gitJail(cfg), remoteOf(cfg, r), mirror, gitguard.MirrorArgs(nc, r.URL))
	if err != nil {
		return "", err
	}
	return mirror, nil
}

// gitPushTimeout bounds the daemon's push, the import of the commits
// included.
const gitPushTimeout = 5 * time.Minute

// gitPush carries out an approved push (the core checked the call and
// its binding): the bound commits are copied from the workspace into the
// mirror by git in the sandbox (the workspace read-only, the mirror the
// only place written, no network), checked, and pushed from the mirror by
// name, with the remote's credential bound to its host. A commit made in
// the workspace after the card was shown is not among them.
func (a *App) gitPush(ctx context.Context, nc gitguard.NetCommand, commits []string) (string, error) {
	if a.Sandbox == nil {
		return "", fmt.Errorf("git push needs the sandbox, to read the workspace")
	}
	cfg, r, mirror, err := a.approvedRemote(nc)
	if err != nil {
		return "", err
	}
	a.gitMu.Lock()
	defer a.gitMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, gitPushTimeout)
	defer cancel()
	if err := gitremote.PrepareMirror(ctx, mirror); err != nil {
		return "", err
	}
	// The commits, from the workspace into the mirror, under refs of the
	// daemon's own: git in the sandbox reads the workspace's repository
	// (the model's) and writes only the mirror.
	fetch := []string{"git", "--git-dir=" + mirror,
		"-c", "protocol.allow=never", "-c", "protocol.file.allow=always", "-c", "core.hooksPath=/dev/null",
		"-c", "core.fsmonitor=false", "-c", "safe.directory=*", "-c", "gc.auto=0", "-c", "credential.helper=",
		"-c", "transfer.fsckObjects=true",
		"fetch", "--no-tags", "--no-recurse-submodules", "--no-write-fetch-head", "--quiet", "--", cfg.Workspace}
	var want []int
	for i, c := range commits {
		if c == "-" {
			continue
		}
		fetch = append(fetch, fmt.Sprintf("+%s:refs/shelldon/push/%d", c, i))
		want = append(want, i)
	}
	defer func() {
		for _, i := range want {
			_, _ = gitremote.Local(context.WithoutCancel(ctx), mirror, "update-ref", "-d", fmt.Sprintf("refs/shelldon/push/%d", i))
		}
	}()
	if len(want) > 0 {
		res, err := a.Sandbox.Run(ctx, sandbox.Policy{
			Argv: fetch, Dir: mirror, Workspace: mirror, ReadOnly: []string{cfg.Workspace},
			Env: gitremote.Env("/tmp"), Timeout: gitPushTimeout, MaxOutput: 8 << 10,
			AllowDegraded: cfg.Sandbox.AllowDegraded,
		})
		if err != nil {
			return "", fmt.Errorf("copy the commits from the workspace: %w", err)
		}
		if !res.OK() {
			return "", fmt.Errorf("copy the commits from the workspace: exit %d: %s", res.ExitCode, inert.Line(string(res.Stderr)))
		}
		// Whatever that run could have left in the mirror's configuration
		// or hooks is gone before the credential is used there.
		if err := gitremote.PrepareMirror(ctx, mirror); err != nil {
			return "", err
		}
		for _, i := range want {
			got, err := gitremote.Local(ctx, mirror, "rev-parse", "--verify", "--quiet", fmt.Sprintf("refs/shelldon/push/%d^{commit}", i))
			if err != nil || got != commits[i] {
				return "", fmt.Errorf("the commit %s did not arrive from the workspace", commits[i])
			}
		}
	}
	// A leased ref replaces the remote's only if it still is what the
	// mirror last saw there (nothing seen: it must not exist), as git's
	// own --force-with-lease leases against its remote-tracking ref.
	leases := make([]string, len(nc.Refs))
	for i, ref := range nc.Refs {
		if ref.Lease {
			leases[i], _ = gitremote.Local(ctx, mirror, "rev-parse", "--verify", "--quiet", gitguard.PushDst(ref))
		}
	}
	out, err := gitremote.Run(ctx, a.gitJail(cfg), remoteOf(cfg, r), mirror,
		append([]string{"--git-dir=" + mirror}, gitguard.PushArgs(nc, r.URL, commits, leases)...))
	if err != nil {
		return "", err
	}
	if gitguard.PushDryRun(nc) {
		return out, nil
	}
	// The mirror now knows the remote's refs as pushed: the next card
	// shows what is new from there.
	for i, ref := range nc.Refs {
		dst := gitguard.PushDst(ref)
		if ref.Delete {
			_, _ = gitremote.Local(ctx, mirror, "update-ref", "-d", dst)
		} else {
			_, _ = gitremote.Local(ctx, mirror, "update-ref", dst, commits[i])
		}
	}
	return out, nil
}

func hasForce(nc gitguard.NetCommand) bool {
	for _, r := range nc.Refs {
		if r.Force {
			return true
		}
	}
	return false
}

func hasDelete(nc gitguard.NetCommand) bool {
	for _, r := range nc.Refs {
		if r.Delete {
			return true
		}
	}
	return false
}

// gitCardTimeout bounds each git command the push card runs.
const gitCardTimeout = 20 * time.Second

// sandboxGit runs a guarded git command line (gitguard.Argv) in the
// workspace, in the sandbox, as the git tool does (the repository's
// configuration reduced, no network), with the mirror of a remote visible
// read-only and its objects as alternates; it returns the standard output.
// For the push card: nothing here is sent anywhere.
func (a *App) sandboxGit(ctx context.Context, argv []string, mirror string) (string, error) {
	cfg := a.current()
	if cfg == nil || a.Sandbox == nil {
		return "", fmt.Errorf("no sandbox here")
	}
	files, err := gitguard.ConfigView(cfg.Workspace)
	if err != nil {
		return "", err
	}
	covers := make([]sandbox.Cover, len(files))
	for i, f := range files {
		covers[i] = sandbox.Cover{Path: f.Path, Data: f.Data}
	}
	env := gitguard.Env("/tmp/git-home")
	var ro []string
	if fi, err := os.Stat(filepath.Join(mirror, "objects")); err == nil && fi.IsDir() {
		ro = []string{mirror}
		env = append(env, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(mirror, "objects"))
	}
	res, err := a.Sandbox.Run(ctx, sandbox.Policy{
		Argv: argv, Dir: cfg.Workspace, Workspace: cfg.Workspace, ReadOnly: ro, Env: env,
		Timeout: gitCardTimeout, MaxOutput: 32 << 10, AllowDegraded: cfg.Sandbox.AllowDegraded, Covers: covers,
	})
	if err != nil {
		return "", err
	}
	if !res.OK() {
		return "", fmt.Errorf("exit %d: %s", res.ExitCode, inert.Line(string(res.Stderr)))
	}
	return string(res.Stdout), nil
}
