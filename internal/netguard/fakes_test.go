package netguard

import (
	"net"
	"net/netip"

	"sync/atomic"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/netguard/dnstest"
)

// startDNS serves records (name → addresses) to the resolver it returns.
func startDNS(t *testing.T, records map[string][]netip.Addr) *net.Resolver {
	return dnstest.Start(t, records)
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
