package gitremote

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shelldon/shelldon/internal/sshkey"
)

// The relay's protocol, spoken by the be-child modes inside the sandbox:
// one request line, one answer line ("ok" or "no <why>"), then, for tcp
// and ssh, the connection's bytes both ways until either side closes.
//
//	tcp <host> <port>      a connection to the remote's host and port
//	ssh <command>          the remote's git service over SSH
//	cred <scheme> <host>   the token, as git's credential protocol answers
const (
	maxRequest  = 4 << 10
	dialTimeout = 30 * time.Second
	// maxRefusals bounds what the relay keeps of what it refused or what
	// a remote's ssh service wrote on its stderr.
	maxRefusals = 4 << 10
)

// Relay is the daemon's end of a sandboxed git's network: a unix socket
// in a directory of its own (shown to that sandbox alone), serving the
// one remote it was started for.
type Relay struct {
	r    Remote
	dir  string
	ln   net.Listener
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu    sync.Mutex
	notes strings.Builder // what was refused, and the remote's ssh stderr
	conns map[net.Conn]bool
}

// StartRelay listens for the sandboxed git's requests about r.
func StartRelay(r Remote) (*Relay, error) {
	dir, err := privateDir()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "relay.sock"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("gitremote: relay: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	rl := &Relay{r: r, dir: dir, ln: ln, ctx: ctx, stop: stop, conns: map[net.Conn]bool{}}
	rl.wg.Add(1)
	go rl.serve()
	return rl, nil
}

// Dir is the directory that holds the socket.
func (rl *Relay) Dir() string { return rl.dir }

// Socket is the socket's path.
func (rl *Relay) Socket() string { return filepath.Join(rl.dir, "relay.sock") }

// Refusals is what the relay refused and what the remote's ssh service
// said on its stderr, for an error message.
func (rl *Relay) Refusals() string {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return strings.TrimSpace(rl.notes.String())
}

// Close stops the relay, ends every connection it relays and removes its
// directory.
func (rl *Relay) Close() error {
	rl.stop()
	err := rl.ln.Close()
	rl.mu.Lock()
	for c := range rl.conns {
		c.Close()
	}
	rl.mu.Unlock()
	rl.wg.Wait()
	os.RemoveAll(rl.dir)
	return err
}

func (rl *Relay) note(format string, args ...any) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.notes.Len() < maxRefusals {
		fmt.Fprintf(&rl.notes, format+"\n", args...)
	}
}

// track keeps c to be closed by Close; false when the relay is closing.
func (rl *Relay) track(c net.Conn, on bool) bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if !on {
		delete(rl.conns, c)
		return true
	}
	if rl.ctx.Err() != nil {
		return false
	}
	rl.conns[c] = true
	return true
}

func (rl *Relay) serve() {
	defer rl.wg.Done()
	for {
		c, err := rl.ln.Accept()
		if err != nil {
			return
		}
		if !rl.track(c, true) {
			c.Close()
			return
		}
		rl.wg.Add(1)
		go func() {
			defer rl.wg.Done()
			defer rl.track(c, false)
			defer c.Close()
			rl.handle(c)
		}()
	}
}

// handle serves one request.
func (rl *Relay) handle(c net.Conn) {
	br := bufio.NewReaderSize(io.LimitReader(c, maxRequest), 512)
	_ = c.SetReadDeadline(time.Now().Add(dialTimeout))
	line, err := br.ReadString('\n')
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	verb, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	// What follows the request line is read from c itself: br may hold
	// nothing more, since the mode waits for the answer before sending.
	if br.Buffered() > 0 {
		rl.refuse(c, "%s: bytes before the answer", verb)
		return
	}
	switch verb {
	case "tcp":
		rl.tcp(c, rest)
	case "ssh":
		rl.ssh(c, rest)
	case "cred":
		rl.cred(c, rest)
	default:
		rl.refuse(c, "an unknown request %q", clip(verb))
	}
}

func (rl *Relay) refuse(c net.Conn, format string, args ...any) {
	why := fmt.Sprintf(format, args...)
	rl.note("shelldon refused: %s", why)
	_, _ = io.WriteString(c, "no "+why+"\n")
}

// tcp relays a connection to the remote's own host and port, and to
// nothing else.
func (rl *Relay) tcp(c net.Conn, target string) {
	if rl.r.Scheme != "https" && rl.r.Scheme != "http" {
		rl.refuse(c, "a connection for an %s remote", rl.r.Scheme)
		return
	}
	host, port, ok := strings.Cut(target, " ")
	wantHost, wantPort := hostPort(rl.r)
	if !ok || !strings.EqualFold(strings.Trim(host, "[]"), wantHost) || port != wantPort {
		rl.refuse(c, "a connection to %s, which is not the remote %s (%s)", clip(target), rl.r.Name, net.JoinHostPort(wantHost, wantPort))
		return
	}
	up := rl.connect(c)
	if up == nil {
		return
	}
	defer rl.track(up, false)
	defer up.Close()
	splice(c, up)
}

// connect dials the remote's host and port and answers ok on c, or
// refuses; nil when there is nothing to relay. The caller closes the
// connection and stops tracking it.
func (rl *Relay) connect(c net.Conn) net.Conn {
	host, port := hostPort(rl.r)
	up, err := dialRemote(rl.ctx, host, port)
	if err != nil {
		rl.refuse(c, "%v", err)
		return nil
	}
	if !rl.track(up, true) {
		up.Close()
		return nil
	}
	if _, err := io.WriteString(c, "ok\n"); err != nil {
		rl.track(up, false)
		up.Close()
		return nil
	}
	return up
}

// cred answers git's credential request for the remote's own scheme and
// host with its token; any other gets nothing.
func (rl *Relay) cred(c net.Conn, rest string) {
	scheme, host, _ := strings.Cut(rest, " ")
	if rl.r.Token == "" || scheme != rl.r.Scheme || !strings.EqualFold(host, rl.r.Host) {
		rl.refuse(c, "the credential for %s://%s, which is not the remote %s", clip(scheme), clip(host), rl.r.Name)
		return
	}
	_, _ = fmt.Fprintf(c, "ok\nusername=%s\npassword=%s\n", rl.r.Username, rl.r.Token)
}

// ssh runs the git service git asked for on the remote, over an SSH
// connection the daemon opens with the owner's key, and relays its
// standard input and output.
func (rl *Relay) ssh(c net.Conn, command string) {
	if rl.r.Scheme != "ssh" {
		rl.refuse(c, "ssh for an %s remote", rl.r.Scheme)
		return
	}
	if _, err := CheckSSHCommand(command, rl.r.Path); err != nil {
		rl.refuse(c, "%v", err)
		return
	}
	hostKey, err := sshkey.ParseHost(rl.r.HostKey)
	if err != nil {
		rl.refuse(c, "the remote %s's host_key: %v", rl.r.Name, err)
		return
	}
	signer, err := LoadSSHKey(rl.r.SSHKey)
	if err != nil {
		rl.refuse(c, "the remote %s's ssh_key: %v", rl.r.Name, err)
		return
	}
	up := rl.connect(c)
	if up == nil {
		return
	}
	defer rl.track(up, false)
	defer up.Close()
	host, port := hostPort(rl.r)
	stderr := &noteWriter{rl: rl}
	err = SSHExec(rl.ctx, up, net.JoinHostPort(host, port), rl.r.User, hostKey, signer, command, c, c, stderr)
	stderr.flush()
	if err != nil {
		rl.note("ssh %s: %v", rl.r.Name, err)
	}
	if uc, ok := c.(*net.UnixConn); ok {
		_ = uc.CloseWrite()
	}
}

// dialRemote connects to the owner's remote. The owner named it, so a
// host on the owner's network or this machine is fine; a link-local
// address (the cloud metadata service among them) is never dialed, since
// a remote's DNS name resolving there is an attack, not a remote.
func dialRemote(ctx context.Context, host, port string) (net.Conn, error) {
	d := net.Dialer{Timeout: dialTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		h, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(h)
		if ip == nil || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
			return fmt.Errorf("%s is a link-local, multicast or unspecified address", h)
		}
		return nil
	}}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", net.JoinHostPort(host, port), err)
	}
	return conn, nil
}

// splice copies both ways until both directions end, passing on each
// end of stream.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			dst.Close()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}

// noteWriter keeps the remote's ssh stderr (bounded) for the error text.
type noteWriter struct {
	rl  *Relay
	buf []byte
}

func (w *noteWriter) Write(p []byte) (int, error) {
	if room := maxRefusals - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

func (w *noteWriter) flush() {
	if s := strings.TrimSpace(string(w.buf)); s != "" {
		w.rl.note("remote: %s", s)
	}
}

// clip bounds a requested value quoted in an error.
func clip(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}
