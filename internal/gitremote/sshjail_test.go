package gitremote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/gitserve"
)

// TestSSHThroughTheJail: an ssh remote end to end as the daemon runs it:
// git in the sandbox (its own loopback only), its ssh command shelldon's
// stub, the SSH connection the relay's with the owner's key and the
// pinned host key. Clone-like fetch, push and ls-remote work; the key is
// in nothing the sandbox is given; a wrong host key, another path and
// another server are refused with nothing run there.
func TestSSHThroughTheJail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := testJail(t)
	root, commit := sshRepo(t)
	keyDir := t.TempDir()
	keyFile, pub := gitserve.NewKey(t, keyDir)
	srv := gitserve.Start(t, root, pub)
	other := gitserve.Start(t, root, pub) // a second server that holds the key too
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	remote := func(s *gitserve.Server, path string) Remote {
		host := fmt.Sprintf("127.0.0.1:%d", s.Port)
		return Remote{Name: "nas", URL: "ssh://git@" + host + path, Scheme: "ssh", Host: host,
			User: "git", Path: path, SSHKey: keyFile, HostKey: srv.HostKeyLine()}
	}
	r := remote(srv, "/srv/r.git")

	rec := &recorder{Sandbox: j.Sandbox}
	jr := j
	jr.Sandbox = rec
	refs, err := LsRemote(ctx, jr, r)
	if err != nil || !slices.Equal(refs, []string{"refs/heads/main"}) {
		t.Fatalf("ls-remote: %v, %v", refs, err)
	}
	for _, p := range rec.policies {
		for _, w := range append(append(slices.Clone(p.Argv), p.Env...), p.ReadOnly...) {
			if strings.Contains(w, string(key)) || strings.Contains(w, keyDir) {
				t.Errorf("the sandbox is given the key: %q", w)
			}
		}
		if !p.Loopback || p.Network {
			t.Errorf("git ran with Loopback %v, Network %v", p.Loopback, p.Network)
		}
	}

	mirror := filepath.Join(t.TempDir(), "nas.git")
	if err := Fetch(ctx, j, r, mirror, []string{"fetch", "--no-tags", "--", r.URL, "+refs/heads/main:refs/heads/main"}); err != nil {
		t.Fatal(err)
	}
	if got := revParse(t, mirror, "refs/heads/main"); got != commit {
		t.Fatalf("mirror main = %q, want %q", got, commit)
	}
	// A commit made in the mirror goes up by name.
	work := t.TempDir()
	sshGit(t, work, nil, "clone", "-q", "-b", "main", mirror, ".")
	sshGit(t, work, nil, "commit", "-q", "--allow-empty", "-m", "second")
	second := sshGit(t, work, nil, "rev-parse", "HEAD")
	sshGit(t, work, nil, "push", "-q", mirror, "main")
	if _, err := Run(ctx, j, r, mirror, []string{"--git-dir=" + mirror, "push", "--porcelain", "--", r.URL, second + ":refs/heads/main"}); err != nil {
		t.Fatal(err)
	}
	if got := revParse(t, filepath.Join(root, "srv/r.git"), "refs/heads/main"); got != second {
		t.Fatalf("the remote's main = %q, want the pushed %q", got, second)
	}
	execs := len(srv.Execs())

	t.Run("a wrong host key", func(t *testing.T) {
		bad := remote(other, "/srv/r.git") // other's port, srv's pinned key
		_, err := LsRemote(ctx, j, bad)
		if err == nil || !strings.Contains(err.Error(), "host key") {
			t.Fatalf("err = %v", err)
		}
		if got := other.Execs(); len(got) != 0 {
			t.Errorf("a server with another host key ran %q", got)
		}
		if got := other.Users(); len(got) != 0 {
			t.Errorf("a server with another host key saw the owner's key offered for %q", got)
		}
	})
	t.Run("another path on the remote", func(t *testing.T) {
		r2 := r
		r2.URL = "ssh://git@" + r.Host + "/srv/other.git"
		_, err := LsRemote(ctx, j, r2)
		if err == nil || !strings.Contains(err.Error(), "shelldon refused") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("git pointed at another server", func(t *testing.T) {
		// The relay dials the remote's own host and port whatever git
		// names: git's destination argument is not used at all.
		r2 := r
		r2.URL = fmt.Sprintf("ssh://git@127.0.0.1:%d/srv/r.git", other.Port)
		if _, err := LsRemote(ctx, j, r2); err != nil {
			t.Fatal(err)
		}
		if got := other.Execs(); len(got) != 0 {
			t.Errorf("the other server ran %q", got)
		}
	})
	t.Run("a key with a passphrase or open to others", func(t *testing.T) {
		open := filepath.Join(t.TempDir(), "open")
		if err := os.WriteFile(open, key, 0o644); err != nil {
			t.Fatal(err)
		}
		r2 := r
		r2.SSHKey = open
		_, err := LsRemote(ctx, j, r2)
		if err == nil || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), string(key)) {
			t.Fatalf("err = %v", err)
		}
	})
	if got := srv.Execs()[execs:]; len(got) != 1 || got[0] != "git-upload-pack '/srv/r.git'" {
		t.Errorf("after the refusals the remote ran %q (only the redirected ls-remote belongs)", got)
	}
}
