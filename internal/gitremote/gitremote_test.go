package gitremote

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/shelldon/shelldon/internal/gitserve"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/testbin"
)

const token = "tok-Secret-4f9a1c"

// server is a bare repository served by git http-backend behind a token
// check, and records every request's Authorization header.
type server struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func (s *server) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.auths)
}

func newServer(t *testing.T, root string, redirect string) *server {
	t.Helper()
	s := &server{}
	s.Server = gitserve.HTTP(t, root, token, func(w http.ResponseWriter, r *http.Request) bool {
		s.mu.Lock()
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.mu.Unlock()
		if redirect != "" && strings.HasPrefix(r.URL.Path, "/moved/") {
			http.Redirect(w, r, redirect+strings.TrimPrefix(r.URL.Path, "/moved")+"?"+r.URL.RawQuery, http.StatusFound)
			return true
		}
		return false
	})
	return s
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// bareRepo makes root/repo.git with one commit on main.
func bareRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	work := t.TempDir()
	git(t, work, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(work, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, work, "add", "a.txt")
	git(t, work, "commit", "-q", "-m", "first")
	git(t, root, "clone", "-q", "--bare", work, "repo.git")
	return root
}

// testJail is the sandbox with the real shelldon binary as its helper and
// as git's relay.
func testJail(t *testing.T) Jail {
	t.Helper()
	bin := os.Getenv("SHELLDON_TEST_HELPER") // TestUnprivileged's re-run
	if bin == "" {
		bin = testbin.Shelldon(t)
	}
	runner, err := sandbox.NewRunner(bin)
	if err != nil {
		t.Fatal(err)
	}
	return Jail{Sandbox: runner, Exe: bin}
}

func remoteFor(s *server, path string) Remote {
	host := strings.TrimPrefix(s.URL, "http://")
	return Remote{Name: "origin", URL: s.URL + path, Scheme: "http", Host: host, Username: "x-access-token", Token: token}
}

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

func TestLsRemote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := testJail(t)
	root := bareRepo(t)
	canary := newServer(t, root, "")
	srv := newServer(t, root, canary.URL)

	t.Run("the token opens the remote", func(t *testing.T) {
		refs, err := LsRemote(ctx, j, remoteFor(srv, "/repo.git"))
		if err != nil || !slices.Contains(refs, "refs/heads/main") {
			t.Fatalf("refs %v, err %v", refs, err)
		}
	})
	t.Run("a wrong token is refused, and not shown", func(t *testing.T) {
		r := remoteFor(srv, "/repo.git")
		r.Token = "wrong-" + token
		_, err := LsRemote(ctx, j, r)
		if err == nil || strings.Contains(err.Error(), r.Token) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a redirect to another port is not followed", func(t *testing.T) {
		_, err := LsRemote(ctx, j, remoteFor(srv, "/moved/repo.git"))
		if err == nil {
			t.Fatal("ls-remote through a redirect succeeded")
		}
		if got := canary.seen(); len(got) != 0 {
			t.Errorf("the canary saw %d requests: %q", len(got), got)
		}
	})
	t.Run("git pointed at another port reaches nothing", func(t *testing.T) {
		// The remote's host is srv, but git is pointed at the canary (the
		// same address, another port): the relay refuses to connect.
		r := remoteFor(srv, "/repo.git")
		r.URL = canary.URL + "/repo.git"
		_, err := LsRemote(ctx, j, r)
		if err == nil || !strings.Contains(err.Error(), "not the remote origin") {
			t.Fatalf("ls-remote against the canary: %v", err)
		}
		if got := canary.seen(); len(got) != 0 {
			t.Errorf("the canary saw %d requests: %q", len(got), got)
		}
	})
	t.Run("without the relay, git has no network at all", func(t *testing.T) {
		// A later -c wins: git goes straight for the canary, from a
		// network namespace that holds only its own loopback. The kernel,
		// not the relay, is what stops it.
		for _, proxy := range []string{"", "socks5h://127.0.0.1:1", "http://" + strings.TrimPrefix(canary.URL, "http://")} {
			out, err := Run(ctx, j, remoteFor(srv, "/repo.git"), t.TempDir(),
				[]string{"-c", "http.proxy=" + proxy, "ls-remote", canary.URL + "/repo.git"})
			if err == nil {
				t.Errorf("proxy %q: ls-remote succeeded: %s", proxy, out)
			}
		}
		if got := canary.seen(); len(got) != 0 {
			t.Errorf("the canary saw %d requests: %q", len(got), got)
		}
	})
	t.Run("the token is in no argument or environment git sees", func(t *testing.T) {
		rec := &recorder{Sandbox: j.Sandbox}
		jr := j
		jr.Sandbox = rec
		if _, err := LsRemote(ctx, jr, remoteFor(srv, "/repo.git")); err != nil {
			t.Fatal(err)
		}
		if len(rec.policies) != 1 {
			t.Fatalf("%d sandbox runs", len(rec.policies))
		}
		p := rec.policies[0]
		for _, w := range append(slices.Clone(p.Argv), p.Env...) {
			if strings.Contains(w, token) {
				t.Errorf("the token is in %q", w)
			}
		}
		if !p.Loopback || p.Network {
			t.Errorf("git ran with Loopback %v, Network %v", p.Loopback, p.Network)
		}
	})
}

// recorder keeps the policies it runs.
type recorder struct {
	Sandbox
	mu       sync.Mutex
	policies []sandbox.Policy
}

func (r *recorder) Run(ctx context.Context, p sandbox.Policy) (sandbox.Result, error) {
	r.mu.Lock()
	r.policies = append(r.policies, p)
	r.mu.Unlock()
	return r.Sandbox.Run(ctx, p)
}

func TestRunRefuses(t *testing.T) {
	t.Parallel()
	j := Jail{Sandbox: &recorder{}, Exe: "/usr/bin/true"}
	for name, tt := range map[string]struct {
		j Jail
		r Remote
	}{
		"no sandbox":           {Jail{Exe: "/x"}, Remote{Scheme: "https", Host: "h"}},
		"file scheme":          {j, Remote{Scheme: "file", Host: "h"}},
		"ext scheme":           {j, Remote{Scheme: "ext", Host: "h"}},
		"token with newline":   {j, Remote{Scheme: "https", Host: "h", Token: "a\nb"}},
		"binary path unquoted": {Jail{Sandbox: &recorder{}, Exe: "/x'y"}, Remote{Scheme: "https", Host: "h"}},
	} {
		if _, err := Run(context.Background(), tt.j, tt.r, t.TempDir(), []string{"ls-remote"}); err == nil {
			t.Errorf("%s: allowed", name)
		}
	}
}
