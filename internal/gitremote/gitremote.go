// Package gitremote runs git against a remote the owner configured
// (git.remotes), from the daemon's side, with the remote's credential bound
// to the remote's own scheme, host and port.
//
// Invariant: the token never appears in git's argv or environment, nor in
// anything this package returns or logs. It reaches git only through a
// credential helper shelldon owns, which reads it from an inherited memfd
// and answers only when git asks for exactly the remote's protocol and
// host (a second host, a redirect target, gets nothing); git runs with no
// system or global configuration, redirects refused, only the remote's
// protocol allowed, and no proxy from the environment.
package gitremote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Remote is a configured remote as this package needs it.
type Remote struct {
	Name     string
	URL      string
	Scheme   string // https or http (loopback); ssh is not run here yet
	Host     string // host[:port], as git's credential protocol names it
	Username string
	Token    string // "" for none
}

// ErrSSH: ssh remotes are configured but not run yet.
var ErrSSH = errors.New("ssh remotes are not supported yet")

// helperScript is the credential helper: git runs it as
// `sh -c '<script> "$@"' <script> get|store|erase` with git's request on
// stdin. It answers "get" only for the expected protocol and host, which
// come as its first two arguments (after the action git appends, they are
// $2 and $3 once shifted); the token is read from fd 3 (a memfd), never
// from an argument or the environment.
const helperScript = `f() { want_p="$1"; want_h="$2"; want_u="$3"; shift 3; [ "$1" = get ] || exit 0; ` +
	`p=; h=; while IFS= read -r l && [ -n "$l" ]; do case "$l" in protocol=*) p="${l#protocol=}";; host=*) h="${l#host=}";; esac; done; ` +
	`[ "$p" = "$want_p" ] && [ "$h" = "$want_h" ] || exit 0; ` +
	`printf 'username=%s\npassword=' "$want_u"; cat /proc/self/fd/3; printf '\n'; }; f`

// Command returns the git command that runs args (after the daemon-owned
// configuration) against r, and a close function for the token's memfd.
// Dir is the working directory; home is git's HOME (an empty private
// directory).
func Command(ctx context.Context, r Remote, home string, args ...string) (*exec.Cmd, func(), error) {
	switch r.Scheme {
	case "https", "http":
	case "ssh":
		return nil, nil, ErrSSH
	default:
		return nil, nil, fmt.Errorf("gitremote: the scheme %q is not offered", r.Scheme)
	}
	if strings.ContainsAny(r.Host, "'\"\\ $`\n") || strings.ContainsAny(r.Username, "'\"\\ $`\n") {
		return nil, nil, errors.New("gitremote: a bad host or user name")
	}
	if strings.ContainsAny(r.Token, "\n\r\x00") {
		return nil, nil, errors.New("gitremote: the token holds a line break or NUL")
	}
	cfg := []string{
		"protocol.allow=never", "protocol." + r.Scheme + ".allow=always",
		"http.followRedirects=false", "http.proxy=", "core.askPass=",
		"core.sshCommand=false", "core.hooksPath=/dev/null", "core.fsmonitor=false",
		"credential.helper=", "credential.interactive=false",
	}
	var closeFn = func() {}
	var extra []*os.File
	if r.Token != "" {
		f, err := sealedToken(r.Token)
		if err != nil {
			return nil, nil, err
		}
		extra = []*os.File{f}
		closeFn = func() { f.Close() }
		// Scoped to the remote's URL: git consults it only for that
		// scheme and host; the script checks them again.
		cfg = append(cfg, "credential."+r.Scheme+"://"+r.Host+".helper=!"+helperScript+" '"+r.Scheme+"' '"+r.Host+"' '"+r.Username+"'")
	}
	argv := []string{}
	for _, c := range cfg {
		argv = append(argv, "-c", c)
	}
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Env = Env(home)
	cmd.ExtraFiles = extra
	cmd.WaitDelay = 5 * time.Second
	return cmd, closeFn, nil
}

// Env is the whole environment of a daemon-side git: nothing of the
// daemon's (no proxy variables, no GIT_*), no prompts.
func Env(home string) []string {
	return []string{
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + home,
		"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "LANG=C.UTF-8",
		"PATH=/usr/bin:/bin", "GIT_PROTOCOL_FROM_USER=0",
	}
}

// LsRemote lists the remote's branch heads with git ls-remote, changing
// nothing: it checks that the remote answers and accepts the credential.
// The error's text comes from git's stderr, with the token (if it ever
// appeared) taken out.
func LsRemote(ctx context.Context, r Remote) ([]string, error) {
	home, err := os.MkdirTemp("", "shelldon-git-home-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	cmd, done, err := Command(ctx, r, home, "ls-remote", "--heads", "--", r.URL)
	if err != nil {
		return nil, err
	}
	defer done()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if r.Token != "" {
			msg = strings.ReplaceAll(msg, r.Token, "[redacted]")
		}
		if len(msg) > 400 {
			msg = msg[:400] + "..."
		}
		return nil, fmt.Errorf("git ls-remote %s: %v: %s", r.Name, err, msg)
	}
	var refs []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if _, ref, ok := strings.Cut(line, "\t"); ok {
			refs = append(refs, ref)
		}
	}
	return refs, nil
}
