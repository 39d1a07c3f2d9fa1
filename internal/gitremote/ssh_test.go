package gitremote

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
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
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/shelldon/shelldon/internal/gitserve"
	"github.com/shelldon/shelldon/internal/sshkey"
)

// sshGit runs git with nothing of the user's configuration and returns
// its trimmed output.
func sshGit(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	return gitserve.Git(t, dir, env, args...)
}

// sshRepo makes root/srv/r.git, a bare repository with one commit on main
// pushed into it by plain git, and returns root and the commit.
func sshRepo(t *testing.T) (root, commit string) {
	t.Helper()
	root = t.TempDir()
	sshGit(t, root, nil, "init", "-q", "--bare", "-b", "main", "srv/r.git")
	work := t.TempDir()
	sshGit(t, work, nil, "init", "-q", "-b", "main")
	sshGit(t, work, nil, "commit", "-q", "--allow-empty", "-m", "first")
	sshGit(t, work, nil, "push", "-q", filepath.Join(root, "srv/r.git"), "main")
	return root, sshGit(t, work, nil, "rev-parse", "HEAD")
}

// sshFixture is a served repository and what a client needs to reach it.
type sshFixture struct {
	srv     *gitserve.Server
	commit  string
	signer  ssh.Signer
	hostKey ssh.PublicKey
}

func newSSHFixture(t *testing.T) sshFixture {
	t.Helper()
	root, commit := sshRepo(t)
	keyFile, pub := gitserve.NewKey(t, t.TempDir())
	srv := gitserve.Start(t, root, pub)
	signer, err := LoadSSHKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	hostKey, err := sshkey.ParseHost(srv.HostKeyLine())
	if err != nil {
		t.Fatal(err)
	}
	return sshFixture{srv: srv, commit: commit, signer: signer, hostKey: hostKey}
}

// run runs command through SSHExec on a fresh connection.
func (f sshFixture) run(ctx context.Context, t *testing.T, hostKey ssh.PublicKey, signer ssh.Signer, command string, stdin io.Reader, stdout, stderr io.Writer) error {
	t.Helper()
	conn, err := net.Dial("tcp", f.srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	return SSHExec(ctx, conn, f.srv.Addr, "git", hostKey, signer, command, stdin, stdout, stderr)
}

func TestSSHExec(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSSHFixture(t)

	t.Run("upload-pack lists the branch", func(t *testing.T) {
		// A flush packet right after the advertisement means "no wants":
		// upload-pack advertises its refs and exits 0.
		var out, errb bytes.Buffer
		if err := f.run(ctx, t, f.hostKey, f.signer, "git-upload-pack '/srv/r.git'", strings.NewReader("0000"), &out, &errb); err != nil {
			t.Fatalf("SSHExec: %v (stderr %q)", err, errb.String())
		}
		if want := f.commit + " refs/heads/main\n"; !strings.Contains(out.String(), want) {
			t.Errorf("stdout %q lacks %q", out.String(), want)
		}
	})
	t.Run("an exit status comes back", func(t *testing.T) {
		var errb bytes.Buffer
		err := f.run(ctx, t, f.hostKey, f.signer, "git-upload-pack '/srv/missing.git'", strings.NewReader(""), io.Discard, &errb)
		var exit *ssh.ExitError
		if !errors.As(err, &exit) || exit.ExitStatus() != 1 || !strings.Contains(err.Error(), "status 1") {
			t.Fatalf("err = %v", err)
		}
		if !strings.Contains(errb.String(), "no repository") {
			t.Errorf("stderr = %q", errb.String())
		}
	})
}

func TestSSHExecWrongHostKey(t *testing.T) {
	t.Parallel()
	f := newSSHFixture(t)
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	other, _ := ssh.NewPublicKey(pub)
	err := f.run(context.Background(), t, other, f.signer, "git-upload-pack '/srv/r.git'", strings.NewReader("0000"), io.Discard, io.Discard)
	if !errors.Is(err, ErrHostKeyMismatch) {
		t.Fatalf("err = %v, want ErrHostKeyMismatch", err)
	}
	for _, fp := range []string{ssh.FingerprintSHA256(f.srv.HostKey()), ssh.FingerprintSHA256(other)} {
		if !strings.Contains(err.Error(), fp) {
			t.Errorf("err %q lacks %s", err, fp)
		}
	}
	// Refused before authenticating: the server never saw the key.
	if u, e := f.srv.Users(), f.srv.Execs(); len(u) != 0 || len(e) != 0 {
		t.Errorf("the server saw users %q, execs %q", u, e)
	}
}

func TestSSHExecWrongClientKey(t *testing.T) {
	t.Parallel()
	f := newSSHFixture(t)
	keyFile, _ := gitserve.NewKey(t, t.TempDir())
	other, err := LoadSSHKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	err = f.run(context.Background(), t, f.hostKey, other, "git-upload-pack '/srv/r.git'", strings.NewReader("0000"), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("err = %v", err)
	}
	if u, e := f.srv.Users(), f.srv.Execs(); !slices.Contains(u, "git") || len(e) != 0 {
		t.Errorf("the server saw users %q, execs %q", u, e)
	}
}

// signalWriter closes first on the first write.
type signalWriter struct {
	once  sync.Once
	first chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.first) })
	return len(p), nil
}

func TestSSHExecCancel(t *testing.T) {
	t.Parallel()
	f := newSSHFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// upload-pack advertises, then waits for wants that never come.
	stdin, stdinW := io.Pipe()
	t.Cleanup(func() { stdinW.Close() })
	out := &signalWriter{first: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		done <- f.run(ctx, t, f.hostKey, f.signer, "git-upload-pack '/srv/r.git'", stdin, out, io.Discard)
	}()
	select {
	case <-out.first:
	case err := <-done:
		t.Fatalf("SSHExec returned before the advertisement: %v", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestSSHExecHandshakeTimeout(t *testing.T) {
	t.Parallel()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := ssh.NewSignerFromKey(priv)
	synctest.Test(t, func(t *testing.T) {
		// A peer that takes what is sent and never answers.
		client, server := memPipe()
		defer server.Close()
		start := time.Now()
		err := SSHExec(context.Background(), client, "h:22", "git", signer.PublicKey(), signer, "git-upload-pack 'r'", strings.NewReader(""), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "no handshake within") {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d != sshHandshakeTimeout {
			t.Errorf("gave up after %v, want %v", d, sshHandshakeTimeout)
		}
	})
}

// TestSSHExecRealGit drives SSHExec with the real git: its ssh command is
// a bash script that sends the remote command and then pipes git's stdin
// and stdout over TCP to this test, which plays the daemon (check the
// command, then SSHExec to the server). A clone and a push go through.
// TestCheckSSHCommandRealGit records what the real git asks its ssh
// command to run for each URL form, and checks CheckSSHCommand takes it
// with the path config.ParseGitURL gives for that URL.
func TestCheckSSHCommandRealGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	script := filepath.Join(dir, "ssh")
	body := "#!/bin/sh\nfor a; do last=$a; done\nprintf '%s' \"$last\" > " + rec + "\nexit 1\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	sshGit(t, work, nil, "init", "-q", "-b", "main")
	sshGit(t, work, nil, "commit", "-q", "--allow-empty", "-m", "x")
	for _, tt := range []struct{ url, path string }{
		// path as config.ParseGitURL returns it (decoded for ssh://, raw
		// for the scp-like form).
		{"ssh://git@h:2222/srv/r.git", "/srv/r.git"},
		{"ssh://git@h/srv/r.git", "/srv/r.git"},
		{"git@h:srv/r.git", "srv/r.git"},
		{"git@h:/srv/r.git", "/srv/r.git"},
		{"ssh://git@h/~user/r.git", "/~user/r.git"},
		{"git@h:~/r.git", "~/r.git"},
		{"git@h:/~u/r.git", "/~u/r.git"},
		{"ssh://git@h/srv/it%27s%20here.git", "/srv/it's here.git"},
		{"git@h:a!b'c.git", "a!b'c.git"},
		{"git@h:a%20b.git", "a%20b.git"},
	} {
		for _, verb := range [][]string{{"ls-remote", tt.url}, {"push", tt.url, "HEAD:refs/heads/x"}} {
			os.Remove(rec)
			cmd := exec.Command("git", verb...)
			cmd.Dir = work
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
				"GIT_SSH_COMMAND=" + script, "GIT_SSH_VARIANT=ssh"}
			cmd.Run() // fails: the script exits 1
			got, err := os.ReadFile(rec)
			if err != nil {
				t.Fatalf("git %v ran no ssh command: %v", verb, err)
			}
			service, err := CheckSSHCommand(string(got), tt.path)
			want := map[string]string{"ls-remote": "git-upload-pack", "push": "git-receive-pack"}[verb[0]]
			if err != nil || service != want {
				t.Errorf("git %s %s sent %q: CheckSSHCommand(_, %q) = %q, %v", verb[0], tt.url, got, tt.path, service, err)
			}
			if _, err := CheckSSHCommand(string(got), tt.path+"x"); err == nil {
				t.Errorf("%q taken for the path %q", got, tt.path+"x")
			}
		}
	}
}

func TestCheckSSHCommand(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ command, path, want string }{
		{"git-upload-pack '/srv/r.git'", "/srv/r.git", "git-upload-pack"},
		{"git-receive-pack '/srv/r.git'", "/srv/r.git", "git-receive-pack"},
		{"git-upload-pack 'srv/r.git'", "srv/r.git", "git-upload-pack"},
		{"git-upload-pack '~user/r.git'", "/~user/r.git", "git-upload-pack"},
		{"git-upload-pack '/srv/it'\\''s.git'", "/srv/it's.git", "git-upload-pack"},
		{"git-upload-pack 'a'\\!'b.git'", "a!b.git", "git-upload-pack"},
	} {
		if got, err := CheckSSHCommand(tt.command, tt.path); err != nil || got != tt.want {
			t.Errorf("CheckSSHCommand(%q, %q) = %q, %v", tt.command, tt.path, got, err)
		}
	}
	const path = "/srv/r.git"
	for _, command := range []string{
		"",
		"git-upload-pack",
		"git-upload-pack ",
		"git-upload-archive '/srv/r.git'",
		"git upload-pack '/srv/r.git'",
		"/usr/bin/git-upload-pack '/srv/r.git'",
		"sh -c 'git-upload-pack /srv/r.git'",
		"GIT_PROTOCOL=x git-upload-pack '/srv/r.git'",
		"git-upload-pack /srv/r.git",
		`git-upload-pack "/srv/r.git"`,
		"git-upload-pack '/srv/r.git",
		"git-upload-pack /srv/r.git'",
		"git-upload-pack '/srv/r.git' ",
		" git-upload-pack '/srv/r.git'",
		"git-upload-pack  '/srv/r.git'",
		"git-upload-pack\t'/srv/r.git'",
		"git-upload-pack '/srv/r.git'; rm -rf ~",
		"git-upload-pack '/srv/r.git' && id",
		"git-upload-pack '/srv/r.git' | sh",
		"git-upload-pack '/srv/r.git'$(id)",
		"git-upload-pack '/srv/r.git'`id`",
		"git-upload-pack '$(id)'",
		"git-upload-pack '/srv/r.git'\nid",
		"git-upload-pack '/srv/r.git'\x00",
		"git-upload-pack '/srv/r.git\x00'",
		"git-upload-pack '/srv/r.git' --strict",
		"git-upload-pack --strict '/srv/r.git'",
		"git-upload-pack '/srv/r.git' '/srv/r.git'",
		"git-upload-pack '/srv/other.git'",
		"git-upload-pack '/srv/r.git/../other.git'",
		"git-upload-pack '/srv/../srv/r.git'",
		"git-upload-pack '/srv/r.git/'",
		"git-upload-pack 'srv/r.git'",
		"git-upload-pack '/SRV/R.GIT'",
		"git-upload-pack '/srv/r.git'\\''",
		"git-upload-pack ''\\''/srv/r.git'",
		"git-upload-pack '/srv/'\\''r.git'",
		"git-receive-pack '/srv/r.git' '--exec=sh'",
	} {
		if got, err := CheckSSHCommand(command, path); err == nil {
			t.Errorf("CheckSSHCommand(%q) = %q, want an error", command, got)
		}
	}
	for _, p := range []string{"", "/srv/r.git\n", "/srv/\x00r.git"} {
		if _, err := CheckSSHCommand("git-upload-pack '"+p+"'", p); err == nil {
			t.Errorf("the configured path %q was taken", p)
		}
	}
}

// shellWord reads s as one POSIX shell word ('…' and backslash quoting
// only) and reports whether nothing in it was unquoted shell syntax.
func shellWord(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '\\' && i+1 < len(s) && s[i+1] != '\n':
			b.WriteByte(s[i+1])
			i++
		case strings.IndexByte(" \t\n;&|<>()$`\\\"*?[#~=%{}", c) >= 0 || c == 0:
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

func FuzzCheckSSHCommand(f *testing.F) {
	f.Add("git-upload-pack '/srv/r.git'", "/srv/r.git")
	f.Add("git-receive-pack 'a'\\''b'", "a'b")
	f.Add("git-upload-pack '~u/r'", "/~u/r")
	f.Add("git-upload-pack '/x'; id", "/x")
	f.Fuzz(func(t *testing.T, command, path string) {
		service, err := CheckSSHCommand(command, path)
		if err != nil {
			return
		}
		// Taken: the service, one space, and one shell word (no unquoted
		// syntax) that means the configured path as git sends it.
		arg, ok := strings.CutPrefix(command, service+" ")
		if !ok || service != "git-upload-pack" && service != "git-receive-pack" {
			t.Fatalf("%q taken as %q", command, service)
		}
		word, ok := shellWord(arg)
		if !ok || word != gitSSHPath(path) || strings.ContainsAny(command, "\n\x00") {
			t.Fatalf("%q taken for %q: the word is %q (%v)", command, path, word, ok)
		}
	})
}

func TestLoadSSHKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, data []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}

	edFile, edPub := gitserve.NewKey(t, dir)
	ecPriv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalECPrivateKey(ecPriv)
	ecPub, _ := ssh.NewPublicKey(&ecPriv.PublicKey)
	rsaPriv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(rsaPriv)
	rsaPub, _ := ssh.NewPublicKey(&rsaPriv.PublicKey)
	for _, tt := range []struct {
		path string
		want ssh.PublicKey
	}{
		{edFile, edPub},
		{write("ec.pem", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), 0o600), ecPub},
		{write("rsa.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o400), rsaPub},
	} {
		s, err := LoadSSHKey(tt.path)
		if err != nil || !bytes.Equal(s.PublicKey().Marshal(), tt.want.Marshal()) {
			t.Errorf("LoadSSHKey(%s) = %v, %v", filepath.Base(tt.path), s, err)
		}
	}

	edData, err := os.ReadFile(edFile)
	if err != nil {
		t.Fatal(err)
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	locked, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	lockedData := pem.EncodeToMemory(locked)
	mangled := bytes.Replace(edData, []byte("\n"), []byte("\n!"), 3)
	for _, tt := range []struct {
		name string
		path string
		want string
	}{
		{"passphrase", write("locked", lockedData, 0o600), "protected by a passphrase"},
		{"group readable", write("group", edData, 0o640), "chmod 600"},
		{"world readable", write("world", edData, 0o604), "chmod 600"},
		{"group writable", write("gw", edData, 0o620), "chmod 600"},
		{"too big", write("big", bytes.Repeat(edData, 64<<10/len(edData)+1), 0o600), "at most"},
		{"public key", write("id.pub", ssh.MarshalAuthorizedKey(edPub), 0o600), "public key"},
		{"mangled", write("mangled", mangled, 0o600), "not a private key"},
		{"empty", write("empty", nil, 0o600), "not a private key"},
		{"directory", dir, "not a regular file"},
		{"missing", filepath.Join(dir, "nope"), "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadSSHKey(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			// No key material: no line of a key file is in the error.
			for _, data := range [][]byte{edData, lockedData, mangled} {
				for _, l := range strings.Split(string(data), "\n") {
					if len(l) >= 16 && !strings.HasPrefix(l, "-----") && strings.Contains(err.Error(), l) {
						t.Errorf("err holds key material %q", l)
					}
				}
			}
		})
	}
}

// serveSSH runs an SSH server on conn that answers each exec with handle's output and exit status.
func serveSSH(conn net.Conn, cfg *ssh.ServerConfig, handle func(command string, ch ssh.Channel) uint32) {
	_, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		conn.Close()
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			defer ch.Close()
			for req := range creqs {
				var exec struct{ Command string }
				if req.Type != "exec" || ssh.Unmarshal(req.Payload, &exec) != nil {
					req.Reply(false, nil)
					continue
				}
				req.Reply(true, nil)
				status := handle(exec.Command, ch)
				ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
				return
			}
		}()
	}
}

func newSigner(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSSHExecLongCommand: the handshake's deadline does not bound the
// command, which may run for as long as ctx allows.
func TestSSHExecLongCommand(t *testing.T) {
	t.Parallel()
	hostSigner, clientSigner := newSigner(t), newSigner(t)
	synctest.Test(t, func(t *testing.T) {
		cfg := &ssh.ServerConfig{PublicKeyCallback: func(ssh.ConnMetadata, ssh.PublicKey) (*ssh.Permissions, error) { return nil, nil }}
		cfg.AddHostKey(hostSigner)
		client, server := memPipe()
		go serveSSH(server, cfg, func(command string, ch ssh.Channel) uint32 {
			time.Sleep(2 * sshHandshakeTimeout)
			fmt.Fprintf(ch, "ran %s", command)
			return 0
		})
		var out bytes.Buffer
		err := SSHExec(context.Background(), client, "h:22", "git", hostSigner.PublicKey(), clientSigner, "git-upload-pack 'r'", strings.NewReader(""), &out, io.Discard)
		if err != nil || out.String() != "ran git-upload-pack 'r'" {
			t.Fatalf("err = %v, out %q", err, out.String())
		}
		server.Close()
	})
}

// TestSSHExecOnlyPublicKey: against a server that would take any password
// or keyboard-interactive answer, SSHExec tries the key only.
func TestSSHExecOnlyPublicKey(t *testing.T) {
	t.Parallel()
	hostSigner, clientSigner := newSigner(t), newSigner(t)
	var mu sync.Mutex
	var methods []string
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(ssh.ConnMetadata, ssh.PublicKey) (*ssh.Permissions, error) {
			return nil, errors.New("no")
		},
		PasswordCallback: func(ssh.ConnMetadata, []byte) (*ssh.Permissions, error) { return nil, nil },
		KeyboardInteractiveCallback: func(ssh.ConnMetadata, ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			return nil, nil
		},
		AuthLogCallback: func(_ ssh.ConnMetadata, method string, _ error) {
			mu.Lock()
			methods = append(methods, method)
			mu.Unlock()
		},
	}
	cfg.AddHostKey(hostSigner)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var ran atomic.Bool
	go func() {
		if server, err := ln.Accept(); err == nil {
			serveSSH(server, cfg, func(string, ssh.Channel) uint32 { ran.Store(true); return 0 })
		}
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	err = SSHExec(context.Background(), client, ln.Addr().String(), "git", hostSigner.PublicKey(), clientSigner, "git-upload-pack 'r'", strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || ran.Load() {
		t.Fatalf("err = %v, ran %v", err, ran.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(methods, "publickey") {
		t.Errorf("methods = %q, no publickey", methods)
	}
	for _, m := range methods {
		if m != "none" && m != "publickey" {
			t.Errorf("the client tried %q", m)
		}
	}
}
