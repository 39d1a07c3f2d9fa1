package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/gitserve"
)

// TestApprovedGitPushWithLease: on a remote that allows forcing, a push
// with --force-with-lease replaces the remote's branch only while it is
// what shelldon last fetched. Someone else's push in between makes the
// approved push fail and leaves the remote alone; after a fetch the same
// request goes through.
func TestApprovedGitPushWithLease(t *testing.T) {
	t.Parallel()
	const token = "tok-lease-3b9d0c"
	root, up, bare := upstream(t)
	git := func(args ...string) string { t.Helper(); return hostGit(t, args...) }
	git("-C", bare, "config", "http.receivepack", "true")
	srv := gitserve.HTTP(t, root, token, nil)

	prov := brokertest.NewServer(t, "anthropic", gitArgsScript)
	h := home(t, "anthropic", prov.BaseURL(), "")
	withGitRemotes(t, h, []string{"{name: origin, url: '" + srv.URL + "/repo.git', token_env: GIT_ORIGIN_TOKEN, allow_force: true}"}, "GIT_ORIGIN_TOKEN="+token)
	ws := filepath.Join(h, "workspace")
	git("clone", "-q", bare, ws)
	git("-C", ws, "remote", "remove", "origin")

	d := startServe(t, h)
	c := gitChat{t, d}
	approved := func(text string) string {
		t.Helper()
		out := c.say(text)
		if card := fmt.Sprint(out["reply"]); strings.Contains(text, "lease") &&
			(!strings.Contains(card, "Runs exactly: git push --force-with-lease origin main:main") || !strings.Contains(card, "FORCED, with a lease")) {
			t.Errorf("the card of %q:\n%s", text, card)
		}
		return c.decide(out, true)
	}
	if reply := approved("fetch origin main"); !strings.Contains(reply, "git ok=true") {
		t.Fatalf("fetch: %s", reply)
	}

	// The model rewrites main and pushes it with a lease: the remote is
	// still what shelldon fetched, so it goes.
	git("-C", ws, "commit", "-q", "--amend", "--allow-empty", "-m", "rewritten")
	x1 := git("-C", ws, "rev-parse", "HEAD")
	if reply := approved("push --force-with-lease origin main"); !strings.Contains(reply, "git ok=true") {
		t.Fatalf("push: %s\n%s", reply, d.log())
	}
	if got := git("-C", bare, "rev-parse", "refs/heads/main"); got != x1 {
		t.Fatalf("the remote's main = %s, want %s", got, x1)
	}

	// Someone else pushes; the model rewrites again. The lease (x1, what
	// shelldon last saw) no longer holds: nothing is pushed.
	git("-C", up, "commit", "-q", "--allow-empty", "-m", "theirs")
	git("-C", up, "push", "-q", "--force", bare, "main")
	theirs := git("-C", bare, "rev-parse", "refs/heads/main")
	git("-C", ws, "commit", "-q", "--amend", "--allow-empty", "-m", "rewritten again")
	x2 := git("-C", ws, "rev-parse", "HEAD")
	reply := approved("push --force-with-lease origin main")
	if !strings.Contains(reply, "git ok=false") || !strings.Contains(reply, "stale info") {
		t.Errorf("a push on a stale lease: %s", reply)
	}
	if got := git("-C", bare, "rev-parse", "refs/heads/main"); got != theirs {
		t.Fatalf("a stale lease replaced the remote's main: %s, want theirs %s", got, theirs)
	}

	// Once shelldon has fetched their commit, the same request replaces it.
	if reply := approved("fetch origin main"); !strings.Contains(reply, "git ok=true") {
		t.Fatalf("fetch: %s", reply)
	}
	if reply := approved("push --force-with-lease origin main"); !strings.Contains(reply, "git ok=true") {
		t.Fatalf("push after the fetch: %s\n%s", reply, d.log())
	}
	if got := git("-C", bare, "rev-parse", "refs/heads/main"); got != x2 {
		t.Errorf("the remote's main = %s, want %s", got, x2)
	}
	d.stop(t)
}
