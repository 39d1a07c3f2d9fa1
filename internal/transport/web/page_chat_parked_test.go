package web

import (
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
)

// parkedFixture is a signed-in chat page over a real core and store, whose
// model the test scripts and whose one tool, launch, is RISKY.
type parkedFixture struct {
	*sessionFixture
	core   *core.Core
	model  *coretest.Model
	risky  *coretest.Risky
	cookie string
	csrf   string
}

func newParkedFixture(t *testing.T) *parkedFixture {
	t.Helper()
	pf := &parkedFixture{model: &coretest.Model{}, risky: coretest.NewRisky("launch")}
	c, err := core.New(core.Options{Store: coretest.Store(t), Model: pf.model, Logger: slog.New(slog.DiscardHandler),
		Spawner: &coretest.Spawner{Build: coretest.Builder(pf.risky.Tools)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	pf.core = c
	pf.sessionFixture = newSessionFixtureWith(t, func(o *Options) { o.Chat, o.Approvals, o.Audit, o.Conversations = c, c, c, c })
	pf.cookie = pf.login(t, nil)
	pf.csrf = pf.sessionFixture.csrf(t, pf.cookie)
	return pf
}

// chat reads the chat page.
func (pf *parkedFixture) chat(t *testing.T) string {
	t.Helper()
	resp, body := pf.req(t, "GET", "/chat", map[string]string{"s": pf.cookie}, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /chat: %d %s", resp.StatusCode, body)
	}
	return body
}

// post sends form to path as the signed-in page would and returns the
// response's status, where it redirects and its body.
func (pf *parkedFixture) post(t *testing.T, path string, form url.Values, header map[string]string) (int, string, string) {
	t.Helper()
	h := map[string]string{"s": pf.cookie, "Origin": pf.origin(), "Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range header {
		h[k] = v
	}
	form.Set("csrf", pf.csrf)
	resp, body := pf.req(t, "POST", path, h, form.Encode())
	return resp.StatusCode, resp.Header.Get("Location"), body
}

// pendingID is the one request waiting in the chat "web".
func (pf *parkedFixture) pendingID(t *testing.T) string {
	t.Helper()
	list, err := pf.core.Approvals(t.Context())
	if err != nil || len(list) != 1 || list[0].Chat != uiChat {
		t.Fatalf("requests waiting: %+v, %v; want one of the chat %q", list, err, uiChat)
	}
	return list[0].ID
}

// asText is s as the page writes text (page.t).
func asText(s string) string {
	var p page
	p.t(s)
	return p.String()
}

// TestChatShowsTheParkedTurn: against a real core, a message whose turn
// parks on a RISKY call shows on the chat page, marked as waiting, beside
// its request's card, after the no-JavaScript post and its redirect and
// after the streamed post (the script reloads the page); once the owner
// decides, it shows exactly once, from the history, and the card is gone.
// The owner's hostile text stays inert throughout.
func TestChatShowsTheParkedTurn(t *testing.T) {
	t.Parallel()
	const waiting = `<div class="msg you waiting">`
	for _, tc := range []struct {
		name    string
		text    string
		stream  bool
		approve bool
	}{
		{"form, approved", "please <script>alert(1)</script> launch \"><img src=x onerror=alert(1)>\n\u202eevil line two", false, true},
		{"stream, denied", "stream <b>bold</b> &amp; \u200bhidden\x1b[2J \x7f", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pf := newParkedFixture(t)
			pf.model.Script(coretest.Reply("", coretest.Call("c1", "launch", `{"target":"notes/todo.txt"}`)))
			if tc.stream {
				status, _, body := pf.post(t, "/chat/stream", url.Values{"text": {tc.text}}, map[string]string{csrfHeader: pf.csrf})
				if status != 200 || !strings.Contains(body, "event: done") {
					t.Fatalf("stream: %d %s", status, body)
				}
			} else {
				status, to, body := pf.post(t, "/chat", url.Values{"text": {tc.text}}, nil)
				if status != 303 || to != "/chat" {
					t.Fatalf("post: %d %s %s", status, to, body)
				}
			}
			id := pf.pendingID(t)
			shown := asText(tc.text)
			body := pf.chat(t)
			if n := strings.Count(body, shown); n != 1 {
				t.Errorf("while the turn waits, the owner's message shows %d times; want once:\n%s", n, body)
			}
			if n := strings.Count(body, waiting); n != 1 || !strings.Contains(body, "Waiting for your decision below") {
				t.Errorf("the message is not marked as waiting (%d):\n%s", n, body)
			}
			if i, j := strings.Index(body, shown), strings.Index(body, waiting); i < j {
				t.Errorf("the message is not the waiting one")
			}
			for _, want := range []string{`action="/approvals/` + id + `/approve"`, `action="/approvals/` + id + `/deny"`, "Tool: launch"} {
				if !strings.Contains(body, want) {
					t.Errorf("the page lacks the request's card: %q", want)
				}
			}
			noRaw(t, body)

			pf.model.Script(coretest.Results)
			decision := "/deny"
			if tc.approve {
				decision = "/approve"
			}
			status, to, resp := pf.post(t, "/approvals/"+id+decision, url.Values{"from": {"chat"}}, nil)
			if status != 303 || !strings.HasPrefix(to, "/chat") {
				t.Fatalf("decide: %d %s %s", status, to, resp)
			}
			body = pf.chat(t)
			if n := strings.Count(body, shown); n != 1 {
				t.Errorf("after the decision, the owner's message shows %d times; want once:\n%s", n, body)
			}
			if strings.Contains(body, waiting) || strings.Contains(body, "/approvals/"+id+"/approve") {
				t.Errorf("after the decision the message is still waiting, or its card shown:\n%s", body)
			}
			if !strings.Contains(body, "RESULTS: launch") {
				t.Errorf("the continued turn's reply is not shown:\n%s", body)
			}
			noRaw(t, body)
			if runs := pf.risky.Runs(); tc.approve != (len(runs) == 1) {
				t.Errorf("launch ran %d times (approved: %v)", len(runs), tc.approve)
			}
		})
	}
}

// noRaw fails when the chat page holds a hostile string of
// TestChatShowsTheParkedTurn as markup or a character that acts.
func noRaw(t *testing.T, body string) {
	t.Helper()
	for _, bad := range []string{"<script>alert", "<img src", "<b>bold", "\u202e", "\u200b", "\x1b", "\x7f"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page holds %q raw", bad)
		}
	}
	if strings.Count(body, "<script") != 1 { // the page's own chat.js
		t.Errorf("the page holds %d scripts", strings.Count(body, "<script"))
	}
}
