//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/testbin"
)

// loopbackRunner is a Runner with a real shelldon binary as the helper, on
// a kernel with every required layer (else the test is skipped, saying
// which is missing), and python3 to talk TCP with.
func loopbackRunner(t *testing.T) *Runner {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 to open sockets with")
	}
	helper := os.Getenv("SHELLDON_TEST_HELPER")
	if helper == "" {
		helper = testbin.Shelldon(t)
	}
	r, err := NewRunner(helper)
	if err != nil {
		t.Fatal(err)
	}
	if tier := r.Probe(context.Background()); !tier.Full() {
		t.Skipf("this kernel lacks a required sandbox layer: %s", tier)
	}
	return r
}

// runPolicy runs p and returns its result and the helper's report (which
// layers, with which details).
func runPolicy(t *testing.T, r *Runner, p Policy) (Result, status) {
	t.Helper()
	ctx := context.Background()
	if p.Timeout == 0 {
		p.Timeout = 20 * time.Second
	}
	sp, err := r.prepare(ctx, &p)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	stdout, stderr := &capped{max: p.MaxOutput}, &capped{max: p.MaxOutput}
	pr, err := r.start(ctx, sp, p, nil, stdout, stderr)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	res, err := pr.Wait()
	if err != nil {
		t.Fatalf("wait: %v (stderr %q)", err, stderr.Bytes())
	}
	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	return res, pr.st
}

// python runs a python3 script in a sandbox of the given network mode and
// decodes the JSON object it prints.
func python(t *testing.T, r *Runner, mode func(*Policy), script string, args ...string) (map[string]string, status) {
	t.Helper()
	p := Policy{Argv: append([]string{"python3", "-c", script}, args...)}
	mode(&p)
	res, st := runPolicy(t, r, p)
	got := map[string]string{}
	if err := json.Unmarshal(res.Stdout, &got); err != nil {
		t.Fatalf("the script printed %q (stderr %q, exit %d): %v", res.Stdout, res.Stderr, res.ExitCode, err)
	}
	return got, st
}

var (
	loopback    = func(p *Policy) { p.Loopback = true }
	noNetwork   = func(*Policy) {}
	hostNetwork = func(p *Policy) { p.Network = true }
)

// echoScript, for each address and port given, listens there, connects to
// itself and sends a line back and forth; it prints what came back, or the
// errno that stopped it.
const echoScript = `
import errno, json, socket, sys, threading
out = {}
for host, port in zip(sys.argv[1::2], map(int, sys.argv[2::2])):
    try:
        srv = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        srv.bind((host, port))
        srv.listen(1)
        def serve():
            c, _ = srv.accept()
            c.sendall(c.recv(64))
            c.close()
        threading.Thread(target=serve, daemon=True).start()
        c = socket.create_connection((host, port), 5)
        c.sendall(b"ping " + host.encode())
        out[host] = c.recv(64).decode()
    except OSError as e:
        out[host] = errno.errorcode.get(e.errno, str(e))
print(json.dumps(out))
`

// hostListener listens on addr ("127.0.0.1" or "::1") of the host, or
// returns nil when the host has no such address.
func hostListener(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		if addr == "::1" {
			t.Logf("the host has no ::1 (%v): IPv6 not checked", err)
			return nil
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func portOf(a net.Addr) string {
	_, port, _ := net.SplitHostPort(a.String())
	return port
}

// TestLoopbackEcho: with Loopback a target listens on 127.0.0.1 and ::1 and
// talks to itself over TCP, on the very ports the host's listeners hold (its
// loopback is its own); without it, and without the network, it cannot even
// make the socket. The helper says what it built.
func TestLoopbackEcho(t *testing.T) {
	t.Parallel()
	r := loopbackRunner(t)
	var args []string
	for _, addr := range []string{"127.0.0.1", "::1"} {
		if ln := hostListener(t, addr); ln != nil {
			args = append(args, addr, portOf(ln.Addr()))
		}
	}

	got, st := python(t, r, loopback, echoScript, args...)
	for i := 0; i < len(args); i += 2 {
		if want := "ping " + args[i]; got[args[i]] != want {
			t.Errorf("echo on %s port %s (held on the host): %q, want %q", args[i], args[i+1], got[args[i]], want)
		}
	}
	if !strings.Contains(strings.Join(st.Layers, " "), LayerNetNS) {
		t.Errorf("layers %v lack %s", st.Layers, LayerNetNS)
	}
	if d := st.Detail[LayerNetNS]; d != "own network namespace, loopback only" {
		t.Errorf("%s detail %q", LayerNetNS, d)
	}

	// Without Loopback the same script gets no AF_INET socket at all.
	got, st = python(t, r, noNetwork, echoScript, args...)
	for i := 0; i < len(args); i += 2 {
		if got[args[i]] != "EAFNOSUPPORT" {
			t.Errorf("without Loopback, echo on %s: %q, want EAFNOSUPPORT", args[i], got[args[i]])
		}
	}
	if d := st.Detail[LayerNetNS]; d != "" {
		t.Errorf("without Loopback the %s detail is %q", LayerNetNS, d)
	}
}

// reachScript tries the host's listeners: a TCP connect to each address
// and port of argv[1:], then a UDP datagram to 127.0.0.1 at the last port.
const reachScript = `
import errno, json, socket, sys
out = {}
args = sys.argv[1:]
for host, port in zip(args[0:-1:2], map(int, args[1:-1:2])):
    try:
        socket.create_connection((host, port), 5).close()
        out["tcp " + host] = "connected"
    except OSError as e:
        out["tcp " + host] = errno.errorcode.get(e.errno, str(e))
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"from the sandbox", ("127.0.0.1", int(args[-1])))
    out["udp"] = "sent"
except OSError as e:
    out["udp"] = errno.errorcode.get(e.errno, str(e))
print(json.dumps(out))
`

// firstAccepted reports whether the first connection ln accepts comes from
// someone other than the test: it connects a marker of its own, so a
// connection the sandbox made, already in the accept queue, comes first,
// and none means the marker does. No sleeping for "nothing happened".
func firstAccepted(t *testing.T, ln net.Listener) (other bool) {
	t.Helper()
	marker, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer marker.Close()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		t.Fatalf("accept on %s: %v", ln.Addr(), err)
	}
	defer c.Close()
	if c.RemoteAddr().String() != marker.LocalAddr().String() {
		// Drain to the marker, so the next check starts clean.
		for {
			d, err := ln.Accept()
			if err != nil {
				t.Fatalf("accept on %s: %v", ln.Addr(), err)
			}
			d.Close()
			if d.RemoteAddr().String() == marker.LocalAddr().String() {
				return true
			}
		}
	}
	return false
}

// firstDatagram is firstAccepted for a UDP socket: it returns the first
// datagram pc receives after the test sent one of its own to it, and
// whether that one is not the test's.
func firstDatagram(t *testing.T, pc net.PacketConn) (string, bool) {
	t.Helper()
	const mark = "marker"
	s, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write([]byte(mark)); err != nil {
		t.Fatal(err)
	}
	pc.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 64)
	n, _, err := pc.ReadFrom(buf)
	if err != nil {
		t.Fatalf("read on %s: %v", pc.LocalAddr(), err)
	}
	first := string(buf[:n])
	for got := first; got != mark; {
		if n, _, err = pc.ReadFrom(buf); err != nil {
			t.Fatalf("read on %s: %v", pc.LocalAddr(), err)
		}
		got = string(buf[:n])
	}
	return first, first != mark
}

// TestLoopbackHostUnreachable: with Loopback, 127.0.0.1 and ::1 are the
// sandbox's own: a TCP connect to the host's listeners there is refused and
// none of them sees a connection; a UDP datagram to the host's socket never
// arrives. The control, with the host's network, reaches all three, so the
// checks can see a connection when there is one.
func TestLoopbackHostUnreachable(t *testing.T) {
	t.Parallel()
	r := loopbackRunner(t)
	var lns []net.Listener
	var args []string
	for _, addr := range []string{"127.0.0.1", "::1"} {
		if ln := hostListener(t, addr); ln != nil {
			lns = append(lns, ln)
			args = append(args, addr, portOf(ln.Addr()))
		}
	}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	args = append(args, portOf(pc.LocalAddr()))

	got, _ := python(t, r, loopback, reachScript, args...)
	for _, ln := range lns {
		host, _, _ := net.SplitHostPort(ln.Addr().String())
		// Nothing listens on that port of the sandbox's own loopback.
		if v := got["tcp "+host]; v != "ECONNREFUSED" && v != "ENETUNREACH" && v != "EADDRNOTAVAIL" {
			t.Errorf("connect to the host's %s: %q, want refused or unreachable", ln.Addr(), v)
		}
		if firstAccepted(t, ln) {
			t.Errorf("the host's listener on %s accepted a connection from the sandbox", ln.Addr())
		}
	}
	if d, other := firstDatagram(t, pc); other {
		t.Errorf("the host's UDP socket received %q from the sandbox (it sent: %s)", d, got["udp"])
	}

	got, _ = python(t, r, hostNetwork, reachScript, args...)
	for _, ln := range lns {
		host, _, _ := net.SplitHostPort(ln.Addr().String())
		if got["tcp "+host] != "connected" || !firstAccepted(t, ln) {
			t.Errorf("control: with the host's network, %s: %q and no connection seen", ln.Addr(), got["tcp "+host])
		}
	}
	if d, other := firstDatagram(t, pc); !other || d != "from the sandbox" {
		t.Errorf("control: with the host's network the UDP socket first got %q (sent: %s)", d, got["udp"])
	}
}

// nsScript reports the sandbox's network namespace, its interfaces (from
// /proc/net/dev, no ip needed), its routes of the main table, and whether
// the target can take lo down (it holds no capability over the namespace).
const nsScript = `
import errno, fcntl, json, os, socket, struct
out = {"ns": os.readlink("/proc/self/ns/net")}
lines = open("/proc/net/dev").read().splitlines()[2:]
out["interfaces"] = " ".join(sorted(l.split(":")[0].strip() for l in lines))
out["routes"] = str(len(open("/proc/net/route").read().splitlines()) - 1)
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    fcntl.ioctl(s, 0x8914, struct.pack("16sH22x", b"lo", 0))  # SIOCSIFFLAGS: down
    out["lo down"] = "done"
except OSError as e:
    out["lo down"] = errno.errorcode.get(e.errno, str(e))
print(json.dumps(out))
`

// TestLoopbackNamespace: a Loopback sandbox has a network namespace of its
// own, not the host's, holding lo and nothing else, with no route, and
// the target cannot reconfigure it.
func TestLoopbackNamespace(t *testing.T) {
	t.Parallel()
	r := loopbackRunner(t)
	hostNS, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := python(t, r, loopback, nsScript)
	if got["ns"] == "" || got["ns"] == hostNS {
		t.Errorf("network namespace %q, the host's %q", got["ns"], hostNS)
	}
	if got["interfaces"] != "lo" {
		t.Errorf("interfaces %q, want lo alone", got["interfaces"])
	}
	if got["routes"] != "0" {
		t.Errorf("%s routes in the main table, want none", got["routes"])
	}
	if got["lo down"] != "EPERM" {
		t.Errorf("taking lo down: %q, want EPERM", got["lo down"])
	}
	// The control: the host's namespace, seen the same way, is another.
	got, _ = python(t, r, hostNetwork, nsScript)
	if got["ns"] != hostNS {
		t.Errorf("control: with the host's network the namespace is %q, not the host's %q", got["ns"], hostNS)
	}
}

// TestLoopbackPolicy: Loopback with Network is a bad policy; on a kernel
// without namespaces Loopback is refused even where a degraded sandbox is
// allowed (its sockets would be the host's network), and the helper refuses
// such a spec too, should one reach it.
func TestLoopbackPolicy(t *testing.T) {
	t.Parallel()
	r := loopbackRunner(t)
	_, err := r.Run(context.Background(), Policy{Argv: []string{"true"}, Network: true, Loopback: true})
	if !errors.Is(err, ErrBadPolicy) {
		t.Errorf("Network and Loopback: err %v, want ErrBadPolicy", err)
	}

	degraded := &Runner{helper: r.helper}
	degraded.once.Do(func() { degraded.tier = missingUserNS() })
	p := Policy{Argv: []string{"true"}, AllowDegraded: true}
	if _, err := degraded.prepare(context.Background(), &p); err != nil {
		t.Fatalf("control: a degraded run without Loopback: %v", err)
	}
	p = Policy{Argv: []string{"true"}, AllowDegraded: true, Loopback: true}
	if _, err := degraded.prepare(context.Background(), &p); !errors.Is(err, ErrDegraded) {
		t.Errorf("Loopback without namespaces: err %v, want ErrDegraded", err)
	}

	for name, sp := range map[string]spec{
		"without namespaces": {Loopback: true},
		"with the network":   {Loopback: true, Network: true, Namespaces: true},
	} {
		p := Policy{Argv: []string{"true"}, Timeout: 10 * time.Second}
		p.defaults()
		sp.Argv, sp.Dir, sp.Env, sp.Limits, sp.TmpSize = p.Argv, p.Dir, p.Env, p.Limits, 1<<20
		pr, err := r.start(context.Background(), sp, p, nil, &capped{max: 1 << 10}, &capped{max: 1 << 10})
		if err != nil {
			t.Fatalf("%s: start: %v", name, err)
		}
		if _, err := pr.Wait(); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: the helper ran it (err %v)", name, err)
		}
	}
}
