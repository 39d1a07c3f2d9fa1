package telegram

import (
	"fmt"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core"
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
