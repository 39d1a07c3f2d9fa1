package netguard

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strings"

	"sync/atomic"
	"testing"
	"time"
)

// startDNS runs a DNS server on 127.0.0.1 (UDP) answering A and AAAA
// queries from records (name without trailing dot → addresses; IPv4 answers
// as A, everything else as AAAA) and NXDOMAIN for anything else. The
// returned resolver sends every query there, whatever /etc/resolv.conf
// says, so tests never reach a real DNS server.
func startDNS(t *testing.T, records map[string][]netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := dnsAnswer(buf[:n], records); resp != nil {
				pc.WriteTo(resp, from)
			}
		}
	}()
	addr := pc.LocalAddr().String()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp4", addr)
		},
	}
}

// dnsAnswer builds the reply to one query, or nil for garbage.
func dnsAnswer(q []byte, records map[string][]netip.Addr) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil
	}
	var labels []string
	off := 12
	for {
		if off >= len(q) {
			return nil
		}
		l := int(q[off])
		off++
		if l == 0 {
			break
		}
		if l > 63 || off+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[off:off+l]))
		off += l
	}
	if off+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[off:])
	question := q[12 : off+4]
	name := strings.ToLower(strings.Join(labels, "."))
	addrs, known := records[name]
	var answers [][]byte
	for _, a := range addrs {
		switch {
		case a.Is4() && qtype == 1:
			b := a.As4()
			answers = append(answers, b[:])
		case !a.Is4() && qtype == 28:
			b := a.As16()
			answers = append(answers, b[:])
		}
	}
	flags := uint16(0x8000 | 0x0400 | 0x0080) // QR, AA, RA
	flags |= binary.BigEndian.Uint16(q[2:]) & 0x0100
	if !known {
		flags |= 3 // NXDOMAIN
	}
	resp := make([]byte, 12, 512)
	copy(resp, q[:2])
	binary.BigEndian.PutUint16(resp[2:], flags)
	binary.BigEndian.PutUint16(resp[4:], 1)
	binary.BigEndian.PutUint16(resp[6:], uint16(len(answers)))
	resp = append(resp, question...)
	for _, rdata := range answers {
		resp = append(resp, 0xc0, 12) // name: pointer to the question
		resp = binary.BigEndian.AppendUint16(resp, qtype)
		resp = binary.BigEndian.AppendUint16(resp, 1) // IN
		resp = binary.BigEndian.AppendUint32(resp, 60)
		resp = binary.BigEndian.AppendUint16(resp, uint16(len(rdata)))
		resp = append(resp, rdata...)
	}
	return resp
}

// listener is a TCP listener that counts the connections it accepts.
type listener struct {
	ln       net.Listener
	accepted atomic.Int64
	seen     chan struct{}
}

func listen(t *testing.T, network, addr string) *listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	l := &listener{ln: ln, seen: make(chan struct{}, 64)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			c.Close()
			l.seen <- struct{}{}
		}
	}()
	return l
}

func (l *listener) port() string {
	_, p, _ := net.SplitHostPort(l.ln.Addr().String())
	return p
}

// assertUntouched proves the listener accepted no connection so far: it
// connects once itself and waits for that accept (accepts are in order),
// then expects a count of exactly one.
func (l *listener) assertUntouched(t *testing.T) {
	t.Helper()
	c, err := net.Dial(l.ln.Addr().Network(), l.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	select {
	case <-l.seen:
	case <-time.After(5 * time.Second):
		t.Fatal("listener never accepted the probe connection")
	}
	if n := l.accepted.Load(); n != 1 {
		t.Errorf("listener %s accepted %d connection(s) besides the probe; want none", l.ln.Addr(), n-1)
	}
}

// allowOnly returns an AllowAddr that lets through exactly the given
// addresses (host:port strings).
func allowOnly(addrs ...string) func(netip.AddrPort) bool {
	return func(ap netip.AddrPort) bool {
		for _, a := range addrs {
			if netip.MustParseAddrPort(a) == ap {
				return true
			}
		}
		return false
	}
}

// newTestClient is NewClient with a tripwire: any address that passes the
// dial checks and is not loopback fails the test and is refused, so no test
// can ever connect outside this machine.
func newTestClient(t *testing.T, opts Options) *Client {
	c := NewClient(opts)
	c.testHookDial = func(ap netip.AddrPort) error {
		if !ap.Addr().IsLoopback() {
			t.Errorf("tripwire: %s passed the dial checks", ap)
			return refusef("tripwire: %s", ap)
		}
		return nil
	}
	return c
}
