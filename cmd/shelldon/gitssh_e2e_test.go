package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/gitserve"
)

// TestApprovedGitSSH: an ssh remote through the real daemon, worker and
// sandboxes. doctor checks it (and shows the pinned host key's
// fingerprint); fetch and push go through approvals; the daemon's relay
// speaks SSH with the owner's key, which is in no other file of the home
// and not in the log; the remote runs only its git services on the
// configured path; the workspace's refs/remotes/nas/main follows the
// push.
func TestApprovedGitSSH(t *testing.T) {
	t.Parallel()
	root, up, bare := upstream(t)
	git := func(args ...string) string { t.Helper(); return hostGit(t, args...) }

	prov := brokertest.NewServer(t, "anthropic", gitArgsScript)
	h := home(t, "anthropic", prov.BaseURL(), "")
	os.MkdirAll(filepath.Join(h, "keys"), 0o700)
	keyFile, pub := gitserve.NewKey(t, filepath.Join(h, "keys"))
	key, _ := os.ReadFile(keyFile)
	srv := gitserve.Start(t, root, pub)
	withGitRemotes(t, h, []string{fmt.Sprintf("{name: nas, url: 'ssh://git@127.0.0.1:%d/repo.git', ssh_key: 'keys/%s', host_key: '%s'}",
		srv.Port, filepath.Base(keyFile), srv.HostKeyLine())})
	ws := filepath.Join(h, "workspace")
	git("clone", "-q", bare, ws)
	git("-C", ws, "remote", "remove", "origin")

	// (The fake provider serves no model list: doctor fails on that.)
	stdout, stderr, _ := run(t, h, "", "doctor")
	var line string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, "git nas") {
			line = strings.TrimSpace(l)
		}
	}
	for _, w := range []string{"✓ git nas", fmt.Sprintf("ssh://127.0.0.1:%d/repo.git", srv.Port), "host key " + ssh.FingerprintSHA256(srv.HostKey()), "answers, 1 branches"} {
		if !strings.Contains(line, w) {
			t.Errorf("doctor's line for the ssh remote lacks %q:\n%s\n%s", w, stdout, stderr)
		}
	}

	d := startServe(t, h)
	c := gitChat{t, d}
	chat, decide := c.say, c.decide

	// The remote moves on; the agent fetches.
	git("-C", up, "commit", "-q", "--allow-empty", "-m", "second")
	git("-C", up, "push", "-q", bare, "main")
	second := git("-C", up, "rev-parse", "HEAD")
	out := chat("fetch nas main")
	if card := fmt.Sprint(out["reply"]); !strings.Contains(card, fmt.Sprintf("Remote: nas (ssh://127.0.0.1:%d)", srv.Port)) {
		t.Errorf("the fetch card does not name the remote:\n%s", card)
	}
	if n := len(srv.Execs()); n != 1 {
		t.Fatalf("the remote ran %d commands before the owner decided (doctor's ls-remote is 1)", n)
	}
	if reply := decide(out, true); !strings.Contains(reply, "git ok=true") {
		t.Fatalf("fetch: %s\n%s", reply, d.log())
	}
	if got := git("-C", ws, "rev-parse", "refs/remotes/nas/main"); got != second {
		t.Fatalf("refs/remotes/nas/main = %s, want %s", got, second)
	}

	// The agent commits on top and pushes.
	git("-C", ws, "merge", "-q", "--ff-only", "refs/remotes/nas/main")
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("one\n"), 0o644)
	git("-C", ws, "add", "notes.txt")
	git("-C", ws, "commit", "-q", "-m", "add notes")
	x := git("-C", ws, "rev-parse", "HEAD")
	out = chat("push nas main")
	if card := fmt.Sprint(out["reply"]); !strings.Contains(card, "Pushes commit "+x+" to refs/heads/main") {
		t.Errorf("the push card lacks the commit:\n%s", card)
	}
	if reply := decide(out, true); !strings.Contains(reply, "git ok=true") {
		t.Fatalf("push: %s\n%s", reply, d.log())
	}
	if got := git("-C", bare, "rev-parse", "refs/heads/main"); got != x {
		t.Fatalf("the remote's main = %s, want the pushed %s", got, x)
	}
	if got := git("-C", ws, "rev-parse", "refs/remotes/nas/main"); got != x {
		t.Errorf("the workspace's refs/remotes/nas/main = %s, want %s", got, x)
	}
	want := []string{"git-upload-pack '/repo.git'", "git-upload-pack '/repo.git'", "git-receive-pack '/repo.git'"}
	if got := srv.Execs(); !slices.Equal(got, want) {
		t.Errorf("the remote ran %q, want %q", got, want)
	}

	d.stop(t)
	secret := strings.TrimSpace(string(key))
	secret = secret[strings.Index(secret, "\n")+1:][:40] // a line of the key's body
	if strings.Contains(stdout+stderr, secret) {
		t.Error("the key is in doctor's output")
	}
	secretNowhere(t, h, keyFile, d.log(), secret)
}
