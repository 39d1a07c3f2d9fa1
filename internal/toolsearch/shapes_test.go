package toolsearch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShapeTerms(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"make caf%C3%A9%20menu readable", []string{"url", "percent", "decode"}},
		{"got =C3=A9 and =3D all over", []string{"quoted", "printable", "decode"}},
		{"does it match 3610a686?", []string{"crc32", "hash"}},
		{"d41d8cd98f00b204e9800998ecf8427e", []string{"md5", "hash"}},
		{"what's XLII as a number", []string{"roman", "numeral"}},
		{"inside eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.abc?", []string{"jwt", "token"}},
		{`what is \u00e9`, []string{"unicode", "escape"}},
		{"xn--caf-dma.com", []string{"punycode"}},
		{"Tom &amp; Jerry &#39;s", []string{"html", "entities"}},
		// Not pasted values: a percentage, a date, a word in capitals, an
		// ampersand, a short hex word, an improper numeral.
		{"18% of 20261201, DIM it & match, add cafe, IIII, CV", nil},
	} {
		var got []string
		shapeTerms(c.in, func(w string) { got = append(got, w) })
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("shapeTerms(%q) (-want +got):\n%s", c.in, diff)
		}
	}
}
