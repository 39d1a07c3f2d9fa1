package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostGit runs the test's own git (not shelldon's: no user or system
// configuration, no hooks) and returns its output, trimmed.
func hostGit(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// upstream makes a repository with one empty commit on main and its bare
// clone root/repo.git, the remote's side; it returns root, the working
// repository and the bare one.
func upstream(t *testing.T) (root, up, bare string) {
	t.Helper()
	root, up = t.TempDir(), t.TempDir()
	hostGit(t, "-C", up, "init", "-q", "-b", "main")
	hostGit(t, "-C", up, "commit", "-q", "--allow-empty", "-m", "first")
	hostGit(t, "-C", root, "clone", "-q", "--bare", up, "repo.git")
	return root, up, filepath.Join(root, "repo.git")
}

// withGitRemotes gives the home a workspace and appends a git: section
// listing remotes (YAML flow mappings) to its config.yaml, and env lines
// to its .env.
func withGitRemotes(t *testing.T, h string, remotes []string, env ...string) {
	t.Helper()
	os.MkdirAll(filepath.Join(h, "workspace"), 0o700)
	os.Chmod(h, 0o700)
	f, err := os.OpenFile(filepath.Join(h, "config.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "git:\n  remotes:\n")
	for _, r := range remotes {
		fmt.Fprintf(f, "    - %s\n", r)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if len(env) > 0 {
		old, _ := os.ReadFile(filepath.Join(h, ".env"))
		if err := os.WriteFile(filepath.Join(h, ".env"), append(old, []byte(strings.Join(env, "\n")+"\n")...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// gitChat is the owner's side of a conversation in which the fake model
// runs each message as the git tool's arguments (gitArgsScript).
type gitChat struct {
	t *testing.T
	d *daemon
}

// say sends text and returns the daemon's answer.
func (c gitChat) say(text string) map[string]any {
	c.t.Helper()
	status, out := c.d.do(c.t, "POST", "/api/chat", c.d.token, map[string]string{"chat": "git", "text": text})
	if status != 200 {
		c.t.Fatalf("chat %q: %d %v", text, status, out)
	}
	return out
}

// decide approves or denies the approval out asks for and returns the
// reply of the turn it resumes.
func (c gitChat) decide(out map[string]any, approve bool) string {
	c.t.Helper()
	_, res := c.d.do(c.t, "POST", "/api/approvals/"+approvalID(c.t, out), c.d.token, map[string]bool{"approve": approve})
	return fmt.Sprint(res["reply"])
}

// secretNowhere fails t when secret is in the daemon's log or in a file of
// the home but keep (the one file that holds it).
func secretNowhere(t *testing.T, h, keep, log, secret string) {
	t.Helper()
	if strings.Contains(log, secret) {
		t.Error("the daemon's log holds the secret")
	}
	filepath.WalkDir(h, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() || p == keep {
			return nil
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
			t.Errorf("the secret is in %s", p)
		}
		return nil
	})
}
