package selftools

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/netguard"
)

// TestGrantedHTTPOnTheOwnersNetwork: a self-coded tool granted a host of
// the owner's network (CAPABILITIES {"http": ["nas.home.arpa"]}) reaches
// it only when the owner's http.allow_hosts lists it, on its port and at
// its address; a loopback server stands in for it (the client's JudgeAs
// judges 127.0.0.1 as 192.168.77.10). Refused calls never reach it.
func TestGrantedHTTPOnTheOwnersNetwork(t *testing.T) {
	t.Parallel()
	srv := newHostServer(t)
	port, _ := strconv.Atoi(srv.port())
	records := map[string]netip.Addr{"nas.home.arpa": netip.MustParseAddr("127.0.0.1"), "other.home.arpa": netip.MustParseAddr("127.0.0.1")}
	judge := func(netip.Addr) netip.Addr { return netip.MustParseAddr("192.168.77.10") }
	client := func(lan netguard.LAN) *netguard.Client {
		return netguard.NewClient(netguard.Options{MaxBytes: MaxHTTPBody, MaxRedirects: -1, Resolver: startDNS(t, records), LAN: lan, JudgeAs: judge})
	}
	rule, err := netguard.ParseLANRule("nas.home.arpa", "192.168.77.0/24", []int{port})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := netguard.ParseLANRule("nas.home.arpa", "192.168.78.0/24", []int{port})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	url := "http://nas.home.arpa:" + srv.port() + "/ok"

	get := grantedHTTP([]string{"nas.home.arpa", "other.home.arpa"}, client(netguard.LAN{rule}))
	status, body, err := get(ctx, url)
	if err != nil || status != 200 || string(body) != "hello from nas.home.arpa:"+srv.port() {
		t.Fatalf("listed and granted: %d %q %v", status, body, err)
	}
	for _, tc := range []struct {
		name string
		get  func(context.Context, string) (int, []byte, error)
		url  string
		want string
	}{
		{"not listed", grantedHTTP([]string{"nas.home.arpa"}, client(nil)), url, "local-only"},
		{"listed at another address", grantedHTTP([]string{"nas.home.arpa"}, client(netguard.LAN{elsewhere})), url, "not at this address"},
		{"granted, another name unlisted", get, "http://other.home.arpa:" + srv.port() + "/ok", "local-only"},
		{"listed, not granted", grantedHTTP([]string{"api.example.com"}, client(netguard.LAN{rule})), url, "not a host this tool was granted"},
	} {
		if _, _, err := tc.get(ctx, tc.url); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	if n := srv.requests("nas.home.arpa:" + srv.port() + "/ok"); n != 1 {
		t.Errorf("the server got %d requests for nas.home.arpa, want 1", n)
	}
	if n := srv.requests("other.home.arpa:" + srv.port() + "/ok"); n != 0 {
		t.Errorf("the server got %d requests for other.home.arpa", n)
	}
}
