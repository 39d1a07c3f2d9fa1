package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostKey is a real ed25519 public key, as ssh-keyscan prints it.
const hostKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAKajNBOZJgLs9WoRf/3upJF/lJOV8brcFMaP+1e03s9"

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
      host_key: nas.example ` + hostKey + `
    - name: port
      url: ssh://git@[::1]:2222/srv/notes.git
      ssh_key: keys/port
      host_key: ` + hostKey + ` root@nas
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
	if b, _ := c.GitRemote("box"); b.HostKey != "nas.example "+hostKey {
		t.Errorf("box host_key = %q", b.HostKey)
	}
	if p, _ := c.GitRemote("port"); p.Scheme != "ssh" || p.Host != "[::1]:2222" || p.Path != "/srv/notes.git" || p.HostKey != hostKey+" root@nas" {
		t.Errorf("port = %+v", p)
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
		{"ssh without host_key", "name: a\n      url: git@x.example:r.git\n      ssh_key: k", "ssh-keyscan -t ed25519 x.example"},
		{"ssh with a port, without host_key", "name: a\n      url: ssh://git@x.example:2222/r.git\n      ssh_key: k", "ssh-keyscan -t ed25519 -p 2222 x.example"},
		{"host_key tells to check the fingerprint", "name: a\n      url: git@x.example:r.git\n      ssh_key: k", "fingerprint"},
		{"ssh without ssh_key", "name: a\n      url: git@x.example:r.git\n      host_key: " + hostKey, "needs ssh_key"},
		{"ssh without ssh_key says no agent", "name: a\n      url: ssh://git@x.example/r.git\n      host_key: " + hostKey, "no agent"},
		{"host_key on https", "name: a\n      url: https://x.example/r.git\n      token_env: T\n      host_key: " + hostKey, "host_key is for an ssh remote"},
		{"host_key on http", "name: a\n      url: http://127.0.0.1:8080/r.git\n      host_key: " + hostKey, "host_key is for an ssh remote"},
		{"host_key not a key", "name: a\n      url: git@x.example:r.git\n      ssh_key: k\n      host_key: SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s", "must read"},
		{"host_key truncated", "name: a\n      url: git@x.example:r.git\n      ssh_key: k\n      host_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAKajNBOZJg", "host key"},
		{"host_key of a retired type", "name: a\n      url: git@x.example:r.git\n      ssh_key: k\n      host_key: ssh-dss AAAAB3NzaC1kc3M=", "not taken"},
		{"host_key as a marker", "name: a\n      url: git@x.example:r.git\n      ssh_key: k\n      host_key: '@cert-authority * " + hostKey + "'", "marker"},
		{"host_key with a private key", "name: a\n      url: git@x.example:r.git\n      ssh_key: k\n      host_key: '-----BEGIN OPENSSH PRIVATE KEY-----'", "must read"},
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
