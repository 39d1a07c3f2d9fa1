package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/shelldon/shelldon/internal/lazy"
)

// The owner's LAN hosts (http.allow_hosts).
//
// By default every private range is refused. The owner may list hosts on
// their own network that an approved http_get, or a self-coded tool
// granted the host, may reach: a LANRule each, with its ports. A rule
// applies to a URL by the URL's host, never by where a name happens to
// resolve:
//
//   - an address rule (host: 192.168.1.10, or cidr: 10.0.0.0/24) lets a
//     URL whose host is an IP literal inside it reach that address on a
//     listed port. A name that resolves into the range (rebinding) gets
//     nothing from it: http://evil.example/ resolving to 192.168.1.10 is
//     refused as before, so only a URL whose card shows the LAN address
//     reaches it.
//   - a name rule (host: nas.lan, cidr: 192.168.1.0/24) lets a URL whose
//     host is exactly that name reach the addresses the name resolves to
//     inside the rule's cidr (required: the addresses the name may resolve
//     to), on a listed port. A name resolving anywhere else in the private
//     ranges is refused, whoever answers its DNS; one resolving to a
//     public address is fetched as any public name is.
//
// Whatever a rule says, only the LAN ranges can be unlocked: RFC 1918
// (10/8, 172.16/12, 192.168/16), carrier-grade NAT 100.64/10 (where
// Tailscale and other overlay networks number the owner's own machines)
// and unique local IPv6 fc00::/7, less the cloud metadata addresses inside
// them (100.100.100.200, AWS's fd00:ec2::/32). Loopback, link-local
// (169.254.169.254 is there), multicast, IPv6 forms that embed an IPv4
// address (NAT64, 6to4, Teredo) and every other special range stay refused:
// ParseLANRule refuses a rule that names them, and the dialer, which checks
// each address actually dialed, refuses them even if such a rule were
// passed in. An IPv4-mapped IPv6 address (::ffff:192.168.1.10) is judged as
// the IPv4 address it maps to.

// LANRule is one entry of the owner's http.allow_hosts, checked
// (ParseLANRule).
type LANRule struct {
	// Name is the host name the rule is for (lower-case ASCII), or "" for
	// an address rule.
	Name string
	// Prefix is the address range: a single address (/32, /128) or a
	// range for an address rule; the addresses Name may resolve to for a
	// name rule.
	Prefix netip.Prefix
	// Ports are the ports that may be dialed, sorted, without repeats.
	Ports []uint16
}

// LAN is the owner's list of LAN hosts; nil lists none (every private
// range refused).
type LAN []LANRule

// Bounds of a rule.
const (
	// MinLANPrefixV4 is the widest IPv4 range a rule may list: a /16 is
	// 65,536 addresses, a large home or office network. Wider, a rule
	// stops naming hosts and becomes "the private network", which is the
	// default this list exists to keep.
	MinLANPrefixV4 = 16
	// MinLANPrefixV6 is the widest IPv6 range: a /48 is one ULA site
	// (RFC 4193 hands out /48s).
	MinLANPrefixV6 = 48
	// MaxLANPorts bounds a rule's ports.
	MaxLANPorts = 32
)

type lanRanges struct{ lan, metadata []netip.Prefix }

var lanTable lazy.Value[lanRanges]

// ranges returns the LAN ranges and the metadata ranges inside them.
func ranges() lanRanges {
	return lanTable.Get(func() lanRanges {
		p := netip.MustParsePrefix
		return lanRanges{
			lan: []netip.Prefix{p("10.0.0.0/8"), p("172.16.0.0/12"), p("192.168.0.0/16"), p("100.64.0.0/10"), p("fc00::/7")},
			metadata: []netip.Prefix{
				p("169.254.169.254/32"), // AWS, GCP, Azure and most others (link-local, never LAN anyway)
				p("100.100.100.200/32"), // Alibaba Cloud, inside 100.64/10
				p("fd00:ec2::/32"),      // AWS's IPv6 instance services: metadata fd00:ec2::254, DNS, NTP
			},
		}
	})
}

// lanAddr says whether ip (already unmapped) is an address a rule may
// unlock: in a LAN range and not a metadata address.
func lanAddr(ip netip.Addr) bool {
	r := ranges()
	for _, m := range r.metadata {
		if m.Contains(ip) {
			return false
		}
	}
	for _, l := range r.lan {
		if l.Contains(ip) {
			return true
		}
	}
	return false
}

// lanPrefix says why p cannot be listed, or "".
func lanPrefix(p netip.Prefix) string {
	r := ranges()
	for _, m := range r.metadata {
		if p.Overlaps(m) {
			return fmt.Sprintf("%s holds the cloud metadata address range %s, which is never reachable", p, m)
		}
	}
	for _, l := range r.lan {
		if l.Bits() <= p.Bits() && l.Contains(p.Addr()) {
			return ""
		}
	}
	if reason, _, blocked := classify(p.Addr()); blocked && p.IsSingleIP() {
		return fmt.Sprintf("%s is %s, which is never reachable; only addresses on your own network can be listed (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7)", p.Addr(), reason)
	}
	if _, _, blocked := classify(p.Addr()); !blocked {
		return fmt.Sprintf("%s is a public address; http.allow_hosts lists hosts on your own network (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), public hosts need no entry", p)
	}
	return fmt.Sprintf("%s is not inside one of the ranges of your own network (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7); loopback, link-local, metadata and other special ranges are never reachable", p)
}

// ParseLANRule checks one entry of http.allow_hosts: host (a name or an IP
// literal) and/or cidr, and ports. The shapes:
//
//	host: 192.168.1.10, ports: [8123]          an address
//	cidr: 10.0.0.0/24, ports: [80, 443]        a range, /16 or narrower (IPv6: /48)
//	host: nas.lan, cidr: 192.168.1.20, ports: [5000]
//	                                           a name, and the addresses it may resolve to
//
// Refused: addresses and ranges outside the LAN ranges (loopback,
// link-local, metadata, multicast, public, ...), ranges wider than
// MinLANPrefixV4/V6 or not written in their canonical form, IPv4 written
// any way but a.b.c.d (or mapped into IPv6), names netguard would refuse
// in a URL, international names (write LAN names in plain ASCII),
// localhost, a name without cidr, no ports, ports outside 1-65535. The
// error is a sentence for the owner.
func ParseLANRule(host, cidr string, ports []int) (LANRule, error) {
	var r LANRule
	host, cidr = strings.TrimSpace(host), strings.TrimSpace(cidr)
	switch {
	case host == "" && cidr == "":
		return r, fmt.Errorf("give host (a name or an address on your network) or cidr (a range of it)")
	case host != "":
		h, err := lanHost(host)
		if err != nil {
			return r, err
		}
		if a, err := netip.ParseAddr(h); err == nil {
			if cidr != "" {
				return r, fmt.Errorf("host %s is an address: give host or cidr, not both (cidr goes with a name, to say which addresses it may resolve to)", h)
			}
			r.Prefix = netip.PrefixFrom(a, a.BitLen())
			break
		}
		if cidr == "" {
			return r, fmt.Errorf("host %s is a name: add cidr, the address or range it may resolve to (like cidr: 192.168.1.20), so that whoever answers its DNS cannot point it at another machine of your network", h)
		}
		r.Name = h
		fallthrough
	default:
		p, err := lanCIDR(cidr)
		if err != nil {
			return r, err
		}
		r.Prefix = p
	}
	if why := lanPrefix(r.Prefix); why != "" {
		return r, fmt.Errorf("%s", why)
	}
	if len(ports) == 0 {
		return r, fmt.Errorf("ports is empty: list the ports that may be reached, like ports: [80]")
	}
	if len(ports) > MaxLANPorts {
		return r, fmt.Errorf("lists %d ports; the limit is %d", len(ports), MaxLANPorts)
	}
	for _, p := range ports {
		if p < 1 || p > 65535 {
			return r, fmt.Errorf("port %d is outside 1-65535", p)
		}
		if !slices.Contains(r.Ports, uint16(p)) {
			r.Ports = append(r.Ports, uint16(p))
		}
	}
	slices.Sort(r.Ports)
	return r, nil
}

// lanHost normalises a rule's host as a URL's host is (normaliseName,
// bracketed IPv6, strict a.b.c.d) and refuses what a rule may not name.
func lanHost(host string) (string, error) {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if a, err := netip.ParseAddr(host); err == nil {
		switch {
		case a.Zone() != "":
			return "", fmt.Errorf("host %s has a zone; list the address alone", host)
		case a.Is4In6():
			return "", fmt.Errorf("host %s is an IPv4 address written as IPv6; write it as %s", host, a.Unmap())
		}
		return a.String(), nil
	}
	if strings.ContainsAny(host, ":/@%\\ ") {
		return "", fmt.Errorf("host %s is not a host name or IP address (give it without a scheme, port or path; ports go in ports)", strconv.Quote(host))
	}
	h, err := normaliseName(host, host)
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			return "", fmt.Errorf("host %s", strings.TrimPrefix(r.msg, "the host in "))
		}
		return "", err
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return h, nil // a.b.c.d, strictly
	}
	if strings.Contains(h, "xn--") || !isPlainASCII(host) {
		return "", fmt.Errorf("host %s is not plain ASCII; write the names of your network in letters a-z, digits, '-' and '.'", strconv.Quote(host))
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return "", fmt.Errorf("host %s is this machine (loopback), which is never reachable", h)
	}
	return h, nil
}

// lanCIDR parses a rule's cidr: a.b.c.d/n, an IPv6 prefix, or a single
// address; canonical (no host bits set).
func lanCIDR(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" || a.Is4In6() {
			return netip.Prefix{}, fmt.Errorf("cidr %s is not an address or range (like 192.168.1.0/24 or 192.168.1.20)", strconv.Quote(s))
		}
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("cidr %s is not a range (like 192.168.1.0/24 or fd12:3456:789a::/64)", strconv.Quote(s))
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("cidr %s has host bits set; write the range as %s", s, p.Masked())
	}
	switch {
	case p.Addr().Is4() && p.Bits() < MinLANPrefixV4:
		return netip.Prefix{}, fmt.Errorf("cidr %s is wider than /%d; list the part of your network that is meant (a whole private range is what the default keeps out)", s, MinLANPrefixV4)
	case p.Addr().Is6() && p.Bits() < MinLANPrefixV6:
		return netip.Prefix{}, fmt.Errorf("cidr %s is wider than /%d; list the part of your network that is meant", s, MinLANPrefixV6)
	}
	return p, nil
}

// String renders the rule for the owner: "nas.lan at 192.168.1.20/32,
// port 5000", "192.168.1.10, ports 80, 443", "10.0.0.0/24, port 80".
func (r LANRule) String() string {
	where := r.Prefix.String()
	if r.Prefix.IsSingleIP() {
		where = r.Prefix.Addr().String()
	}
	if r.Name != "" {
		where = r.Name + " (resolving to " + where + ")"
	}
	ps := make([]string, len(r.Ports))
	for i, p := range r.Ports {
		ps[i] = strconv.Itoa(int(p))
	}
	word := "ports "
	if len(ps) == 1 {
		word = "port "
	}
	return where + ", " + word + strings.Join(ps, ", ")
}

// hostRules are the rules that apply to a URL whose host is host (as
// parseURL normalised it): name rules for that name, address rules holding
// that IP literal (unmapped). Ports are not considered.
func (l LAN) hostRules(host string) []LANRule {
	var out []LANRule
	lit, err := netip.ParseAddr(host)
	if err == nil {
		lit = lit.WithZone("").Unmap()
	}
	for _, r := range l {
		switch {
		case r.Name != "":
			if err != nil && r.Name == host {
				out = append(out, r)
			}
		case err == nil && r.Prefix.Contains(lit):
			out = append(out, r)
		}
	}
	return out
}

// Listed returns the rule that lets a URL with this host and port reach
// the owner's network, if any. It looks nothing up: it says what the
// list says of the URL, not where a name resolves.
func (l LAN) Listed(host string, port uint16) (LANRule, bool) {
	for _, r := range l.hostRules(host) {
		if slices.Contains(r.Ports, port) {
			return r, true
		}
	}
	return LANRule{}, false
}

// allows says whether a rule lets a URL with host (its hop's) reach ip on
// port: ip must be a LAN address (never loopback, link-local, metadata or
// any other special range, whatever the rule says), the rule must apply
// to host (hostRules), hold ip, and list port.
func (l LAN) allows(host string, ip netip.Addr, port uint16) bool {
	ip = ip.WithZone("").Unmap()
	if !lanAddr(ip) {
		return false
	}
	for _, r := range l.hostRules(host) {
		if r.Prefix.Contains(ip) && slices.Contains(r.Ports, port) {
			return true
		}
	}
	return false
}

// portsOf lists the ports the rules for host allow, for a refusal; "" when
// host is not listed.
func (l LAN) portsOf(host string) string {
	var ps []string
	for _, r := range l.hostRules(host) {
		for _, p := range r.Ports {
			if s := strconv.Itoa(int(p)); !slices.Contains(ps, s) {
				ps = append(ps, s)
			}
		}
	}
	return strings.Join(ps, ", ")
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// For returns the rules that apply to a URL whose host is host (a name
// rule for that name, or an address rule holding that IP literal),
// whatever the port; for the owner's views (a promotion card). It looks
// nothing up.
func (l LAN) For(host string) []LANRule { return l.hostRules(host) }
