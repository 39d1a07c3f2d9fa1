package netguard

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// FuzzCheckURL: never panics; an accepted URL is http(s) with an ASCII host,
// no user info and no fragment, is not a blocked literal, and is a fixed
// point (checking its string form gives it back).
func FuzzCheckURL(f *testing.F) {
	for _, tc := range checkURLCases {
		f.Add(tc.raw)
	}
	f.Add("http://[::ffff:169.254.169.254]:80/")
	f.Add("https://xn--80ak6aa92e.com/")
	f.Add("http://example.com:8080/%zz")
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := CheckURL(raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "http_get: ") {
				t.Fatalf("error without the http_get prefix: %v", err)
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("accepted scheme %q from %q", u.Scheme, raw)
		}
		if u.User != nil || u.Fragment != "" || u.Opaque != "" {
			t.Fatalf("accepted %q with user info, fragment or opaque part: %#v", raw, u)
		}
		host := u.Hostname()
		if host == "" || strings.ContainsAny(host, "@%\\ /?#") {
			t.Fatalf("accepted %q with host %q", raw, host)
		}
		for i := 0; i < len(host); i++ {
			if host[i] >= utf8.RuneSelf || host[i] <= ' ' {
				t.Fatalf("accepted %q with a non-ASCII host %q", raw, host)
			}
		}
		if a, err := netip.ParseAddr(host); err == nil {
			if _, blocked := Blocked(a); blocked {
				t.Fatalf("accepted %q, a blocked literal", raw)
			}
		}
		s := u.String()
		again, err := CheckURL(s)
		if err != nil || again.String() != s {
			t.Fatalf("not a fixed point: %q -> %q -> %v, %v", raw, s, again, err)
		}
		if p, err := url.Parse(s); err != nil || p.Hostname() != host {
			t.Fatalf("%q reparses to a different host: %v, %v", s, p, err)
		}
	})
}

// FuzzPunycode: toASCIILabel never panics; a label it accepts becomes a
// lower-case ASCII label that it maps to itself, and an xn-- result decodes
// back to the lower-cased input.
func FuzzPunycode(f *testing.F) {
	for _, s := range []string{"b\u00fccher", "ex\u0430mple", "\u4f8b\u5b50", "", "abc", "3b-ww4c5e180e575a65lsy2b", "xn--bcher-kva", "xn--ls8h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := toASCIILabel(s)
		if err != nil {
			return
		}
		for i := 0; i < len(a); i++ {
			if a[i] >= utf8.RuneSelf || 'A' <= a[i] && a[i] <= 'Z' {
				t.Fatalf("toASCIILabel(%q) = %q, not lower-case ASCII", s, a)
			}
		}
		if again, err := toASCIILabel(a); err != nil || again != a {
			t.Fatalf("toASCIILabel is not idempotent: %q -> %q -> %q, %v", s, a, again, err)
		}
		if !strings.HasPrefix(a, "xn--") || strings.HasPrefix(strings.ToLower(s), "xn--") {
			return
		}
		if u, err := idna.Punycode.ToUnicode(a); err != nil || u != strings.ToLower(s) {
			t.Fatalf("punycode round trip: %q -> %q -> %q, %v", s, a, u, err)
		}
	})
}
