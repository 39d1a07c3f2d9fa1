package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxURLLen bounds the URLs we parse; longer ones are refused.
const maxURLLen = 8192

// CheckURL parses and normalises a URL the model asked for, or says in a
// sentence the model can act on why it will not be fetched.
//
// Accepted: http and https URLs with a host, an optional port in 1-65535, and
// no user info. The result has a lower-case host, IDN labels in punycode
// (xn--), no trailing dot, no default port, no fragment, and a path of at
// least "/".
//
// Refused outright:
//   - other schemes (file, ftp, gopher, javascript, data, ...);
//   - user info (user@, user:pass@) and any '@' or '%' in the authority, so
//     neither "host%40evil" nor "evil.com\@good.com" can disguise the host;
//   - backslashes, spaces, control, invisible and bidirectional characters
//     anywhere in the URL, and invalid UTF-8;
//   - IPv4 written any way but four plain decimal numbers: a host whose last
//     label is a number (2130706433, 0177.0.0.1, 0x7f.1, 127.1, 0x7f000001)
//     must parse strictly as a.b.c.d or it is refused, never reinterpreted;
//   - IP literals that Blocked refuses, and names that only resolve locally
//     (localhost and *.localhost, *.local, *.internal, *.home.arpa, and
//     single-label names).
//
// The IP checks here only give clear early messages; the guard that counts is
// in the Client's dialer, on the address actually dialed.
func CheckURL(raw string) (*url.URL, error) {
	u, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	if err := checkHost(u, nil, nil); err != nil {
		return nil, err
	}
	return u, nil
}

// CheckURL is the package's CheckURL with the owner's LAN list applied: an
// IP literal it lists on the URL's port, and a name it lists (whatever
// its form: nas.lan, a single label, *.home.arpa), pass the early checks.
// The dialer still checks every address actually dialed.
func (l LAN) CheckURL(raw string) (*url.URL, error) {
	u, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	if err := checkHost(u, nil, l); err != nil {
		return nil, err
	}
	return u, nil
}

func refusef(format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...)}
}

// parseURL does everything CheckURL does except the address and local-name
// policy of checkHost.
func parseURL(raw string) (*url.URL, error) {
	if len(raw) > maxURLLen {
		return nil, refusef("the URL is %d bytes long; the limit is %d", len(raw), maxURLLen)
	}
	if err := checkChars(raw); err != nil {
		return nil, err
	}
	scheme, rest, hasColon := strings.Cut(raw, ":")
	switch strings.ToLower(scheme) {
	case "http", "https":
	default:
		if !hasColon || len(scheme) > 32 || !validScheme(scheme) {
			return nil, refusef("%s has no scheme; write it as https://host/path", q(raw))
		}
		return nil, refusef("%s uses the %s scheme; only http and https URLs can be fetched", q(raw), strings.ToLower(scheme))
	}
	authority, ok := rawAuthority(rest)
	if !ok {
		return nil, refusef("%s has no host; write it as %s://host/path", q(raw), strings.ToLower(scheme))
	}
	if strings.Contains(authority, "@") {
		return nil, refusef("%s contains user info (a name or password before an @); shelldon never sends credentials in URLs, and an @ is a common way to disguise the real host", q(raw))
	}
	if strings.Contains(authority, "%") {
		return nil, refusef("the host in %s is percent-encoded; write the host in plain characters", q(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, refusef("%s is not a valid URL (%v)", q(raw), err)
	}
	if u.User != nil || u.Opaque != "" || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		// Unreachable after the checks above; kept as a second line.
		return nil, refusef("%s is not an http or https URL with a host", q(raw))
	}
	host, port, err := splitHostPort(u.Host, raw)
	if err != nil {
		return nil, err
	}
	if port == defaultPort(u.Scheme) {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path, u.RawPath = "/", ""
	}
	u.RawQuery = escapeNonASCII(u.RawQuery)
	return u, nil
}

// escapeNonASCII percent-encodes each byte of s outside ASCII.
func escapeNonASCII(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// checkChars refuses characters that have no business in a URL we fetch or
// that could make the owner read it differently from how it is fetched.
func checkChars(raw string) error {
	if !utf8.ValidString(raw) {
		return refusef("%s is not valid UTF-8", q(raw))
	}
	for _, r := range raw {
		switch {
		case r == '\\':
			return refusef("%s contains a backslash, which browsers and servers read differently; write %%5C if it belongs in the path", q(raw))
		case r == ' ':
			return refusef("%s contains a space; write %%20 if it belongs in the path", q(raw))
		case unicode.IsControl(r):
			return refusef("%s contains a control character", q(raw))
		case unicode.IsSpace(r), unicode.Is(unicode.Cf, r):
			return refusef("%s contains an invisible, space-like or bidirectional character", q(raw))
		}
	}
	return nil
}

// validScheme reports whether s is an RFC 3986 scheme.
func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// rawAuthority returns the authority part of a URL as written, given what
// follows "scheme:": "//" then up to the first '/', '?' or '#', before any
// unescaping.
func rawAuthority(rest string) (string, bool) {
	if !strings.HasPrefix(rest, "//") {
		return "", false
	}
	rest = rest[2:]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest, rest != ""
}

// splitHostPort splits and normalises url.URL.Host: IPv6 literals
// canonical and unbracketed, names through normaliseName, the port as plain
// decimal in 1-65535 ("" when absent).
func splitHostPort(hostport, raw string) (host, port string, err error) {
	hasPort := false
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", "", refusef("%s has an unterminated IPv6 address", q(raw))
		}
		host = hostport[1:end]
		rest := hostport[end+1:]
		if rest != "" {
			if rest[0] != ':' {
				return "", "", refusef("%s has characters after the IPv6 address", q(raw))
			}
			port, hasPort = rest[1:], true
		}
		addr, perr := netip.ParseAddr(host)
		if perr != nil || !addr.Is6() || addr.Zone() != "" {
			return "", "", refusef("%s does not hold a valid IPv6 address in brackets", q(raw))
		}
		host = addr.String()
	} else {
		host = hostport
		if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
			host, port, hasPort = hostport[:i], hostport[i+1:], true
		}
		if strings.Contains(host, ":") {
			return "", "", refusef("%s has an IPv6 address without brackets; write it as http://[address]/", q(raw))
		}
		host, err = normaliseName(host, raw)
		if err != nil {
			return "", "", err
		}
	}
	if hasPort && port != "" {
		for _, c := range port {
			if c < '0' || c > '9' {
				return "", "", refusef("%s has a port that is not a number", q(raw))
			}
		}
		n, perr := strconv.ParseUint(port, 10, 16)
		if perr != nil || n == 0 {
			return "", "", refusef("%s has port %s, outside 1-65535", q(raw), port)
		}
		port = strconv.FormatUint(n, 10)
	}
	return host, port, nil
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// effectivePort is the port a checked URL will be dialed on.
func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return defaultPort(u.Scheme)
}

// checkHost applies the address and local-name policy to a URL from
// parseURL. allow, when not nil, lets IP literals through (tests); lan
// lets through what the owner listed (LAN.CheckURL).
func checkHost(u *url.URL, allow func(netip.AddrPort) bool, lan LAN) error {
	host := u.Hostname()
	p, _ := strconv.ParseUint(effectivePort(u), 10, 16)
	port := uint16(p)
	if addr, err := netip.ParseAddr(host); err == nil {
		if allow != nil && allow(netip.AddrPortFrom(addr.Unmap(), port)) {
			return nil
		}
		if lan.allows(host, addr, port) {
			return nil
		}
		if reason, local, blocked := classify(addr); blocked {
			shown := addr.String()
			if addr.Is4In6() {
				shown = fmt.Sprintf("%s (that is, %s)", addr, addr.Unmap())
			}
			err := blockedError(shown, reason, local)
			if ports := lan.portsOf(host); ports != "" && lanAddr(addr.Unmap()) {
				return refusef("%s (it is listed in http.allow_hosts only for port %s)", err.(*refusal).msg, ports)
			}
			return err
		}
		return nil
	}
	if _, ok := lan.Listed(host, port); ok {
		return nil
	}
	if why := localName(host); why != "" {
		if ports := lan.portsOf(host); ports != "" {
			return refusef("%s is listed in http.allow_hosts only for port %s", host, ports)
		}
		return refusef("%s %s; shelldon does not fetch from the local network", host, why)
	}
	return nil
}

// localName says why host is a name that only resolves on the local
// network, or returns "".
func localName(host string) string {
	for _, suffix := range []string{"localhost", "local", "internal", "home.arpa"} {
		if host == suffix || strings.HasSuffix(host, "."+suffix) {
			return "is a local-only name (." + suffix + ")"
		}
	}
	if !strings.Contains(host, ".") {
		return "is a single-label name, which only resolves on a local network (use a full domain name)"
	}
	return ""
}

// blockedError is the refusal for a blocked address.
func blockedError(addr, reason string, local bool) error {
	if local {
		return refusef("%s is %s; shelldon does not fetch from the local network", addr, reason)
	}
	return refusef("%s is %s; shelldon fetches only from public internet addresses", addr, reason)
}

// q quotes s for an error message, cut to a readable length.
func q(s string) string {
	const max = 200
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + fmt.Sprintf(" (%d bytes in all)", len(s))
	}
	return strconv.Quote(s)
}
