package selftools

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/shelldon/shelldon/internal/netguard"
	"github.com/shelldon/shelldon/internal/netguard/dnstest"
)

// startDNS serves A records (name → IPv4) to the resolver it returns, and
// NXDOMAIN otherwise; no test ever reaches a real DNS server.
func startDNS(t *testing.T, records map[string]netip.Addr) *net.Resolver {
	t.Helper()
	table := make(map[string][]netip.Addr, len(records))
	for name, a := range records {
		table[name] = []netip.Addr{a}
	}
	return dnstest.Start(t, table)
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
