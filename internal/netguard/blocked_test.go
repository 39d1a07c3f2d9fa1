package netguard

import (
	"net/netip"
	"strings"
	"testing"
)

func TestBlocked(t *testing.T) {
	t.Parallel()
	// reason "" means the address must pass. These are values only: nothing
	// here is dialed.
	cases := []struct{ ip, reason string }{
		// 0.0.0.0/8
		{"0.0.0.0", "unspecified"},
		{"0.0.0.1", "this network"},
		{"0.255.255.255", "this network"},
		{"1.0.0.0", ""},
		// 10/8
		{"9.255.255.255", ""},
		{"10.0.0.0", "private address (RFC 1918)"},
		{"10.255.255.255", "private address (RFC 1918)"},
		{"11.0.0.0", ""},
		// 100.64/10
		{"100.63.255.255", ""},
		{"100.64.0.0", "carrier-grade NAT"},
		{"100.100.100.200", "cloud metadata address (Alibaba"}, // Alibaba Cloud metadata
		{"100.127.255.255", "carrier-grade NAT"},
		{"100.128.0.0", ""},
		// 127/8
		{"126.255.255.255", ""},
		{"127.0.0.0", "loopback"},
		{"127.0.0.1", "loopback"},
		{"127.255.255.255", "loopback"},
		{"128.0.0.0", ""},
		// 169.254/16
		{"169.253.255.255", ""},
		{"169.254.0.0", "link-local"},
		{"169.254.169.254", "cloud metadata"},
		{"169.254.255.255", "link-local"},
		{"169.255.0.0", ""},
		// 172.16/12
		{"172.15.255.255", ""},
		{"172.16.0.0", "RFC 1918"},
		{"172.31.255.255", "RFC 1918"},
		{"172.32.0.0", ""},
		// 192.0.0.0/24, 192.0.2.0/24
		{"191.255.255.255", ""},
		{"192.0.0.0", "IETF protocol assignment"},
		{"192.0.0.192", "IETF protocol assignment"}, // Oracle Cloud metadata
		{"192.0.0.255", "IETF protocol assignment"},
		{"192.0.1.0", ""},
		{"192.0.1.255", ""},
		{"192.0.2.0", "TEST-NET-1"},
		{"192.0.2.255", "TEST-NET-1"},
		{"192.0.3.0", ""},
		// Globally reachable special-purpose blocks pass.
		{"192.31.196.1", ""},
		{"192.52.193.1", ""},
		{"192.175.48.1", ""},
		// 192.88.99.0/24
		{"192.88.98.255", ""},
		{"192.88.99.0", "6to4 relay"},
		{"192.88.99.255", "6to4 relay"},
		{"192.88.100.0", ""},
		// 192.168/16
		{"192.167.255.255", ""},
		{"192.168.0.0", "RFC 1918"},
		{"192.168.255.255", "RFC 1918"},
		{"192.169.0.0", ""},
		// 198.18/15
		{"198.17.255.255", ""},
		{"198.18.0.0", "benchmarking"},
		{"198.19.255.255", "benchmarking"},
		{"198.20.0.0", ""},
		// 198.51.100/24
		{"198.51.99.255", ""},
		{"198.51.100.0", "TEST-NET-2"},
		{"198.51.100.255", "TEST-NET-2"},
		{"198.51.101.0", ""},
		// 203.0.113/24
		{"203.0.112.255", ""},
		{"203.0.113.0", "TEST-NET-3"},
		{"203.0.113.255", "TEST-NET-3"},
		{"203.0.114.0", ""},
		// 224/4, 240/4, broadcast
		{"223.255.255.255", ""},
		{"224.0.0.0", "multicast"},
		{"239.255.255.255", "multicast"},
		{"240.0.0.0", "reserved"},
		{"255.255.255.254", "reserved"},
		{"255.255.255.255", "broadcast"},
		// Public.
		{"1.1.1.1", ""},
		{"8.8.8.8", ""},

		// IPv6 fixed addresses and IPv4-mapped / -compatible / -translated.
		{"::", "unspecified"},
		{"::1", "loopback"},
		{"::2", "IPv4-compatible"},
		{"::7f00:1", "IPv4-compatible IPv6 address (deprecated) embedding 127.0.0.1"},
		{"::1.1.1.1", "IPv4-compatible"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"::ffff:10.0.0.1", "private address (RFC 1918)"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:169.254.169.254", "cloud metadata"},
		{"::ffff:255.255.255.255", "broadcast"},
		{"::ffff:1.1.1.1", ""},
		{"::ffff:0:7f00:1", "outside 2000::/3"}, // IPv4-translated
		{"::1:0:0:0", "outside 2000::/3"},
		// NAT64 64:ff9b::/96: judged by the embedded IPv4.
		{"64:ff9b::", "NAT64 address embedding 0.0.0.0"},
		{"64:ff9b::a00:1", "NAT64 address embedding 10.0.0.1, which is a private address"},
		{"64:ff9b::7f00:1", "NAT64 address embedding 127.0.0.1"},
		{"64:ff9b::a9fe:a9fe", "NAT64 address embedding 169.254.169.254"},
		{"64:ff9b::ffff:ffff", "broadcast"},
		{"64:ff9b::101:101", ""},
		{"64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", "outside 2000::/3"},
		{"64:ff9b::1:0:0", "outside 2000::/3"}, // past the /96
		// 64:ff9b:1::/48
		{"64:ff9b:1::", "local-use NAT64"},
		{"64:ff9b:1::101:101", "local-use NAT64"},
		{"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "local-use NAT64"},
		{"64:ff9b:2::", "outside 2000::/3"},
		// 100::/64 and the rest of ::/8 ... 1fff::
		{"100::", "discard-only"},
		{"100::ffff:ffff:ffff:ffff", "discard-only"},
		{"100:0:0:1::", "outside 2000::/3"},
		{"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "outside 2000::/3"},
		// 2000::/3 starts.
		{"2000::", ""},
		// Teredo 2001::/32: server and de-obfuscated client are checked.
		{"2001::", "Teredo address embedding server 0.0.0.0"},
		{"2001:0:7f00:1::", "Teredo address embedding server 127.0.0.1"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo address embedding client 192.0.2.45"},
		{"2001:0:4136:e378:8000:63bf:f5ff:fffe", "Teredo address embedding client 10.0.0.1"},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo address embedding client 127.0.0.1"},
		{"2001:0:4136:e378:8000:63bf:fefe:fefe", ""},
		// 2001::/23 beyond Teredo.
		{"2001:1::1", "IETF protocol assignment"},
		{"2001:2::", "IETF protocol assignment"},
		{"2001:20::1", "IETF protocol assignment"},
		{"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "IETF protocol assignment"},
		{"2001:200::", ""},
		// 2001:db8::/32
		{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", ""},
		{"2001:db8::", "documentation"},
		{"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"},
		{"2001:db9::", ""},
		// 6to4 2002::/16: judged by the embedded IPv4.
		{"2002::", "6to4 address embedding 0.0.0.0"},
		{"2002:7f00:1::", "6to4 address embedding 127.0.0.1"},
		{"2002:a00:1::1", "6to4 address embedding 10.0.0.1"},
		{"2002:a9fe:a9fe::", "6to4 address embedding 169.254.169.254"},
		{"2002:c000:204::", "6to4 address embedding 192.0.2.4"},
		{"2002:101:101::", ""},
		{"2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "6to4 address embedding 255.255.255.255"},
		{"2003::", ""},
		// 3fff::/20
		{"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""},
		{"3fff::", "documentation"},
		{"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"},
		{"3fff:1000::", ""},
		{"4000::", "outside 2000::/3"},
		{"5f00::1", "outside 2000::/3"},
		// fc00::/7, fe80::/10, fec0::/10, ff00::/8
		{"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "outside 2000::/3"},
		{"fc00::", "unique local"},
		{"fd00:ec2::254", "cloud metadata range (AWS"}, // AWS IPv6 metadata
		{"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique local"},
		{"fe00::", "outside 2000::/3"},
		{"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "outside 2000::/3"},
		{"fe80::", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local"},
		{"fec0::", "site-local"},
		{"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "site-local"},
		{"ff00::", "multicast"},
		{"ff02::1", "multicast"},
		{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast"},
		// Public IPv6.
		{"2606:4700:4700::1111", ""},
		{"2620:4f:8000::1", ""},
		{"2a00:1450:4001:80b::200e", ""},
	}
	for _, tc := range cases {
		t.Run(tc.ip, func(t *testing.T) {
			t.Parallel()
			reason, blocked := Blocked(netip.MustParseAddr(tc.ip))
			if tc.reason == "" {
				if blocked {
					t.Errorf("Blocked(%s) = %q, want it to pass", tc.ip, reason)
				}
				return
			}
			if !blocked || !strings.Contains(reason, tc.reason) {
				t.Errorf("Blocked(%s) = %q, %v; want blocked with %q", tc.ip, reason, blocked, tc.reason)
			}
		})
	}
}

func TestBlockedInvalid(t *testing.T) {
	t.Parallel()
	if _, blocked := Blocked(netip.Addr{}); !blocked {
		t.Error("Blocked(zero Addr) passed")
	}
}

// Every special range is blocked at both of its edges, straight from the
// tables, so a typo in a table cannot hide.
func TestBlockedTableEdges(t *testing.T) {
	t.Parallel()
	for _, table := range [][]special{specialV4(), specialV6()} {
		for _, s := range table {
			first := s.prefix.Masked().Addr()
			last := lastAddr(s.prefix)
			for _, a := range []netip.Addr{first, last} {
				if _, blocked := Blocked(a); !blocked {
					t.Errorf("%s (edge of %s) passes", a, s.prefix)
				}
			}
		}
	}
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
