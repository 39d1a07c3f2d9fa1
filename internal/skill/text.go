package skill

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// checkText refuses invalid UTF-8, control characters other than \n and
// \t, and characters that hide or reorder text: zero-width, bidirectional
// and other invisible format characters, line and paragraph separators,
// private-use characters and runs of variation selectors. When firstLine
// is above 0 the error starts with "line L:C: ", counted from firstLine.
func checkText(s string, firstLine int) error {
	line, col := firstLine, 1
	prev := rune(0)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		where := ""
		if firstLine > 0 {
			where = fmt.Sprintf("line %d:%d: ", line, col)
		}
		if r == utf8.RuneError && size == 1 {
			return fmt.Errorf("%sinvalid UTF-8 (byte 0x%02x); a skill must be UTF-8 text", where, s[i])
		}
		what := hidden(r)
		if what == "" && isVariationSelector(r) && (prev < 0x80 || isVariationSelector(prev) || r > 0xFE0F) {
			// One selector after a non-ASCII character is how emoji are
			// written; runs of them can carry hidden text.
			what = "the variation selector"
		}
		if what != "" {
			return fmt.Errorf("%s%s U+%04X is not allowed in a skill; delete it", where, what, r)
		}
		prev = r
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return nil
}

// hiddenNames names the characters most used to hide text from a reader.
var hiddenNames = map[rune]string{
	0x00AD: "the soft hyphen (invisible)",
	0x034F: "the combining grapheme joiner (invisible)",
	0x061C: "the bidirectional control ARABIC LETTER MARK",
	0x115F: "the invisible filler HANGUL CHOSEONG FILLER",
	0x1160: "the invisible filler HANGUL JUNGSEONG FILLER",
	0x180E: "the invisible MONGOLIAN VOWEL SEPARATOR",
	0x200B: "the zero-width character ZERO WIDTH SPACE",
	0x200C: "the zero-width character ZERO WIDTH NON-JOINER",
	0x200D: "the zero-width character ZERO WIDTH JOINER",
	0x200E: "the bidirectional control LEFT-TO-RIGHT MARK",
	0x200F: "the bidirectional control RIGHT-TO-LEFT MARK",
	0x202A: "the bidirectional control LEFT-TO-RIGHT EMBEDDING",
	0x202B: "the bidirectional control RIGHT-TO-LEFT EMBEDDING",
	0x202C: "the bidirectional control POP DIRECTIONAL FORMATTING",
	0x202D: "the bidirectional control LEFT-TO-RIGHT OVERRIDE",
	0x202E: "the bidirectional control RIGHT-TO-LEFT OVERRIDE",
	0x2060: "the zero-width character WORD JOINER",
	0x2066: "the bidirectional control LEFT-TO-RIGHT ISOLATE",
	0x2067: "the bidirectional control RIGHT-TO-LEFT ISOLATE",
	0x2068: "the bidirectional control FIRST STRONG ISOLATE",
	0x2069: "the bidirectional control POP DIRECTIONAL ISOLATE",
	0x3164: "the invisible filler HANGUL FILLER",
	0xFEFF: "the zero-width character ZERO WIDTH NO-BREAK SPACE (byte-order mark)",
	0xFFA0: "the invisible filler HALFWIDTH HANGUL FILLER",
}

// hidden describes r when a skill may not hold it, or returns "".
func hidden(r rune) string {
	if r == '\n' || r == '\t' {
		return ""
	}
	if name, ok := hiddenNames[r]; ok {
		return name
	}
	switch {
	case unicode.Is(unicode.Cc, r):
		return "the control character"
	case unicode.Is(unicode.Cf, r):
		return "the invisible format character"
	case unicode.In(r, unicode.Zl, unicode.Zp):
		return "the line or paragraph separator"
	case unicode.Is(unicode.Co, r):
		return "the private-use character"
	}
	return ""
}

func isVariationSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF
}
