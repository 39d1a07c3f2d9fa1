package netguard

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// What the approval card tells the owner about the Unicode form of a name:
// which scripts a label mixes, which letters look like Latin ones, and
// whether it holds right-to-left letters. These warnings only inform: the
// name is fetched as the owner approved it either way (idna.go decides
// what is refused).

// decodeALabel returns the Unicode form of an xn-- label.
func decodeALabel(label string) (string, error) {
	u, err := idna.Registration.ToUnicode(label)
	if err != nil {
		return "", fmt.Errorf("not valid punycode (%v)", err)
	}
	return u, nil
}

// scriptOf names the script of r, or "" for characters every script uses
// (digits, '-') and combining marks that take their base's script.
func scriptOf(r rune) string {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		return "Latin"
	case r < 0x80:
		return ""
	}
	for _, name := range []string{"Latin", "Cyrillic", "Greek", "Armenian"} {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	for name, table := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(table, r) {
			return name
		}
	}
	return ""
}

// cjkScripts are the mixes of scripts that one language writes together
// (UTS #39, "Highly Restrictive"): they are not called mixed.
var cjkScripts = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"}, // Japanese
	{"Latin", "Han", "Bopomofo"},             // Chinese
	{"Latin", "Han", "Hangul"},               // Korean
}

// mixedScripts describes the scripts of a Unicode label that mixes them,
// naming the letters of each ("Cyrillic а; Latin p, l, e"), or returns "".
func mixedScripts(label string) string {
	var scripts []string
	letters := map[string][]rune{}
	for _, r := range label {
		s := scriptOf(r)
		if s == "" {
			continue
		}
		if _, ok := letters[s]; !ok {
			scripts = append(scripts, s)
		}
		if !slices.Contains(letters[s], r) {
			letters[s] = append(letters[s], r)
		}
	}
	if len(scripts) < 2 {
		return ""
	}
	for _, allowed := range cjkScripts {
		all := true
		for _, s := range scripts {
			all = all && slices.Contains(allowed, s)
		}
		if all {
			return ""
		}
	}
	parts := make([]string, len(scripts))
	for i, s := range scripts {
		shown := make([]string, len(letters[s]))
		for j, r := range letters[s] {
			shown[j] = string(r)
		}
		parts[i] = s + " " + strings.Join(shown, ", ")
	}
	return strings.Join(parts, "; ")
}

// lookalike returns name with each label that could be taken for an
// ASCII one replaced by it (every letter of the label confusable, or
// ASCII), and says which letters it replaced ("U+0430 Cyrillic а looks like
// Latin a"). It returns name itself when no label can. The table covers the
// common look-alikes of Cyrillic, Greek, Armenian and Latin extensions, not
// all of Unicode's (UTS #39's confusables.txt has thousands): the warnings
// that a label mixes scripts and that the name is international are the
// general signal.
func lookalike(name string) (string, string) {
	labels := strings.Split(name, ".")
	var which []string
	for i, label := range labels {
		ascii, replaced, ok := asciiLookalike(label)
		if !ok {
			continue
		}
		labels[i] = ascii
		for _, r := range replaced {
			l, _ := confusable(r)
			w := fmt.Sprintf("U+%04X %s %c looks like Latin %c", r, scriptOf(r), r, l)
			if !slices.Contains(which, w) {
				which = append(which, w)
			}
		}
	}
	if len(which) == 0 {
		return name, ""
	}
	return strings.Join(labels, "."), strings.Join(which, ", ")
}

// asciiLookalike returns the ASCII label that label can be taken for and
// the letters it replaced, or false when label is ASCII or holds a letter
// with no ASCII look-alike.
func asciiLookalike(label string) (string, []rune, bool) {
	var b strings.Builder
	var replaced []rune
	for _, r := range label {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		l, ok := confusable(r)
		if !ok {
			return "", nil, false
		}
		b.WriteRune(l)
		if !slices.Contains(replaced, r) {
			replaced = append(replaced, r)
		}
	}
	return b.String(), replaced, len(replaced) > 0
}

// confusable returns the ASCII letter the lower-case letter r (names are
// lower-cased before they get here) can be taken for. A switch rather than
// a map literal, which every process of the binary would build at package
// init, the idle daemon included (package lazy).
func confusable(r rune) (rune, bool) {
	switch r {
	// Cyrillic.
	case '\u0430':
		return 'a', true
	case '\u0435':
		return 'e', true
	case '\u043e':
		return 'o', true
	case '\u0440':
		return 'p', true
	case '\u0441':
		return 'c', true
	case '\u0443', '\u04af':
		return 'y', true
	case '\u0445':
		return 'x', true
	case '\u0455':
		return 's', true
	case '\u0456':
		return 'i', true
	case '\u0458':
		return 'j', true
	case '\u0501':
		return 'd', true
	case '\u04bb':
		return 'h', true
	case '\u04cf':
		return 'l', true
	case '\u051b':
		return 'q', true
	case '\u051d':
		return 'w', true
	case '\u0475':
		return 'v', true
	// Greek.
	case '\u03b1':
		return 'a', true
	case '\u03bf':
		return 'o', true
	case '\u03c1':
		return 'p', true
	case '\u03bd':
		return 'v', true
	case '\u03b9':
		return 'i', true
	case '\u03b3':
		return 'y', true
	case '\u03f2':
		return 'c', true
	case '\u03f3':
		return 'j', true
	// Armenian.
	case '\u0585':
		return 'o', true
	case '\u057d':
		return 'u', true
	case '\u0570':
		return 'h', true
	case '\u0578':
		return 'n', true
	case '\u0581':
		return 'g', true
	case '\u0566':
		return 'q', true
	// Latin letters that are not ASCII.
	case '\u0131', '\u0269':
		return 'i', true
	case '\u0251':
		return 'a', true
	case '\u0261':
		return 'g', true
	case '\u0237':
		return 'j', true
	case '\u028f':
		return 'y', true
	case '\u1d0f':
		return 'o', true
	case '\u1d04':
		return 'c', true
	case '\u1d20':
		return 'v', true
	case '\u1d21':
		return 'w', true
	case '\u1d22':
		return 'z', true
	}
	return 0, false
}

// rightToLeft names the right-to-left scripts whose letters name holds
// ("Hebrew", "Arabic and Hebrew"), or returns "".
func rightToLeft(name string) string {
	var found []string
	for _, r := range name {
		s := scriptOf(r)
		if slices.Contains(rtlScripts, s) && !slices.Contains(found, s) {
			found = append(found, s)
		}
	}
	return strings.Join(found, " and ")
}

// rtlScripts are the scripts written right to left that IDNA allows.
var rtlScripts = []string{"Arabic", "Hebrew", "Syriac", "Thaana", "Nko", "Samaritan", "Mandaic", "Adlam", "Hanifi_Rohingya", "Yezidi"}
