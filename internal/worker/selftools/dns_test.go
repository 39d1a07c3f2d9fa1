package selftools

import (
	"context"
	"encoding/binary"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/shelldon/shelldon/internal/netguard"
)

// startDNS runs a DNS server on 127.0.0.1 answering A queries from records
// (name → IPv4) and NXDOMAIN otherwise; the resolver it returns asks only
// it, so no test ever reaches a real DNS server.
func startDNS(t *testing.T, records map[string]netip.Addr) *net.Resolver {
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
func dnsAnswer(q []byte, records map[string]netip.Addr) []byte {
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
	a, known := records[strings.ToLower(strings.Join(labels, "."))]
	flags := uint16(0x8000|0x0400|0x0080) | binary.BigEndian.Uint16(q[2:])&0x0100
	if !known {
		flags |= 3 // NXDOMAIN
	}
	var answers uint16
	if known && qtype == 1 {
		answers = 1
	}
	resp := make([]byte, 12, 512)
	copy(resp, q[:2])
	binary.BigEndian.PutUint16(resp[2:], flags)
	binary.BigEndian.PutUint16(resp[4:], 1)
	binary.BigEndian.PutUint16(resp[6:], answers)
	resp = append(resp, q[12:off+4]...)
	if answers == 1 {
		ip := a.As4()
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
		resp = append(resp, ip[:]...)
	}
	return resp
}

// hostServer is a loopback HTTP server that counts the requests for each
// host and path: /ok says hello, /big sends size bytes.
type hostServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string]int
}

func newHostServer(t *testing.T) *hostServer {
	t.Helper()
	s := &hostServer{seen: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen[r.Host+r.URL.Path]++
		s.mu.Unlock()
		switch r.URL.Path {
		case "/big":
			w.Write([]byte(strings.Repeat("b", MaxHTTPBody+1)))
		case "/cap":
			w.Write([]byte(strings.Repeat("c", MaxHTTPBody)))
		case "/redirect":
			http.Redirect(w, r, "http://127.0.0.1/", http.StatusFound)
		default:
			w.Write([]byte("hello from " + r.Host))
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *hostServer) port() string {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	return p
}

func (s *hostServer) requests(hostPath string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[hostPath]
}

// testClient is the worker's netguard client as a test injects it: names
// resolve through records only, and allow (if set) is the one loopback
// address let through (the test server); it follows no redirects.
func testClient(t *testing.T, records map[string]netip.Addr, allow string) *netguard.Client {
	opts := netguard.Options{MaxBytes: MaxHTTPBody, MaxRedirects: -1, Resolver: startDNS(t, records)}
	if allow != "" {
		want := netip.MustParseAddrPort(allow)
		opts.AllowAddr = func(ap netip.AddrPort) bool { return ap == want }
	}
	return netguard.NewClient(opts)
}
