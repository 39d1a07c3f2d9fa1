package config

import (
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// DescribeHost shows the owner the host of rawURL in both its forms, so a
// look-alike is seen for what it is: "api.example.com" for a plain ASCII
// host; "xn--pi-6kc.example.com (Unicode: аpi.example.com): not plain
// ASCII" for an internationalized one, whichever form the URL used. No
// form is mapped to another name (idna.Punycode: no case folding, no
// width mapping), so what is shown is what the URL says.
func DescribeHost(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return "(no host)"
	}
	host := u.Hostname()
	ascii, errA := idna.Punycode.ToASCII(host)
	uni, errU := idna.Punycode.ToUnicode(host)
	if errA != nil || errU != nil {
		return strings.ToValidUTF8(host, "?") + " (not a valid host name)"
	}
	if ascii == uni && isPlainASCII(host) {
		return ascii
	}
	return ascii + " (Unicode: " + uni + "): not plain ASCII, look at each letter"
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// HostName is h as a request's Host names it, normalized for comparison:
// an IP address in its canonical form (an IPv6 one without brackets), or
// a DNS name in lower case without a trailing dot. ok is false for
// anything else: a port, a scheme, a path, a wildcard, a name that is not
// plain ASCII letters, digits, hyphens and dots, or a label that is empty
// or longer than 63 bytes.
func HostName(h string) (string, bool) {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", false
		}
		return a.String(), true
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", false
		}
		return a.Unmap().String(), true
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "", false
			}
		}
	}
	return h, true
}
