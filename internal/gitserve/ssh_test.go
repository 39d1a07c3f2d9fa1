package gitserve

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	return Git(t, dir, env, args...)
}

// sshEnv makes OpenSSH's client reach s with key and trust only s's host
// key, reading nothing of the user's.
func sshEnv(t *testing.T, s *Server, key string) []string {
	t.Helper()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, []byte(fmt.Sprintf("[127.0.0.1]:%d %s\n", s.Port, s.HostKeyLine())), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"GIT_SSH_COMMAND=ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes -o StrictHostKeyChecking=yes" +
		" -o UserKnownHostsFile=" + kh + " -i " + key}
}

// TestRealGitOverOpenSSH: a clone and a push by the real git and OpenSSH
// client, so the server speaks what they expect.
func TestRealGitOverOpenSSH(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no OpenSSH client")
	}
	root := t.TempDir()
	git(t, root, nil, "init", "-q", "--bare", "-b", "main", "srv/r.git")
	key, pub := NewKey(t, t.TempDir())
	s := Start(t, root, pub)
	env := sshEnv(t, s, key)
	url := fmt.Sprintf("ssh://git@127.0.0.1:%d/srv/r.git", s.Port)

	work := t.TempDir()
	git(t, work, nil, "init", "-q", "-b", "main")
	git(t, work, nil, "commit", "-q", "--allow-empty", "-m", "first")
	git(t, work, env, "push", "-q", url, "main")
	want := git(t, work, nil, "rev-parse", "HEAD")
	if got := git(t, root, nil, "--git-dir", "srv/r.git", "rev-parse", "main"); got != want {
		t.Fatalf("pushed main = %s, want %s", got, want)
	}
	clone := filepath.Join(t.TempDir(), "c")
	git(t, root, env, "clone", "-q", url, clone)
	if got := git(t, clone, nil, "rev-parse", "HEAD"); got != want {
		t.Errorf("cloned HEAD = %s, want %s", got, want)
	}
	if got := s.Execs(); !slices.Equal(got, []string{"git-receive-pack '/srv/r.git'", "git-upload-pack '/srv/r.git'"}) {
		t.Errorf("execs = %q", got)
	}
	if got := s.Users(); len(got) == 0 || got[0] != "git" {
		t.Errorf("users = %q", got)
	}

	t.Run("another key is refused", func(t *testing.T) {
		other, _ := NewKey(t, t.TempDir())
		before := len(s.Execs())
		cmd := exec.Command("git", "ls-remote", url)
		cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, sshEnv(t, s, other)...)
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Fatalf("ls-remote with another key succeeded: %s", out)
		}
		if n := len(s.Execs()); n != before {
			t.Errorf("%d execs ran", n-before)
		}
	})
}

func TestResolve(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	git(t, root, nil, "init", "-q", "--bare", "r.git")
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	s := &Server{root: root}
	for _, cmd := range []string{"git-upload-pack '/r.git'", "git-receive-pack 'r.git'", `git-upload-pack '/r'\''.git'`} {
		if cmd == `git-upload-pack '/r'\''.git'` {
			git(t, root, nil, "init", "-q", "--bare", "r'.git")
		}
		if _, dir, err := s.resolve(cmd); err != nil || !strings.HasPrefix(dir, root) {
			t.Errorf("resolve(%q) = %q, %v", cmd, dir, err)
		}
	}
	for _, cmd := range []string{
		"git-upload-archive '/r.git'",
		"sh -c 'id'",
		"git-upload-pack /r.git",
		"git-upload-pack '/r.git",
		"git-upload-pack '/r.git' x",
		"git-upload-pack '/r.git'; id",
		"git-upload-pack '../r.git'",
		"git-upload-pack '/r.git/../../etc'",
		"git-upload-pack '~/r.git'",
		"git-upload-pack '-/r.git'",
		"git-upload-pack '/out'",
		"git-upload-pack '/missing.git'",
		"git-upload-pack ''",
	} {
		if sub, dir, err := s.resolve(cmd); err == nil {
			t.Errorf("resolve(%q) = %q %q, want an error", cmd, sub, dir)
		}
	}
}

func TestUnquote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`'/srv/r.git'`:      "/srv/r.git",
		`'it'\''s'`:         "it's",
		`'a'\!'b'`:          "a!b",
		`'a'\'''`:           "a'",
		`'a b'`:             "a b",
		`''`:                "",
		`'x'\'''\!'y'`:      "x'!y",
		`'semi;colon'`:      "semi;colon",
		`'$(no)'`:           "$(no)",
		`'back` + "`" + `'`: "back`",
	} {
		if got, err := unquote(in); err != nil || got != want {
			t.Errorf("unquote(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`a`, `'a`, `'a'b`, `'a' 'b'`, `'a'\x'`, `'a'\'`, `"a"`, `'a'\''`} {
		if got, err := unquote(in); err == nil {
			t.Errorf("unquote(%s) = %q, want an error", in, got)
		}
	}
}
