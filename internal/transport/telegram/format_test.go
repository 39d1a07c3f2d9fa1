package telegram

import (
	"fmt"
	"html"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

// wellFormed checks a message the way Telegram's HTML parser would: only
// the tags shelldon writes, balanced, and every & the start of an entity.
func wellFormed(t *testing.T, msg string) {
	t.Helper()
	var open []string
	for i := 0; i < len(msg); i++ {
		switch msg[i] {
		case '&':
			rest := msg[i:]
			if !strings.HasPrefix(rest, "&amp;") && !strings.HasPrefix(rest, "&lt;") && !strings.HasPrefix(rest, "&gt;") {
				t.Fatalf("a broken entity at %d: %q", i, rest[:min(len(rest), 10)])
			}
		case '>':
			t.Fatalf("a bare > at %d", i)
		case '<':
			end := strings.IndexByte(msg[i:], '>')
			if end < 0 {
				t.Fatalf("an unclosed tag at %d", i)
			}
			tag := msg[i+1 : i+end]
			switch tag {
			case "pre", "b", "code":
				open = append(open, tag)
			case "/pre", "/b", "/code":
				if len(open) == 0 || open[len(open)-1] != tag[1:] {
					t.Fatalf("</%s> closes nothing", tag[1:])
				}
				open = open[:len(open)-1]
			default:
				t.Fatalf("an unexpected tag <%s>", tag)
			}
			i += end
		}
	}
	if len(open) > 0 {
		t.Fatalf("unclosed tags %q", open)
	}
}

func TestFormatText(t *testing.T) {
	t.Parallel()
	code := strings.Repeat("if a < b && c > d { x = \"&amp;\" }\n", 300)
	long := strings.Repeat("&<>", 3000) // one line, all entities
	text := "Here is the code:\n```go\n" + code + "```\nand a long line:\n" + long + "\n\n\nbye 👋"
	parts := formatText(text, maxMessage)
	if len(parts) < 4 {
		t.Fatalf("%d parts", len(parts))
	}
	var plain []string
	pres := 0
	for _, p := range parts {
		if n := utf16Len(p); n > maxMessage {
			t.Errorf("a part is %d units", n)
		}
		wellFormed(t, p)
		pres += strings.Count(p, "<pre>")
		plain = append(plain, html.UnescapeString(strings.NewReplacer("<pre>", "", "</pre>", "").Replace(p)))
	}
	if pres < 2 {
		t.Errorf("the code block was not reopened in the next part (%d <pre>)", pres)
	}
	got := strings.Join(plain, "\n")
	for _, want := range []string{"Here is the code:", "x = \"&amp;\"", long, "bye 👋"} {
		if !strings.Contains(strings.ReplaceAll(got, "\n", ""), strings.ReplaceAll(want, "\n", "")) {
			t.Errorf("lost %q", want[:min(len(want), 30)])
		}
	}
	if strings.Count(got, "if a < b") != 300 {
		t.Errorf("code lines: %d", strings.Count(got, "if a < b"))
	}
}

func TestFormatTextEdges(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"":                       nil,
		"\n\n  \n":               nil,
		"a\r\nb":                 {"a\nb"},
		"```\n```":               nil,
		"x\n```\nunclosed <pre>": {"x\n<pre>unclosed &lt;pre&gt;</pre>"},
		"bad \xff utf8":          {`bad \xff utf8`},
	} {
		got := formatText(in, maxMessage)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("formatText(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestFitEscaped(t *testing.T) {
	t.Parallel()
	got := fitEscaped(strings.Repeat("&", 100), 23)
	if got != strings.Repeat("&amp;", 4)+"…" {
		t.Errorf("got %q", got)
	}
	if got := fitEscaped("a<b", 100); got != "a&lt;b" {
		t.Errorf("got %q", got)
	}
	// Cut: each of the three markup characters as its entity, the rest as is.
	if got := fitEscaped("<a>"+strings.Repeat("é", 50), 12); got != "&lt;a&gt;éé…" {
		t.Errorf("got %q", got)
	}
}

func TestParseCommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, cmd, args string
		ok            bool
	}{
		{"/start", "start", "", true},
		{"/Help@Shelldon_Bot now", "help", "now", true},
		{"/tools@other_bot", "", "", true},
		{"/etc/passwd is what?", "", "", false},
		{"hello /start", "", "", false},
		{"/", "", "", false},
		{"/cancel\nplease", "cancel", "please", true},
	} {
		cmd, args, ok := parseCommand(c.in, "shelldon_bot")
		if cmd != c.cmd || args != c.args || ok != c.ok {
			t.Errorf("parseCommand(%q) = %q %q %v", c.in, cmd, args, ok)
		}
	}
}

func TestStripParked(t *testing.T) {
	t.Parallel()
	a := core.ApprovalView{ID: "abc123", Summary: "Tool: git\n  args: status"}
	reply := "This needs your approval (request abc123, expires 15:04):\nTool: git\n  args: status\n\nNote from shelldon: something."
	if got := stripParked(reply, []core.ApprovalView{a}); got != "Note from shelldon: something." {
		t.Errorf("got %q", got)
	}
	// A reply that does not carry the rendering is left alone.
	if got := stripParked("just words", []core.ApprovalView{a}); got != "just words" {
		t.Errorf("got %q", got)
	}
}

func TestCallbackDataLimit(t *testing.T) {
	t.Parallel()
	if _, err := callbackData(approvePrefix, strings.Repeat("x", 61)); err != nil {
		t.Errorf("64 bytes refused: %v", err)
	}
	if _, err := callbackData(approvePrefix, strings.Repeat("x", 62)); err == nil {
		t.Error("65 bytes accepted")
	}
	id, approve, ok := parseCallback("dn:abc")
	if id != "abc" || approve || !ok {
		t.Errorf("parseCallback = %q %v %v", id, approve, ok)
	}
	if _, _, ok := parseCallback("ap:"); ok {
		t.Error("an empty id accepted")
	}
}

func TestCardWithoutButtonsForLongID(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := core.ApprovalView{ID: strings.Repeat("z", 80), Tool: "git", Summary: "Tool: git", ExpiresAt: time.Now().Add(time.Hour)}
	h.bot.sendCard(t.Context(), owner, a)
	got := h.api.sent("shelldon approvals approve")
	if len(got) != 1 || len(got[0].buttons()) != 0 {
		t.Errorf("cards = %+v", got)
	}
}

// TestFormatTextCuts: a text longer than a message is cut at a paragraph,
// else at a line, else at a space; inside a word only when the word does
// not fit in a message; never inside a character. The messages read back
// as the text, the cuts' whitespace aside.
func TestFormatTextCuts(t *testing.T) {
	t.Parallel()
	emoji := strings.Repeat("😀", 20) // 4 bytes, 2 UTF-16 units each
	for _, c := range []struct {
		name  string
		text  string
		limit int // the cut pieces of a line hold limit-12 units
		want  []string
	}{
		{"at a space", "the quick brown fox jumps over the lazy dog", 30,
			[]string{"the quick brown", "fox jumps over the lazy dog"}},
		{"at the space the cut falls on", "fox jumps over the lazy dog", 20,
			[]string{"fox jumps over the", "lazy dog"}},
		{"pieces that share a message keep their space", "aaaa bbbb cccc dddd eeee", 30,
			[]string{"aaaa bbbb cccc dddd eeee"}},
		{"at a run of spaces", "aaaa bbbb cccc   dddd   eeee ffff gggg", 30,
			[]string{"aaaa bbbb cccc", "dddd   eeee ffff gggg"}},
		{"inside a word only when it does not fit", "see: " + strings.Repeat("x", 25) + " end", 30,
			[]string{"see: " + strings.Repeat("x", 13), strings.Repeat("x", 12) + " end"}},
		{"a word that fits moves whole", "short " + strings.Repeat("y", 10) + " end and more", 24,
			[]string{"short " + strings.Repeat("y", 10), "end and more"}},
		{"at a line", "line one is here\nline two is here\nline three", 40,
			[]string{"line one is here\nline two is here", "line three"}},
		{"at a paragraph", strings.Repeat("a", 20) + "\nbbbbb\n\n" + strings.Repeat("c", 10) + "\n" + strings.Repeat("d", 10), 40,
			[]string{strings.Repeat("a", 20) + "\nbbbbb", strings.Repeat("c", 10) + "\n" + strings.Repeat("d", 10)}},
		{"not at a paragraph that leaves the message under half full", "aaaa\n\n" + strings.Repeat("b", 20) + "\n" + strings.Repeat("c", 10) + "\n" + strings.Repeat("d", 10), 40,
			[]string{"aaaa\n\n" + strings.Repeat("b", 20) + "\n" + strings.Repeat("c", 10), strings.Repeat("d", 10)}},
		{"surrogate pairs whole", emoji, 30,
			[]string{strings.Repeat("😀", 9), strings.Repeat("😀", 9) + strings.Repeat("😀", 2)}},
		{"surrogate pairs whole at an odd bound", "a" + emoji, 31,
			[]string{"a" + strings.Repeat("😀", 9), strings.Repeat("😀", 10) + "😀"}},
		{"entities counted escaped, never cut", "x " + strings.Repeat("&", 8), 30,
			[]string{"x " + strings.Repeat("&amp;", 3), strings.Repeat("&amp;", 5)}},
		{"a code block cut at a line is closed and reopened", "```\n" + strings.Repeat("c", 10) + "\n" + strings.Repeat("d", 10) + "\n```", 30,
			[]string{"<pre>" + strings.Repeat("c", 10) + "</pre>", "<pre>" + strings.Repeat("d", 10) + "</pre>"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := formatText(c.text, c.limit)
			if !slices.Equal(got, c.want) {
				t.Errorf("formatText(%q, %d) =\n%q\nwant\n%q", c.text, c.limit, got, c.want)
			}
			var read strings.Builder
			for _, m := range got {
				if n := utf16Len(m); n > c.limit {
					t.Errorf("a message of %d units: %q", n, m)
				}
				if !utf8.ValidString(m) {
					t.Errorf("a character was cut: %q", m)
				}
				wellFormed(t, m)
				read.WriteString(html.UnescapeString(strings.NewReplacer("<pre>", "", "</pre>", "").Replace(m)))
			}
			squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
			if squash(read.String()) != squash(c.text) && !strings.Contains(c.text, "```") {
				t.Errorf("the messages read %q; the text was %q", read.String(), c.text)
			}
		})
	}
}

// TestFormatTextLongReply: a reply of long paragraphs at Telegram's real
// limit is cut at spaces, never inside a word.
func TestFormatTextLongReply(t *testing.T) {
	t.Parallel()
	words := strings.Fields(strings.Repeat("Sphinx of black quartz, judge my vow; ünïcödé 👋 & <co> ", 200))
	para := strings.Join(words, " ")
	parts := formatText(para+"\n\n"+para, maxMessage)
	if len(parts) < 4 {
		t.Fatalf("%d parts", len(parts))
	}
	known := map[string]bool{}
	for _, w := range words {
		known[w] = true
	}
	for _, p := range parts {
		if n := utf16Len(p); n > maxMessage {
			t.Errorf("a part of %d units", n)
		}
		for _, w := range strings.Fields(html.UnescapeString(p)) {
			if !known[w] {
				t.Errorf("a word was cut: %q", w)
			}
		}
	}
}

// FuzzFormatText: whatever the model writes, every message fits, is
// well-formed HTML and valid UTF-8, and together they read as the text
// (escaped by inert.Text, without its code fences), whitespace aside.
func FuzzFormatText(f *testing.F) {
	f.Add("the quick brown fox\n\njumps over the lazy dog", uint8(10))
	f.Add("```go\nif a < b && c > d {}\n```\n"+strings.Repeat("😀é&", 30), uint8(3))
	f.Add("a\tb  c\r\nd\u200b\xff "+strings.Repeat("x", 300), uint8(0))
	f.Fuzz(func(t *testing.T, text string, n uint8) {
		limit := 20 + int(n)
		got := formatText(text, limit)
		var read strings.Builder
		for _, m := range got {
			if u := utf16Len(m); u > limit {
				t.Fatalf("a message of %d units, limit %d: %q", u, limit, m)
			}
			if !utf8.ValidString(m) {
				t.Fatalf("a character was cut: %q", m)
			}
			wellFormed(t, m)
			read.WriteString(html.UnescapeString(strings.NewReplacer("<pre>", "", "</pre>", "").Replace(m)))
		}
		var want strings.Builder
		for _, line := range strings.Split(inert.Text(strings.ReplaceAll(text, "\r\n", "\n")), "\n") {
			if !isFence(line) {
				want.WriteString(line)
			}
		}
		squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if squash(read.String()) != squash(want.String()) {
			t.Fatalf("the messages read\n%q\nthe text was\n%q", read.String(), want.String())
		}
	})
}
