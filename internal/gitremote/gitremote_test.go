package gitremote

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
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
	backend := &cgi.Handler{
		Path: "/usr/lib/git-core/git-http-backend",
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1"},
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.mu.Unlock()
		if redirect != "" && strings.HasPrefix(r.URL.Path, "/moved/") {
			http.Redirect(w, r, redirect+strings.TrimPrefix(r.URL.Path, "/moved")+"?"+r.URL.RawQuery, http.StatusFound)
			return
		}
		if r.Header.Get("Authorization") != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "auth", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
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

func remoteFor(s *server, path string) Remote {
	host := strings.TrimPrefix(s.URL, "http://")
	return Remote{Name: "origin", URL: s.URL + path, Scheme: "http", Host: host, Username: "x-access-token", Token: token}
}

func TestLsRemote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := bareRepo(t)
	canary := newServer(t, root, "")
	srv := newServer(t, root, canary.URL)

	t.Run("the token opens the remote", func(t *testing.T) {
		refs, err := LsRemote(ctx, remoteFor(srv, "/repo.git"))
		if err != nil || !slices.Contains(refs, "refs/heads/main") {
			t.Fatalf("refs %v, err %v", refs, err)
		}
	})
	t.Run("a wrong token is refused, and not shown", func(t *testing.T) {
		r := remoteFor(srv, "/repo.git")
		r.Token = "wrong-" + token
		_, err := LsRemote(ctx, r)
		if err == nil || strings.Contains(err.Error(), r.Token) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a redirect to another port is not followed", func(t *testing.T) {
		_, err := LsRemote(ctx, remoteFor(srv, "/moved/repo.git"))
		if err == nil {
			t.Fatal("ls-remote through a redirect succeeded")
		}
		if got := canary.seen(); len(got) != 0 {
			t.Errorf("the canary saw %d requests: %q", len(got), got)
		}
	})
	t.Run("the helper answers no other host, same address other port", func(t *testing.T) {
		// The remote's host is srv, but git is pointed at the canary: the
		// canary asks for credentials, and the helper gives none.
		r := remoteFor(srv, "/repo.git")
		r.URL = canary.URL + "/repo.git"
		before := len(canary.seen())
		if _, err := LsRemote(ctx, r); err == nil {
			t.Fatal("ls-remote against the canary succeeded")
		}
		for _, a := range canary.seen()[before:] {
			if a != "" {
				t.Errorf("the canary got an Authorization header: %q", a)
			}
		}
	})
	t.Run("the token is in neither argv nor environment", func(t *testing.T) {
		cmd, done, err := Command(ctx, remoteFor(srv, "/repo.git"), t.TempDir(), "ls-remote", srv.URL+"/repo.git")
		if err != nil {
			t.Fatal(err)
		}
		defer done()
		for _, w := range append(slices.Clone(cmd.Args), cmd.Env...) {
			if strings.Contains(w, token) {
				t.Errorf("the token is in %q", w)
			}
		}
	})
}

func TestCommandRefuses(t *testing.T) {
	t.Parallel()
	for _, r := range []Remote{
		{Scheme: "ssh", Host: "h"},
		{Scheme: "file", Host: "h"},
		{Scheme: "ext", Host: "h"},
		{Scheme: "https", Host: "h'; touch x; '"},
		{Scheme: "https", Host: "h", Token: "a\nb"},
	} {
		if _, _, err := Command(context.Background(), r, t.TempDir(), "ls-remote"); err == nil {
			t.Errorf("%+v: allowed", r)
		}
	}
}

// TestHelperAnswersOnlyItsHost runs the credential helper as git would,
// for its own host and for others (the same address, another port).
func TestHelperAnswersOnlyItsHost(t *testing.T) {
	t.Parallel()
	cmd, done, err := Command(context.Background(), Remote{Scheme: "https", Host: "git.example:8443", Username: "u", Token: token}, t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	var helper string
	for i, a := range cmd.Args {
		if strings.HasPrefix(a, "credential.https://git.example:8443.helper=!") && cmd.Args[i-1] == "-c" {
			helper = strings.TrimPrefix(a, "credential.https://git.example:8443.helper=!")
		}
	}
	if helper == "" {
		t.Fatalf("no scoped helper in %q", cmd.Args)
	}
	for _, tt := range []struct {
		action, in string
		answer     bool
	}{
		{"get", "protocol=https\nhost=git.example:8443\n\n", true},
		{"get", "protocol=https\nhost=git.example:8444\n\n", false},
		{"get", "protocol=https\nhost=git.example\n\n", false},
		{"get", "protocol=http\nhost=git.example:8443\n\n", false},
		{"get", "protocol=https\nhost=evil.example\n\n", false},
		{"get", "host=git.example:8443\n\n", false},
		{"store", "protocol=https\nhost=git.example:8443\n\n", false},
	} {
		sh := exec.Command("/bin/sh", "-c", helper+` "$@"`, helper, tt.action)
		sh.Stdin = strings.NewReader(tt.in)
		sh.ExtraFiles = cmd.ExtraFiles
		out, err := sh.Output()
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		want := ""
		if tt.answer {
			want = "username=u\npassword=" + token + "\n"
		}
		if string(out) != want {
			t.Errorf("%s %q: answered %q, want %q", tt.action, tt.in, out, want)
		}
	}
}
