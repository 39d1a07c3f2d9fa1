// Package gitserve serves git repositories on loopback for shelldon's
// tests, as the remotes an owner configures would: over SSH (Start: a
// minimal SSH server, public-key authentication with one authorized key,
// and only git-upload-pack and git-receive-pack on a repository under its
// root) and over HTTP (HTTP: git http-backend behind a token). The real
// git serves in both.
//
// Invariant: imported only by tests (it listens, runs git and writes key
// files; nothing in the binary needs it).
package gitserve

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
)

// Server is a running test SSH server.
type Server struct {
	// Addr is the listening address, "127.0.0.1:port".
	Addr string
	// Port is Addr's port.
	Port int

	root   string
	signer ssh.Signer
	ln     net.Listener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]bool
	execs []string
	users []string
}

// Start serves the repositories under root on 127.0.0.1 with a fresh
// ed25519 host key, to a client that authenticates with authorized. The
// server stops (connections closed, git processes killed) when the test
// ends.
func Start(t testing.TB, root string, authorized ssh.PublicKey) *Server {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		Addr: ln.Addr().String(), Port: ln.Addr().(*net.TCPAddr).Port,
		root: root, signer: signer, ln: ln, ctx: ctx, cancel: cancel,
		conns: map[net.Conn]bool{},
	}
	want := authorized.Marshal()
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			s.mu.Lock()
			s.users = append(s.users, meta.User())
			s.mu.Unlock()
			if bytes.Equal(key.Marshal(), want) {
				return &ssh.Permissions{}, nil
			}
			return nil, errors.New("gitserve: key not authorized")
		},
	}
	cfg.AddHostKey(signer)
	s.wg.Go(func() { s.accept(cfg) })
	t.Cleanup(s.close)
	return s
}

// HostKey is the server's public host key.
func (s *Server) HostKey() ssh.PublicKey { return s.signer.PublicKey() }

// HostKeyLine is the host key as a .pub file or host_key holds it:
// "ssh-ed25519 AAAA...".
func (s *Server) HostKeyLine() string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.signer.PublicKey())))
}

// Execs returns the exec commands received so far, refused ones included.
func (s *Server) Execs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.execs)
}

// Users returns the user name of every public-key authentication attempt
// so far, accepted or not: empty when no client got as far as offering a
// key.
func (s *Server) Users() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.users)
}

func (s *Server) close() {
	s.cancel()
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) accept(cfg *ssh.ServerConfig) {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Go(func() {
			defer func() {
				c.Close()
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
			}()
			s.serve(c, cfg)
		})
	}
}

func (s *Server) serve(c net.Conn, cfg *ssh.ServerConfig) {
	sc, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	s.wg.Go(func() { ssh.DiscardRequests(reqs) })
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		s.wg.Go(func() { s.session(ch, creqs) })
	}
}

// session serves one session: env GIT_PROTOCOL is kept, the first exec
// runs and ends the session, every other request is refused.
func (s *Server) session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	var env []string
	for req := range reqs {
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			ok := ssh.Unmarshal(req.Payload, &kv) == nil && kv.Name == "GIT_PROTOCOL" && !strings.ContainsAny(kv.Value, "\x00\n")
			if ok {
				env = append(env, kv.Name+"="+kv.Value)
			}
			req.Reply(ok, nil)
		case "exec":
			var cmd struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &cmd); err != nil {
				req.Reply(false, nil)
				continue
			}
			s.mu.Lock()
			s.execs = append(s.execs, cmd.Command)
			s.mu.Unlock()
			req.Reply(true, nil)
			status := s.run(ch, cmd.Command, env)
			ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
			return
		default:
			req.Reply(false, nil)
		}
	}
}

// run runs command's git service with the channel as its stdin, stdout
// and stderr, and returns its exit status.
func (s *Server) run(ch ssh.Channel, command string, env []string) uint32 {
	sub, dir, err := s.resolve(command)
	if err != nil {
		fmt.Fprintf(ch.Stderr(), "gitserve: %v\n", err)
		return 1
	}
	cmd := exec.CommandContext(s.ctx, "git", sub, dir)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + s.root, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}, env...)
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	// Not cmd.Stdin = ch: Wait would wait for the client to close its
	// side even after git has exited.
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintf(ch.Stderr(), "gitserve: %v\n", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(ch.Stderr(), "gitserve: %v\n", err)
		return 1
	}
	s.wg.Go(func() {
		io.Copy(in, ch)
		in.Close()
	})
	var exit *exec.ExitError
	switch err := cmd.Wait(); {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return uint32(exit.ExitCode())
	default:
		return 255
	}
}

// resolve parses git-upload-pack '<path>' or git-receive-pack '<path>'
// and maps the path under the root ("/srv/r.git" and "srv/r.git" both to
// root/srv/r.git), refusing "..", "~" and symlinks out of the root.
func (s *Server) resolve(command string) (sub, dir string, err error) {
	service, arg, _ := strings.Cut(command, " ")
	switch service {
	case "git-upload-pack", "git-receive-pack":
		sub = strings.TrimPrefix(service, "git-")
	default:
		return "", "", fmt.Errorf("only git-upload-pack and git-receive-pack are served, not %.40q", service)
	}
	p, err := unquote(arg)
	if err != nil {
		return "", "", err
	}
	if p == "" || strings.ContainsAny(p, "\x00\n") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "-") {
		return "", "", fmt.Errorf("bad path %q", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", "", fmt.Errorf("bad path %q: no ..", p)
		}
	}
	dir, err = filepath.EvalSymlinks(filepath.Join(s.root, filepath.FromSlash(p)))
	if err != nil {
		return "", "", fmt.Errorf("no repository %q", p)
	}
	if rel, err := filepath.Rel(s.root, dir); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", "", fmt.Errorf("bad path %q: outside the root", p)
	}
	return sub, dir, nil
}

// unquote undoes git's sq_quote_buf, which writes a'b!c as
//
//	'a'\''b'\!'c'
func unquote(s string) (string, error) {
	if !strings.HasPrefix(s, "'") {
		return "", errors.New("the path must be in single quotes")
	}
	var b strings.Builder
	for i := 1; ; {
		j := strings.IndexByte(s[i:], '\'')
		if j < 0 {
			return "", errors.New("unterminated quote")
		}
		b.WriteString(s[i : i+j])
		i += j + 1
		if i == len(s) {
			return b.String(), nil
		}
		if len(s)-i < 3 || s[i] != '\\' || s[i+1] != '\'' && s[i+1] != '!' || s[i+2] != '\'' {
			return "", errors.New("bad quoting: one path in git's single quotes expected")
		}
		b.WriteByte(s[i+1])
		i += 3
	}
}

// NewKey writes a fresh ed25519 private key without a passphrase, in
// OpenSSH format, to a new file in dir (mode 0600), and returns the file's
// path and the public key.
func NewKey(t testing.TB, dir string) (string, ssh.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(dir, "id_ed25519-")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Chmod(0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(pem.EncodeToMemory(block)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return f.Name(), sshPub
}
