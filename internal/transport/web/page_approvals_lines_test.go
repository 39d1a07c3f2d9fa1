package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

// TestShortLines: a summary bounded for the list keeps its lines (a
// newline, never the two characters \n) and escapes everything else that
// could act or hide, as inert.Short does; it stops at the bound of
// characters or of lines with "…".
func TestShortLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"one line", "Tool: run_shell", 160, "Tool: run_shell"},
		{"lines kept", "Tool: run_shell\n  command: ls", 160, "Tool: run_shell\n  command: ls"},
		{"hostile line", "Tool: x\n  a: <b>\u202e\t\\\r\x1b[2J\u200b\xff", 160,
			"Tool: x\n  a: <b>\\u202e\\t\\\\\\r\\x1b[2J\\u200b\\xff"},
		{"crlf", "one\r\ntwo", 160, "one\\r\ntwo"},
		{"cut in a line", "Tool: x\n  command: " + strings.Repeat("a", 50), 30, "Tool: x\n  command: aaaaaaaaaa…"},
		{"cut at a line's end", "abcd\nefgh\nij", 9, "abcd\nefg…"},
		{"newline counts", "abcd\nefgh\nij", 10, "abcd\nefgh…"},
		{"fits exactly", "abcd\nefgh\nij", 12, "abcd\nefgh\nij"},
		{"line bound", "1\n2\n3\n4\n5\n6", 160, "1\n2\n3\n4…"},
		{"four lines fit", "1\n2\n3\n4", 160, "1\n2\n3\n4"},
		{"escape not cut", "ab\n\u202e\u202e", 6, "ab…"},
		{"invalid bytes", "\xff\xfe\nx", 160, "\\xff\\xfe\nx"},
		{"no newline left dangling", "abc\n" + strings.Repeat("d", 20), 5, "abc…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := shortLines(tc.in, tc.max, 4)
			if got != tc.want {
				t.Errorf("shortLines(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
			if raw := inert.Raw(got, false); raw != "" {
				t.Errorf("shortLines(%q) holds %s", tc.in, raw)
			}
			if strings.Contains(got, "\t") || strings.Contains(got, "\r") {
				t.Errorf("shortLines(%q) = %q holds a tab or a carriage return", tc.in, got)
			}
			if n := len([]rune(got)); n > tc.max {
				t.Errorf("shortLines(%q, %d) is %d characters", tc.in, tc.max, n)
			}
		})
	}
}

// TestDecidedLatelyShowsLines: a closed request whose summary has several
// lines is listed with them as lines (newlines in an element the style
// sheet shows them in), not as a literal \n, and its hostile text is inert.
func TestDecidedLatelyShowsLines(t *testing.T) {
	t.Parallel()
	f, ac := newApprovalsFixture(t)
	now := f.now()
	ac.recent = append([]core.DecidedApproval{{ApprovalView: core.ApprovalView{ID: "lines1", Kind: core.KindToolCall, Chat: "web",
		Tool: "run_shell", Summary: "Tool: run_shell\n  command: " + hostileScript + "\n  cwd: " + hostileBidi,
		State: "approved", CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(time.Hour)},
		DecidedAt: now.Add(-time.Minute), DecidedBy: "web"}}, ac.recent...)
	cookie := f.login(t, nil)
	resp, body := f.req(t, "GET", "/approvals", map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 {
		t.Fatalf("approvals: %d", resp.StatusCode)
	}
	want := `<td class="lines"><a href="/approvals/lines1">Tool: run_shell` + "\n" +
		`  command: &lt;script&gt;alert(1)&lt;/script&gt;` + "\n" + `  cwd: \u202eexe.txt</a></td>`
	if !strings.Contains(body, want) {
		t.Errorf("the page lacks the summary as lines %q:\n%s", want, body)
	}
	if strings.Contains(body, `run_shell\n`) {
		t.Error(`the page shows a summary's newline as \n`)
	}
	noScript(t, "approvals", body)

	// The style sheet shows the cell's newlines as line breaks.
	r, err := http.Get(f.srv.URL + "/static/app.css")
	if err != nil {
		t.Fatal(err)
	}
	css, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !strings.Contains(string(css), "td.lines { white-space: pre-wrap;") {
		t.Error("app.css does not keep the lines of td.lines")
	}
}
