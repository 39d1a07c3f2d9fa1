package approvals

import (
	"context"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/inert"
)

func TestEscapeHostile(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ in, want string }{
		"plain":                 {"rm notes.txt", "rm notes.txt"},
		"newline splits a line": {"ls\nrm -rf /", `ls\nrm -rf /`},
		"carriage return":       {"safe\rrm -rf ~", `safe\rrm -rf ~`},
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
		"C1 control":            {"a\u0085b", `a\u0085b`},
		"invalid utf-8":         {"a\xffb", `a\xffb`},
		"unicode text stays":    {"café 日本", "café 日本"},
	}
	for name, tc := range cases {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("%s: Escape(%q) = %q, want %q", name, tc.in, got, tc.want)
		}
	}
}

func TestBoundShowsHeadTailAndWhatIsHidden(t *testing.T) {
	t.Parallel()
	long := "HEAD" + strings.Repeat("x", 10000) + "TAIL"
	got := Bound(long, 300)
	if !strings.HasPrefix(got, "HEAD") || !strings.HasSuffix(got, "TAIL") || !strings.Contains(got, "[9,708 bytes not shown: bytes 151-9,858 of 10,008]") || len(got) > 400 {
		t.Fatalf("Bound = %q", got)
	}
	if Bound("short", 300) != "short" {
		t.Error("a short value changed")
	}
	// Never cuts a multi-byte character in half.
	multi := strings.Repeat("é", 1000)
	if b := Bound(multi, 301); !strings.Contains(b, "bytes not shown") || strings.ContainsRune(b, '\uFFFD') {
		t.Errorf("Bound cut a rune: %q", b[:20])
	}
}

func TestRenderArgs(t *testing.T) {
	t.Parallel()
	got := RenderArgs(`{"path":"a\rb","content":"` + strings.Repeat("z", 5000) + `","n":3}`)
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("one line per one-line argument, got %q", got)
	}
	if !strings.HasPrefix(lines[0], "  content: zzz") || !strings.Contains(lines[0], "[3,000 bytes not shown: bytes 1,001-4,000 of 5,000; "+fullHint("ID")+"]") {
		t.Errorf("content line %q", lines[0])
	}
	if lines[1] != "  n: 3" || lines[2] != `  path: a\rb` {
		t.Errorf("lines %q", lines[1:])
	}
	if got := RenderArgs("not json\x1b"); !strings.Contains(got, `not json\x1b`) {
		t.Errorf("non-JSON arguments: %q", got)
	}
	// A multi-line value keeps its lines, behind a gutter no line can forge.
	got = RenderArgs(`{"content":"line one\n  path: /etc/passwd\n\u202eend"}`)
	want := "  content: (3 lines, 35 bytes)\n    | line one\n    |   path: /etc/passwd\n    | \\u202eend\n"
	if got != want {
		t.Errorf("multi-line:\n%s\nwant\n%s", got, want)
	}
	// Laid out without a bound, every byte shows.
	big := strings.Repeat("a", 3000) + "MIDDLE" + strings.Repeat("b", 3000)
	args := `{"command":"` + big + `"}`
	if short := RenderArgs(args); strings.Contains(short, "MIDDLE") {
		t.Error("the card shows the middle of a 6 KiB value; the bound does nothing")
	}
	if full := inert.Args(args, 0, ""); full != "  command: "+big+"\n" {
		t.Errorf("inert.Args without a bound cut the value: %d bytes", len(full))
	}
}

// TestRenderNamesAndWords: a tool name the model made up and its words are
// escaped on the card.
func TestRenderNamesAndWords(t *testing.T) {
	t.Parallel()
	p := contracts.Pending{Call: contracts.ToolCall{Name: "run_shell\x1b[2J", Arguments: `{"command":"ls"}`},
		ModelText: "ok\x1b]0;pwned\x07"}
	got := render(context.Background(), "abc", p, func(context.Context, contracts.ToolCall) []string { return []string{"fact\u202e"} })
	if strings.ContainsAny(got, "\x1b\x07\u202e") {
		t.Fatalf("raw controls on the card: %q", got)
	}
	for _, want := range []string{`Tool: "run_shell\x1b[2J"`, "  command: ls", `fact\u202e`, `The model's words (not shelldon's): ok\x1b]0;pwned\x07`} {
		if !strings.Contains(got, want) {
			t.Errorf("card lacks %q:\n%s", want, got)
		}
	}
}
