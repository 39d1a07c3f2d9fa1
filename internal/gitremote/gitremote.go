// Package gitremote runs git against a remote the owner configured
// (git.remotes): fetch, push and ls-remote, started by the daemon for an
// approved call (or by doctor), never by the model.
//
// git itself runs in the kernel sandbox (package sandbox), in a network
// namespace of its own that holds only its loopback interface: the kernel
// lets it reach nothing else. Its one way out is a relay the daemon serves
// on a unix socket visible only to that sandbox (Relay), which dials only
// the remote's own host and port:
//
//   - https (and http to a loopback server): git's http.proxy is a SOCKS5
//     relay inside the sandbox (`shelldon be-child git-net`, NetMain) that
//     hands each connection to the daemon, which refuses any target but the
//     remote's host and port. TLS runs between git and the remote.
//   - ssh: git's ssh command is `shelldon be-child git-ssh` (SSHMain), a
//     pipe to the daemon, which opens the SSH connection itself, checks the
//     remote's host key against the one the owner pinned, signs with the
//     owner's key and runs the one git service git asked for, on the
//     remote's configured path. The key never enters the sandbox.
//
// Invariant: a remote's credential never appears in git's argv or
// environment, nor in anything this package returns or logs. A token
// reaches git only through a credential helper shelldon owns
// (`shelldon be-child git-cred`, CredMain), which asks the relay, and the
// relay answers only for exactly the remote's scheme and host; git runs
// with no system or global configuration, redirects refused, only the
// remote's protocol allowed.
package gitremote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/sandbox"
)

// Remote is a configured remote as this package needs it.
type Remote struct {
	Name     string
	URL      string
	Scheme   string // https, http (loopback) or ssh
	Host     string // host[:port], as git's credential protocol names it
	Username string // sent with Token
	Token    string // "" for none
	// For ssh: the user, the path git asks the remote's git service for,
	// the private key file (inside shelldon's home) and the pinned host
	// key (as ssh-keyscan prints it).
	User    string
	Path    string
	SSHKey  string
	HostKey string
}

// Sandbox runs a policy: *sandbox.Runner.
type Sandbox interface {
	Run(ctx context.Context, p sandbox.Policy) (sandbox.Result, error)
}

// Jail is where git runs: the sandbox, and the shelldon binary whose
// be-child modes are git's relay, ssh command and credential helper
// inside it (shown read-only there).
type Jail struct {
	Sandbox       Sandbox
	Exe           string
	AllowDegraded bool
	// MinFreeDisk is the free space git must leave on the file system of
	// the directory it writes (sandbox.Policy.MinFreeDisk): a remote that
	// sends more than the disk holds is stopped, not the Pi.
	MinFreeDisk uint64
}

// Limits of a sandboxed git: a fetch of a large repository indexes packs
// for minutes on a Pi, and git's processes together may take this much.
var gitLimits = sandbox.Limits{CPUSeconds: 600, DataBytes: 384 << 20, FileBytes: 1 << 30, OpenFiles: 512, Processes: 64}

// gitTimeout bounds one git command against a remote when ctx has none.
const gitTimeout = 10 * time.Minute

// Env is the whole environment of a sandboxed git, but for the relay's
// socket: nothing of the daemon's (no proxy variables, no GIT_*), no
// prompts.
func Env(home string) []string {
	return []string{
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + home,
		"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "LANG=C.UTF-8",
		"PATH=/usr/bin:/bin", "GIT_PROTOCOL_FROM_USER=0",
	}
}

// envRelay names the relay's socket in the sandboxed git's environment:
// a path, not a secret (only that sandbox sees the socket).
const envRelay = "SHELLDON_GIT_RELAY"

// shellQuote quotes s for sh, or refuses it: the binary's path goes into
// git's configuration as a command line.
func shellQuote(s string) (string, error) {
	if strings.ContainsAny(s, "'\n\x00") {
		return "", fmt.Errorf("gitremote: the path %q cannot be quoted for git", s)
	}
	return "'" + s + "'", nil
}

// gitConfig is the configuration git runs with against r: only r's
// protocol, no redirects, no hooks, and the ssh command or credential
// helper that lead to the relay.
func gitConfig(r Remote, exe string) ([]string, error) {
	q, err := shellQuote(exe)
	if err != nil {
		return nil, err
	}
	cfg := []string{
		"protocol.allow=never", "protocol." + r.Scheme + ".allow=always",
		"http.followRedirects=false", "core.askPass=",
		"core.hooksPath=/dev/null", "core.fsmonitor=false",
		"credential.helper=", "credential.interactive=false",
		"transfer.fsckObjects=true", "gc.auto=0",
	}
	switch r.Scheme {
	case "https", "http":
		cfg = append(cfg, "core.sshCommand=false")
		if r.Token != "" {
			// Scoped to the remote's URL: git asks it only for that scheme
			// and host, and the relay checks them again.
			cfg = append(cfg, "credential."+r.Scheme+"://"+r.Host+".helper=!"+q+" be-child git-cred")
		}
	case "ssh":
		cfg = append(cfg, "core.sshCommand="+q+" be-child git-ssh", "ssh.variant=ssh")
	default:
		return nil, fmt.Errorf("gitremote: the scheme %q is not offered", r.Scheme)
	}
	return cfg, nil
}

// Run runs `git args...` (after the daemon-owned configuration) against r
// in the sandbox, with dir its only writable directory (a bare mirror, or
// an empty directory) and its network the relay to r. It returns git's
// output (stdout and stderr), bounded, with the token taken out; the
// error's text is git's too, with what the relay refused or the remote's
// ssh service said.
func Run(ctx context.Context, j Jail, r Remote, dir string, args []string) (string, error) {
	if j.Sandbox == nil || j.Exe == "" {
		return "", errors.New("gitremote: git against a remote needs the sandbox")
	}
	if strings.ContainsAny(r.Token, "\n\r\x00") {
		return "", errors.New("gitremote: the token holds a line break or NUL")
	}
	cfg, err := gitConfig(r, j.Exe)
	if err != nil {
		return "", err
	}
	relay, err := StartRelay(r)
	if err != nil {
		return "", err
	}
	defer relay.Close()
	argv := []string{j.Exe, "be-child", "git-net", "--", "git"}
	for _, c := range cfg {
		argv = append(argv, "-c", c)
	}
	argv = append(argv, args...)
	timeout := gitTimeout
	if dl, ok := ctx.Deadline(); ok {
		if timeout = time.Until(dl); timeout <= 0 {
			return "", fmt.Errorf("gitremote: %w", context.DeadlineExceeded)
		}
	}
	res, err := j.Sandbox.Run(ctx, sandbox.Policy{
		Argv: argv, Dir: dir, Workspace: dir,
		ReadOnly: []string{relay.Dir(), j.Exe},
		Env:      append(Env("/tmp"), envRelay+"="+relay.Socket()),
		Loopback: true, Timeout: timeout, MaxOutput: 32 << 10, Limits: gitLimits,
		AllowDegraded: j.AllowDegraded, MinFreeDisk: j.MinFreeDisk,
	})
	sub := "git"
	if len(args) > 0 {
		sub += " " + args[0]
		if strings.HasPrefix(args[0], "--git-dir=") && len(args) > 1 {
			sub = "git " + args[1]
		}
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", sub, r.Name, err)
	}
	out := scrub(string(res.Stdout)+string(res.Stderr), r.Token)
	if !res.OK() {
		msg := out
		if why := relay.Refusals(); why != "" {
			msg = strings.TrimSpace(msg + "\n" + why)
		}
		how := fmt.Sprintf("exit %d", res.ExitCode)
		if res.Signal != "" {
			how = "killed by " + res.Signal
		}
		return "", fmt.Errorf("%s %s: %s: %s", sub, r.Name, how, scrub(msg, r.Token))
	}
	return out, nil
}

// LsRemote lists the remote's branch heads with git ls-remote, changing
// nothing: it checks that the remote answers, accepts the credential and
// (ssh) shows the pinned host key.
func LsRemote(ctx context.Context, j Jail, r Remote) ([]string, error) {
	dir, err := os.MkdirTemp("", "shelldon-git-ls-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out, err := Run(ctx, j, r, dir, []string{"ls-remote", "--heads", "--", r.URL})
	if err != nil {
		return nil, err
	}
	var refs []string
	for _, line := range strings.Split(out, "\n") {
		if _, ref, ok := strings.Cut(line, "\t"); ok && strings.HasPrefix(ref, "refs/") {
			refs = append(refs, ref)
		}
	}
	return refs, nil
}

// hostPort splits r.Host into its name (no brackets) and port, the
// scheme's default when the URL gave none.
func hostPort(r Remote) (string, string) {
	if h, p, err := net.SplitHostPort(r.Host); err == nil {
		return strings.ToLower(h), p
	}
	port := map[string]string{"https": "443", "http": "80", "ssh": "22"}[r.Scheme]
	return strings.ToLower(strings.Trim(r.Host, "[]")), port
}

// scrub bounds git's output and takes the token out, should it appear.
func scrub(msg, token string) string {
	msg = strings.TrimSpace(msg)
	if token != "" {
		msg = strings.ReplaceAll(msg, token, "[redacted]")
	}
	if len(msg) > 4000 {
		msg = msg[:4000] + "..."
	}
	return strings.ToValidUTF8(msg, "\uFFFD")
}

// privateDir makes a directory only the daemon's user may enter.
func privateDir() (string, error) {
	dir, err := os.MkdirTemp("", "shelldon-git-relay-")
	if err != nil {
		return "", fmt.Errorf("gitremote: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("gitremote: %w", err)
	}
	return filepath.Clean(dir), nil
}
