package gitremote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// mirrorConfig is the whole configuration of a mirror, written before
// each use: whatever a run left there (or anyone planted) is gone. No
// hooks, no remotes, nothing that names a program.
const mirrorConfig = "[core]\n\trepositoryformatversion = 0\n\tbare = true\n\thooksPath = /dev/null\n\tfsmonitor = false\n[gc]\n\tauto = 0\n"

// PrepareMirror makes dir a bare repository owned by the daemon (created
// on first use), with its configuration rewritten and its hooks removed.
// dir must not be inside the workspace; the caller chooses it (never the
// model).
func PrepareMirror(ctx context.Context, dir string) error {
	if fi, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, "git", "init", "--bare", "--quiet", "--template=", "--", dir)
		cmd.Env = Env(filepath.Dir(dir))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("gitremote: init the mirror: %v: %s", err, bytes.TrimSpace(out))
		}
	} else if err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("gitremote: the mirror %s is not a directory", dir)
	}
	if err := os.RemoveAll(filepath.Join(dir, "hooks")); err != nil {
		return err
	}
	for _, f := range []string{"config.worktree", "info/attributes", "info/grafts", "objects/info/alternates", "objects/info/http-alternates"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "config"), []byte(mirrorConfig), 0o600)
}

// Fetch runs `git fetch` (args from gitguard.MirrorArgs, which name r's
// URL) into the bare mirror, in the sandbox with the mirror its only
// writable directory and r's host its only network (Run).
func Fetch(ctx context.Context, j Jail, r Remote, mirror string, args []string) error {
	if err := PrepareMirror(ctx, mirror); err != nil {
		return err
	}
	_, err := Run(ctx, j, r, mirror, append([]string{"--git-dir=" + mirror}, args...))
	return err
}

// Local runs git with args in the bare mirror, with no remote, no
// credential and the environment of Env: the daemon reading or updating
// its own mirror.
func Local(ctx context.Context, mirror string, args ...string) (string, error) {
	argv := []string{"--git-dir=" + mirror, "-c", "core.hooksPath=/dev/null", "-c", "protocol.allow=never"}
	cmd := exec.CommandContext(ctx, "git", append(argv, args...)...)
	cmd.Env = Env(mirror)
	cmd.Dir = mirror
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s in the mirror: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
