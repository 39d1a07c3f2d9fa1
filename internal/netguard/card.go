package netguard

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/hidden"
)

// Card is a URL as it will be requested, for the owner's approval card.
//
// DescribeURL builds it from the URL alone: it looks no name up and
// connects nowhere. The card is made while the call waits for the owner,
// and a DNS query then would already send data out (a name such as
// <secret>.attacker.example reaches whoever serves attacker.example's DNS)
// whatever the owner decides. The name is resolved, and every address
// checked, only when an approved call runs (see the package doc).
type Card struct {
	// URL is the normalised URL, exactly as it will be requested.
	URL string
	// Scheme is "http" or "https".
	Scheme string
	// Host is the host as it is sent, in the DNS query, TLS and the Host
	// header: lower-case ASCII, each international label in punycode
	// (xn--); an IP literal without brackets.
	Host string
	// Unicode is Host with each xn-- label decoded; Host when it has none
	// (or for an IP literal).
	Unicode string
	// Literal is "IPv4" or "IPv6" when Host is an IP address, "" for a name.
	Literal string
	// Port is the port that will be dialed.
	Port string
	// DefaultPort says Port is the scheme's default (80 or 443).
	DefaultPort bool
	// Path is the path as it is sent, percent-encoded.
	Path string
	// Query is the query as it is sent, with its '?'; "" when the URL has
	// none. Non-ASCII characters in it are percent-encoded (UTF-8), as
	// browsers send them.
	Query string
	// LAN is set when the owner's http.allow_hosts lists the URL's host on
	// its port (by the name or the IP literal the URL holds): the rule, as
	// LANRule.String renders it. "" otherwise, whatever the name may
	// resolve to (it is not looked up).
	LAN string
	// Warnings say what could make the owner misread where the request
	// goes or what it carries: mixed scripts, look-alike letters, an
	// international name, hidden characters encoded in the path or query,
	// a long path or query.
	Warnings []string
}

// DescribeURL returns the card of rawURL, or CheckURL's refusal. It is a
// pure function of rawURL: no resolver, no network.
func DescribeURL(rawURL string) (Card, error) { return LAN(nil).DescribeURL(rawURL) }

// DescribeURL is the package's DescribeURL with the owner's LAN list: a
// URL whose host the list names on its port passes (LAN.CheckURL), and
// its card says it is on the owner's network. Still no resolver, no
// network: the card says what the list says of the URL's host, and the
// dialer checks each address when the approved call runs.
func (l LAN) DescribeURL(rawURL string) (Card, error) {
	u, err := l.CheckURL(rawURL)
	if err != nil {
		return Card{}, err
	}
	c := Card{
		URL:    u.String(),
		Scheme: u.Scheme,
		Host:   u.Hostname(),
		Port:   effectivePort(u),
		Path:   u.EscapedPath(),
	}
	c.Unicode = c.Host
	c.DefaultPort = c.Port == defaultPort(u.Scheme)
	if u.RawQuery != "" || u.ForceQuery {
		c.Query = "?" + u.RawQuery
	}
	if addr, err := netip.ParseAddr(c.Host); err == nil {
		c.Literal = "IPv6"
		if addr.Is4() {
			c.Literal = "IPv4"
		}
	} else {
		c.describeName()
	}
	c.describeTarget("path", c.Path)
	c.describeTarget("query", c.Query)
	p, _ := strconv.ParseUint(c.Port, 10, 16)
	if r, ok := l.Listed(c.Host, uint16(p)); ok {
		c.LAN = r.String()
	} else if ports := l.portsOf(c.Host); ports != "" {
		c.warnf("%s is listed in http.allow_hosts only for port %s: on port %s it is fetched only if it is a public address", c.Host, ports, c.Port)
	}
	return c, nil
}

// maxShown bounds each long value on the card (the URL, the path, the
// query); a longer one shows its start and end and gets a warning.
const maxShown = 1000

// Lines renders the card for the owner, one fact per line.
func (c Card) Lines() []string {
	lines := []string{"URL as it will be requested: " + shorten(c.URL)}
	switch c.Scheme {
	case "https":
		lines = append(lines, "Scheme: https (encrypted)")
	default:
		lines = append(lines, "Scheme: "+c.Scheme+" (not encrypted: anyone on the way can read and change it)")
	}
	if c.Literal != "" {
		host := c.Host
		if c.Literal == "IPv6" {
			host = "[" + host + "]"
		}
		note := "an " + c.Literal + " address: no name to look up"
		if a, err := netip.ParseAddr(c.Host); err == nil && a.Is4In6() {
			note = "an IPv4-mapped IPv6 address: the connection goes to " + a.Unmap().String()
		}
		lines = append(lines, fmt.Sprintf("Host: %s (%s)", host, note))
	} else {
		lines = append(lines, "Host, as sent (ASCII): "+c.Host)
		if c.Unicode == c.Host {
			lines = append(lines, "Host, in Unicode: "+c.Unicode+" (the same: all ASCII)")
		} else {
			lines = append(lines, "Host, in Unicode: "+c.Unicode)
		}
	}
	if c.LAN != "" {
		lines = append(lines, "On your network: this URL is on your network (listed in http.allow_hosts: "+c.LAN+")")
	}
	for _, w := range c.Warnings {
		lines = append(lines, "Warning: "+w)
	}
	if c.DefaultPort {
		lines = append(lines, fmt.Sprintf("Port: %s (the default for %s)", c.Port, c.Scheme))
	} else {
		lines = append(lines, fmt.Sprintf("Port: %s (not the default for %s)", c.Port, c.Scheme))
	}
	lines = append(lines, "Path, as sent: "+shorten(c.Path))
	if d := decodeVisible(c.Path); d != c.Path {
		lines = append(lines, "Path, percent-decoded: "+shorten(d))
	}
	if c.Query == "" {
		lines = append(lines, "Query: none")
	} else {
		lines = append(lines, "Query, as sent: "+shorten(c.Query))
		if d := decodeVisible(c.Query); d != c.Query {
			lines = append(lines, "Query, percent-decoded: "+shorten(d))
		}
	}
	if c.Literal != "" {
		return append(lines, "Not contacted yet: the address is checked again, and connected to, only when the approved call runs")
	}
	return append(lines, "Not looked up or contacted yet: the name is resolved, and each address checked, only when the approved call runs")
}

func (c *Card) warnf(format string, args ...any) {
	c.Warnings = append(c.Warnings, fmt.Sprintf(format, args...))
}

// describeName fills Unicode and the name's warnings. CheckURL has
// already checked every xn-- label (it decodes, under the Registration
// profile, to a label of letters, digits and '-').
func (c *Card) describeName() {
	labels := strings.Split(c.Host, ".")
	shown := make([]string, len(labels))
	for i, label := range labels {
		shown[i] = label
		if !strings.HasPrefix(label, "xn--") {
			continue
		}
		u, err := unicodeLabel(label)
		if err != nil {
			c.warnf("the label %s cannot be shown in Unicode: %v", label, err)
			continue
		}
		shown[i] = u
		if mix := mixedScripts(u); mix != "" {
			c.warnf("the label %q mixes scripts: %s", u, mix)
		}
	}
	c.Unicode = strings.Join(shown, ".")
	if c.Unicode == c.Host {
		return
	}
	c.warnf("an international name: it reads %s but is sent as %s; letters of other scripts can look like Latin ones", c.Unicode, c.Host)
	if like, which := lookalike(c.Unicode); like != c.Unicode {
		c.warnf("%s can be mistaken for %s: %s", c.Unicode, like, which)
	}
	if rtl := rightToLeft(c.Unicode); rtl != "" {
		c.warnf("the name holds %s letters, which are written right to left and can change the order in which the line is shown", rtl)
	}
}

// describeTarget warns about a path or query that hides characters in
// percent-encoding or is long enough to carry a lot of data out.
func (c *Card) describeTarget(what, s string) {
	if n := len(s); n > maxShown {
		c.warnf("the %s is %d bytes long, room for a lot of data to leave with the request; the card shows its start and end", what, n)
	}
	if hiddenEscapes(s) {
		c.warnf("the %s percent-encodes control, invisible or non-UTF-8 bytes; they are left encoded below", what)
	}
}

// unicodeLabel decodes an xn-- label and refuses one whose Unicode form
// holds a character that could hide from a reader.
func unicodeLabel(label string) (string, error) {
	u, err := decodeALabel(label)
	if err != nil {
		return "", err
	}
	for _, r := range u {
		if d := hidden.Describe(r); d != "" {
			return "", fmt.Errorf("it holds %s (U+%04X)", d, r)
		}
	}
	return u, nil
}

// shorten keeps a long value readable: its start and end around a note.
func shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	head, tail := maxShown*2/3, maxShown/3
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return fmt.Sprintf("%s … [%d bytes in all, %d not shown] … %s", s[:head], len(s), start-head, s[start:])
}

// decodeVisible decodes the percent-escapes of s that stand for ordinary
// printable characters and keeps the others as they are: escapes of '%',
// of control, invisible or bidirectional characters, and of bytes that are
// not UTF-8. The result says what a server reads without hiding anything
// from the owner.
func decodeVisible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		run := escapeRun(s[i:])
		if run == 0 {
			b.WriteByte(s[i])
			i++
			continue
		}
		enc := s[i : i+run]
		raw := make([]byte, run/3)
		for j := range raw {
			raw[j] = unhex(enc[3*j+1])<<4 | unhex(enc[3*j+2])
		}
		for j := 0; j < len(raw); {
			r, size := utf8.DecodeRune(raw[j:])
			if visibleRune(r, size) {
				b.WriteRune(r)
			} else {
				b.WriteString(enc[3*j : 3*(j+size)])
			}
			j += size
		}
		i += run
	}
	return b.String()
}

// hiddenEscapes reports whether s percent-encodes a byte that could hide
// text from a reader: a control, invisible or bidirectional character, or
// a byte that is not UTF-8.
func hiddenEscapes(s string) bool {
	for i := 0; i < len(s); {
		run := escapeRun(s[i:])
		if run == 0 {
			i++
			continue
		}
		raw := make([]byte, run/3)
		for j := range raw {
			raw[j] = unhex(s[i+3*j+1])<<4 | unhex(s[i+3*j+2])
		}
		for j := 0; j < len(raw); {
			r, size := utf8.DecodeRune(raw[j:])
			if hiding(r, size) {
				return true
			}
			j += size
		}
		i += run
	}
	return false
}

// escapeRun is the length of the run of %XX escapes at the start of s.
func escapeRun(s string) int {
	n := 0
	for n+2 < len(s) && s[n] == '%' && isHex(rune(s[n+1])) && isHex(rune(s[n+2])) {
		n += 3
	}
	return n
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// hiding reports whether a decoded rune could hide text from a reader:
// not UTF-8, a control character, or one hidden.Describe names (format,
// zero-width, bidirectional, private use).
func hiding(r rune, size int) bool {
	return r == utf8.RuneError && size <= 1 || unicode.IsControl(r) || hidden.Describe(r) != ""
}

// visibleRune reports whether a decoded rune can be shown as itself: not
// hiding, printable, not a combining mark (which would change the character
// before it), and not ' ' (invisible at the end of a line), '%' (which
// would make a kept escape ambiguous) or '\\' (which the approval card
// escapes).
func visibleRune(r rune, size int) bool {
	switch r {
	case ' ', '%', '\\':
		return false
	}
	return !hiding(r, size) && unicode.IsPrint(r) && !unicode.In(r, unicode.Mn, unicode.Me)
}
