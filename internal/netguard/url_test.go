package netguard

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/net/idna"
)

// checkURLCases is shared with the fuzz seeds. want is the normalised URL
// for an accepted input; refused is a substring of the refusal otherwise.
var checkURLCases = []struct {
	raw     string
	want    string
	refused string
}{
	// Schemes.
	{raw: "file:///etc/passwd", refused: "the file scheme"},
	{raw: "gopher://example.com:70/_GET", refused: "the gopher scheme"},
	{raw: "ftp://example.com/", refused: "the ftp scheme"},
	{raw: "javascript:alert(1)", refused: "the javascript scheme"},
	{raw: "data:text/html,<script>alert(1)</script>", refused: "the data scheme"},
	{raw: "JaVaScRiPt:alert(1)", refused: "the javascript scheme"},
	{raw: "example.com/path", refused: "no scheme"},
	{raw: "//example.com/", refused: "no scheme"},
	{raw: "", refused: "no scheme"},
	{raw: "http:example.com", refused: "no host"},
	{raw: "http:/example.com", refused: "no host"},
	{raw: "http:///path", refused: "no host"},
	{raw: "http://", refused: "no host"},
	{raw: "http://:80/", refused: "no host"},
	{raw: "http://?x", refused: "no host"},

	// User info and host disguises.
	{raw: "http://user:pass@example.com/", refused: "user info"},
	{raw: "http://user@example.com/", refused: "user info"},
	{raw: "http://@example.com/", refused: "user info"},
	{raw: "http://example.com@127.0.0.1/", refused: "user info"},
	{raw: "http://host%40evil.com/", refused: "percent-encoded"},
	{raw: "http://user%3Apass%40example.com/", refused: "percent-encoded"},
	{raw: "http://ex%61mple.com/", refused: "percent-encoded"},
	{raw: "http://evil.com\\@good.com/", refused: "backslash"},
	{raw: "http:\\\\evil.com/", refused: "backslash"},
	{raw: "http://good.com/\\evil", refused: "backslash"},
	{raw: "http://[fe80::1%25eth0]/", refused: "percent-encoded"},

	// Spaces, controls, invisible characters, bad UTF-8.
	{raw: "http://exa mple.com/", refused: "space"},
	{raw: " http://example.com/", refused: "space"},
	{raw: "http://example.com/a b", refused: "space"},
	{raw: "http://example.com\t/", refused: "control character"},
	{raw: "http://example.com/\x00", refused: "control character"},
	{raw: "http://example.com\r\nHost: evil/", refused: "control character"},
	{raw: "http://example.com/\x7f", refused: "control character"},
	{raw: "http://example.com/\u0085", refused: "control character"},
	{raw: "http://exa\u200bmple.com/", refused: "invisible"},
	{raw: "http://example.com/\u202egnp.exe", refused: "invisible"},
	{raw: "http://example.com\u00a0/", refused: "invisible"},
	{raw: "http://example.com/\xff", refused: "UTF-8"},

	// Ports.
	{raw: "http://example.com:99999/", refused: "outside 1-65535"},
	{raw: "http://example.com:99999999999999999999999/", refused: "outside 1-65535"},
	{raw: "http://example.com:0/", refused: "outside 1-65535"},
	{raw: "http://example.com:00/", refused: "outside 1-65535"},
	{raw: "http://example.com:65536/", refused: "outside 1-65535"},
	{raw: "http://example.com:-1/", refused: "not a valid URL"},
	{raw: "http://example.com:8o/", refused: "not a valid URL"},
	{raw: "http://example.com:65535/", want: "http://example.com:65535/"},
	{raw: "http://example.com:080/", want: "http://example.com/"},
	{raw: "https://example.com:443/x", want: "https://example.com/x"},
	{raw: "https://example.com:80/x", want: "https://example.com:80/x"},
	{raw: "http://example.com:/", want: "http://example.com/"},

	// IP literals: blocked ones are refused early.
	{raw: "http://10.0.0.5/", refused: "10.0.0.5 is a private address (RFC 1918); shelldon does not fetch from the local network"},
	{raw: "http://127.0.0.1/", refused: "127.0.0.1 is a loopback address"},
	{raw: "http://127.0.0.1./", refused: "127.0.0.1 is a loopback address"},
	{raw: "http://127.0.0.1:8080/", refused: "loopback"},
	{raw: "http://0.0.0.0/", refused: "unspecified"},
	{raw: "http://169.254.169.254/latest/meta-data/", refused: "cloud metadata"},
	{raw: "http://192.0.2.1/", refused: "documentation"},
	{raw: "http://[::1]/", refused: "::1 is the loopback address"},
	{raw: "http://[::1]:8080/", refused: "loopback"},
	{raw: "http://[::]/", refused: "unspecified"},
	{raw: "http://[::ffff:127.0.0.1]/", refused: "::ffff:127.0.0.1 (that is, 127.0.0.1) is a loopback address"},
	{raw: "http://[::ffff:7f00:1]/", refused: "loopback"},
	{raw: "http://[::ffff:a00:1]/", refused: "private"},
	{raw: "http://[::127.0.0.1]/", refused: "IPv4-compatible"},
	{raw: "http://[64:ff9b::a9fe:a9fe]/", refused: "NAT64 address embedding 169.254.169.254"},
	{raw: "http://[2002:7f00:1::]/", refused: "6to4 address embedding 127.0.0.1"},
	{raw: "http://[fd00:ec2::254]/", refused: "cloud metadata range"},
	{raw: "http://[fe80::1]/", refused: "link-local"},
	{raw: "http://[127.0.0.1]/", refused: "not a valid URL"},
	{raw: "http://[::1/", refused: "not a valid URL"},
	{raw: "http://[::1]x/", refused: "not a valid URL"},
	{raw: "http://::1/", refused: "not a valid URL"},
	{raw: "http://1.1.1.1/", want: "http://1.1.1.1/"},
	{raw: "http://[2606:4700:4700::1111]/", want: "http://[2606:4700:4700::1111]/"},
	{raw: "http://[2606:4700:4700:0:0:0:0:1111]:8443/", want: "http://[2606:4700:4700::1111]:8443/"},
	{raw: "http://[::ffff:1.1.1.1]/", want: "http://[::ffff:1.1.1.1]/"},

	// Ambiguous IPv4 forms are refused, never reinterpreted.
	{raw: "http://0x7f000001/", refused: "ambiguous way to write an IPv4 address"},
	{raw: "http://0X7F000001/", refused: "ambiguous"},
	{raw: "http://2130706433/", refused: "ambiguous"},
	{raw: "http://0177.0.0.1/", refused: "ambiguous"},
	{raw: "http://0177.1/", refused: "ambiguous"},
	{raw: "http://127.1/", refused: "ambiguous"},
	{raw: "http://127.0.1/", refused: "ambiguous"},
	{raw: "http://0x7f.1/", refused: "ambiguous"},
	{raw: "http://0x7f.0x0.0x0.0x1/", refused: "ambiguous"},
	{raw: "http://010.0.0.1/", refused: "ambiguous"},
	{raw: "http://1.2.3.4.5/", refused: "ambiguous"},
	{raw: "http://256.1.1.1/", refused: "ambiguous"},
	{raw: "http://1.1.1.1../", refused: "empty label"},
	{raw: "http://0/", refused: "ambiguous"},
	{raw: "http://example.0x1/", refused: "ambiguous"},
	{raw: "http://example.123/", refused: "ambiguous"},
	{raw: "http://0x/", refused: "ambiguous"},
	{raw: "http://example.0xg/", want: "http://example.0xg/"}, // not a number: an ordinary name
	{raw: "http://1.1.1.1.example/", want: "http://1.1.1.1.example/"},

	// Local-only names.
	{raw: "http://localhost/", refused: "localhost is a local-only name"},
	{raw: "http://LOCALHOST/", refused: "localhost is a local-only name"},
	{raw: "http://localhost./", refused: "localhost is a local-only name"},
	{raw: "http://localhost:8080/", refused: "local-only"},
	{raw: "http://api.localhost/", refused: "local-only"},
	{raw: "http://printer.local/", refused: "local-only"},
	{raw: "http://metadata.google.internal/computeMetadata/v1/", refused: "local-only"},
	{raw: "http://router.home.arpa/", refused: "local-only"},
	{raw: "http://intranet/", refused: "single-label"},
	{raw: "http://intranet./", refused: "single-label"},

	// Names: case, trailing dot, labels.
	{raw: "HTTP://Example.COM", want: "http://example.com/"},
	{raw: "http://example.com.:8080/a?b=c#frag", want: "http://example.com:8080/a?b=c"},
	{raw: "https://example.com/x#", want: "https://example.com/x"},
	{raw: "http://example.com?x=1", want: "http://example.com/?x=1"},
	{raw: "http://a_b.example.com/", want: "http://a_b.example.com/"},
	{raw: "http://example..com/", refused: "empty label"},
	{raw: "http://.example.com/", refused: "empty label"},
	{raw: "http://example.com../", refused: "empty label"},
	{raw: "http://-a.example/", refused: "'-'"},
	{raw: "http://a-.example/", refused: "'-'"},
	{raw: "http://ex!ample.com/", refused: "a name may hold"},
	{raw: "http://" + strings.Repeat("a", 64) + ".example/", refused: "longer than 63"},
	{raw: "http://" + strings.Repeat("a.", 127) + "example/", refused: "longer than 253"},
	{raw: "http://example.com/" + strings.Repeat("a", maxURLLen), refused: "the limit is"},

	// IDN: converted to punycode, checked by the simple rule.
	{raw: "http://ex\u0430mple.com/", want: "http://xn--exmple-4nf.com/"}, // Cyrillic а
	{raw: "http://B\u00fccher.example/", want: "http://xn--bcher-kva.example/"},
	{raw: "http://\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444/", want: "http://xn--e1afmkfd.xn--p1ai/"},
	{raw: "http://\u4f8b\u5b50.example/", want: "http://xn--fsqu00a.example/"},
	{raw: "http://xn--bcher-kva.example/", want: "http://xn--bcher-kva.example/"},
	{raw: "http://XN--BCHER-KVA.example/", want: "http://xn--bcher-kva.example/"},
	{raw: "http://xn--exmple-4nf.com/", want: "http://xn--exmple-4nf.com/"},
	{raw: "http://xn--abc-.example/", refused: "not valid punycode"}, // decodes to plain ASCII
	{raw: "http://xn--99999999999.example/", refused: "not valid punycode"},
	{raw: "http://xn--.example/", refused: "not valid punycode"},
	{raw: "http://xn--Bcher-kva.example/", want: "http://xn--bcher-kva.example/"},
	{raw: "http://xn--ls8h.example/", refused: "not valid punycode"}, // an emoji, not a letter
	{raw: "http://e\u0301xample.com/", refused: "not a letter"},      // combining mark (no NFC)
	{raw: "http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/", refused: "full-width"},
	{raw: "http://\uff11\uff12\uff17.0.0.1/", refused: "ambiguous"},
	{raw: "http://\uff11\uff12\uff17.example/", refused: "full-width"},
	{raw: "http://example\u3002com/", refused: "not a letter"}, // ideographic full stop
	{raw: "http://\u0661\u0662\u0663.example/", refused: "not a letter"},
	{raw: "http://\u2665.example/", refused: "not a letter"},
	{raw: "http://ex\u0430mple_.com/", refused: "'_'"},
	{raw: "http://\u0130stanbul.example/", refused: "lower-cases to ASCII"},
	{raw: "http://\u212aelvin.example/", refused: "lower-cases to ASCII"}, // Kelvin sign

	// Letters the rule above lets through and idna.Registration refuses:
	// UTS #46 would map them to other letters, they are not in NFC, or the
	// label breaks the hyphen or Bidi rules.
	{raw: "http://\u00aa.example/", refused: "not a valid international name"},               // ª, mapped to "a"
	{raw: "http://\u017fecure.example/", refused: "not a valid international name"},          // ſ, mapped to "s"
	{raw: "http://\U0001d41a\U0001d41b.example/", refused: "not a valid international name"}, // mathematical bold "ab"
	{raw: "http://\u0958.example/", refused: "not a valid international name"},               // not NFC
	{raw: "http://ab--\u00fc.example/", refused: "not a valid international name"},           // "--" in places 3-4
	{raw: "http://a\u05e9b.example/", refused: "not a valid international name"},             // Latin and Hebrew in one label
	{raw: "http://xn--abc\u00e9-x.example/", refused: "not a valid international name"},      // not punycode, and no second xn-- prefix
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, tc := range checkURLCases {
		t.Run(tc.raw, func(t *testing.T) {
			t.Parallel()
			u, err := CheckURL(tc.raw)
			if tc.refused != "" {
				if err == nil {
					t.Fatalf("CheckURL(%q) = %s, want a refusal containing %q", tc.raw, u, tc.refused)
				}
				if !errors.Is(err, ErrRefused) {
					t.Errorf("CheckURL(%q) error %v does not match ErrRefused", tc.raw, err)
				}
				if !strings.Contains(err.Error(), tc.refused) || !strings.HasPrefix(err.Error(), "http_get: ") {
					t.Errorf("CheckURL(%q) error = %q, want it to contain %q", tc.raw, err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckURL(%q) = %v, want %s", tc.raw, err, tc.want)
			}
			if got := u.String(); got != tc.want {
				t.Errorf("CheckURL(%q) = %s, want %s", tc.raw, got, tc.want)
			}
			again, err := CheckURL(u.String())
			if err != nil || again.String() != u.String() {
				t.Errorf("CheckURL is not idempotent on %s: %v, %v", u, again, err)
			}
		})
	}
}

func TestPunycodeVectors(t *testing.T) {
	t.Parallel()
	// RFC 3492 section 7.1 samples (lower-cased) and a few IDN names: the
	// raw conversion of idna.Punycode, and toASCIILabel, which gives the same
	// A-label, or refuses with the words in refused.
	for _, tc := range []struct{ u, a, refused string }{
		{"\u0644\u064a\u0647\u0645\u0627\u0628\u062a\u0643\u0644\u0645\u0648\u0634\u0639\u0631\u0628\u064a\u061f", "egbpdaj6bu4bxfgehfvwxn", "U+061F"}, // ends in a question mark
		{"\u4ed6\u4eec\u4e3a\u4ec0\u4e48\u4e0d\u8bf4\u4e2d\u6587", "ihqwcrb4cv8a8dqg056pqjye", ""},
		{"\u043f\u043e\u0447\u0435\u043c\u0443\u0436\u0435\u043e\u043d\u0438\u043d\u0435\u0433\u043e\u0432\u043e\u0440\u044f\u0442\u043f\u043e\u0440\u0443\u0441\u0441\u043a\u0438", "b1abfaaepdrnnbgefbadotcwatmq2g4l", ""},
		{"3\u5e74b\u7d44\u91d1\u516b\u5148\u751f", "3b-ww4c5e180e575a65lsy2b", ""},
		{"b\u00fccher", "bcher-kva", ""},
		{"m\u00fcnchen", "mnchen-3ya", ""},
		{"stra\u00dfe", "strae-oqa", ""},
		{"ex\u0430mple", "exmple-4nf", ""},
	} {
		a, err := idna.Punycode.ToASCII(tc.u)
		if err != nil || a != "xn--"+tc.a {
			t.Errorf("idna.Punycode.ToASCII(%q) = %q, %v; want xn--%s", tc.u, a, err, tc.a)
		}
		u, err := idna.Punycode.ToUnicode("xn--" + tc.a)
		if err != nil || u != tc.u {
			t.Errorf("idna.Punycode.ToUnicode(xn--%s) = %q, %v; want %q", tc.a, u, err, tc.u)
		}
		got, err := toASCIILabel(tc.u)
		if tc.refused == "" && (err != nil || got != "xn--"+tc.a) {
			t.Errorf("toASCIILabel(%q) = %q, %v; want xn--%s", tc.u, got, err, tc.a)
		}
		if tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)) {
			t.Errorf("toASCIILabel(%q) = %q, %v; want a refusal containing %q", tc.u, got, err, tc.refused)
		}
	}
	for _, bad := range []string{"-", "a-", "99999999999", "abc\u00e9-x", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "!"} {
		if a, err := toASCIILabel("xn--" + bad); err == nil {
			t.Errorf("toASCIILabel(xn--%s) = %q, want an error", bad, a)
		}
	}
}
