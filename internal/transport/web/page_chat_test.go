package web

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
)

// chatCore is a fakeCore that keeps the chat's messages, streams the
// reply in pieces, reports a tool's run, and parks a request when asked.
type chatCore struct {
	fakeCore
	msgs    []contracts.Message
	pending []core.ApprovalView
}

func (c *chatCore) Send(ctx context.Context, chat, text string, ev core.Events) (core.Outcome, error) {
	c.sent = append(c.sent, chat+":"+text)
	reply := "You said: " + text
	if ev.Tool != nil {
		ev.Tool(contracts.ToolEvent{Phase: "start", Tool: "get_time"})
		ev.Tool(contracts.ToolEvent{Phase: "end", Tool: "get_time", OK: true})
	}
	if ev.Text != nil {
		ev.Text(reply[:5])
		ev.Text(reply[5:])
	}
	c.msgs = append(c.msgs, contracts.Message{Role: contracts.RoleUser, Text: text},
		contracts.Message{Role: contracts.RoleAssistant, Text: reply, ToolCalls: []contracts.ToolCall{{ID: "1", Name: "get_time"}}})
	out := core.Outcome{Turn: int64(len(c.msgs) / 2), Reply: reply}
	if strings.Contains(text, "park") {
		a := core.ApprovalView{ID: "abc123", Chat: chat, Summary: "Tool: run_shell\n  command: <b>rm</b> -rf ~"}
		c.pending = append(c.pending, a)
		out.Approvals = []core.ApprovalView{a}
	}
	return out, nil
}

func (c *chatCore) Approvals(context.Context) ([]core.ApprovalView, error) { return c.pending, nil }

func (c *chatCore) Conversation(_ context.Context, chat string, _ int) ([]contracts.Message, error) {
	if chat != uiChat {
		return nil, nil
	}
	return c.msgs, nil
}

// Parked: the fake keeps every turn in its history at once (the real
// core's parked turns are TestChatShowsTheParkedTurn's).
func (c *chatCore) Parked(context.Context, string) ([]core.ParkedTurn, error) { return nil, nil }

func newChatFixture(t *testing.T) (*sessionFixture, *chatCore) {
	t.Helper()
	cc := &chatCore{}
	f := newSessionFixtureWith(t, func(o *Options) { o.Chat, o.Approvals, o.Audit, o.Conversations = cc, cc, cc, cc })
	return f, cc
}

// TestChatPageWithoutJavaScript: the form posts, the turn runs in the chat
// "web", and the page comes back with the conversation, the tools used,
// and the request the turn parked, with its buttons; model-written text
// is inert.
func TestChatPageWithoutJavaScript(t *testing.T) {
	f, cc := newChatFixture(t)
	if resp, _ := f.req(t, "GET", "/chat", nil, ""); resp.StatusCode != 303 || resp.Header.Get("Location") != "/login" {
		t.Fatalf("chat signed out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookie := f.login(t, nil)
	csrf := f.csrf(t, cookie)
	form := map[string]string{"s": cookie, "Origin": f.origin(), "Content-Type": "application/x-www-form-urlencoded"}
	hostile := `<script>alert(1)</script> park "><img src=x onerror=alert(1)>` + " \u202eevil"
	resp, body := f.req(t, "POST", "/chat", form, url.Values{"csrf": {csrf}, "text": {hostile}}.Encode())
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/chat" {
		t.Fatalf("post: %d %s %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if len(cc.sent) != 1 || cc.sent[0] != "web:"+hostile {
		t.Fatalf("sent %q", cc.sent)
	}
	resp, body = f.req(t, "GET", "/chat", map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 {
		t.Fatalf("chat: %d", resp.StatusCode)
	}
	for _, want := range []string{
		"You said: &lt;script&gt;alert(1)&lt;/script&gt;", "<code>get_time</code>",
		"Tool: run_shell\n  command: &lt;b&gt;rm&lt;/b&gt; -rf ~",
		`action="/approvals/abc123/approve"`, `action="/approvals/abc123/deny"`, `href="/approvals/abc123"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if !strings.Contains(body, `\u202eevil`) {
		t.Error("the page does not show the bidi override as an escape")
	}
	for _, bad := range []string{"<script>alert", "<img src=x", "<b>rm</b>", "\u202e"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page holds %q raw", bad)
		}
	}
	// A long message (over the login form's cap) posts like a short one.
	long := strings.Repeat("long message ", 1000)
	if resp, body := f.req(t, "POST", "/chat", form, url.Values{"csrf": {csrf}, "text": {long}}.Encode()); resp.StatusCode != 303 {
		t.Fatalf("a %d-byte message: %d %s", len(long), resp.StatusCode, body)
	}
	cc.sent = cc.sent[:1]
	// Refusals: no CSRF token, another origin, an empty message.
	if resp, _ := f.req(t, "POST", "/chat", form, url.Values{"text": {"hi"}}.Encode()); resp.StatusCode != 403 {
		t.Errorf("post without the CSRF token: %d", resp.StatusCode)
	}
	other := map[string]string{"s": cookie, "Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}
	if resp, _ := f.req(t, "POST", "/chat", other, url.Values{"csrf": {csrf}, "text": {"hi"}}.Encode()); resp.StatusCode != 403 {
		t.Errorf("post from another origin: %d", resp.StatusCode)
	}
	if resp, body := f.req(t, "POST", "/chat", form, url.Values{"csrf": {csrf}, "text": {"  "}}.Encode()); resp.StatusCode != 400 || !strings.Contains(body, "Write a message first.") {
		t.Errorf("empty message: %d", resp.StatusCode)
	}
	if len(cc.sent) != 1 {
		t.Errorf("a refused post ran a turn: %q", cc.sent)
	}
}

// TestChatStream: /chat/stream answers with the turn's events as
// Server-Sent Events: the tool's start and end, the reply in pieces, and
// the outcome with the parked request.
func TestChatStream(t *testing.T) {
	f, _ := newChatFixture(t)
	cookie := f.login(t, nil)
	csrf := f.csrf(t, cookie)
	h := map[string]string{"s": cookie, "Origin": f.origin(), "Content-Type": "application/x-www-form-urlencoded", csrfHeader: csrf}
	resp, body := f.req(t, "POST", "/chat/stream", h, url.Values{"text": {"please park it \u202e"}}.Encode())
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	want := "event: tool\ndata: {\"ok\":false,\"phase\":\"start\",\"tool\":\"get_time\"}\n\n" +
		"event: tool\ndata: {\"ok\":true,\"phase\":\"end\",\"tool\":\"get_time\"}\n\n" +
		"event: text\ndata: \"You s\"\n\n" +
		"event: text\ndata: \"aid: please park it \\\\u202e\"\n\n" +
		"event: done\ndata: {\"approvals\":[{\"id\":\"abc123\",\"summary\":\"Tool: run_shell\\n  command: \\u003cb\\u003erm\\u003c/b\\u003e -rf ~\"}],\"reply\":\"You said: please park it \\\\u202e\",\"stopped\":\"\"}\n\n"
	if body != want {
		t.Errorf("stream:\n%s\nwant:\n%s", body, want)
	}
	delete(h, csrfHeader)
	if resp, _ := f.req(t, "POST", "/chat/stream", h, url.Values{"text": {"hi"}}.Encode()); resp.StatusCode != 403 {
		t.Errorf("stream without the CSRF token: %d", resp.StatusCode)
	}
}
