package netguard

import "testing"

// confusable holds every look-alike of the map it replaced, and no other
// letter.
func TestConfusable(t *testing.T) {
	want := map[rune]rune{
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
	for r, l := range want {
		if got, ok := confusable(r); !ok || got != l {
			t.Errorf("confusable(%U) = %q, %v; want %q", r, got, ok, l)
		}
	}
	n := 0
	for r := rune(0); r <= 0x1fff; r++ {
		if _, ok := confusable(r); ok {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("confusable holds %d letters, want %d", n, len(want))
	}
}
