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
