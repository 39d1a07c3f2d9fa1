package approvals

import (
	"strings"
	"testing"
)

func TestEscapeHostile(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ in, want string }{
		"plain":                 {"rm notes.txt", "rm notes.txt"},
		"newline splits a line": {"ls\nrm -rf /", `ls\nrm -rf /`},
		"carriage return":       {"safe\rrm -rf ~", `safe\x0drm -rf ~`},
		"escape sequence":       {"\x1b[2Jok", `\x1b[2Jok`},
		"right-to-left":         {"cat \u202eftg.exe", `cat \u202eftg.exe`},
		"isolate":               {"\u2066x\u2069", `\u2066x\u2069`},
		"zero width":            {"r\u200bm", `r\u200bm`},
		"zero width joiner":     {"a\u200db", `a\u200db`},
		"word joiner":           {"a\u2060b", `a\u2060b`},
		"bom":                   {"\ufeffls", `\ufeffls`},
		"soft hyphen":           {"pass\u00adwd", `pass\u00adwd`},
		"arabic letter mark":    {"a\u061cb", `a\u061cb`},
		"tab":                   {"a\tb", `a\tb`},
		"backslash kept apart":  {`a\nb`, `a\\nb`},
		"C1 control":            {"a\u0085b", `a\x85b`},
		"invalid utf-8":         {"a\xffb", `a\xffb`},
		"unicode text stays":    {"café 日本", "café 日本"},
	}
	for name, tc := range cases {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("%s: Escape(%q) = %q, want %q", name, tc.in, got, tc.want)
		}
	}
}

func TestBoundShowsHeadTailAndSize(t *testing.T) {
	t.Parallel()
	long := "HEAD" + strings.Repeat("x", 10000) + "TAIL"
	got := Bound(long, 300)
	if !strings.HasPrefix(got, "HEAD") || !strings.HasSuffix(got, "TAIL") || !strings.Contains(got, "10008 bytes in all") || len(got) > 400 {
		t.Fatalf("Bound = %q", got)
	}
	if Bound("short", 300) != "short" {
		t.Error("a short value changed")
	}
	// Never cuts a multi-byte character in half.
	multi := strings.Repeat("é", 1000)
	if b := Bound(multi, 301); !strings.Contains(b, "bytes in all") || strings.ContainsRune(b, '\uFFFD') {
		t.Errorf("Bound cut a rune: %q", b[:20])
	}
}

func TestRenderArgs(t *testing.T) {
	t.Parallel()
	got := RenderArgs(`{"path":"a\nb","content":"` + strings.Repeat("z", 5000) + `","n":3}`)
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("one line per argument, got %q", got)
	}
	if !strings.HasPrefix(lines[0], "  content: zzz") || !strings.Contains(lines[0], "5000 bytes in all") {
		t.Errorf("content line %q", lines[0][:60])
	}
	if lines[1] != "  n: 3" || lines[2] != `  path: a\nb` {
		t.Errorf("lines %q", lines[1:])
	}
	if got := RenderArgs("not json\x1b"); !strings.Contains(got, `not json\x1b`) {
		t.Errorf("non-JSON arguments: %q", got)
	}
}
