package main

import (
	"encoding/base64"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
)

// TestDoctorGitRemotes: doctor lists the owner's git remotes and checks
// each with git ls-remote through the credential path of the git tool: the
// token opens a loopback git http-backend, is never printed, and a remote
// that redirects to another port (a canary) gets no request there.
func TestDoctorGitRemotes(t *testing.T) {
	t.Parallel()
	const token = "tok-doctor-91c3e7"
	root, work := t.TempDir(), t.TempDir()
	gitEnv := []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
	for _, args := range [][]string{{"-C", work, "init", "-q", "-b", "main"}, {"-C", work, "commit", "-q", "--allow-empty", "-m", "first"}, {"-C", root, "clone", "-q", "--bare", work, "repo.git"}} {
		cmd := exec.Command("git", args...)
		cmd.Env = gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	var canaryHits atomic.Int32
	canary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		canaryHits.Add(1)
		http.Error(w, "canary", http.StatusUnauthorized)
	}))
	defer canary.Close()
	backend := &cgi.Handler{Path: "/usr/lib/git-core/git-http-backend",
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1"}}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/moved/") {
			http.Redirect(w, r, canary.URL+r.URL.Path, http.StatusFound)
			return
		}
		if r.Header.Get("Authorization") != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="t"`)
			http.Error(w, "auth", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	defer srv.Close()

	prov := brokertest.NewServer(t, "anthropic", brokertest.Sequence())
	h := home(t, "anthropic", prov.BaseURL(), "")
	os.MkdirAll(filepath.Join(h, "workspace"), 0o700)
	os.Chmod(h, 0o700)
	f, err := os.OpenFile(filepath.Join(h, "config.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("git:\n  remotes:\n" +
		"    - {name: origin, url: '" + srv.URL + "/repo.git', token_env: GIT_ORIGIN_TOKEN}\n" +
		"    - {name: moved, url: '" + srv.URL + "/moved/repo.git', token_env: GIT_ORIGIN_TOKEN}\n")
	f.Close()
	env, _ := os.ReadFile(filepath.Join(h, ".env"))
	os.WriteFile(filepath.Join(h, ".env"), append(env, []byte("GIT_ORIGIN_TOKEN="+token+"\n")...), 0o600)

	stdout, stderr, code := run(t, h, "", "doctor")
	if code != 1 {
		t.Errorf("doctor exit %d, want 1 (the moved remote fails)", code)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, w := range []string{
		"✓ git origin http://" + host + "/repo.git, token GIT_ORIGIN_TOKEN (set): answers, 1 branches",
		"✗ git moved",
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("doctor does not say %q:\n%s", w, stdout)
		}
	}
	if strings.Contains(stdout+stderr, token) {
		t.Error("doctor printed the token")
	}
	if n := canaryHits.Load(); n != 0 {
		t.Errorf("the canary on another port got %d requests", n)
	}
}
