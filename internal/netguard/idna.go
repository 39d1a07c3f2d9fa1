package netguard

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Host names: netguard's character rule, then golang.org/x/net/idna's
// Registration profile for the IDNA 2008 checks and the punycode. Each rule
// only refuses: a name is dialed as written (lower-cased), never mapped to
// another name, so the host the owner approves is the host fetched.
//
//   - ASCII labels are lower-cased and may hold a-z, 0-9, '-' and '_', not
//     starting or ending with '-'.
//   - A label with non-ASCII characters is lower-cased (strings.ToLower) and
//     may then hold only ASCII a-z, 0-9, '-' and Unicode letters
//     (unicode.IsLetter): no combining marks, non-ASCII digits, symbols
//     (emoji, which x/net/idna lets through), punctuation, dots other than
//     '.', or full-width forms (U+FF00-U+FFEF), nor a character that Go
//     lower-cases to ASCII (U+0130 İ, the Kelvin sign). UTS #46 lookup
//     (idna.Lookup, what browsers do) would instead map full-width letters
//     to ASCII (a full-width "localhost" becomes localhost), U+3002 to '.',
//     the Kelvin sign to 'k', and compose "e" + U+0301 into "é": a guard
//     refuses rather than fetch a name other than the one written. Refusing
//     combining marks also refuses scripts that need them, such as
//     Devanagari: write those in their xn-- form.
//   - The label must then pass idna.Registration, which maps nothing and
//     refuses what UTS #46 would map to something else (U+00AA ª to "a",
//     U+017F ſ to "s", mathematical letters, letters not in NFC), "--" in
//     the third and fourth places, and labels that break the Bidi rule
//     (RFC 5893). It is encoded as xn--... (RFC 3492 punycode).
//   - An xn-- label must decode under the same profile to a label the rule
//     above accepts, and re-encode to itself, so each name has one spelling;
//     one that decodes to plain ASCII (xn--abc-) is refused.
//   - One trailing dot is dropped; a name is at most 253 bytes, a label 63.
//
// Mixed-script labels (Latin "ex" + Cyrillic "а" + "mple") are not refused:
// they become punycode (xn--exmple-4nf.com), which is what the owner sees.

const (
	maxNameLen  = 253
	maxLabelLen = 63
)

// normaliseName returns host as it will be dialed, or a refusal naming raw.
func normaliseName(host, raw string) (string, error) {
	if host == "" {
		return "", refusef("%s has no host", q(raw))
	}
	host = strings.TrimSuffix(host, ".")
	if len(host) > maxNameLen*4 {
		return "", refusef("the host in %s is too long", q(raw))
	}
	labels := strings.Split(host, ".")
	if endsInNumber(labels[len(labels)-1]) {
		return normaliseIPv4(host, raw)
	}
	for i, label := range labels {
		a, err := toASCIILabel(label)
		if err != nil {
			return "", refusef("the host in %s is not a valid name: %v", q(raw), err)
		}
		labels[i] = a
	}
	out := strings.Join(labels, ".")
	if len(out) > maxNameLen {
		return "", refusef("the host in %s is longer than %d characters", q(raw), maxNameLen)
	}
	return out, nil
}

// endsInNumber reports whether a browser would parse a host with this last
// label as an IPv4 address (WHATWG URL "ends in a number"): all ASCII
// digits, or 0x followed by hex digits.
func endsInNumber(label string) bool {
	if label == "" {
		return false
	}
	if strings.HasPrefix(label, "0x") || strings.HasPrefix(label, "0X") {
		for _, c := range label[2:] {
			if !isHex(c) {
				return false
			}
		}
		return true
	}
	for _, c := range label {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isHex(c rune) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// normaliseIPv4 accepts only a.b.c.d with each part plain decimal 0-255
// without leading zeros; every other numeric form is refused, never
// reinterpreted.
func normaliseIPv4(host, raw string) (string, error) {
	parts := strings.Split(host, ".")
	ok := len(parts) == 4
	for _, p := range parts {
		if p == "" || len(p) > 3 || (len(p) > 1 && p[0] == '0') {
			ok = false
		}
		n := 0
		for _, c := range p {
			if c < '0' || c > '9' {
				ok = false
				break
			}
			n = n*10 + int(c-'0')
		}
		if n > 255 {
			ok = false
		}
	}
	if !ok {
		return "", refusef("the host in %s is an ambiguous way to write an IPv4 address (decimal, octal, hex and shortened forms are refused); write it as four decimal numbers such as 1.2.3.4", q(raw))
	}
	return host, nil
}

var (
	errEmptyLabel = errors.New("it has an empty label (two dots in a row, or a leading dot)")
	errLongLabel  = errors.New("a label is longer than 63 characters")
	errHyphen     = errors.New("a label starts or ends with '-'")
)

// toASCIILabel maps one label to the form it is dialed in.
func toASCIILabel(label string) (string, error) {
	if label == "" {
		return "", errEmptyLabel
	}
	if len(label) > maxLabelLen*4 {
		return "", errLongLabel
	}
	ascii := true
	for i := 0; i < len(label); i++ {
		if label[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	var out string
	if ascii {
		out = strings.ToLower(label)
		for _, c := range out {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", errors.New("it contains " + quoteRune(c) + "; a name may hold letters, digits, '-' and '_'")
			}
		}
		if strings.HasPrefix(out, "xn--") {
			if err := checkALabel(out); err != nil {
				return "", err
			}
		}
	} else {
		for _, r := range label {
			if r >= utf8.RuneSelf && unicode.ToLower(r) < utf8.RuneSelf {
				// İ and the Kelvin sign: browsers fold them differently.
				return "", errors.New("it contains " + quoteRune(r) + ", which lower-cases to ASCII; write the name in plain ASCII")
			}
		}
		u := strings.ToLower(label)
		if err := checkULabel(u); err != nil {
			return "", err
		}
		a, err := idna.Registration.ToASCII(u)
		if err != nil {
			return "", fmt.Errorf("it is not a valid international name (%v)", err)
		}
		out = a
	}
	if len(out) > maxLabelLen {
		return "", errLongLabel
	}
	if strings.HasPrefix(out, "-") || strings.HasSuffix(out, "-") {
		return "", errHyphen
	}
	return out, nil
}

// checkULabel applies the character rule to a lower-cased Unicode label.
func checkULabel(u string) error {
	if strings.HasPrefix(u, "-") || strings.HasSuffix(u, "-") {
		return errHyphen
	}
	for _, r := range u {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r == '-':
		case r < utf8.RuneSelf:
			return errors.New("it contains " + quoteRune(r) + "; an international name may hold letters, digits and '-'")
		case 0xFF00 <= r && r <= 0xFFEF:
			return errors.New("it contains the full-width or half-width form " + quoteRune(r) + "; write plain characters")
		case !unicode.IsLetter(r):
			return errors.New("it contains " + quoteRune(r) + ", which is not a letter; use the xn-- form if the name really needs it")
		}
	}
	return nil
}

// checkALabel requires an xn-- label to be canonical punycode of a label
// checkULabel and idna.Registration accept.
func checkALabel(a string) error {
	u, err := idna.Registration.ToUnicode(a)
	if err == nil && u == strings.ToLower(u) && checkULabel(u) == nil {
		if again, err := idna.Registration.ToASCII(u); err == nil && again == a {
			return nil
		}
	}
	return errors.New("the label " + a + " is not valid punycode")
}

// quoteRune names a character for an error message.
func quoteRune(r rune) string {
	if unicode.IsPrint(r) && !unicode.Is(unicode.Cf, r) {
		return fmt.Sprintf("%q (U+%04X)", r, r)
	}
	return fmt.Sprintf("U+%04X", r)
}
