package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// describeTimeout bounds the name resolution in Describe.
const describeTimeout = 3 * time.Second

// Describe says where rawURL leads, for the owner's approval card: the
// normalised URL, the host as it will be dialed (punycode), the port, where
// the host resolves now (within a few seconds) and which of those addresses
// the dialer would refuse. It resolves the name with r (nil means
// net.DefaultResolver) and connects nowhere.
//
// A URL CheckURL refuses is an error and an empty Target. A name that does
// not resolve gives a filled Target without Addresses and an error that says
// so. The addresses can change before the fetch; the dialer checks again.
func Describe(ctx context.Context, rawURL string, r *net.Resolver) (Target, error) {
	u, err := CheckURL(rawURL)
	if err != nil {
		return Target{}, err
	}
	t := Target{URL: u.String(), Host: u.Hostname(), Port: effectivePort(u)}
	if addr, err := netip.ParseAddr(t.Host); err == nil {
		t.Addresses = []string{addr.Unmap().String()}
		return t, nil // CheckURL refused it if it were blocked
	}
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", t.Host)
	if err != nil {
		return t, fmt.Errorf("http_get: %s does not resolve now: %w", t.Host, err)
	}
	seen := make(map[netip.Addr]bool)
	for _, a := range addrs {
		a = a.WithZone("").Unmap()
		if seen[a] {
			continue
		}
		seen[a] = true
		t.Addresses = append(t.Addresses, a.String())
		if reason, blocked := Blocked(a); blocked {
			t.Blocked = append(t.Blocked, fmt.Sprintf("%s is %s", a, reason))
		}
	}
	return t, nil
}
