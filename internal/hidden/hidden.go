// Package hidden recognises the characters that can hide or disguise text
// from a human reader: control and format characters, zero-width and
// bidirectional controls, invisible fillers, separators, private use.
// Everything shelldon shows the owner for review (self-coded tools,
// skills) refuses them.
package hidden

import "unicode"

// Describe names r when it may hide text from a reader, or returns "" for
// an ordinary character. Newline and tab are ordinary.
func Describe(r rune) string {
	if r == '\n' || r == '\t' {
		return ""
	}
	if name, ok := names[r]; ok {
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

// IsVariationSelector reports whether r selects a variant of the character
// before it (as in emoji presentation).
func IsVariationSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF
}

// names are the characters most used to hide text, by name.
var names = map[rune]string{
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
