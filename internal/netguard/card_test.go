package netguard

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/shelldon/shelldon/internal/hidden"
)

// cardCases are hostile URLs and how the owner's card shows them. want is
// compared field by field except Warnings; warn holds a substring of each
// warning, in order (nil: no warning at all); lines are substrings that
// some line of Lines must hold. refused is a substring of the refusal.
var cardCases = []struct {
	name    string
	raw     string
	want    Card
	warn    []string
	lines   []string
	refused string
}{
	// Homoglyphs and scripts.
	{
		name: "Cyrillic a in apple.com",
		raw:  "https://\u0430pple.com/login",
		want: Card{URL: "https://xn--pple-43d.com/login", Scheme: "https", Host: "xn--pple-43d.com", Unicode: "\u0430pple.com",
			Port: "443", DefaultPort: true, Path: "/login"},
		warn: []string{
			"the label \"\u0430pple\" mixes scripts: Cyrillic \u0430; Latin p, l, e",
			"an international name: it reads \u0430pple.com but is sent as xn--pple-43d.com",
			"\u0430pple.com can be mistaken for apple.com: U+0430 Cyrillic \u0430 looks like Latin a",
		},
		lines: []string{"Host, as sent (ASCII): xn--pple-43d.com", "Host, in Unicode: \u0430pple.com", "Warning: the label"},
	},
	{
		name: "all-Cyrillic apple.com, in Unicode",
		raw:  "https://\u0430\u0440\u0440\u04cf\u0435.com/",
		want: Card{URL: "https://xn--80ak6aa92e.com/", Scheme: "https", Host: "xn--80ak6aa92e.com", Unicode: "\u0430\u0440\u0440\u04cf\u0435.com",
			Port: "443", DefaultPort: true, Path: "/"},
		// One script in the label: not mixed, but every letter looks Latin.
		warn: []string{"an international name", "can be mistaken for apple.com: U+0430 Cyrillic \u0430 looks like Latin a, U+0440 Cyrillic \u0440 looks like Latin p, U+04CF Cyrillic \u04cf looks like Latin l, U+0435 Cyrillic \u0435 looks like Latin e"},
	},
	{
		name: "all-Cyrillic apple.com, as punycode given directly",
		raw:  "https://xn--80ak6aa92e.com/",
		want: Card{URL: "https://xn--80ak6aa92e.com/", Scheme: "https", Host: "xn--80ak6aa92e.com", Unicode: "\u0430\u0440\u0440\u04cf\u0435.com",
			Port: "443", DefaultPort: true, Path: "/"},
		warn:  []string{"an international name", "can be mistaken for apple.com"},
		lines: []string{"Host, in Unicode: \u0430\u0440\u0440\u04cf\u0435.com"},
	},
	{
		name: "punycode in capitals",
		raw:  "HTTPS://XN--PPLE-43D.COM/",
		want: Card{URL: "https://xn--pple-43d.com/", Scheme: "https", Host: "xn--pple-43d.com", Unicode: "\u0430pple.com",
			Port: "443", DefaultPort: true, Path: "/"},
		warn: []string{"mixes scripts", "an international name", "can be mistaken for apple.com"},
	},
	{
		name: "Greek alpha and rho",
		raw:  "https://\u03b1\u03c1\u03c1le.com/",
		want: Card{URL: "https://xn--le-b9b8da.com/", Scheme: "https", Host: "xn--le-b9b8da.com", Unicode: "\u03b1\u03c1\u03c1le.com",
			Port: "443", DefaultPort: true, Path: "/"},
		warn: []string{"mixes scripts: Greek \u03b1, \u03c1; Latin l, e", "an international name", "can be mistaken for apple.com: U+03B1 Greek"},
	},
	{
		name: "Latin and a Cyrillic letter with no Latin look-alike",
		raw:  "https://example\u0436.com/",
		want: Card{URL: "https://xn--example-mhg.com/", Scheme: "https", Host: "xn--example-mhg.com", Unicode: "example\u0436.com",
			Port: "443", DefaultPort: true, Path: "/"},
		warn: []string{"mixes scripts: Latin e, x, a, m, p, l; Cyrillic \u0436", "an international name"},
	},
	{
		name: "look-alike label beside a label that has none",
		raw:  "https://\u0430pple.\u0436\u0436/",
		want: Card{URL: "https://xn--pple-43d.xn--f1aa/", Scheme: "https", Host: "xn--pple-43d.xn--f1aa", Unicode: "\u0430pple.\u0436\u0436",
			Port: "443", DefaultPort: true, Path: "/"},
		warn: []string{"mixes scripts", "an international name", "can be mistaken for apple.\u0436\u0436: U+0430"},
	},
	{
		name: "an ordinary international name",
		raw:  "https://b\u00fccher.example/",
		want: Card{URL: "https://xn--bcher-kva.example/", Scheme: "https", Host: "xn--bcher-kva.example", Unicode: "b\u00fccher.example",
			Port: "443", DefaultPort: true, Path: "/"},
		warn: []string{"an international name: it reads b\u00fccher.example but is sent as xn--bcher-kva.example"},
	},
	{
		name: "Han and Hiragana, written together in Japanese",
		raw:  "https://\u4f8b\u3048.jp/",
		want: Card{URL: "https://xn--r8jz45g.jp/", Scheme: "https", Host: "xn--r8jz45g.jp", Unicode: "\u4f8b\u3048.jp",
			Port: "443", DefaultPort: true, Path: "/"},
		warn: []string{"an international name"},
	},
	{
		name: "right-to-left letters",
		raw:  "https://xn--4dbc.example/",
		want: Card{URL: "https://xn--4dbc.example/", Scheme: "https", Host: "xn--4dbc.example", Unicode: "\u05d0\u05d1.example",
			Port: "443", DefaultPort: true, Path: "/"},
		warn: []string{"an international name", "holds Hebrew letters, which are written right to left"},
	},
	{name: "punycode that decodes to ASCII", raw: "https://xn--abc-.com/", refused: "not valid punycode"},
	{name: "punycode that does not decode", raw: "https://xn--zz.com/", refused: "not valid punycode"},
	{name: "punycode of a symbol", raw: "https://xn--ls8h.la/", refused: "not valid punycode"},
	{name: "emoji", raw: "https://\U0001F4A9.la/", refused: "not a letter"},
	{name: "full-width letters", raw: "https://\uff45xample.com/", refused: "full-width"},
	{name: "Kelvin sign", raw: "https://\u212aelvin.com/", refused: "lower-cases to ASCII"},
	{name: "Hangul filler", raw: "https://a\u3164b.com/", refused: "not a valid international name"},

	// Bidi and zero-width characters: refused anywhere when written
	// plainly; percent-encoded in the path or query, kept encoded and
	// named.
	{name: "right-to-left override in the host", raw: "https://exa\u202emple.com/", refused: "invisible, space-like or bidirectional"},
	{name: "zero-width space in the host", raw: "https://exa\u200bmple.com/", refused: "invisible"},
	{name: "zero-width joiner in the path", raw: "https://example.com/a\u200db", refused: "invisible"},
	{name: "left-to-right mark in the query", raw: "https://example.com/?q=\u200e", refused: "invisible"},
	{
		name: "right-to-left override percent-encoded in the path",
		raw:  "https://example.com/invoice%E2%80%AEfdp.exe",
		want: Card{URL: "https://example.com/invoice%E2%80%AEfdp.exe", Scheme: "https", Host: "example.com", Unicode: "example.com",
			Port: "443", DefaultPort: true, Path: "/invoice%E2%80%AEfdp.exe"},
		warn:  []string{"the path percent-encodes control, invisible or non-UTF-8 bytes"},
		lines: []string{"Path, as sent: /invoice%E2%80%AEfdp.exe"},
	},
	{
		name: "zero-width space and NUL percent-encoded in the query",
		raw:  "https://example.com/?a=%E2%80%8B&b=%00&c=%41",
		want: Card{URL: "https://example.com/?a=%E2%80%8B&b=%00&c=%41", Scheme: "https", Host: "example.com", Unicode: "example.com",
			Port: "443", DefaultPort: true, Path: "/", Query: "?a=%E2%80%8B&b=%00&c=%41"},
		warn:  []string{"the query percent-encodes control, invisible or non-UTF-8 bytes"},
		lines: []string{"Query, as sent: ?a=%E2%80%8B&b=%00&c=%41", "Query, percent-decoded: ?a=%E2%80%8B&b=%00&c=A"},
	},

	// Percent-encoding.
	{
		name: "ordinary escapes are decoded for reading, '%' and space are not",
		raw:  "http://example.com/%7Euser/a%2Fb%25%20c%C3%A9",
		want: Card{URL: "http://example.com/%7Euser/a%2Fb%25%20c%C3%A9", Scheme: "http", Host: "example.com", Unicode: "example.com",
			Port: "80", DefaultPort: true, Path: "/%7Euser/a%2Fb%25%20c%C3%A9"},
		lines: []string{"Path, as sent: /%7Euser/a%2Fb%25%20c%C3%A9", "Path, percent-decoded: /~user/a/b%25%20c\u00e9", "Scheme: http (not encrypted"},
	},
	{
		name: "dot segments hidden in escapes",
		raw:  "https://example.com/a/%2e%2e/%2e%2e/etc/passwd",
		want: Card{URL: "https://example.com/a/%2e%2e/%2e%2e/etc/passwd", Scheme: "https", Host: "example.com", Unicode: "example.com",
			Port: "443", DefaultPort: true, Path: "/a/%2e%2e/%2e%2e/etc/passwd"},
		lines: []string{"Path, percent-decoded: /a/../../etc/passwd"},
	},
	{
		name: "bytes that are not UTF-8",
		raw:  "https://example.com/%FF%FE",
		want: Card{URL: "https://example.com/%FF%FE", Scheme: "https", Host: "example.com", Unicode: "example.com",
			Port: "443", DefaultPort: true, Path: "/%FF%FE"},
		warn: []string{"the path percent-encodes control, invisible or non-UTF-8 bytes"},
	},
	{
		name: "non-ASCII characters written plainly are sent percent-encoded",
		raw:  "https://example.com/caf\u00e9?q=\u00e4\u00f6",
		want: Card{URL: "https://example.com/caf%C3%A9?q=%C3%A4%C3%B6", Scheme: "https", Host: "example.com", Unicode: "example.com",
			Port: "443", DefaultPort: true, Path: "/caf%C3%A9", Query: "?q=%C3%A4%C3%B6"},
		lines: []string{"Path, percent-decoded: /caf\u00e9", "Query, percent-decoded: ?q=\u00e4\u00f6"},
	},
	{name: "a percent-encoded host", raw: "https://ex%61mple.com/", refused: "percent-encoded"},
	{name: "a percent-encoded @ in the host", raw: "https://good.com%40evil.com/", refused: "percent-encoded"},

	// Long paths and queries carry data: shown in part, with a warning.
	{
		name: "a long path",
		raw:  "https://example.com/" + strings.Repeat("a", 3000) + "END",
		want: Card{URL: "https://example.com/" + strings.Repeat("a", 3000) + "END", Scheme: "https", Host: "example.com", Unicode: "example.com",
			Port: "443", DefaultPort: true, Path: "/" + strings.Repeat("a", 3000) + "END"},
		warn:  []string{"the path is 3004 bytes long"},
		lines: []string{"[3004 bytes in all, ", "aaaEND"},
	},
	{
		name: "a long query",
		raw:  "https://example.com/?d=" + strings.Repeat("4142", 1000),
		want: Card{URL: "https://example.com/?d=" + strings.Repeat("4142", 1000), Scheme: "https", Host: "example.com", Unicode: "example.com",
			Port: "443", DefaultPort: true, Path: "/", Query: "?d=" + strings.Repeat("4142", 1000)},
		warn: []string{"the query is 4003 bytes long"},
	},
	{name: "longer than any URL fetched", raw: "https://example.com/" + strings.Repeat("a", 9000), refused: "the limit is 8192"},

	// User info.
	{name: "user", raw: "https://user@example.com/", refused: "user info"},
	{name: "user and password", raw: "https://user:secret@example.com/", refused: "user info"},
	{name: "the trusted name as user info", raw: "https://apple.com@evil.example/", refused: "user info"},
	{name: "an empty user", raw: "https://@example.com/", refused: "user info"},

	// Ports.
	{
		name:  "https's default port written out",
		raw:   "https://example.com:443/",
		want:  Card{URL: "https://example.com/", Scheme: "https", Host: "example.com", Unicode: "example.com", Port: "443", DefaultPort: true, Path: "/"},
		lines: []string{"Port: 443 (the default for https)"},
	},
	{
		name:  "http's default port on https",
		raw:   "https://example.com:80/",
		want:  Card{URL: "https://example.com:80/", Scheme: "https", Host: "example.com", Unicode: "example.com", Port: "80", Path: "/"},
		lines: []string{"Port: 80 (not the default for https)"},
	},
	{
		name:  "another port, with leading zeros",
		raw:   "http://example.com:08080",
		want:  Card{URL: "http://example.com:8080/", Scheme: "http", Host: "example.com", Unicode: "example.com", Port: "8080", Path: "/"},
		lines: []string{"Port: 8080 (not the default for http)", "Path, as sent: /", "Query: none"},
	},
	{name: "port 0", raw: "http://example.com:0/", refused: "outside 1-65535"},
	{name: "port 65536", raw: "http://example.com:65536/", refused: "outside 1-65535"},

	// IP literals.
	{
		name:  "IPv4",
		raw:   "http://1.1.1.1/dns-query",
		want:  Card{URL: "http://1.1.1.1/dns-query", Scheme: "http", Host: "1.1.1.1", Unicode: "1.1.1.1", Literal: "IPv4", Port: "80", DefaultPort: true, Path: "/dns-query"},
		lines: []string{"Host: 1.1.1.1 (an IPv4 address: no name to look up)", "Not contacted yet"},
	},
	{
		name:  "IPv6, not canonical, with a port",
		raw:   "https://[2606:4700:4700:0:0:0:0:1111]:8443/",
		want:  Card{URL: "https://[2606:4700:4700::1111]:8443/", Scheme: "https", Host: "2606:4700:4700::1111", Unicode: "2606:4700:4700::1111", Literal: "IPv6", Port: "8443", Path: "/"},
		lines: []string{"Host: [2606:4700:4700::1111] (an IPv6 address: no name to look up)"},
	},
	{
		name:  "IPv4-mapped IPv6",
		raw:   "http://[::ffff:1.1.1.1]/",
		want:  Card{URL: "http://[::ffff:1.1.1.1]/", Scheme: "http", Host: "::ffff:1.1.1.1", Unicode: "::ffff:1.1.1.1", Literal: "IPv6", Port: "80", DefaultPort: true, Path: "/"},
		lines: []string{"an IPv4-mapped IPv6 address: the connection goes to 1.1.1.1"},
	},
	{name: "IPv6 loopback", raw: "http://[::1]:8080/", refused: "loopback"},
	{name: "IPv6 with a zone", raw: "http://[fe80::1%25eth0]/", refused: "percent-encoded"},
	{name: "IPv6 without brackets", raw: "http://2606:4700::1111/", refused: "not a valid URL"},
	{name: "private IPv4", raw: "http://10.0.0.1/", refused: "private address"},
	{name: "IPv4 in hex", raw: "http://0x7f000001/", refused: "ambiguous"},
	{name: "IPv4 as one number", raw: "http://16843009/", refused: "ambiguous"},

	// Trailing dots, case, fragments.
	{
		name:  "a trailing dot",
		raw:   "https://Example.COM./a#frag",
		want:  Card{URL: "https://example.com/a", Scheme: "https", Host: "example.com", Unicode: "example.com", Port: "443", DefaultPort: true, Path: "/a"},
		lines: []string{"Host, in Unicode: example.com (the same: all ASCII)", "Not looked up or contacted yet"},
	},
	{
		name: "a trailing dot after punycode",
		raw:  "https://xn--bcher-kva.example./",
		want: Card{URL: "https://xn--bcher-kva.example/", Scheme: "https", Host: "xn--bcher-kva.example", Unicode: "b\u00fccher.example", Port: "443", DefaultPort: true, Path: "/"},
		warn: []string{"an international name"},
	},
	{name: "two trailing dots", raw: "https://example.com../", refused: "empty label"},
	{name: "a leading dot", raw: "https://.example.com/", refused: "empty label"},
	{
		name:  "a bare question mark",
		raw:   "https://example.com/a?",
		want:  Card{URL: "https://example.com/a?", Scheme: "https", Host: "example.com", Unicode: "example.com", Port: "443", DefaultPort: true, Path: "/a", Query: "?"},
		lines: []string{"Query, as sent: ?"},
	},
}

func TestDescribeURL(t *testing.T) {
	t.Parallel()
	for _, tc := range cardCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := DescribeURL(tc.raw)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("DescribeURL(%q) = %+v, %v; want a refusal with %q", tc.raw, got, err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("DescribeURL(%q): %v", tc.raw, err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Card{}, "Warnings")); diff != "" {
				t.Errorf("DescribeURL(%q) (-want +got):\n%s", tc.raw, diff)
			}
			if len(got.Warnings) != len(tc.warn) {
				t.Errorf("warnings = %q, want %d like %q", got.Warnings, len(tc.warn), tc.warn)
			} else {
				for i, w := range tc.warn {
					if !strings.Contains(got.Warnings[i], w) {
						t.Errorf("warning %d = %q, want it to hold %q", i, got.Warnings[i], w)
					}
				}
			}
			lines := got.Lines()
			all := strings.Join(lines, "\n")
			for _, want := range tc.lines {
				if !strings.Contains(all, want) {
					t.Errorf("no line holds %q:\n%s", want, all)
				}
			}
			checkCard(t, tc.raw, got, lines)
		})
	}
}

// checkCard asserts what holds for every card: it agrees with CheckURL, is
// a fixed point, names its host, shows each warning, and has no line that
// could hide text (controls, bidirectional or zero-width characters) nor a
// line longer than the bounds allow.
func checkCard(t *testing.T, raw string, c Card, lines []string) {
	t.Helper()
	u, err := CheckURL(raw)
	if err != nil || u.String() != c.URL {
		t.Errorf("CheckURL(%q) = %v, %v; the card says %s", raw, u, err, c.URL)
	}
	again, err := DescribeURL(c.URL)
	if err != nil {
		t.Errorf("DescribeURL of the card's own URL %q: %v", c.URL, err)
	} else if diff := cmp.Diff(c, again); diff != "" {
		t.Errorf("DescribeURL(%q) differs from DescribeURL(%q) (-first +again):\n%s", raw, c.URL, diff)
	}
	for i := 0; i < len(c.Host); i++ {
		if c.Host[i] >= 0x80 {
			t.Errorf("Host %q is not ASCII", c.Host)
			break
		}
	}
	all := strings.Join(lines, "\n")
	if !strings.Contains(all, c.Host) {
		t.Errorf("the lines do not name the host %s:\n%s", c.Host, all)
	}
	for _, w := range c.Warnings {
		if !strings.Contains(all, "Warning: "+w) {
			t.Errorf("the lines do not show the warning %q", w)
		}
	}
	for _, line := range lines {
		if len(line) > 2*maxShown+200 {
			t.Errorf("a line of %d bytes: %.80q...", len(line), line)
		}
		for _, r := range line {
			if hidden.Describe(r) != "" || !unicode.IsPrint(r) {
				t.Errorf("line %q holds U+%04X", line, r)
			}
		}
	}
}

// FuzzDescribeURL: never panics; a card exists exactly when CheckURL
// accepts the URL, and every card holds what checkCard asks.
func FuzzDescribeURL(f *testing.F) {
	for _, tc := range cardCases {
		f.Add(tc.raw)
	}
	for _, tc := range checkURLCases {
		f.Add(tc.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := DescribeURL(raw)
		if _, cerr := CheckURL(raw); (err == nil) != (cerr == nil) {
			t.Fatalf("DescribeURL(%q) error %v, CheckURL error %v", raw, err, cerr)
		}
		if err != nil {
			return
		}
		checkCard(t, raw, c, c.Lines())
	})
}

func TestDecodeVisible(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"/plain", "/plain"},
		{"/%41%42", "/AB"},
		{"/%e2%82%ac", "/\u20ac"},                // a whole UTF-8 sequence decodes
		{"/%E2%82", "/%E2%82"},                   // a cut one stays encoded
		{"/%E2%80%AE%41", "/%E2%80%AEA"},         // bidi control kept, A decoded
		{"/%CC%81", "/%CC%81"},                   // a combining mark would join the character before
		{"/%25%20%09%7F%5C", "/%25%20%09%7F%5C"}, // '%', space, tab, DEL, backslash
		{"/%4", "/%4"},                           // not an escape
		{"/%zz%41", "/%zzA"},                     // neither is this
		{"/%F0%9F%92%A9", "/\U0001F4A9"},         // printable, if odd
		{"/%EF%BB%BF", "/%EF%BB%BF"},             // byte-order mark
		{"/%C2%A0x", "/%C2%A0x"},                 // no-break space
		{"/%E2%80%8B%E2%80%8D", "/%E2%80%8B%E2%80%8D"},
	} {
		if got := decodeVisible(tc.in); got != tc.want {
			t.Errorf("decodeVisible(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
