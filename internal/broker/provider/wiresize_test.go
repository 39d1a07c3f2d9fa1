package provider

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestWireSize: the caps count what a string costs as JSON on its way to
// the worker (no HTML escaping), so control characters, six bytes each once
// escaped, count six.
func TestWireSize(t *testing.T) {
	encoded := func(s string) int {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		return b.Len() - 3 // the quotes and the newline
	}
	cases := []string{"", "plain", "\x01\x02\x1f", "a\"b\\c", "\n\r\t\b\f", "<&>", "café 日本", "\xff\xfe", "\u2028\u2029", "\x7f", "\U0001F600"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, rng.IntN(64))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := WireSize(s), encoded(s); got != want {
			t.Errorf("WireSize(%q) = %d, want %d", s, got, want)
		}
	}
	if WireSize("\x01") != 6 {
		t.Error("a control character does not count six")
	}
}
