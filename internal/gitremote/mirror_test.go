package gitremote

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func revParse(t *testing.T, gitDir, rev string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir="+gitDir, "rev-parse", "--verify", "-q", rev).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// TestFetchIntoMirror: the daemon's fetch lands the named refs in its
// mirror, with the token offered to the remote's host only; whatever was
// planted in the mirror's configuration or hooks is gone before git runs.
func TestFetchIntoMirror(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := testJail(t)
	root := bareRepo(t)
	canary := newServer(t, root, "")
	srv := newServer(t, root, canary.URL)
	want := revParse(t, filepath.Join(root, "repo.git"), "refs/heads/main")
	mirror := filepath.Join(t.TempDir(), "git-remotes", "origin.git")
	r := remoteFor(srv, "/repo.git")

	if err := Fetch(ctx, j, r, mirror, []string{"fetch", "--no-tags", "--", r.URL, "+refs/heads/main:refs/heads/main"}); err != nil {
		t.Fatal(err)
	}
	if got := revParse(t, mirror, "refs/heads/main"); got != want {
		t.Fatalf("mirror main = %q, want %q", got, want)
	}

	// Plant a hook and a configuration that would run a program or send
	// the fetch elsewhere; the next fetch must not see them.
	fired := filepath.Join(t.TempDir(), "fired")
	hook := "#!/bin/sh\ntouch " + fired + "\n"
	if err := os.MkdirAll(filepath.Join(mirror, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"reference-transaction", "post-merge", "pre-auto-gc"} {
		if err := os.WriteFile(filepath.Join(mirror, "hooks", h), []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	planted := "[core]\n\thooksPath = hooks\n\tfsmonitor = " + filepath.Join(mirror, "hooks", "post-merge") +
		"\n[url \"" + canary.URL + "/\"]\n\tinsteadOf = " + srv.URL + "/\n[http]\n\textraHeader = X-Planted: 1\n"
	if err := os.WriteFile(filepath.Join(mirror, "config"), []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Fetch(ctx, j, r, mirror, []string{"fetch", "--no-tags", "--", r.URL, "+refs/heads/main:refs/heads/main"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fired); err == nil {
		t.Error("a hook planted in the mirror ran")
	}
	if _, err := os.Stat(filepath.Join(mirror, "hooks")); err == nil {
		t.Error("the mirror's hooks are still there")
	}
	if cfg, _ := os.ReadFile(filepath.Join(mirror, "config")); strings.Contains(string(cfg), "insteadOf") {
		t.Errorf("the planted configuration survived:\n%s", cfg)
	}
	if got := canary.seen(); len(got) != 0 {
		t.Errorf("the canary saw %d requests: %q", len(got), got)
	}

	t.Run("a wrong token fetches nothing and is not shown", func(t *testing.T) {
		bad := r
		bad.Token = "wrong-" + token
		m := filepath.Join(t.TempDir(), "m.git")
		err := Fetch(ctx, j, bad, m, []string{"fetch", "--", bad.URL, "+refs/heads/main:refs/heads/main"})
		if err == nil || strings.Contains(err.Error(), bad.Token) {
			t.Fatalf("err = %v", err)
		}
		if revParse(t, m, "refs/heads/main") != "" {
			t.Error("a fetch with a wrong token landed a ref")
		}
	})
	t.Run("a mirror that is a file is refused", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "f.git")
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Fetch(ctx, j, r, f, []string{"fetch", "--", r.URL}); err == nil {
			t.Fatal("fetched into a file")
		}
	})
}
