package risky

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shelldon/shelldon/internal/netguard"
	"github.com/shelldon/shelldon/internal/netguard/dnstest"
)

// countingServer is an HTTP server on addr that counts the connections it
// accepts, so a test can show a refused call never reached it.
type countingServer struct {
	conns atomic.Int64
	port  string
}

func startCounting(t *testing.T, addr string, h http.Handler) *countingServer {
	t.Helper()
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	s := &countingServer{}
	_, s.port, _ = net.SplitHostPort(ln.Addr().String())
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return s
}

func urlArgs(u string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"url": u})
	return b
}

// TestHTTPGetLAN drives the real http_get tool (its Check, which runs
// before the owner is asked, and its Run, after the approval) with the
// real netguard client against real loopback servers that the client's
// test hook judges as hosts of the owner's network: the listed one is
// fetched; an unlisted one, a redirect to it and the metadata address are
// refused before any connection. No private address is ever dialed: every
// name resolves to 127.0.0.x, and the listed IP literal goes only through
// Check.
func TestHTTPGetLAN(t *testing.T) {
	t.Parallel()
	var nasPort string
	unlisted := startCounting(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "unlisted") }))
	meta := startCounting(t, "127.0.0.3:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "metadata") }))
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from the nas") })
	mux.HandleFunc("/to-unlisted", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://unlisted.test:"+unlisted.port+"/", http.StatusFound)
	})
	mux.HandleFunc("/to-self", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://nas.test:"+nasPort+"/ok", http.StatusFound)
	})
	nas := startCounting(t, "127.0.0.1:0", mux)
	nasPort = nas.port
	port, _ := strconv.Atoi(nas.port)

	nasRule, err := netguard.ParseLANRule("nas.test", "192.168.77.10", []int{port})
	if err != nil {
		t.Fatal(err)
	}
	lan := netguard.LAN{
		nasRule,
		// The config refuses this one (ParseLANRule); forced in, the
		// dialer refuses its address all the same.
		{Name: "meta.test", Prefix: netip.MustParsePrefix("169.254.169.254/32"), Ports: []uint16{uint16(port), 80}},
	}
	judge := map[string]string{"127.0.0.1": "192.168.77.10", "127.0.0.2": "192.168.77.11", "127.0.0.3": "169.254.169.254"}
	client := netguard.NewClient(netguard.Options{
		LAN: lan,
		Resolver: dnstest.Start(t, map[string][]netip.Addr{
			"nas.test":      {netip.MustParseAddr("127.0.0.1")},
			"unlisted.test": {netip.MustParseAddr("127.0.0.2")},
			"meta.test":     {netip.MustParseAddr("127.0.0.3")},
		}),
		JudgeAs: func(a netip.Addr) netip.Addr {
			if j, ok := judge[a.String()]; ok {
				return netip.MustParseAddr(j)
			}
			// Anything else would be a real address: judge it as
			// loopback, which is always refused, so nothing leaves.
			return netip.MustParseAddr("127.0.0.1")
		},
	})
	tool, err := httpGetTool(Env{HTTP: client})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out, err := tool.Run(ctx, urlArgs("http://nas.test:"+nas.port+"/ok"))
	if err != nil || !strings.Contains(out, "hello from the nas") {
		t.Fatalf("the listed host: %q, %v", out, err)
	}
	out, err = tool.Run(ctx, urlArgs("http://nas.test:"+nas.port+"/to-self"))
	if err != nil || !strings.Contains(out, "hello from the nas") {
		t.Fatalf("a redirect to the listed host: %q, %v", out, err)
	}
	before := nas.conns.Load()
	for _, tc := range []struct{ url, want string }{
		{"http://unlisted.test:" + unlisted.port + "/", "192.168.77.11 is a private address"},
		{"http://nas.test:" + nas.port + "/to-unlisted", "refused the redirect"},
		{"http://meta.test:" + meta.port + "/", "cloud metadata"},
		{"http://nas.test:" + meta.port + "/", "only for port " + nas.port},
	} {
		if _, err := tool.Run(ctx, urlArgs(tc.url)); err == nil || !errors.Is(err, netguard.ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%s) = %v, want a refusal with %q", tc.url, err, tc.want)
		}
	}
	if n := unlisted.conns.Load(); n != 0 {
		t.Errorf("the unlisted host accepted %d connection(s)", n)
	}
	if n := meta.conns.Load(); n != 0 {
		t.Errorf("the metadata stand-in accepted %d connection(s)", n)
	}
	if n := nas.conns.Load() - before; n != 1 {
		t.Errorf("the listed host accepted %d connection(s) for the refused calls; want 1 (the redirect to the unlisted host)", n)
	}
}

// TestHTTPGetCheckUsesTheOwnersList: the check that runs before the owner
// is asked follows the owner's list (Env.LAN, from the job): a listed
// address passes on its port, anything else of the private ranges is
// refused, and without a list every private address is. Nothing is run.
func TestHTTPGetCheckUsesTheOwnersList(t *testing.T) {
	t.Parallel()
	r, err := netguard.ParseLANRule("192.168.1.10", "", []int{8123})
	if err != nil {
		t.Fatal(err)
	}
	with, err := httpGetTool(Env{LAN: netguard.LAN{r}})
	if err != nil {
		t.Fatal(err)
	}
	without, err := httpGetTool(Env{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := with.Check(ctx, urlArgs("http://192.168.1.10:8123/api")); err != nil {
		t.Errorf("listed: %v", err)
	}
	if !strings.Contains(with.Guard, "http.allow_hosts") || strings.Contains(without.Guard, "http.allow_hosts") {
		t.Errorf("guards: %q, %q", with.Guard, without.Guard)
	}
	for _, u := range []string{"http://192.168.1.10/", "http://192.168.1.11:8123/", "http://3232235786:8123/", "http://169.254.169.254/", "http://127.0.0.1:8123/"} {
		if err := with.Check(ctx, urlArgs(u)); err == nil {
			t.Errorf("with the list, %s passed the check", u)
		}
	}
	if err := without.Check(ctx, urlArgs("http://192.168.1.10:8123/api")); err == nil {
		t.Error("without a list, a private address passed the check")
	}
}
