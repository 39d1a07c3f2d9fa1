package web

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPageText: text is escaped for an element's content and a quoted
// attribute, whatever it holds.
func TestPageText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                          "plain",
		`<script>alert(1)</script>`:      "&lt;script&gt;alert(1)&lt;/script&gt;",
		`"><img src=x onerror=alert(1)>`: "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;",
		`' onmouseover='x`:               "&#39; onmouseover=&#39;x",
		"a & b":                          "a &amp; b",
		"&amp;":                          "&amp;amp;",
		"plain\tand\nlines":              "plain\tand\nlines",
		"é ü 日本":                         "é ü 日本",
		// What reorders or hides text shows as an escape (internal/inert).
		"a\u202eb\u2066c\u200bd":   `a\u202eb\u2066c\u200bd`,
		"bell\x07 del\x7f nul\x00": `bell\x07 del\x7f nul\x00`,
		"tag\U000E0041 bom\ufeff":  `tag\U000e0041 bom\ufeff`,
		"bad \xff byte":            `bad \xff byte`,
		"":                         "",
	} {
		var p page
		if got := p.t(in).String(); got != want {
			t.Errorf("t(%q) = %q, want %q", in, got, want)
		}
	}
	var p page
	p.button("/x?a=\"b", "c\"srf", "<b>", "primary", "from", `"chat`)
	want := `<form method="post" action="/x?a=&#34;b"><input type="hidden" name="csrf" value="c&#34;srf"><input type="hidden" name="from" value="&#34;chat"><button type="submit" class="primary">&lt;b&gt;</button></form>`
	if p.String() != want {
		t.Errorf("button:\n%s\nwant\n%s", p.String(), want)
	}
}

// TestMarkupOnlyFromConstants: the package's code never turns a value into
// markup: a conversion to markup takes a string literal only, so nothing
// from outside can reach the page unescaped.
func TestMarkupOnlyFromConstants(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	conv := regexp.MustCompile(`markup\(\s*([^)]*)\)`)
	literal := regexp.MustCompile("^(\"([^\"\\\\]|\\\\.)*\"|`[^`]*`)$")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range conv.FindAllStringSubmatch(string(b), -1) {
			if !literal.MatchString(strings.TrimSpace(m[1])) {
				t.Errorf("%s: %s turns a value into markup", f, m[0])
			}
		}
		if strings.Contains(string(b), `"html/template"`) || strings.Contains(string(b), `"text/template"`) {
			t.Errorf("%s imports a template package", f)
		}
	}
}
