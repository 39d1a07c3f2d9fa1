package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shelldon/shelldon/internal/sshkey"
)

// GitConfig is git.*: the remotes the git tool may reach. It is the
// owner's alone (contracts.CheckAgentConfig refuses any change to it): a
// remote is a place the agent's commits may go and a credential that
// authenticates there.
type GitConfig struct {
	Remotes []GitRemote `yaml:"remotes"`
}

// GitRemote is one remote the agent may name in git fetch, pull and push.
type GitRemote struct {
	// Name is what the agent says: "git fetch <name>". Never a URL.
	Name string `yaml:"name"`
	// URL is https://host[:port]/path (http:// only to a loopback host),
	// ssh://user@host[:port]/path or the scp-like user@host:path.
	URL string `yaml:"url"`
	// TokenEnv names the variable (in .env) holding an HTTPS token; it is
	// offered to the remote's own scheme, host and port only.
	TokenEnv string `yaml:"token_env"`
	// Username goes with the token (default x-access-token, which GitHub
	// expects; GitLab and Gitea take any name with a personal token).
	Username string `yaml:"username"`
	// SSHKey is a private key file inside shelldon's home (never the
	// owner's ~/.ssh, never the workspace), without a passphrase: an ssh
	// remote needs one (shelldon uses no agent).
	SSHKey string `yaml:"ssh_key"`
	// HostKey pins an ssh remote's host key, as ssh-keyscan prints it
	// ("host ssh-ed25519 AAAA...") or as a .pub file holds it: the daemon
	// talks to no other. Required for an ssh remote, refused for https.
	HostKey string `yaml:"host_key"`
	// AllowForce lets a push rewrite the remote's history (+refspec,
	// --force, --force-with-lease); AllowDelete lets it delete remote refs.
	AllowForce  bool `yaml:"allow_force"`
	AllowDelete bool `yaml:"allow_delete"`

	// Filled in by Load.
	Scheme string `yaml:"-"` // "https", "http" or "ssh"
	Host   string `yaml:"-"` // host[:port] as git's credential protocol names it (lowercase)
	Path   string `yaml:"-"`
	User   string `yaml:"-"` // the ssh user
}

// defaultGitUsername is the user name sent with a token.
const defaultGitUsername = "x-access-token"

// maxGitRemotes bounds git.remotes.
const maxGitRemotes = 32

// GitRemote returns the configured remote called name.
func (c *Config) GitRemote(name string) (GitRemote, bool) {
	for _, r := range c.Git.Remotes {
		if r.Name == name {
			return r, true
		}
	}
	return GitRemote{}, false
}

// GitToken returns the token of r ("" when it has none or it is unset).
func (c *Config) GitToken(r GitRemote) string { return c.Secret(r.TokenEnv) }

// completeGit validates git.remotes and fills in each remote's parts.
func (c *Config) completeGit() []*Error {
	var errs []*Error
	if len(c.Git.Remotes) > maxGitRemotes {
		errs = append(errs, c.errAt("git.remotes", "%d remotes; at most %d", len(c.Git.Remotes), maxGitRemotes))
	}
	seen := map[string]bool{}
	for i := range c.Git.Remotes {
		r := &c.Git.Remotes[i]
		key := fmt.Sprintf("git.remotes[%d]", i)
		if err := CheckGitRemoteName(r.Name); err != nil {
			errs = append(errs, c.errAt(key+".name", "%v", err))
		} else if seen[r.Name] {
			errs = append(errs, c.errAt(key+".name", "%s is listed twice", r.Name))
		}
		seen[r.Name] = true
		scheme, user, host, path, err := ParseGitURL(r.URL)
		if err != nil {
			errs = append(errs, c.errAt(key+".url", "%v", err))
			continue
		}
		r.Scheme, r.User, r.Host, r.Path = scheme, user, host, path
		if r.TokenEnv != "" && r.SSHKey != "" {
			errs = append(errs, c.errAt(key, "give token_env or ssh_key, not both"))
		}
		if r.TokenEnv != "" {
			if e := c.checkEnvName(key+".token_env", r.TokenEnv); e != nil {
				errs = append(errs, e)
			}
			if scheme == "ssh" {
				errs = append(errs, c.errAt(key+".token_env", "an ssh remote authenticates with ssh_key, not a token"))
			}
		}
		if r.Username == "" {
			r.Username = defaultGitUsername
		} else if !plainWord(r.Username) {
			errs = append(errs, c.errAt(key+".username", "must be letters, digits, '.', '_', '-' or '@'"))
		}
		if scheme == "ssh" {
			errs = append(errs, c.checkSSHRemote(key, r)...)
		} else if r.HostKey != "" {
			errs = append(errs, c.errAt(key+".host_key", "host_key is for an ssh remote; an %s remote is checked by its TLS certificate", scheme))
		}
		if r.SSHKey != "" {
			if scheme != "ssh" {
				errs = append(errs, c.errAt(key+".ssh_key", "an %s remote authenticates with token_env, not an ssh key", scheme))
			}
			p, err := c.gitKeyPath(r.SSHKey)
			if err != nil {
				errs = append(errs, c.errAt(key+".ssh_key", "%v", err))
			}
			r.SSHKey = p
		}
	}
	return errs
}

// checkSSHRemote checks what an ssh remote needs beyond its URL: a key
// file of shelldon's own and the server's pinned host key.
func (c *Config) checkSSHRemote(key string, r *GitRemote) []*Error {
	var errs []*Error
	host, port := r.Host, ""
	if h, p, err := net.SplitHostPort(r.Host); err == nil {
		host, port = h, " -p "+p
	}
	host = strings.Trim(host, "[]")
	if r.SSHKey == "" && r.TokenEnv == "" {
		errs = append(errs, c.errAt(key+".ssh_key",
			"an ssh remote needs ssh_key, a private key file inside shelldon's home made for shelldon without a passphrase "+
				"(ssh-keygen -t ed25519 -N '' -f %s; add its .pub to the server): shelldon uses no agent and not ~/.ssh",
			filepath.Join(c.Home, "keys", r.Name)))
	}
	if r.HostKey == "" {
		errs = append(errs, c.errAt(key+".host_key",
			"an ssh remote needs host_key, the server's public host key, which shelldon pins: get it with "+
				"`ssh-keyscan -t ed25519%s %s`, and check its fingerprint (pipe that line into `ssh-keygen -lf -`) against the one the server's owner publishes",
			port, host))
	} else if _, err := sshkey.ParseHost(r.HostKey); err != nil {
		errs = append(errs, c.errAt(key+".host_key", "%v", err))
	}
	return errs
}

// gitKeyPath resolves an ssh key path (relative to the home) and refuses
// one outside the home or inside the workspace (which the agent writes).
func (c *Config) gitKeyPath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.Home, p)
	}
	p = filepath.Clean(p)
	resolved := p
	if r, err := filepath.EvalSymlinks(p); err == nil {
		resolved = r
	}
	home := c.Home
	if r, err := filepath.EvalSymlinks(home); err == nil {
		home = r
	}
	ws := c.Workspace
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	for _, cand := range []string{p, resolved} {
		if !within(cand, c.Home) && !within(cand, home) {
			return "", errors.New("the key file must be inside shelldon's home (copy a key made for shelldon there; never point at ~/.ssh)")
		}
		if within(cand, c.Workspace) || within(cand, ws) {
			return "", errors.New("the key file must not be inside the workspace, which the agent can read and write")
		}
	}
	return p, nil
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// CheckGitRemoteName checks a remote's name: a short word that cannot be
// taken for an option or a URL.
func CheckGitRemoteName(name string) error {
	if name == "" || len(name) > 64 {
		return errors.New("a remote's name must be 1 to 64 characters")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			i > 0 && (c == '-' || c == '_' || c == '.')
		if !ok {
			return fmt.Errorf("a remote's name is letters, digits, '-', '_' and '.', starting with a letter or digit")
		}
	}
	if strings.Contains(name, "..") || strings.HasSuffix(name, ".lock") || strings.HasSuffix(name, ".") {
		return errors.New("a remote's name must be a valid ref component (no \"..\", no trailing \".\" or \".lock\")")
	}
	return nil
}

// ParseGitURL splits a remote URL: https://host[:port]/path, http:// to a
// loopback host (a local server), ssh://user@host[:port]/path or the
// scp-like user@host:path. Host is lowercase, with the port when one was
// given, as git's credential protocol names it. No credentials, query or
// fragment; every other scheme (file, git, ext, fd, ...) is refused.
func ParseGitURL(s string) (scheme, user, host, path string, err error) {
	if s == "" {
		return "", "", "", "", errors.New("a remote needs a url")
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r > 0x7e {
			return "", "", "", "", errors.New("the url must be printable ASCII without spaces (write an internationalized host in punycode, xn--...)")
		}
	}
	if !strings.Contains(s, "://") {
		// scp-like: user@host:path (git takes it for ssh when the part
		// before the first ':' has no '/').
		at := strings.IndexByte(s, '@')
		colon := strings.IndexByte(s, ':')
		if at <= 0 || colon < at || strings.Contains(s[:colon], "/") {
			return "", "", "", "", errors.New("the url must be https://host/path, ssh://user@host/path or user@host:path")
		}
		user, host, path = s[:at], strings.ToLower(s[at+1:colon]), s[colon+1:]
		if err := checkGitParts(user, host, path); err != nil {
			return "", "", "", "", err
		}
		return "ssh", user, host, path, nil
	}
	u, perr := url.Parse(s)
	if perr != nil {
		return "", "", "", "", errors.New("the url does not parse")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", "", "", "", errors.New("the url must have no query or fragment")
	}
	host = strings.ToLower(u.Host)
	switch u.Scheme {
	case "https", "http":
		if u.User != nil {
			return "", "", "", "", errors.New("put no credentials in the url: name the token's variable in token_env")
		}
		if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
			return "", "", "", "", errors.New("http:// is only for a server on this machine (127.0.0.1, ::1, localhost); use https://")
		}
	case "ssh":
		if u.User == nil || u.User.Username() == "" {
			return "", "", "", "", errors.New("an ssh url names its user: ssh://git@host/path")
		}
		if _, ok := u.User.Password(); ok {
			return "", "", "", "", errors.New("put no password in the url")
		}
		user = u.User.Username()
	default:
		return "", "", "", "", fmt.Errorf("the scheme %q is not offered; use https or ssh", u.Scheme)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", "", "", "", errors.New("the port must be 1 to 65535")
		}
	}
	if err := checkGitParts(user, u.Hostname(), u.Path); err != nil {
		return "", "", "", "", err
	}
	return u.Scheme, user, host, u.Path, nil
}

func checkGitParts(user, host, path string) error {
	if user != "" && !plainWord(user) {
		return errors.New("the user must be letters, digits, '.', '_', '-'")
	}
	if host == "" {
		return errors.New("the url has no host")
	}
	if strings.HasPrefix(host, "-") {
		return errors.New("the host must not start with '-'")
	}
	if net.ParseIP(strings.Trim(host, "[]")) == nil {
		for i := 0; i < len(host); i++ {
			c := host[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
				return errors.New("the host must be a DNS name (punycode for international names) or an IP address")
			}
		}
	}
	if path == "" || path == "/" {
		return errors.New("the url names no repository path")
	}
	if strings.HasPrefix(path, "-") {
		return errors.New("the path must not start with '-'")
	}
	return nil
}

func plainWord(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._-@", c) >= 0) {
			return false
		}
	}
	return true
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// gitKeysDoc is the git section of config.yaml as init writes it.
func gitKeysDoc() string {
	return `
# Git remotes the agent may fetch from, pull from and push to, each call
# approved by you. The agent names a remote only by its name, never a URL;
# the token (a variable in .env) is offered to that remote's host only.
# An entry looks like:
#   - name: origin
#     url: https://github.com/you/notes.git
#     token_env: GIT_NOTES_TOKEN
#     allow_force: false    # let a push rewrite the remote's history
#     allow_delete: false   # let a push delete remote branches or tags
# or, over ssh, with a key made for shelldon (no passphrase) in this
# directory and the server's host key (ssh-keyscan -t ed25519 HOST; check
# its fingerprint against the one the server publishes):
#   - name: nas
#     url: ssh://git@nas.lan:2222/srv/notes.git   # or git@nas.lan:notes.git
#     ssh_key: keys/nas
#     host_key: ssh-ed25519 AAAA...
git:
  #remotes: []
`
}
