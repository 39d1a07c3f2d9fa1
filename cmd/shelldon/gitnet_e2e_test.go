package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/gitserve"
)

// TestApprovedGitPull: git pull through the real daemon, worker and
// nested sandbox. The card names the remote, its host and what moves;
// nothing is fetched before the owner approves; once approved the daemon
// fetches into its mirror with the token bound to the remote's host, the
// sandboxed git fetches from the mirror and fast-forwards; the token is
// in no file of the home but .env (history, audit, logs, the mirror, the
// workspace), nor in the daemon's log, and a canary on another port sees
// nothing.
func TestApprovedGitPull(t *testing.T) {
	t.Parallel()
	const token = "tok-pull-5d0e2b"
	root, up, bare := upstream(t)
	var canaryHits, hits atomic.Int32
	canary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		canaryHits.Add(1)
		http.Error(w, "canary", http.StatusUnauthorized)
	}))
	defer canary.Close()
	srv := gitserve.HTTP(t, root, token, func(http.ResponseWriter, *http.Request) bool { hits.Add(1); return false })

	prov := brokertest.NewServer(t, "anthropic", riskyScript("git", `{"args":"pull origin main"}`))
	h := home(t, "anthropic", prov.BaseURL(), "")
	withGitRemotes(t, h, []string{"{name: origin, url: '" + srv.URL + "/repo.git', token_env: GIT_ORIGIN_TOKEN}"}, "GIT_ORIGIN_TOKEN="+token)
	ws := filepath.Join(h, "workspace")
	hostGit(t, "clone", "-q", bare, ws)
	hostGit(t, "-C", ws, "remote", "remove", "origin")

	// The remote moves on.
	hostGit(t, "-C", up, "commit", "-q", "--allow-empty", "-m", "second")
	hostGit(t, "-C", up, "push", "-q", bare, "main")
	second := hostGit(t, "-C", up, "rev-parse", "HEAD")

	d := startServe(t, h)
	_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"text": "pull"})
	id := approvalID(t, out)
	card := fmt.Sprint(out["reply"])
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, w := range []string{"Runs exactly: git pull origin main", "Remote: origin (http://" + host + ")",
		"Downloads: main into refs/remotes/origin/", "fast-forward only", filepath.Join(h, "cache", "git-remotes", "origin.git")} {
		if !strings.Contains(card, w) {
			t.Errorf("the card lacks %q:\n%s", w, card)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the remote got %d requests before the owner decided", n)
	}
	_, out = d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": true})
	if reply := fmt.Sprint(out["reply"]); !strings.Contains(reply, "git ok=true") {
		t.Fatalf("pull: %s\n%s", reply, d.log())
	}
	if got := hostGit(t, "-C", ws, "rev-parse", "HEAD"); got != second {
		t.Errorf("HEAD = %s, want %s", got, second)
	}
	if got := hostGit(t, "-C", ws, "rev-parse", "refs/remotes/origin/main"); got != second {
		t.Errorf("refs/remotes/origin/main = %s, want %s", got, second)
	}
	_, audit := d.do(t, "GET", "/api/audit?limit=50", d.token, nil)
	if !strings.Contains(fmt.Sprint(audit), "git_fetched") {
		t.Errorf("the audit does not record the fetch: %v", audit)
	}
	d.stop(t)
	secretNowhere(t, h, filepath.Join(h, ".env"), d.log(), token)
	if n := canaryHits.Load(); n != 0 {
		t.Errorf("the canary got %d requests", n)
	}
}

// gitArgsScript is a fake model that runs the owner's message as the
// git tool's arguments and reports the result it gets back.
func gitArgsScript(r brokertest.Recorded) brokertest.Reply {
	last := r.Request.Messages[len(r.Request.Messages)-1]
	if last.Role == contracts.RoleUser {
		raw, _ := json.Marshal(map[string]string{"args": last.Text})
		return brokertest.Reply{Text: "On it.", ToolCalls: []contracts.ToolCall{{ID: "call_git", Name: "git", Arguments: string(raw)}}}
	}
	var parts []string
	for _, tr := range last.ToolResults {
		parts = append(parts, fmt.Sprintf("%s ok=%v %s", tr.Name, tr.OK, tr.Content))
	}
	return brokertest.Reply{Text: "RESULTS: " + strings.Join(parts, " | ")}
}

// TestApprovedGitPush: git push through the real daemon. The card shows
// the commit that would leave, its subject (escaped: the model writes
// commits) and a diffstat, computed before the owner decides; nothing
// reaches the remote before approval; the approved push sends exactly
// that commit, not one made after the card; a denied push sends nothing;
// a forced push the remote does not allow is refused before asking; the
// token is in no file but .env and not in the log; the canary sees
// nothing.
func TestApprovedGitPush(t *testing.T) {
	t.Parallel()
	const token = "tok-push-8a61f4"
	root, _, bare := upstream(t)
	git := func(args ...string) string { t.Helper(); return hostGit(t, args...) }
	git("-C", bare, "config", "http.receivepack", "true")
	first := git("-C", bare, "rev-parse", "refs/heads/main")

	var canaryHits, pushes atomic.Int32
	canary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		canaryHits.Add(1)
		http.Error(w, "canary", http.StatusUnauthorized)
	}))
	defer canary.Close()
	srv := gitserve.HTTP(t, root, token, func(_ http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			pushes.Add(1)
		}
		return false
	})

	prov := brokertest.NewServer(t, "anthropic", gitArgsScript)
	h := home(t, "anthropic", prov.BaseURL(), "")
	withGitRemotes(t, h, []string{"{name: origin, url: '" + srv.URL + "/repo.git', token_env: GIT_ORIGIN_TOKEN}"}, "GIT_ORIGIN_TOKEN="+token)
	ws := filepath.Join(h, "workspace")
	git("clone", "-q", bare, ws)
	git("-C", ws, "remote", "remove", "origin")

	d := startServe(t, h)
	c := gitChat{t, d}
	chat, decide := c.say, c.decide

	// The daemon learns the remote's main first.
	if reply := decide(chat("fetch origin main"), true); !strings.Contains(reply, "git ok=true") {
		t.Fatalf("fetch: %s", reply)
	}

	// The model commits (as an approved git commit would), with a subject
	// that tries to disguise itself.
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("one\ntwo\n"), 0o644)
	git("-C", ws, "add", "notes.txt")
	git("-C", ws, "commit", "-q", "-m", "add notes \u202eexe.txt")
	x := git("-C", ws, "rev-parse", "HEAD")

	// Programs planted in the workspace's repository (as an earlier
	// approved run_shell could) run neither for the card nor for the push.
	mirror := filepath.Join(h, "cache", "git-remotes", "origin.git")
	trap := filepath.Join(ws, "trap.sh")
	os.WriteFile(trap, []byte("#!/bin/sh\ntouch "+filepath.Join(ws, "PWNED")+" "+filepath.Join(mirror, "PWNED")+"\ncat\n"), 0o755)
	for _, hook := range []string{"pre-push", "reference-transaction", "post-update", "pre-receive", "update", "post-checkout"} {
		os.Symlink(trap, filepath.Join(ws, ".git", "hooks", hook))
	}
	cf, _ := os.OpenFile(filepath.Join(ws, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(cf, "[core]\n\tfsmonitor = %s\n\thooksPath = %s\n\tpager = %s\n[uploadpack]\n\tpackObjectsHook = %s\n[diff]\n\texternal = %s\n", trap, filepath.Join(ws, ".git", "hooks"), trap, trap, trap)
	cf.Close()

	out := chat("push origin main")
	card := fmt.Sprint(out["reply"])
	for _, w := range []string{"Runs exactly: git push origin main:main", "Uploads: main:main",
		"Pushes commit " + x + " to refs/heads/main", "New on the remote's refs/heads/main", x[:7] + ` add notes \u202eexe.txt`,
		"notes.txt | 2 ++", "one made after this card is not pushed"} {
		if !strings.Contains(card, w) {
			t.Errorf("the card lacks %q:\n%s", w, card)
		}
	}
	if strings.Contains(card, "\u202e") {
		t.Error("the card holds the raw bidirectional control of the subject")
	}
	if n := pushes.Load(); n != 0 {
		t.Fatalf("the remote got %d pushes before the owner decided", n)
	}
	// The model commits again after the card: this one must not leave.
	os.WriteFile(filepath.Join(ws, "late.txt"), []byte("late\n"), 0o644)
	git("-C", ws, "add", "late.txt")
	git("-C", ws, "commit", "-q", "-m", "late")
	late := git("-C", ws, "rev-parse", "HEAD")

	if reply := decide(out, true); !strings.Contains(reply, "git ok=true") {
		t.Fatalf("push: %s\n%s", reply, d.log())
	}
	if got := git("-C", bare, "rev-parse", "refs/heads/main"); got != x {
		t.Fatalf("the remote's main = %s, want the carded %s (first %s, late %s)", got, x, first, late)
	}
	if git("-C", bare, "cat-file", "-t", x) != "commit" {
		t.Error("the pushed commit is not on the remote")
	}
	// The workspace's tracking ref follows, as after git's own push.
	if got := git("-C", ws, "rev-parse", "refs/remotes/origin/main"); got != x {
		t.Errorf("the workspace's refs/remotes/origin/main = %s, want the pushed %s", got, x)
	}
	if out, err := exec.Command("git", "-C", bare, "cat-file", "-e", late).CombinedOutput(); err == nil {
		t.Errorf("the commit made after the card reached the remote: %s", out)
	}

	for _, p := range []string{filepath.Join(ws, "PWNED"), filepath.Join(mirror, "PWNED")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a program planted in the workspace's repository ran (%s)", p)
		}
	}

	// A denied push sends nothing.
	before := pushes.Load()
	decide(chat("push origin main"), false)
	if got := git("-C", bare, "rev-parse", "refs/heads/main"); got != x || pushes.Load() != before {
		t.Errorf("a denied push changed the remote: main %s, %d pushes", got, pushes.Load()-before)
	}
	// Forcing is not allowed for this remote: refused before asking.
	out = chat("push --force origin main")
	if list, _ := out["approvals"].([]any); len(list) != 0 {
		t.Errorf("a forced push was put to the owner: %v", out)
	}
	if pushes.Load() != before {
		t.Error("a refused push reached the remote")
	}

	_, audit := d.do(t, "GET", "/api/audit?limit=100", d.token, nil)
	if !strings.Contains(fmt.Sprint(audit), "git_pushed") {
		t.Errorf("the audit does not record the push")
	}
	d.stop(t)
	secretNowhere(t, h, filepath.Join(h, ".env"), d.log(), token)
	if n := canaryHits.Load(); n != 0 {
		t.Errorf("the canary got %d requests", n)
	}
}
