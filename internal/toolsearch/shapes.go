package toolsearch

import (
	"strings"
)

// shapeTerms calls emit with the words that describe the values pasted
// among query's whitespace-separated fields, each word once. A request
// often pastes the thing to work on, and its shape names it when no word
// does: "caf%C3%A9" is percent-escaped, "=C3=A9" quoted-printable, a run
// of 64 hex digits a SHA-256 digest, "XLII" a Roman numeral. The forms
// are the standard ones of common encodings, and the words those a tool
// for them would use; the query gains them at synonymWeight. Tools' own
// text is not read this way: a description says what it handles in words.
func shapeTerms(query string, emit func(string)) {
	var seen []string
	once := func(words ...string) {
		for _, w := range words {
			if !contains(seen, w) {
				seen = append(seen, w)
				emit(w)
			}
		}
	}
	for i := 0; i < len(query); {
		// The field query[i:j], and whether it has a mark that a pasted
		// value has and a word has not: most fields are words, and cost
		// only this scan.
		j, marked := i, false
		for ; j < len(query) && !isSpace(query[j]); j++ {
			switch c := query[j]; {
			case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '%', c == '=', c == '&', c == '\\', c == '-':
				marked = true
			}
		}
		f := query[i:j]
		i = j + 1
		if !marked {
			continue
		}
		if entity(f) {
			once("html", "entities")
			continue
		}
		f = trimPunct(f)
		if len(f) < 3 {
			continue
		}
		switch {
		case escapes(f, '%', false):
			once("url", "percent", "decode")
		case escapes(f, '=', true):
			once("quoted", "printable", "decode")
		case strings.HasPrefix(f, "eyJ") && strings.Count(f, ".") == 2:
			once("jwt", "token")
		case strings.HasPrefix(f, `\u`) && isHex(strings.TrimPrefix(f, `\u`)[:min(4, len(f)-2)]):
			once("unicode", "escape")
		case len(f) > 4 && strings.EqualFold(f[:4], "xn--"):
			once("punycode")
		case isHex(f) && hasDigit(f) && strings.ContainsAny(f, "abcdefABCDEF"):
			if alg, ok := digestByLength(len(f)); ok {
				once(alg, "hash")
			}
		case isRoman(f):
			once("roman", "numeral")
		}
	}
}

// trimPunct cuts the quotes, brackets and sentence punctuation around s.
func trimPunct(s string) string {
	punct := func(c byte) bool {
		switch c {
		case '"', '\'', '(', ')', '[', ']', '{', '}', '<', '>', ',', ';', ':', '!', '?':
			return true
		}
		return false
	}
	for len(s) > 0 && punct(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && punct(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// escapes tells whether s holds an escape: mark then two hex digits, at
// least one a digit (upper: the letters uppercase, as quoted-printable
// writes them).
func escapes(s string, mark byte, upper bool) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] != mark {
			continue
		}
		h := s[i+1 : i+3]
		if isHex(h) && hasDigit(h) && (!upper || strings.ToUpper(h) == h) {
			return true
		}
	}
	return false
}

// entity tells whether s holds an HTML character reference: "&amp;",
// "&#39;", "&#x27;".
func entity(s string) bool {
	for {
		i := strings.IndexByte(s, '&')
		if i < 0 {
			return false
		}
		s = s[i+1:]
		j := strings.IndexByte(s, ';')
		if j < 0 {
			return false
		}
		name := strings.TrimPrefix(strings.TrimPrefix(s[:j], "#"), "x")
		if j >= 2 && j <= 8 && strings.IndexFunc(name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) < 0 && name != "" {
			return true
		}
	}
}

// digestByLength is the hash function whose digest has n hex digits.
func digestByLength(n int) (string, bool) {
	switch n {
	case 8:
		return "crc32", true
	case 32:
		return "md5", true
	case 40:
		return "sha1", true
	case 64:
		return "sha256", true
	case 128:
		return "sha512", true
	}
	return "", false
}

func isHex(s string) bool {
	for i := range len(s) {
		c := s[i] | 0x20
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// isRoman tells whether s is a Roman numeral of at least three letters
// written in capitals in the standard form ("XLII", not "IIII" or
// "Mix"): shorter ones ("MD", "CV") are more often abbreviations.
func isRoman(s string) bool {
	if len(s) < 3 || len(s) > 15 {
		return false
	}
	for i := range len(s) {
		if romanValue(s[i]) == 0 {
			return false
		}
	}
	n := 0
	for i := range len(s) {
		v := romanValue(s[i])
		if i+1 < len(s) && romanValue(s[i+1]) > v {
			n -= v
		} else {
			n += v
		}
	}
	return n > 0 && n < 4000 && toRoman(n) == s
}

func romanValue(c byte) int {
	switch c {
	case 'I':
		return 1
	case 'V':
		return 5
	case 'X':
		return 10
	case 'L':
		return 50
	case 'C':
		return 100
	case 'D':
		return 500
	case 'M':
		return 1000
	}
	return 0
}

// toRoman writes n (1 to 3999) as a standard Roman numeral.
func toRoman(n int) string {
	var b strings.Builder
	for _, p := range []struct {
		v int
		s string
	}{{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"}, {100, "C"}, {90, "XC"}, {50, "L"}, {40, "XL"}, {10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"}} {
		for n >= p.v {
			b.WriteString(p.s)
			n -= p.v
		}
	}
	return b.String()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
