package selftools

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/netguard"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// TestPoliciesHaveNoNetwork: the gate and every tool call run without a
// network, and a tool call's sandbox takes nothing from the tool but its
// directory (it cannot depend on its capabilities).
func TestPoliciesHaveNoNetwork(t *testing.T) {
	t.Parallel()
	env := Env{Binary: "/opt/shelldon", AllowDegraded: true}
	p := ToolCallPolicy(env, "/tools/live/x/v1")
	want := sandbox.Policy{
		Argv: []string{"/opt/shelldon", "be-child", "toolcall"}, Env: sandbox.Env(),
		ReadOnly: []string{"/tools/live/x/v1", "/opt/shelldon"}, Timeout: callTimeout, Limits: callLimits,
		MaxOutput: 64 << 10, AllowDegraded: true,
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("ToolCallPolicy = %+v\nwant %+v", p, want)
	}
	for _, lang := range []string{selfcode.Starlark, selfcode.Python} {
		if g := GatePolicy(env, lang); g.Network || g.Nested || g.Workspace != "" || g.Timeout != gateTimeout || !reflect.DeepEqual(g.Limits, gateLimits) {
			t.Errorf("GatePolicy(%s) = %+v", lang, g)
		}
	}
}

// TestGatePolicy: a Python gate runs in the helper (GateMode) with the
// code cache read-only; a Starlark gate is an exec'd target and sees no
// cache.
func TestGatePolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lang, cache, mode string
		ro                []string
	}{
		{selfcode.Python, "/home/s/cache/pygate", GateMode, []string{"/opt/shelldon", "/home/s/cache/pygate"}},
		{selfcode.Python, "", GateMode, []string{"/opt/shelldon"}},
		{selfcode.Starlark, "/home/s/cache/pygate", "", []string{"/opt/shelldon"}},
	} {
		g := GatePolicy(Env{Binary: "/opt/shelldon", PyCache: tc.cache}, tc.lang)
		if g.Mode != tc.mode || !reflect.DeepEqual(g.ReadOnly, tc.ro) || !reflect.DeepEqual(g.Argv, []string{"/opt/shelldon", "be-child", "gate"}) {
			t.Errorf("GatePolicy(%s, cache %q) = mode %q, read-only %v, argv %v", tc.lang, tc.cache, g.Mode, g.ReadOnly, g.Argv)
		}
	}
}

// TestGrantedHTTPRefusesOtherHosts: a tool granted http for some hosts
// reaches nothing else; the checks happen before any lookup or dial.
func TestGrantedHTTPRefusesOtherHosts(t *testing.T) {
	t.Parallel()
	if grantedHTTP(nil, nil) != nil {
		t.Fatal("a tool without the capability got an http function")
	}
	get := grantedHTTP([]string{"api.example.com"}, testClient(t, nil, ""))
	for _, u := range []string{
		"http://evil.example.net/", "https://API.EXAMPLE.COM.evil.net/", "http://127.0.0.1/",
		"http://api.example.com@127.0.0.1/", "ftp://api.example.com/", "http://[::1]/",
		"http://169.254.169.254/latest/meta-data/", "https://api.example.com/" + strings.Repeat("a", MaxURL),
	} {
		if _, _, err := get(context.Background(), u); err == nil {
			t.Errorf("%s was allowed", u)
		}
	}
}

// TestGrantedHTTPServes: the granted host is fetched (a test server on
// loopback stands for it), a name of it that resolves to loopback without
// the test's exception is refused by netguard, and the caps hold.
func TestGrantedHTTPServes(t *testing.T) {
	t.Parallel()
	srv := newHostServer(t)
	lo := netip.MustParseAddr("127.0.0.1")
	records := map[string]netip.Addr{"api.example.com": lo, "other.example.com": lo}
	get := grantedHTTP([]string{"API.example.com"}, testClient(t, records, srv.Listener.Addr().String()))
	base := "http://api.example.com:" + srv.port()
	status, body, err := get(context.Background(), base+"/ok")
	if err != nil || status != 200 || string(body) != "hello from api.example.com:"+srv.port() {
		t.Fatalf("granted: %d %q %v", status, body, err)
	}
	if _, body, err := get(context.Background(), base+"/cap"); err != nil || len(body) != MaxHTTPBody {
		t.Errorf("a body of exactly the cap: %d bytes, %v", len(body), err)
	}
	for _, tc := range []struct{ url, want string }{
		{base + "/big", "larger than"},
		{"http://other.example.com:" + srv.port() + "/ok", "not a host this tool was granted"},
	} {
		if _, _, err := get(context.Background(), tc.url); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.url, err, tc.want)
		}
	}
	if status, _, err := get(context.Background(), base+"/redirect"); err != nil || status != 302 {
		t.Errorf("a redirect is returned, not followed: %d %v", status, err)
	}
	if n := srv.requests("other.example.com:" + srv.port() + "/ok"); n != 0 {
		t.Errorf("the host not granted got %d requests", n)
	}
	// Without the test's exception, loopback is loopback: netguard refuses.
	strict := grantedHTTP([]string{"api.example.com"}, testClient(t, records, ""))
	if _, _, err := strict(context.Background(), base+"/ok"); !errors.Is(err, netguard.ErrRefused) {
		t.Errorf("a granted name on loopback: %v, want a netguard refusal", err)
	}
}
