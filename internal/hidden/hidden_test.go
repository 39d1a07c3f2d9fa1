package hidden

import "testing"

func TestDescribe(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{'\u200b', '\u202e', '\u2066', '\ufeff', '\u00ad', '\x00', '\x1b', '\u2028', '\ue000', '\u3164'} {
		if Describe(r) == "" {
			t.Errorf("U+%04X not recognised", r)
		}
	}
	for _, r := range []rune{'a', ' ', '\n', '\t', 'é', '日', '🐢'} {
		if d := Describe(r); d != "" {
			t.Errorf("U+%04X called %q", r, d)
		}
	}
	if !IsVariationSelector('\ufe0f') || IsVariationSelector('a') {
		t.Error("variation selectors")
	}
}

// TestNames pins each named character's description (name is a switch
// rather than a map built at package init; this is the map it replaced).
func TestNames(t *testing.T) {
	t.Parallel()
	want := map[rune]string{
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
	for r, w := range want {
		if got := Describe(r); got != w {
			t.Errorf("Describe(U+%04X) = %q, want %q", r, got, w)
		}
	}
}
