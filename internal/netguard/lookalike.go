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
// ASCII one replaced by it (every letter of the label in confusables, or
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
			w := fmt.Sprintf("U+%04X %s %c looks like Latin %c", r, scriptOf(r), r, confusables[r])
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
		l, ok := confusables[r]
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

// confusables maps lower-case letters (names are lower-cased before they
// get here) to the ASCII letter they can be taken for.
var confusables = map[rune]rune{
	// Cyrillic.
	'\u0430': 'a', '\u0435': 'e', '\u043e': 'o', '\u0440': 'p', '\u0441': 'c',
	'\u0443': 'y', '\u0445': 'x', '\u0455': 's', '\u0456': 'i', '\u0458': 'j',
	'\u0501': 'd', '\u04bb': 'h', '\u04cf': 'l', '\u051b': 'q', '\u051d': 'w',
	'\u04af': 'y', '\u0475': 'v',
	// Greek.
	'\u03b1': 'a', '\u03bf': 'o', '\u03c1': 'p', '\u03bd': 'v', '\u03b9': 'i',
	'\u03b3': 'y', '\u03f2': 'c', '\u03f3': 'j',
	// Armenian.
	'\u0585': 'o', '\u057d': 'u', '\u0570': 'h', '\u0578': 'n', '\u0581': 'g',
	'\u0566': 'q',
	// Latin letters that are not ASCII.
	'\u0131': 'i', '\u0251': 'a', '\u0261': 'g', '\u0269': 'i', '\u0237': 'j',
	'\u028f': 'y', '\u1d0f': 'o', '\u1d04': 'c', '\u1d20': 'v', '\u1d21': 'w',
	'\u1d22': 'z',
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
