package netguard

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// Names that resolve to blocked addresses are refused in Control, before
// connect(2): the listener on the URL's port sees nothing.
func TestGetRefusesNamesResolvingToBlockedAddresses(t *testing.T) {
	t.Parallel()
	v4 := listen(t, "tcp4", "127.0.0.1:0")
	resolver := startDNS(t, map[string][]netip.Addr{
		"ten.example":       addrs("10.0.0.1"),
		"loop.example":      addrs("127.0.0.1"),
		"six.example":       addrs("::1"),
		"mapped.example":    addrs("::ffff:127.0.0.1"),
		"zero.example":      addrs("0.0.0.0"),
		"meta.example":      addrs("169.254.169.254"),
		"nat64.example":     addrs("64:ff9b::7f00:1"),
		"compat.example":    addrs("::7f00:1"),
		"sixtofour.example": addrs("2002:7f00:1::"),
		"mixed.example":     addrs("127.0.0.1", "10.0.0.1", "::1", "fe80::1"),
	})
	cases := []struct{ host, want string }{
		{"ten.example", "10.0.0.1 is a private address (RFC 1918); shelldon does not fetch from the local network"},
		{"loop.example", "127.0.0.1 is a loopback address"},
		{"six.example", "::1 is the loopback address"},
		{"mapped.example", "127.0.0.1 is a loopback address"},
		{"zero.example", "0.0.0.0 is the unspecified address"},
		{"meta.example", "169.254.169.254 is the cloud metadata address"},
		{"nat64.example", "NAT64 address embedding 127.0.0.1"},
		{"compat.example", "IPv4-compatible"},
		{"sixtofour.example", "6to4 address embedding 127.0.0.1"},
		{"mixed.example", "; shelldon does not fetch from the local network"},
	}
	c := newTestClient(t, Options{Resolver: resolver})
	for _, tc := range cases {
		t.Run(tc.host, func(t *testing.T) {
			url := fmt.Sprintf("http://%s:%s/", tc.host, v4.port())
			_, err := c.Get(context.Background(), url)
			if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Get(%s) = %v, want a refusal containing %q", url, err, tc.want)
			}
		})
	}
	v4.assertUntouched(t)

	// The same over IPv6 loopback, where the machine has it.
	v6 := listen(t, "tcp6", "[::1]:0")
	_, err := c.Get(context.Background(), "http://six.example:"+v6.port()+"/")
	if err == nil || !strings.Contains(err.Error(), "::1 is the loopback address") {
		t.Fatalf("Get(six.example) = %v", err)
	}
	v6.assertUntouched(t)
}

// control is the check that counts; exercise it directly.
func TestControl(t *testing.T) {
	t.Parallel()
	c := NewClient(Options{AllowAddr: allowOnly("127.0.0.1:8080")})
	c.testHookDial = func(netip.AddrPort) error { return nil }
	cases := []struct{ network, address, port, want string }{
		{"tcp4", "10.0.0.1:80", "80", "10.0.0.1 is a private address"},
		{"tcp6", "[::ffff:10.0.0.1]:80", "80", "10.0.0.1 is a private address"},
		{"tcp6", "[::ffff:169.254.169.254]:80", "80", "cloud metadata"},
		{"tcp6", "[fe80::1%lo]:80", "80", "link-local"},
		{"tcp6", "[64:ff9b::a00:1]:80", "80", "NAT64"},
		{"tcp4", "127.0.0.1:8081", "8081", "loopback"},       // allowed is only :8080
		{"tcp4", "127.0.0.1:8080", "80", "URL's port is 80"}, // other port than the URL's
		{"udp4", "127.0.0.1:8080", "8080", "only TCP"},
		{"tcp4", "localhost:8080", "8080", "not an IP address"},
		{"tcp4", "127.0.0.1:8080", "8080", ""}, // AllowAddr
		{"tcp6", "[::ffff:127.0.0.1]:8080", "8080", ""},
	}
	for _, tc := range cases {
		err := c.control(tc.network, tc.address, hop{host: "example.com", port: tc.port})
		if tc.want == "" {
			if err != nil {
				t.Errorf("control(%s, %s) = %v, want nil", tc.network, tc.address, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("control(%s, %s, %s) = %v, want %q", tc.network, tc.address, tc.port, err, tc.want)
		}
	}
}

func TestDialContextOnlyDialsTheHop(t *testing.T) {
	t.Parallel()
	c := NewClient(Options{})
	ctx := context.WithValue(context.Background(), hopKey{}, hop{host: "a.example", port: "80"})
	for _, addr := range []string{"b.example:80", "a.example:81", "garbage"} {
		if _, err := c.dialContext(ctx, "tcp", addr); !errors.Is(err, ErrRefused) {
			t.Errorf("dialContext(%s) = %v, want a refusal", addr, err)
		}
	}
	if _, err := c.dialContext(context.Background(), "tcp", "a.example:80"); !errors.Is(err, ErrRefused) {
		t.Errorf("dialContext without a hop = %v, want a refusal", err)
	}
}

// testServer starts an httptest server on 127.0.0.1 and returns it with its
// address (ip:port).
func testServer(t *testing.T, h http.Handler) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

func TestGetFetches(t *testing.T) {
	t.Parallel()
	var sawUA, sawCookie atomic.Value
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "secret"})
		http.Redirect(w, r, "/next?x=1", http.StatusFound)
	})
	mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) {
		sawUA.Store(r.UserAgent())
		sawCookie.Store(r.Header.Get("Cookie"))
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "hello")
	})
	srv, addr := testServer(t, mux)
	c := newTestClient(t, Options{AllowAddr: allowOnly(addr)})
	got, err := c.Get(context.Background(), srv.URL+"/start#frag")
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		URL:         srv.URL + "/next?x=1",
		Status:      200,
		ContentType: "text/plain; charset=utf-8",
		Body:        []byte("hello"),
		Size:        5,
		Hops:        []string{srv.URL + "/start", srv.URL + "/next?x=1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	if ua := sawUA.Load(); ua != "shelldon" {
		t.Errorf("User-Agent = %q, want shelldon", ua)
	}
	if ck := sawCookie.Load(); ck != "" {
		t.Errorf("a cookie was sent back: %q", ck)
	}
}

func TestGetRedirects(t *testing.T) {
	t.Parallel()
	other := listen(t, "tcp4", "127.0.0.1:0")
	resolver := startDNS(t, map[string][]netip.Addr{
		"loop.example": addrs("127.0.0.1"),
		"ten.example":  addrs("10.0.0.1"),
	})
	var loops atomic.Int64
	var srvAddr string
	mux := http.NewServeMux()
	redirect := func(path, loc string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", strings.ReplaceAll(loc, "SELF", srvAddr))
			w.WriteHeader(http.StatusFound)
		})
	}
	redirect("/to-other-port", "http://127.0.0.1:"+other.port()+"/")
	redirect("/to-other-port-by-name", "http://loop.example:"+other.port()+"/")
	redirect("/to-loopback-v6", "http://[::1]:"+other.port()+"/")
	redirect("/to-private", "http://10.0.0.1/")
	redirect("/to-private-by-name", "http://ten.example/")
	redirect("/to-metadata", "http://169.254.169.254/latest/meta-data/")
	redirect("/to-userinfo", "http://user:pw@SELF/ok")
	redirect("/to-userinfo-relative", "//user@SELF/ok")
	redirect("/to-ftp", "ftp://SELF/")
	redirect("/to-file", "file:///etc/passwd")
	redirect("/to-backslash", "\\\\evil.example/")
	redirect("/to-hex", "http://0x7f000001/")
	redirect("/to-localhost", "http://localhost/")
	redirect("/relative", "ok")
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		loops.Add(1)
		http.Redirect(w, r, "/loop", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/no-location", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	srv, addr := testServer(t, mux)
	srvAddr = addr
	c := newTestClient(t, Options{AllowAddr: allowOnly(addr), Resolver: resolver, MaxRedirects: 3})

	refused := []struct{ path, want string }{
		{"/to-other-port", "127.0.0.1 is a loopback address"},
		{"/to-other-port-by-name", "127.0.0.1 is a loopback address"}, // refused in Control
		{"/to-loopback-v6", "::1 is the loopback address"},
		{"/to-private", "10.0.0.1 is a private address"},
		{"/to-private-by-name", "10.0.0.1 is a private address"}, // refused in Control
		{"/to-metadata", "cloud metadata"},
		{"/to-userinfo", "user info"},
		{"/to-userinfo-relative", "user info"},
		{"/to-ftp", "ftp scheme"},
		{"/to-file", "file scheme"},
		{"/to-backslash", "backslash"},
		{"/to-hex", "ambiguous"},
		{"/to-localhost", "local-only"},
	}
	for _, tc := range refused {
		t.Run(tc.path, func(t *testing.T) {
			res, err := c.Get(context.Background(), srv.URL+tc.path)
			if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "redirect from "+srv.URL+tc.path) {
				t.Fatalf("Get(%s) = %v, want a refused redirect with %q", tc.path, err, tc.want)
			}
			if len(res.Hops) == 0 || res.Hops[0] != srv.URL+tc.path {
				t.Errorf("Hops = %q", res.Hops)
			}
		})
	}
	other.assertUntouched(t)

	t.Run("relative", func(t *testing.T) {
		res, err := c.Get(context.Background(), srv.URL+"/relative")
		if err != nil || string(res.Body) != "ok" || res.URL != srv.URL+"/ok" || len(res.Hops) != 2 {
			t.Fatalf("Get(/relative) = %+v, %v", res, err)
		}
	})
	t.Run("no location", func(t *testing.T) {
		res, err := c.Get(context.Background(), srv.URL+"/no-location")
		if err != nil || res.Status != http.StatusFound {
			t.Fatalf("Get(/no-location) = %+v, %v", res, err)
		}
	})
	t.Run("loop", func(t *testing.T) {
		res, err := c.Get(context.Background(), srv.URL+"/loop")
		if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "stopped after 3 redirects") {
			t.Fatalf("Get(/loop) = %v", err)
		}
		if n := loops.Load(); n != 4 {
			t.Errorf("the loop was fetched %d times, want 4 (the request and 3 redirects)", n)
		}
		if len(res.Hops) != 4 {
			t.Errorf("Hops = %q, want 4", res.Hops)
		}
	})
	t.Run("not followed", func(t *testing.T) {
		c := newTestClient(t, Options{AllowAddr: allowOnly(addr), MaxRedirects: -1})
		res, err := c.Get(context.Background(), srv.URL+"/loop")
		if err != nil || res.Status != http.StatusMovedPermanently || len(res.Hops) != 1 {
			t.Fatalf("Get(/loop) without redirects = %+v, %v", res, err)
		}
	})
}

// The first URL gets the same treatment as a redirect target.
func TestGetRefusesFirstURL(t *testing.T) {
	t.Parallel()
	other := listen(t, "tcp4", "127.0.0.1:0")
	c := newTestClient(t, Options{AllowAddr: allowOnly("127.0.0.1:1")})
	for _, raw := range []string{
		"http://127.0.0.1:" + other.port() + "/",
		"http://[::ffff:127.0.0.1]:" + other.port() + "/",
		"http://10.0.0.1/",
		"http://2130706433:" + other.port() + "/",
		"http://user@127.0.0.1:1/",
		"ftp://127.0.0.1:1/",
		"http://localhost:" + other.port() + "/",
	} {
		if _, err := c.Get(context.Background(), raw); !errors.Is(err, ErrRefused) {
			t.Errorf("Get(%s) = %v, want a refusal", raw, err)
		}
	}
	other.assertUntouched(t)
}

func TestGetCapsBody(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), 3000))
	})
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), 1000))
	})
	srv, addr := testServer(t, mux)
	c := newTestClient(t, Options{AllowAddr: allowOnly(addr), MaxBytes: 1000})
	res, err := c.Get(context.Background(), srv.URL+"/big")
	if err != nil || !res.Truncated || len(res.Body) != 1000 || res.Size != 1000 {
		t.Fatalf("Get(/big) = truncated %v, %d bytes, size %d, %v", res.Truncated, len(res.Body), res.Size, err)
	}
	res, err = c.Get(context.Background(), srv.URL+"/exact")
	if err != nil || res.Truncated || len(res.Body) != 1000 {
		t.Fatalf("Get(/exact) = truncated %v, %d bytes, %v", res.Truncated, len(res.Body), err)
	}
}

// A gzip bomb: 100 MB of zeros, about 100 KB on the wire. The transport
// decodes it and the cap counts decoded bytes. The stream is 100 gzip
// members of 1 MiB each (valid gzip, RFC 1952 section 2.2), so the test does
// not spend its time compressing.
func TestGetGzipBomb(t *testing.T) {
	t.Parallel()
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	bomb := bytes.Repeat(member.Bytes(), 100)
	var sawAcceptEncoding atomic.Value
	srv, addr := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAcceptEncoding.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", fmt.Sprint(len(bomb)))
		w.Write(bomb)
	}))
	const limit = 1 << 20
	c := newTestClient(t, Options{AllowAddr: allowOnly(addr), MaxBytes: limit})
	res, err := c.Get(context.Background(), srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Body) != limit || res.Size != limit || bytes.Count(res.Body, []byte{0}) != limit {
		t.Errorf("bomb: truncated %v, %d bytes (want %d decoded zeros)", res.Truncated, len(res.Body), limit)
	}
	if ae := sawAcceptEncoding.Load(); ae != "gzip" {
		t.Errorf("Accept-Encoding = %q, want the transport's gzip", ae)
	}
}

// Proxy variables are ignored: the proxy listener gets nothing. The target
// is a name (not 127.0.0.1, which Go never proxies anyway).
func TestGetIgnoresProxyEnvironment(t *testing.T) {
	proxy := listen(t, "tcp4", "127.0.0.1:0")
	proxyURL := "http://127.0.0.1:" + proxy.port()
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		t.Setenv(k, proxyURL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	srv, addr := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "direct")
	}))
	_, port, _ := net.SplitHostPort(addr)
	resolver := startDNS(t, map[string][]netip.Addr{"srv.example": addrs("127.0.0.1")})
	c := newTestClient(t, Options{AllowAddr: allowOnly(addr), Resolver: resolver})
	res, err := c.Get(context.Background(), "http://srv.example:"+port+"/")
	if err != nil || string(res.Body) != "direct" {
		t.Fatalf("Get = %+v, %v", res, err)
	}
	_ = srv
	proxy.assertUntouched(t)
}

func TestGetTimeout(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	srv, addr := testServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(block) })
	c := newTestClient(t, Options{AllowAddr: allowOnly(addr), Timeout: 50 * time.Millisecond})
	_, err := c.Get(context.Background(), srv.URL+"/")
	if err == nil || !strings.Contains(err.Error(), "took longer than 50ms") {
		t.Fatalf("Get = %v, want a timeout", err)
	}
}
