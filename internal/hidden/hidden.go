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
	if n, ok := name(r); ok {
		return n
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

// name names the characters most used to hide text. A switch, not a map
// literal: a map is built at package init, by every process of the binary
// (the idle daemon included), whether or not it ever describes a rune.
func name(r rune) (string, bool) {
	switch r {
	case 0x00AD:
		return "the soft hyphen (invisible)", true
	case 0x034F:
		return "the combining grapheme joiner (invisible)", true
	case 0x061C:
		return "the bidirectional control ARABIC LETTER MARK", true
	case 0x115F:
		return "the invisible filler HANGUL CHOSEONG FILLER", true
	case 0x1160:
		return "the invisible filler HANGUL JUNGSEONG FILLER", true
	case 0x180E:
		return "the invisible MONGOLIAN VOWEL SEPARATOR", true
	case 0x200B:
		return "the zero-width character ZERO WIDTH SPACE", true
	case 0x200C:
		return "the zero-width character ZERO WIDTH NON-JOINER", true
	case 0x200D:
		return "the zero-width character ZERO WIDTH JOINER", true
	case 0x200E:
		return "the bidirectional control LEFT-TO-RIGHT MARK", true
	case 0x200F:
		return "the bidirectional control RIGHT-TO-LEFT MARK", true
	case 0x202A:
		return "the bidirectional control LEFT-TO-RIGHT EMBEDDING", true
	case 0x202B:
		return "the bidirectional control RIGHT-TO-LEFT EMBEDDING", true
	case 0x202C:
		return "the bidirectional control POP DIRECTIONAL FORMATTING", true
	case 0x202D:
		return "the bidirectional control LEFT-TO-RIGHT OVERRIDE", true
	case 0x202E:
		return "the bidirectional control RIGHT-TO-LEFT OVERRIDE", true
	case 0x2060:
		return "the zero-width character WORD JOINER", true
	case 0x2066:
		return "the bidirectional control LEFT-TO-RIGHT ISOLATE", true
	case 0x2067:
		return "the bidirectional control RIGHT-TO-LEFT ISOLATE", true
	case 0x2068:
		return "the bidirectional control FIRST STRONG ISOLATE", true
	case 0x2069:
		return "the bidirectional control POP DIRECTIONAL ISOLATE", true
	case 0x3164:
		return "the invisible filler HANGUL FILLER", true
	case 0xFEFF:
		return "the zero-width character ZERO WIDTH NO-BREAK SPACE (byte-order mark)", true
	case 0xFFA0:
		return "the invisible filler HALFWIDTH HANGUL FILLER", true
	}
	return "", false
}
