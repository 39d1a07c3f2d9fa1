package risky

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/gitguard"
	"github.com/shelldon/shelldon/internal/gitremote"
	"github.com/shelldon/shelldon/internal/gitserve"
	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/workspace"
)

const remoteToken = "tok-Risky-7c1e22"

// hostGit runs the test's own git (not the tool's) in dir.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// tokenServer serves root by git http-backend behind a token check and
// counts requests; a canary (no repository) counts its own.
type tokenServer struct {
	*httptest.Server
	mu   sync.Mutex
	hits int
}

func (s *tokenServer) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.hits }

func newTokenServer(t *testing.T, root string) *tokenServer {
	t.Helper()
	s := &tokenServer{}
	s.Server = gitserve.HTTP(t, root, remoteToken, func(http.ResponseWriter, *http.Request) bool {
		s.mu.Lock()
		s.hits++
		s.mu.Unlock()
		return false
	})
	return s
}

// daemonSide is the daemon's half as the core and the app carry it out:
// it parses the approved arguments itself and fetches into its mirror.
type daemonSide struct {
	jail    gitremote.Jail
	remote  gitremote.Remote
	remotes []gitguard.Remote
	mirror  string
	calls   []string
}

func (d *daemonSide) GitFetch(ctx context.Context, req contracts.GitFetch) (contracts.GitFetched, error) {
	d.calls = append(d.calls, req.Args)
	argv, err := gitguard.Split(req.Args)
	if err != nil {
		return contracts.GitFetched{}, err
	}
	nc, err := gitguard.ParseNet(argv, d.remotes)
	if err != nil {
		return contracts.GitFetched{}, err
	}
	if err := gitremote.Fetch(ctx, d.jail, d.remote, d.mirror, gitguard.MirrorArgs(nc, d.remote.URL)); err != nil {
		return contracts.GitFetched{}, err
	}
	return contracts.GitFetched{Mirror: d.mirror}, nil
}

// TestGitFetchPull: fetch and pull through the daemon's mirror, with a
// real remote behind a token, a real sandbox with no network, and real
// git: the refs land in refs/remotes/origin/, a pull fast-forwards, a
// diverged pull is refused without --no-ff, and the token reaches neither
// the workspace nor the canary.
func TestGitFetchPull(t *testing.T) {
	root := t.TempDir()
	up := t.TempDir()
	hostGit(t, up, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(up, "a.txt"), []byte("a\n"), 0o644)
	hostGit(t, up, "add", "a.txt")
	hostGit(t, up, "commit", "-q", "-m", "first")
	hostGit(t, root, "clone", "-q", "--bare", up, "repo.git")
	bare := filepath.Join(root, "repo.git")
	srv := newTokenServer(t, root)
	canary := newTokenServer(t, "")

	ws := t.TempDir()
	hostGit(t, ws, "clone", "-q", bare, ".")
	hostGit(t, ws, "remote", "remove", "origin")

	host := strings.TrimPrefix(srv.URL, "http://")
	remotes := []gitguard.Remote{{Name: "origin", Scheme: "http", Host: host}}
	d := &daemonSide{
		remote:  gitremote.Remote{Name: "origin", URL: srv.URL + "/repo.git", Scheme: "http", Host: host, Username: "x-access-token", Token: remoteToken},
		remotes: remotes,
		mirror:  filepath.Join(t.TempDir(), "git-remotes", "origin.git"),
	}
	tool := newNetGitTool(t, ws, remotes, d)
	d.jail = gitremote.Jail{Sandbox: runner, Exe: testHelper(t)}
	run := func(args string) (string, error) {
		raw, _ := json.Marshal(gitArgs{Args: args})
		if err := tool.Check(context.Background(), raw); err != nil {
			return "", err
		}
		return tool.Run(context.Background(), raw)
	}

	// The remote moves on.
	os.WriteFile(filepath.Join(up, "b.txt"), []byte("b\n"), 0o644)
	hostGit(t, up, "add", "b.txt")
	hostGit(t, up, "commit", "-q", "-m", "second")
	hostGit(t, up, "push", "-q", bare, "main")
	second := hostGit(t, up, "rev-parse", "HEAD")

	out, err := run("fetch origin main")
	if err != nil {
		t.Fatalf("fetch: %v\n%s", err, out)
	}
	if got := hostGit(t, ws, "rev-parse", "refs/remotes/origin/main"); got != second {
		t.Fatalf("refs/remotes/origin/main = %s, want %s", got, second)
	}
	if hostGit(t, ws, "rev-parse", "HEAD") == second {
		t.Fatal("fetch moved HEAD")
	}

	out, err = run("pull origin main")
	if err != nil {
		t.Fatalf("pull: %v\n%s", err, out)
	}
	if got := hostGit(t, ws, "rev-parse", "HEAD"); got != second {
		t.Fatalf("after pull HEAD = %s, want %s", got, second)
	}

	// Diverged: the default fast-forward-only pull refuses to merge.
	os.WriteFile(filepath.Join(up, "c.txt"), []byte("c\n"), 0o644)
	hostGit(t, up, "add", "c.txt")
	hostGit(t, up, "commit", "-q", "-m", "third")
	hostGit(t, up, "push", "-q", bare, "main")
	os.WriteFile(filepath.Join(ws, "local.txt"), []byte("l\n"), 0o644)
	hostGit(t, ws, "add", "local.txt")
	hostGit(t, ws, "commit", "-q", "-m", "local")
	local := hostGit(t, ws, "rev-parse", "HEAD")
	if out, err := run("pull origin main"); err == nil {
		t.Fatalf("a diverged pull merged without --no-ff:\n%s", out)
	}
	if got := hostGit(t, ws, "rev-parse", "HEAD"); got != local {
		t.Fatalf("a refused pull moved HEAD to %s", got)
	}
	if out, err := run("pull --no-ff origin main"); err != nil {
		t.Fatalf("pull --no-ff: %v\n%s", err, out)
	}
	if got := hostGit(t, ws, "rev-list", "--count", "HEAD^@"); got == "1" {
		t.Errorf("pull --no-ff made no merge commit")
	}

	// Refused before the daemon is asked.
	before := len(d.calls)
	for _, args := range []string{
		"push --force origin main", "push origin :main", "push --mirror origin", "fetch " + srv.URL + "/repo.git", "fetch /tmp/x.git", "fetch canary main",
		"fetch --upload-pack=touch origin", "fetch origin --all", "fetch origin main:refs/heads/x",
		"pull --rebase origin main", "fetch -o x origin", "pull origin", "fetch origin 'refs/notes/*'",
	} {
		if _, err := run(args); err == nil || !errors.Is(err, gitguard.ErrRefused) {
			t.Errorf("%s: err = %v", args, err)
		}
	}
	if len(d.calls) != before {
		t.Errorf("refused calls reached the daemon: %q", d.calls[before:])
	}

	// The token is in no file of the workspace or the mirror.
	for _, dir := range []string{ws, d.mirror} {
		filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), remoteToken) {
					t.Errorf("the token is in %s", p)
				}
			}
			return nil
		})
	}
	if canary.count() != 0 {
		t.Errorf("the canary saw %d requests", canary.count())
	}
}

// newNetGitTool is newGitTool with the owner's remotes and the daemon.
func newNetGitTool(t *testing.T, ws string, remotes []gitguard.Remote, d GitDaemon) *worker.Tool {
	t.Helper()
	newGitTool(t, ws) // the shared runner, or a skip
	root, err := workspace.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	tool, err := gitTool(Env{Workspace: root, Sandbox: runner, Remotes: remotes, Git: d})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func (d *daemonSide) GitPush(ctx context.Context, req contracts.GitPush) (contracts.GitPushed, error) {
	return contracts.GitPushed{}, errors.New("push is tested through the daemon")
}
