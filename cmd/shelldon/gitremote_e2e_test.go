package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/gitserve"
)

// TestDoctorGitRemotes: doctor lists the owner's git remotes and checks
// each with git ls-remote through the credential path of the git tool: the
// token opens a loopback git http-backend, is never printed, and a remote
// that redirects to another port (a canary) gets no request there.
func TestDoctorGitRemotes(t *testing.T) {
	t.Parallel()
	const token = "tok-doctor-91c3e7"
	root, _, _ := upstream(t)
	var canaryHits atomic.Int32
	canary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		canaryHits.Add(1)
		http.Error(w, "canary", http.StatusUnauthorized)
	}))
	defer canary.Close()
	srv := gitserve.HTTP(t, root, token, func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, "/moved/") {
			http.Redirect(w, r, canary.URL+r.URL.Path, http.StatusFound)
			return true
		}
		return false
	})

	prov := brokertest.NewServer(t, "anthropic", brokertest.Sequence())
	h := home(t, "anthropic", prov.BaseURL(), "")
	withGitRemotes(t, h, []string{
		"{name: origin, url: '" + srv.URL + "/repo.git', token_env: GIT_ORIGIN_TOKEN}",
		"{name: moved, url: '" + srv.URL + "/moved/repo.git', token_env: GIT_ORIGIN_TOKEN}",
	}, "GIT_ORIGIN_TOKEN="+token)

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
