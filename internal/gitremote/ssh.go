package gitremote

// SSH remotes. git runs in the sandbox with no network; its ssh command is
// a shelldon stub that forwards git's stdin and stdout to the daemon, and
// the daemon speaks SSH to the remote itself with the functions below.
//
// Invariant: the private key never leaves the daemon (it is read here and
// only a signature crosses the wire), and the remote's host key is pinned:
// the connection goes on only when the server proves it holds exactly the
// key in config.yaml, so a second host, or one in the middle, learns
// nothing and gets nothing. Only the remote's own git-upload-pack or
// git-receive-pack, on the configured path, is run (CheckSSHCommand).
// Nothing here logs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/shelldon/shelldon/internal/sshkey"
)

// ErrHostKeyMismatch: the server offered a host key other than the pinned
// one.
var ErrHostKeyMismatch = errors.New("ssh: the host key did not match")

// maxSSHKeySize bounds a private key file; an RSA 16384-bit key in PEM is
// about 12 KiB.
const maxSSHKeySize = 64 << 10

// sshHandshakeTimeout bounds the SSH handshake and authentication; the
// command itself runs as long as ctx allows.
const sshHandshakeTimeout = 30 * time.Second

// LoadSSHKey reads a private key file (OpenSSH or PEM format) for signing.
// It refuses a file readable by group or others, as ssh does, a file over
// 64 KiB, and a key protected by a passphrase: shelldon has nobody to type
// it. Errors never hold key material.
func LoadSSHKey(path string) (ssh.Signer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ssh key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ssh key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("ssh key %s: not a regular file", path)
	}
	// Windows has no such mode bits: every file reads as 0666 there.
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("ssh key %s: readable by others (mode %04o): run chmod 600 %s", path, perm, path)
	}
	if fi.Size() > maxSSHKeySize {
		return nil, fmt.Errorf("ssh key %s: %d bytes, more than a private key (at most %d)", path, fi.Size(), maxSSHKeySize)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSSHKeySize+1))
	if err != nil {
		return nil, fmt.Errorf("ssh key %s: %w", path, err)
	}
	defer clear(data)
	if len(data) > maxSSHKeySize {
		return nil, fmt.Errorf("ssh key %s: more than a private key (at most %d bytes)", path, maxSSHKeySize)
	}
	signer, err := ssh.ParsePrivateKey(data)
	var missing *ssh.PassphraseMissingError
	switch {
	case err == nil:
		return signer, nil
	case errors.As(err, &missing):
		return nil, fmt.Errorf("ssh key %s: protected by a passphrase, and shelldon has nobody to type it: make a key for shelldon without one (ssh-keygen -t ed25519 -N '' -f %s)", path, path)
	case sshkey.LooksLikeType(firstWord(data)):
		return nil, fmt.Errorf("ssh key %s: this is a public key; ssh_key names the private key file (the one without .pub)", path)
	default:
		// The parser's own error is left out: it could quote the file.
		return nil, fmt.Errorf("ssh key %s: not a private key in OpenSSH or PEM format (ed25519, ecdsa or rsa)", path)
	}
}

// firstWord is data up to its first space or line break.
func firstWord(data []byte) string {
	if i := bytes.IndexAny(data, " \t\r\n"); i >= 0 {
		data = data[:i]
	}
	return string(data)
}

// CheckSSHCommand checks the remote command git asked its ssh command to
// run, and returns the service ("git-upload-pack" or "git-receive-pack").
// It must be exactly what git sends for the configured path (as
// config.ParseGitURL gives it): the service, one space and the path in
// git's single quotes, e.g. git-upload-pack '/srv/repo.git'. Anything else
// (another command, more words, another path) is refused.
func CheckSSHCommand(command, path string) (string, error) {
	if path == "" || strings.ContainsAny(path, "\x00\n\r") {
		return "", errors.New("ssh: the remote's path is empty or holds a line break or NUL")
	}
	service, arg, _ := strings.Cut(command, " ")
	if service != "git-upload-pack" && service != "git-receive-pack" {
		return "", fmt.Errorf("ssh: only git-upload-pack and git-receive-pack run on a remote, not %.60q", service)
	}
	if arg != gitQuote(gitSSHPath(path)) {
		return "", fmt.Errorf("ssh: %s must name the remote's own path %s, not %.200q", service, gitQuote(gitSSHPath(path)), arg)
	}
	return service, nil
}

// gitSSHPath is the path as git sends it: "/~user/x" becomes "~user/x", in
// an ssh:// URL and in the scp-like form alike (git 2.39, checked).
func gitSSHPath(path string) string {
	if strings.HasPrefix(path, "/~") {
		return path[1:]
	}
	return path
}

// gitQuote quotes s as git's sq_quote_buf does: in single quotes, each '
// or ! closing the quote, escaped with a backslash, and reopening it:
//
//	a'b!c -> 'a'\''b'\!'c'
func gitQuote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\'' || c == '!' {
			b.WriteString(`'\` + string(c) + `'`)
			continue
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

// SSHExec runs command on an SSH server over conn, which the caller dialed
// to the remote's host and port (addr, "host:port", is what the handshake
// names). The server must present exactly hostKey, or SSHExec stops before
// authenticating (ErrHostKeyMismatch, with both fingerprints); it
// authenticates with signer only (no password, keyboard-interactive or
// agent). stdin is copied to the command (its end closes the command's
// stdin), the command's stdout and stderr to stdout and stderr. It returns
// nil when the command exits 0; on another exit the error wraps
// *ssh.ExitError, whose ExitStatus() git's caller can pass on. Cancelling
// ctx closes conn. SSHExec always closes conn; a Read of stdin still
// blocked when it returns ends when the caller closes stdin.
func SSHExec(ctx context.Context, conn net.Conn, addr, user string, hostKey ssh.PublicKey, signer ssh.Signer, command string, stdin io.Reader, stdout, stderr io.Writer) error {
	defer conn.Close()
	if hostKey == nil || signer == nil {
		return errors.New("ssh: no host key or no signer")
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	want := hostKey.Marshal()
	cfg := &ssh.ClientConfig{
		User: user,
		Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: func(_ string, _ net.Addr, got ssh.PublicKey) error {
			if bytes.Equal(got.Marshal(), want) {
				return nil
			}
			return fmt.Errorf("%w: %s offered %s %s, host_key is %s %s", ErrHostKeyMismatch, addr,
				got.Type(), ssh.FingerprintSHA256(got), hostKey.Type(), ssh.FingerprintSHA256(hostKey))
		},
		// Ask for the pinned key's type only, so a server holding several
		// keys shows the one that can match.
		HostKeyAlgorithms: hostKeyAlgorithms(hostKey),
	}
	if err := conn.SetDeadline(time.Now().Add(sshHandshakeTimeout)); err != nil {
		return fmt.Errorf("ssh %s: %w", addr, err)
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("ssh %s: %w", addr, ctx.Err())
		case errors.Is(err, os.ErrDeadlineExceeded):
			return fmt.Errorf("ssh %s: no handshake within %v", addr, sshHandshakeTimeout)
		}
		return fmt.Errorf("ssh %s: %w", addr, err)
	}
	client := ssh.NewClient(c, chans, reqs)
	defer client.Close()
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return fmt.Errorf("ssh %s: %w", addr, err)
	}
	session, err := client.NewSession()
	if err != nil {
		return fmt.Errorf("ssh %s: open a session: %w", addr, err)
	}
	defer session.Close()
	session.Stdin, session.Stdout, session.Stderr = stdin, stdout, stderr
	err = session.Run(command)
	if ctx.Err() != nil {
		return fmt.Errorf("ssh %s: %w", addr, ctx.Err())
	}
	var exit *ssh.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit):
		return fmt.Errorf("ssh %s: %s exited with status %d: %w", addr, commandName(command), exit.ExitStatus(), err)
	default:
		return fmt.Errorf("ssh %s: %s: %w", addr, commandName(command), err)
	}
}

// hostKeyAlgorithms lists the signature algorithms that a server holding
// key k can use.
func hostKeyAlgorithms(k ssh.PublicKey) []string {
	if k.Type() == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256}
	}
	return []string{k.Type()}
}

// commandName is the first word of command, for errors.
func commandName(command string) string {
	name, _, _ := strings.Cut(command, " ")
	return fmt.Sprintf("%.40q", name)
}
