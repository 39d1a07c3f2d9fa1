package netguard

import (
	"net/netip"
	"testing"
)

// FuzzParseLANRule: whatever an entry says, a rule ParseLANRule accepts
// unlocks only LAN addresses (never loopback, link-local, metadata or a
// public address), holds no range wider than the bounds, and has ports in
// 1-65535.
func FuzzParseLANRule(f *testing.F) {
	for _, s := range [][3]string{
		{"192.168.1.10", "", "8123"}, {"", "10.0.0.0/24", "80"}, {"nas.lan", "192.168.1.20", "5000"},
		{"127.0.0.1", "", "80"}, {"", "100.100.0.0/16", "80"}, {"", "fd00:ec2::/48", "80"}, {"x", "169.254.169.254", "80"},
		{"", "::ffff:10.0.0.0/120", "80"}, {"3232235786", "", "1"},
	} {
		f.Add(s[0], s[1], 80)
	}
	probes := []netip.Addr{
		netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("100.100.100.200"),
		netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("::1"), netip.MustParseAddr("fe80::1"),
		netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("0.0.0.0"), netip.MustParseAddr("224.0.0.1"),
	}
	f.Fuzz(func(t *testing.T, host, cidr string, port int) {
		r, err := ParseLANRule(host, cidr, []int{port})
		if err != nil {
			return
		}
		if !lanAddr(r.Prefix.Addr()) || lanPrefix(r.Prefix) != "" {
			t.Fatalf("accepted %+v outside the LAN ranges", r)
		}
		if r.Prefix.Addr().Is4() && r.Prefix.Bits() < MinLANPrefixV4 || r.Prefix.Addr().Is6() && r.Prefix.Bits() < MinLANPrefixV6 {
			t.Fatalf("accepted a range wider than the bound: %+v", r)
		}
		if len(r.Ports) != 1 || r.Ports[0] == 0 {
			t.Fatalf("ports %v", r.Ports)
		}
		lan := LAN{r}
		for _, h := range []string{r.Name, r.Prefix.Addr().String()} {
			for _, a := range probes {
				if lan.allows(h, a, r.Ports[0]) {
					t.Fatalf("%+v lets %s reach %s", r, h, a)
				}
			}
		}
	})
}
