package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

func mustRule(t *testing.T, host, cidr string, ports ...int) LANRule {
	t.Helper()
	r, err := ParseLANRule(host, cidr, ports)
	if err != nil {
		t.Fatalf("ParseLANRule(%q, %q, %v): %v", host, cidr, ports, err)
	}
	return r
}

func TestParseLANRule(t *testing.T) {
	t.Parallel()
	good := []struct {
		host, cidr string
		ports      []int
		want       string
	}{
		{"192.168.1.10", "", []int{8123}, "192.168.1.10, port 8123"},
		{"[fd12:3456:789a::10]", "", []int{80}, "fd12:3456:789a::10, port 80"},
		{"", "10.0.0.0/24", []int{443, 80, 80}, "10.0.0.0/24, ports 80, 443"},
		{"", "100.101.102.103", []int{80}, "100.101.102.103, port 80"}, // a tailnet address
		{"", "fd12:3456:789a::/48", []int{80}, "fd12:3456:789a::/48, port 80"},
		{"NAS.lan.", "192.168.1.20", []int{5000}, "nas.lan (resolving to 192.168.1.20), port 5000"},
		{"homeassistant", "192.168.1.0/24", []int{8123}, "homeassistant (resolving to 192.168.1.0/24), port 8123"},
		{"nas.home.arpa", "172.16.5.0/24", []int{1, 65535}, "nas.home.arpa (resolving to 172.16.5.0/24), ports 1, 65535"},
	}
	for _, tc := range good {
		r, err := ParseLANRule(tc.host, tc.cidr, tc.ports)
		if err != nil || r.String() != tc.want {
			t.Errorf("ParseLANRule(%q, %q, %v) = %q, %v; want %q", tc.host, tc.cidr, tc.ports, r, err, tc.want)
		}
	}
	bad := []struct {
		host, cidr string
		ports      []int
		want       string
	}{
		{"", "", []int{80}, "give host"},
		{"127.0.0.1", "", []int{80}, "loopback"},
		{"::1", "", []int{80}, "loopback"},
		{"localhost", "127.0.0.1", []int{80}, "loopback"},
		{"nas.localhost", "192.168.1.2", []int{80}, "loopback"},
		{"169.254.169.254", "", []int{80}, "cloud metadata"},
		{"169.254.1.1", "", []int{80}, "link-local"},
		{"fe80::1", "", []int{80}, "link-local"},
		{"100.100.100.200", "", []int{80}, "cloud metadata"},
		{"fd00:ec2::254", "", []int{80}, "cloud metadata"},
		{"", "fd00:ec2::/48", []int{80}, "cloud metadata"},
		{"", "100.100.0.0/16", []int{80}, "cloud metadata"},
		{"", "169.254.0.0/16", []int{80}, "never reachable"},
		{"", "127.0.0.0/16", []int{80}, "never reachable"},
		{"8.8.8.8", "", []int{80}, "public address"},
		{"", "8.8.8.0/24", []int{80}, "public address"},
		{"nas.lan", "8.8.8.8", []int{80}, "public address"},
		{"0.0.0.0", "", []int{80}, "unspecified"},
		{"224.0.0.1", "", []int{80}, "multicast"},
		{"64:ff9b::c0a8:10a", "", []int{80}, "NAT64"},
		{"2002:c0a8:10a::", "", []int{80}, "6to4"},
		{"::ffff:192.168.1.10", "", []int{80}, "write it as 192.168.1.10"},
		{"", "::ffff:192.168.1.0/120", []int{80}, "not a range"},
		{"3232235786", "", []int{80}, "ambiguous"},     // 192.168.1.10 in decimal
		{"0300.0250.1.10", "", []int{80}, "ambiguous"}, // in octal
		{"0xc0.168.1.10", "", []int{80}, "ambiguous"},
		{"192.168.1", "", []int{80}, "ambiguous"},
		{"192.168.001.010", "", []int{80}, "ambiguous"},
		{"", "10.0.0.0/8", []int{80}, "wider than /16"},
		{"", "172.16.0.0/12", []int{80}, "wider than /16"},
		{"", "fc00::/7", []int{80}, "wider than /48"},
		{"", "10.0.0.5/24", []int{80}, "host bits set; write the range as 10.0.0.0/24"},
		{"", "10.0.0.0/33", []int{80}, "not a range"},
		{"192.168.1.10", "192.168.1.0/24", []int{80}, "not both"},
		{"nas.lan", "", []int{80}, "add cidr"},
		{"nаs.lan", "192.168.1.2", []int{80}, "not plain ASCII"}, // Cyrillic а
		{"xn--ns-8cd.lan", "192.168.1.2", []int{80}, "not plain ASCII"},
		{"ｎａｓ.lan", "192.168.1.2", []int{80}, "not a valid name"}, // full-width
		{"nas\u200b.lan", "192.168.1.2", []int{80}, "not a valid name"},
		{"http://nas.lan", "192.168.1.2", []int{80}, "without a scheme"},
		{"nas.lan:5000", "192.168.1.2", []int{80}, "without a scheme, port"},
		{"user@nas.lan", "192.168.1.2", []int{80}, "not a host name"},
		{"192.168.1.10", "", nil, "ports is empty"},
		{"192.168.1.10", "", []int{0}, "outside 1-65535"},
		{"192.168.1.10", "", []int{65536}, "outside 1-65535"},
		{"192.168.1.10", "", []int{-80}, "outside 1-65535"},
	}
	for _, tc := range bad {
		_, err := ParseLANRule(tc.host, tc.cidr, tc.ports)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseLANRule(%q, %q, %v) = %v, want an error with %q", tc.host, tc.cidr, tc.ports, err, tc.want)
		}
	}
}

// testLAN is the owner's list the policy tables below use.
func testLAN(t *testing.T) LAN {
	return LAN{
		mustRule(t, "192.168.1.10", "", 8123),
		mustRule(t, "", "10.0.0.0/24", 80, 443),
		mustRule(t, "nas.lan", "192.168.1.20", 5000),
		mustRule(t, "homeassistant", "192.168.1.0/24", 8123),
		mustRule(t, "", "fd12:3456:789a::/64", 80),
		mustRule(t, "", "100.101.102.103", 80),
	}
}

// The dialer, on the address actually dialed, with the hop's host: what
// the list lets through, and everything it does not.
func TestControlLAN(t *testing.T) {
	t.Parallel()
	lan := testLAN(t)
	// Rules the config would refuse, forced into Options: the dialer
	// refuses their addresses all the same.
	forced := LAN{
		{Prefix: netip.MustParsePrefix("169.254.169.254/32"), Ports: []uint16{80}},
		{Prefix: netip.MustParsePrefix("127.0.0.0/8"), Ports: []uint16{80}},
		{Prefix: netip.MustParsePrefix("100.100.100.200/32"), Ports: []uint16{80}},
		{Prefix: netip.MustParsePrefix("fd00:ec2::/32"), Ports: []uint16{80}},
		{Prefix: netip.MustParsePrefix("fe80::/10"), Ports: []uint16{80}},
		{Prefix: netip.MustParsePrefix("0.0.0.0/0"), Ports: []uint16{80}},
		{Name: "meta.lan", Prefix: netip.MustParsePrefix("169.254.0.0/16"), Ports: []uint16{80}},
		{Name: "loop.lan", Prefix: netip.MustParsePrefix("127.0.0.0/8"), Ports: []uint16{80}},
	}
	cases := []struct {
		name            string
		lan             LAN
		host, addr      string // the hop's host; the address dialed
		port, wantError string // wantError "" means allowed
	}{
		{"listed IP, listed port", lan, "192.168.1.10", "192.168.1.10:8123", "8123", ""},
		{"listed IP, mapped", lan, "::ffff:192.168.1.10", "[::ffff:192.168.1.10]:8123", "8123", ""},
		{"listed IP, other port", lan, "192.168.1.10", "192.168.1.10:80", "80", "only for port 8123"},
		{"listed CIDR", lan, "10.0.0.7", "10.0.0.7:443", "443", ""},
		{"listed CIDR, other port", lan, "10.0.0.7", "10.0.0.7:22", "22", "only for port 80, 443"},
		{"outside the CIDR", lan, "10.0.1.7", "10.0.1.7:80", "80", "10.0.1.7 is a private address"},
		{"unlisted private", lan, "192.168.1.11", "192.168.1.11:8123", "8123", "192.168.1.11 is a private address"},
		{"listed ULA", lan, "fd12:3456:789a::5", "[fd12:3456:789a::5]:80", "80", ""},
		{"CGNAT tailnet", lan, "100.101.102.103", "100.101.102.103:80", "80", ""},
		{"listed name, pinned address", lan, "nas.lan", "192.168.1.20:5000", "5000", ""},
		{"listed name, pinned address, mapped", lan, "nas.lan", "[::ffff:192.168.1.20]:5000", "5000", ""},
		{"listed name, other port", lan, "nas.lan", "192.168.1.20:80", "80", "only for port 5000"},
		// DNS rebinding: a listed name that resolves elsewhere.
		{"listed name to another private address", lan, "nas.lan", "192.168.1.10:5000", "5000", "not at this address"},
		{"listed name to 10/24", lan, "nas.lan", "10.0.0.7:5000", "5000", "not at this address"},
		{"listed name to loopback", lan, "nas.lan", "127.0.0.1:5000", "5000", "loopback"},
		{"listed name to metadata", lan, "nas.lan", "169.254.169.254:5000", "5000", "cloud metadata"},
		{"listed name to metadata, mapped", lan, "nas.lan", "[::ffff:169.254.169.254]:5000", "5000", "cloud metadata"},
		{"listed name to NAT64 of itself", lan, "nas.lan", "[64:ff9b::c0a8:114]:5000", "5000", "NAT64"},
		{"single-label name in its range", lan, "homeassistant", "192.168.1.99:8123", "8123", ""},
		{"listed name public", lan, "nas.lan", "93.184.216.34:80", "80", ""},
		// A name the list does not hold gets nothing from the address rules.
		{"unlisted name to a listed IP", lan, "evil.example", "192.168.1.10:8123", "8123", "192.168.1.10 is a private address"},
		{"unlisted name to a listed CIDR", lan, "evil.example", "10.0.0.7:80", "80", "10.0.0.7 is a private address"},
		{"another name's address", lan, "homeassistant", "192.168.1.20:5000", "5000", "only for port 8123"},
		{"public, as before", lan, "example.com", "93.184.216.34:443", "443", ""},
		{"no list", nil, "192.168.1.10", "192.168.1.10:8123", "8123", "private address"},
		{"forced metadata", forced, "169.254.169.254", "169.254.169.254:80", "80", "cloud metadata"},
		{"forced loopback", forced, "127.0.0.1", "127.0.0.1:80", "80", "loopback"},
		{"forced alibaba", forced, "100.100.100.200", "100.100.100.200:80", "80", "cloud metadata"},
		{"forced aws v6", forced, "fd00:ec2::254", "[fd00:ec2::254]:80", "80", "cloud metadata"},
		{"forced link-local", forced, "fe80::1", "[fe80::1%lo]:80", "80", "link-local"},
		{"forced everything, multicast", forced, "224.0.0.1", "224.0.0.1:80", "80", "multicast"},
		{"forced everything, private", forced, "192.168.5.5", "192.168.5.5:80", "80", ""}, // a /0 rule cannot be written (ParseLANRule), but LAN addresses are what it could unlock
		{"forced name to metadata", forced, "meta.lan", "169.254.169.254:80", "80", "cloud metadata"},
		{"forced name to loopback", forced, "loop.lan", "127.0.0.1:80", "80", "loopback"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewClient(Options{LAN: tc.lan})
			c.testHookDial = func(netip.AddrPort) error { return nil }
			err := c.control("tcp6", tc.addr, hop{host: tc.host, port: tc.port})
			if tc.wantError == "" {
				if err != nil {
					t.Fatalf("control(%s for %s) = %v, want nil", tc.addr, tc.host, err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.wantError) {
				t.Fatalf("control(%s for %s) = %v, want a refusal with %q", tc.addr, tc.host, err, tc.wantError)
			}
		})
	}
}

// The early check and the card follow the list: a listed IP literal on a
// listed port passes; the card says "on your network" exactly then.
func TestLANCheckURLAndCard(t *testing.T) {
	t.Parallel()
	lan := testLAN(t)
	cases := []struct {
		url       string
		refused   string // "" means it passes
		onNetwork string // the card's LAN line, "" for none
	}{
		{"http://192.168.1.10:8123/api", "", "192.168.1.10, port 8123"},
		{"http://[::ffff:192.168.1.10]:8123/", "", "192.168.1.10, port 8123"},
		{"http://192.168.1.10/", "only for port 8123", ""},
		{"http://192.168.1.11:8123/", "private address", ""},
		{"https://10.0.0.9/", "", "10.0.0.0/24, ports 80, 443"},
		{"http://nas.lan:5000/", "", "nas.lan (resolving to 192.168.1.20), port 5000"},
		{"http://NAS.LAN.:5000/", "", "nas.lan (resolving to 192.168.1.20), port 5000"},
		{"http://homeassistant:8123/", "", "homeassistant (resolving to 192.168.1.0/24), port 8123"},
		{"http://homeassistant/", "only for port 8123", ""},
		{"http://nas.lan/", "", ""}, // the name is not local-only; the dialer decides
		{"http://other.lan:5000/", "", ""},
		{"http://nas.lan.evil.example:5000/", "", ""},
		{"http://xn--ns-8cd.lan:5000/", "", ""}, // nаs.lan in Cyrillic: not the listed name
		{"http://3232235786:8123/", "ambiguous", ""},
		{"http://0300.0250.1.10:8123/", "ambiguous", ""},
		{"http://0xc0a8010a:8123/", "ambiguous", ""},
		{"http://169.254.169.254/", "cloud metadata", ""},
		{"http://127.0.0.1:8123/", "loopback", ""},
		{"http://localhost:8123/", "local-only", ""},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			_, err := lan.CheckURL(tc.url)
			card, cerr := lan.DescribeURL(tc.url)
			if tc.refused != "" {
				if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("CheckURL = %v, want %q", err, tc.refused)
				}
				if cerr == nil {
					t.Fatalf("DescribeURL passed what CheckURL refuses")
				}
				return
			}
			if err != nil || cerr != nil {
				t.Fatalf("CheckURL = %v, DescribeURL = %v", err, cerr)
			}
			if card.LAN != tc.onNetwork {
				t.Errorf("card.LAN = %q, want %q", card.LAN, tc.onNetwork)
			}
			said := strings.Contains(strings.Join(card.Lines(), "\n"), "this URL is on your network (listed in http.allow_hosts")
			if said != (tc.onNetwork != "") {
				t.Errorf("card lines say on-network = %v, want %v:\n%s", said, !said, strings.Join(card.Lines(), "\n"))
			}
		})
	}
	// Without the list nothing is on the owner's network.
	if _, err := CheckURL("http://192.168.1.10:8123/"); err == nil {
		t.Error("CheckURL without a list passed a private address")
	}
	if card, err := DescribeURL("http://nas.lan:5000/"); err != nil || card.LAN != "" {
		t.Errorf("DescribeURL without a list = %+v, %v", card, err)
	}
	card, _ := lan.DescribeURL("http://nas.lan:80/")
	if !strings.Contains(strings.Join(card.Warnings, "\n"), "only for port 5000") {
		t.Errorf("a listed name on another port has no warning: %q", card.Warnings)
	}
}

// End to end with the real client and real loopback servers, each judged
// as an address of the owner's network (Options.JudgeAs): the listed one
// is fetched, by name and through a redirect; an unlisted one, a redirect
// to it, and the metadata address are refused before any connection.
func TestGetLANEndToEnd(t *testing.T) {
	t.Parallel()
	var nasHits atomic.Int64
	mux := http.NewServeMux()
	unlisted := listen(t, "tcp4", "127.0.0.2:0")
	meta := listen(t, "tcp4", "127.0.0.3:0")
	srvPort := ""
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		nasHits.Add(1)
		fmt.Fprint(w, "nas says hi to "+r.Host)
	})
	mux.HandleFunc("/to-unlisted", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://unlisted.test:"+unlisted.port()+"/", http.StatusFound)
	})
	mux.HandleFunc("/to-listed", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://nas.test:"+srvPort+"/ok", http.StatusFound)
	})
	mux.HandleFunc("/to-listed-other-port", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://nas.test:"+unlisted.port()+"/", http.StatusFound)
	})
	_, addr := testServer(t, mux)
	_, srvPort, _ = net.SplitHostPort(addr)
	port, _ := strconv.Atoi(srvPort)
	resolver := startDNS(t, map[string][]netip.Addr{
		"nas.test":      addrs("127.0.0.1"),
		"public.test":   addrs("127.0.0.1"),
		"rebind.test":   addrs("127.0.0.1"),
		"unlisted.test": addrs("127.0.0.2"),
		"meta.test":     addrs("127.0.0.3"),
	})
	judge := map[string]string{
		"127.0.0.1": "192.168.77.10",   // the LAN server
		"127.0.0.2": "192.168.77.11",   // an unlisted LAN host
		"127.0.0.3": "169.254.169.254", // the metadata address
	}
	lan := LAN{
		mustRule(t, "nas.test", "192.168.77.10", port),
		// Forced: the config would refuse it; the dialer must too.
		{Name: "meta.test", Prefix: netip.MustParsePrefix("169.254.169.254/32"), Ports: []uint16{uint16(port), 80}},
	}
	c := newTestClient(t, Options{LAN: lan, Resolver: resolver, JudgeAs: func(a netip.Addr) netip.Addr {
		if j, ok := judge[a.String()]; ok {
			return netip.MustParseAddr(j)
		}
		return a
	}})

	res, err := c.Get(context.Background(), "http://nas.test:"+srvPort+"/ok")
	if err != nil || string(res.Body) != "nas says hi to nas.test:"+srvPort {
		t.Fatalf("Get(listed) = %+v, %v", res, err)
	}
	res, err = c.Get(context.Background(), "http://nas.test:"+srvPort+"/to-listed")
	if err != nil || len(res.Hops) != 2 || nasHits.Load() != 2 {
		t.Fatalf("Get(redirect to listed) = %+v, %v", res, err)
	}
	refused := []struct{ url, want string }{
		{"http://unlisted.test:" + unlisted.port() + "/", "192.168.77.11 is a private address"},
		{"http://nas.test:" + srvPort + "/to-unlisted", "refused the redirect"},
		{"http://nas.test:" + srvPort + "/to-listed-other-port", "only for port " + srvPort},
		{"http://meta.test:" + meta.port() + "/", "cloud metadata"},
		{"http://rebind.test:" + srvPort + "/ok", "192.168.77.10 is a private address"}, // unlisted name, listed address
	}
	for _, tc := range refused {
		if _, err := c.Get(context.Background(), tc.url); err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Get(%s) = %v, want a refusal with %q", tc.url, err, tc.want)
		}
	}
	if n := nasHits.Load(); n != 2 {
		t.Errorf("the LAN server served %d requests, want 2 (refused calls reached it)", n)
	}
	unlisted.assertUntouched(t)
	meta.assertUntouched(t)
}

// From a public host, a redirect reaches the owner's network only when
// its target is itself listed, checked with the target's host and port.
func TestGetRedirectFromPublicToLAN(t *testing.T) {
	t.Parallel()
	unlisted := listen(t, "tcp4", "127.0.0.2:0")
	lanMux := http.NewServeMux()
	lanMux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "lan") })
	_, lanAddr := testServer(t, lanMux)
	_, lanPort, _ := net.SplitHostPort(lanAddr)
	pubMux := http.NewServeMux()
	pubMux.HandleFunc("/to-listed", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://nas.test:"+lanPort+"/", http.StatusFound)
	})
	pubMux.HandleFunc("/to-unlisted", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://unlisted.test:"+unlisted.port()+"/", http.StatusFound)
	})
	pubMux.HandleFunc("/to-unlisted-ip", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://192.168.77.11:"+unlisted.port()+"/", http.StatusFound)
	})
	_, pubAddr := testServer(t, pubMux)
	_, pubPort, _ := net.SplitHostPort(pubAddr)
	p, _ := strconv.Atoi(lanPort)
	resolver := startDNS(t, map[string][]netip.Addr{
		"public.test":   addrs("127.0.0.1"),
		"nas.test":      addrs("127.0.0.1"),
		"unlisted.test": addrs("127.0.0.2"),
	})
	// 127.0.0.1 is judged by the port dialed: the public server's, or the
	// LAN server's.
	pubP, _ := strconv.Atoi(pubPort)
	c := NewClient(Options{
		LAN:      LAN{mustRule(t, "nas.test", "192.168.77.0/24", p)},
		Resolver: resolver,
		JudgeAs: func(a netip.Addr) netip.Addr {
			switch a.String() {
			case "127.0.0.2":
				return netip.MustParseAddr("192.168.77.11")
			case "127.0.0.1":
				return netip.MustParseAddr("192.168.77.10")
			}
			return a
		},
		// The public server: let it through as a public host would be.
		AllowAddr: func(ap netip.AddrPort) bool {
			return ap == netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(pubP))
		},
	})
	c.testHookDial = func(ap netip.AddrPort) error {
		if !ap.Addr().IsLoopback() {
			t.Errorf("tripwire: %s passed the dial checks", ap)
			return refusef("tripwire")
		}
		return nil
	}
	res, err := c.Get(context.Background(), "http://public.test:"+pubPort+"/to-listed")
	if err != nil || string(res.Body) != "lan" {
		t.Fatalf("redirect to a listed host = %+v, %v", res, err)
	}
	for _, path := range []string{"/to-unlisted", "/to-unlisted-ip"} {
		_, err := c.Get(context.Background(), "http://public.test:"+pubPort+path)
		if err == nil || !strings.Contains(err.Error(), "refused the redirect") || !strings.Contains(err.Error(), "192.168.77.11 is a private address") {
			t.Errorf("redirect %s = %v, want refused", path, err)
		}
	}
	unlisted.assertUntouched(t)
}
