package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGitRemotes(t *testing.T) {
	t.Parallel()
	const key = "ANTHROPIC_API_KEY=sk-ant-test-0123456789"
	c := mustLoad(t, map[string]string{FileConfig: `
git:
  remotes:
    - name: origin
      url: https://Git.Example.com:8443/me/notes.git
      token_env: GIT_NOTES_TOKEN
    - name: local
      url: http://127.0.0.1:9999/repo.git
      allow_force: true
    - name: box
      url: git@nas.example:repos/notes.git
      ssh_key: keys/nas
`, FileEnv: "GIT_NOTES_TOKEN=tok-123456\n"}, key)
	o, ok := c.GitRemote("origin")
	if !ok || o.Scheme != "https" || o.Host != "git.example.com:8443" || o.Path != "/me/notes.git" || o.Username != defaultGitUsername {
		t.Errorf("origin = %+v", o)
	}
	if got := c.GitToken(o); got != "tok-123456" {
		t.Errorf("token = %q", got)
	}
	if l, _ := c.GitRemote("local"); !l.AllowForce || l.AllowDelete || l.Host != "127.0.0.1:9999" {
		t.Errorf("local = %+v", l)
	}
	if b, _ := c.GitRemote("box"); b.Scheme != "ssh" || b.User != "git" || b.Host != "nas.example" || b.SSHKey != filepath.Join(c.Home, "keys/nas") {
		t.Errorf("box = %+v", b)
	}
	if _, ok := c.GitRemote("https://git.example.com/me/notes.git"); ok {
		t.Error("a URL found a remote")
	}
}

func TestGitRemotesRefused(t *testing.T) {
	t.Parallel()
	const key = "ANTHROPIC_API_KEY=sk-ant-test-0123456789"
	for _, tt := range []struct{ name, entry, want string }{
		{"url as name", "name: https://x.example/r\n      url: https://x.example/r.git", "name"},
		{"dash name", "name: -upload-pack\n      url: https://x.example/r.git", "name"},
		{"dotdot name", "name: a..b\n      url: https://x.example/r.git", "ref component"},
		{"file scheme", "name: a\n      url: file:///etc", "not offered"},
		{"ext scheme", "name: a\n      url: ext::sh -c x", "printable ASCII"},
		{"ext scheme2", "name: a\n      url: ext::sh", "https://host/path"},
		{"git scheme", "name: a\n      url: git://x.example/r.git", "not offered"},
		{"credentials in url", "name: a\n      url: https://u:p@x.example/r.git", "no credentials"},
		{"query", "name: a\n      url: https://x.example/r.git?x=1", "no query"},
		{"plain http to the world", "name: a\n      url: http://x.example/r.git", "only for a server on this machine"},
		{"plain http to a LAN", "name: a\n      url: http://192.168.1.2/r.git", "only for a server on this machine"},
		{"no path", "name: a\n      url: https://x.example/", "no repository path"},
		{"dash host", "name: a\n      url: git@-oProxyCommand=x:r", "must not start"},
		{"unicode host", "name: a\n      url: https://gіthub.com/r.git", "punycode"},
		{"token value", "name: a\n      url: https://x.example/r.git\n      token_env: ghp_abc-def", "name of an environment variable"},
		{"both", "name: a\n      url: https://x.example/r.git\n      token_env: T\n      ssh_key: k", "not both"},
		{"key for https", "name: a\n      url: https://x.example/r.git\n      ssh_key: k", "token_env"},
		{"owner's ssh dir", "name: a\n      url: git@x.example:r.git\n      ssh_key: /root/.ssh/id_ed25519", "inside shelldon's home"},
		{"escape by dots", "name: a\n      url: git@x.example:r.git\n      ssh_key: ../id", "inside shelldon's home"},
		{"in the workspace", "name: a\n      url: git@x.example:r.git\n      ssh_key: workspace/id", "workspace"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, map[string]string{FileConfig: "git:\n  remotes:\n    - " + tt.entry + "\n"}, key)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	t.Run("duplicate", func(t *testing.T) {
		t.Parallel()
		_, err := load(t, map[string]string{FileConfig: "git:\n  remotes:\n    - {name: a, url: 'https://x.example/r.git'}\n    - {name: a, url: 'https://y.example/r.git'}\n"}, key)
		if err == nil || !strings.Contains(err.Error(), "twice") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("symlink out of the home", func(t *testing.T) {
		t.Parallel()
		home := newHome(t, map[string]string{FileConfig: "git:\n  remotes:\n    - {name: a, url: 'git@x.example:r.git', ssh_key: key}\n"})
		if err := os.Symlink(filepath.Join(t.TempDir(), "id"), filepath.Join(home, "key")); err != nil {
			t.Fatal(err)
		}
		// The target exists outside the home.
		target, _ := os.Readlink(filepath.Join(home, "key"))
		if err := os.WriteFile(target, []byte("k"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(home, []string{key})
		if err == nil || !strings.Contains(err.Error(), "inside shelldon's home") {
			t.Errorf("err = %v", err)
		}
	})
}
