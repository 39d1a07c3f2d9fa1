package netguard

import (
	"fmt"
	"net/netip"

	"github.com/shelldon/shelldon/internal/lazy"
)

// special is one special-purpose range. local marks ranges that are "the
// local network" in the owner's terms (as opposed to reserved or
// documentation space), which only changes the wording of the refusal.
type special struct {
	prefix netip.Prefix
	reason string
	local  bool
}

func sp(cidr, reason string, local bool) special {
	return special{netip.MustParsePrefix(cidr), reason, local}
}

// specialV4 lists the IPv4 ranges refused, most specific first. Sources: the
// IANA IPv4 Special-Purpose Address Registry (as of 2025) plus multicast,
// 240/4 and the cloud metadata addresses. Ranges the registry marks globally
// reachable (192.31.196.0/24 AS112, 192.52.193.0/24 AMT, 192.175.48.0/24
// AS112) are allowed; the two globally reachable anycast addresses inside
// 192.0.0.0/24 are refused with the rest of that block (no web there).
func specialV4() []special {
	return specialV4Table.Get(func() []special {
		return []special{
			sp("0.0.0.0/32", "the unspecified address (it reaches this machine)", true),
			sp("169.254.169.254/32", "the cloud metadata address (link-local)", true),
			sp("255.255.255.255/32", "the broadcast address", true),
			sp("0.0.0.0/8", `in 0.0.0.0/8 ("this network")`, true),
			sp("10.0.0.0/8", "a private address (RFC 1918)", true),
			sp("100.100.100.200/32", "a cloud metadata address (Alibaba Cloud, inside 100.64.0.0/10)", true),
			sp("100.64.0.0/10", "a carrier-grade NAT address (100.64.0.0/10, RFC 6598)", true),
			sp("127.0.0.0/8", "a loopback address (this machine)", true),
			sp("169.254.0.0/16", "a link-local address (169.254.0.0/16, where cloud metadata services live)", true),
			sp("172.16.0.0/12", "a private address (RFC 1918)", true),
			sp("192.0.0.0/24", "an IETF protocol assignment (192.0.0.0/24)", false),
			sp("192.0.2.0/24", "a documentation address (192.0.2.0/24, TEST-NET-1)", false),
			sp("192.88.99.0/24", "a deprecated 6to4 relay anycast address (192.88.99.0/24)", false),
			sp("192.168.0.0/16", "a private address (RFC 1918)", true),
			sp("198.18.0.0/15", "a benchmarking address (198.18.0.0/15)", false),
			sp("198.51.100.0/24", "a documentation address (198.51.100.0/24, TEST-NET-2)", false),
			sp("203.0.113.0/24", "a documentation address (203.0.113.0/24, TEST-NET-3)", false),
			sp("224.0.0.0/4", "a multicast address (224.0.0.0/4)", true),
			sp("240.0.0.0/4", "a reserved address (240.0.0.0/4)", false),
		}
	})
}

var specialV4Table lazy.Value[[]special]

// specialV6 lists the IPv6 ranges refused, most specific first, after the
// embedded-IPv4 forms (NAT64, 6to4, Teredo) are handled in classify. Sources:
// the IANA IPv6 Special-Purpose Address Registry (as of 2025). Anything not
// listed here and outside 2000::/3 (global unicast) is refused as well.
func specialV6() []special {
	return specialV6Table.Get(func() []special {
		return []special{
			sp("::/128", "the unspecified address (it reaches this machine)", true),
			sp("::1/128", "the loopback address (this machine)", true),
			sp("64:ff9b:1::/48", "a local-use NAT64 address (64:ff9b:1::/48)", true),
			sp("100::/64", "a discard-only address (100::/64)", false),
			sp("2001::/23", "an IETF protocol assignment (2001::/23)", false),
			sp("2001:db8::/32", "a documentation address (2001:db8::/32)", false),
			sp("3fff::/20", "a documentation address (3fff::/20)", false),
			sp("fd00:ec2::/32", "a cloud metadata range (AWS's instance services, fd00:ec2::/32, inside fc00::/7)", true),
			sp("fc00::/7", "a unique local address (fc00::/7, the IPv6 private range)", true),
			sp("fe80::/10", "a link-local address (fe80::/10)", true),
			sp("fec0::/10", "a site-local address (fec0::/10, deprecated)", true),
			sp("ff00::/8", "a multicast address (ff00::/8)", true),
		}
	})
}

var specialV6Table lazy.Value[[]special]

// forms are the IPv6 ranges that embed an IPv4 address, and global
// unicast, for classify.
type forms struct{ nat64, teredo, sixToFour, compat, global6 netip.Prefix }

var formsTable lazy.Value[forms]

// ipv6Forms returns the forms. Like the tables above they are built on
// first use: a package-level table is init work for every process of the
// binary, the idle daemon included, which never dials (package lazy).
func ipv6Forms() forms {
	return formsTable.Get(func() forms {
		return forms{
			nat64:     netip.MustParsePrefix("64:ff9b::/96"),
			teredo:    netip.MustParsePrefix("2001::/32"),
			sixToFour: netip.MustParsePrefix("2002::/16"),
			compat:    netip.MustParsePrefix("::/96"),
			global6:   netip.MustParsePrefix("2000::/3"),
		}
	})
}

// Blocked reports whether shelldon refuses to connect to ip and why, as a
// phrase that reads after "<ip> is ", e.g. "a private address (RFC 1918)".
//
// ip is unmapped first (::ffff:10.0.0.1 is 10.0.0.1) and its zone ignored.
// Refused: loopback, unspecified, private (RFC 1918, fc00::/7), link-local
// (169.254/16 with the cloud metadata address, fe80::/10), CGNAT 100.64/10,
// multicast, broadcast, 240/4 and the rest of the IANA special-purpose
// registries that are not globally reachable (as of 2025), IPv4-compatible
// ::a.b.c.d, and every IPv6 address outside 2000::/3. Forms that embed an
// IPv4 address are judged by it: NAT64 64:ff9b::/96 and 6to4 2002::/16 are
// refused when the embedded address is, Teredo 2001::/32 when its server or
// (de-obfuscated) client address is; the rest of 2001::/23 is refused.
func Blocked(ip netip.Addr) (reason string, blocked bool) {
	reason, _, blocked = classify(ip)
	return reason, blocked
}

// classify is Blocked plus whether the range counts as the local network.
func classify(ip netip.Addr) (reason string, local, blocked bool) {
	if !ip.IsValid() {
		return "not a valid IP address", false, true
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		return match(specialV4(), ip)
	}
	f := ipv6Forms()
	switch {
	case f.nat64.Contains(ip):
		return embedded("a NAT64 address", "", v4At(ip, 12))
	case f.sixToFour.Contains(ip):
		return embedded("a 6to4 address", "", v4At(ip, 2))
	case f.teredo.Contains(ip):
		if r, l, b := embedded("a Teredo address", "server ", v4At(ip, 4)); b {
			return r, l, b
		}
		client := ip.As16()
		for i := 12; i < 16; i++ {
			client[i] ^= 0xff // RFC 4380: the client address is stored inverted
		}
		return embedded("a Teredo address", "client ", v4At(netip.AddrFrom16(client), 12))
	case ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback() && f.compat.Contains(ip):
		_, l, _ := match(specialV4(), v4At(ip, 12))
		return fmt.Sprintf("an IPv4-compatible IPv6 address (deprecated) embedding %s", v4At(ip, 12)), l, true
	}
	if r, l, b := match(specialV6(), ip); b {
		return r, l, b
	}
	if !f.global6.Contains(ip) {
		return "not a global unicast IPv6 address (outside 2000::/3)", false, true
	}
	return "", false, false
}

func match(table []special, ip netip.Addr) (string, bool, bool) {
	for _, s := range table {
		if s.prefix.Contains(ip) {
			return s.reason, s.local, true
		}
	}
	return "", false, false
}

// embedded judges an IPv6 form by the IPv4 address inside it.
func embedded(form, what string, v4 netip.Addr) (string, bool, bool) {
	r, l, b := match(specialV4(), v4)
	if !b {
		return "", false, false
	}
	return fmt.Sprintf("%s embedding %s%s, which is %s", form, what, v4, r), l, true
}

// v4At reads the IPv4 address at byte offset off of an IPv6 address.
func v4At(ip netip.Addr, off int) netip.Addr {
	b := ip.As16()
	return netip.AddrFrom4([4]byte(b[off : off+4]))
}
