package web

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core"
)

// The hostile strings a model may put in what the pages show.
const (
	hostileScript = `<script>alert(1)</script>`
	hostileAttr   = `"><img src=x onerror=alert(1)>`
	hostileURL    = `javascript:alert(1)`
	hostileBidi   = "\u202eexe.txt"
)

// apprCore is a fakeCore with requests waiting and requests decided; it
// records each decision.
type apprCore struct {
	fakeCore
	pending []core.ApprovalView
	recent  []core.DecidedApproval
	decided []string
}

func (c *apprCore) Approvals(context.Context) ([]core.ApprovalView, error) { return c.pending, nil }

func (c *apprCore) RecentApprovals(_ context.Context, n int) ([]core.DecidedApproval, error) {
	return c.recent[:min(n, len(c.recent))], nil
}

func (c *apprCore) Approval(ctx context.Context, id string) (core.ApprovalView, error) {
	for _, a := range c.pending {
		if a.ID == id {
			return a, nil
		}
	}
	for _, a := range c.recent {
		if a.ID == id {
			return a.ApprovalView, nil
		}
	}
	return c.fakeCore.Approval(ctx, id)
}

func (c *apprCore) Decide(ctx context.Context, id string, approve bool, by string, ev core.Events) (core.Outcome, error) {
	out, err := c.fakeCore.Decide(ctx, id, approve, by, ev)
	if err == nil {
		c.decided = append(c.decided, id+" "+map[bool]string{true: "approve", false: "deny"}[approve]+" by "+by)
	}
	return out, err
}

func newApprovalsFixture(t *testing.T) (*sessionFixture, *apprCore) {
	t.Helper()
	ac := &apprCore{}
	f := newSessionFixtureWith(t, func(o *Options) { o.Chat, o.Approvals, o.Audit = ac, ac, ac })
	now := f.now()
	ac.pending = []core.ApprovalView{{
		ID: "req1", Kind: core.KindToolCall, Chat: "web", Turn: 4, Tool: "run_shell",
		Arguments: `{"command":"` + hostileScript + `"}`,
		Summary:   "Tool: run_shell\n  command: " + hostileScript + " " + hostileAttr + " " + hostileURL + " " + hostileBidi,
		State:     "pending", CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(30 * time.Minute),
	}}
	ac.recent = []core.DecidedApproval{
		{ApprovalView: core.ApprovalView{ID: "old1", Kind: core.KindToolCall, Chat: "tg:1", Tool: hostileURL,
			Summary: "Tool: " + hostileAttr, State: "denied", CreatedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour)},
			DecidedAt: now.Add(-90 * time.Minute), DecidedBy: "telegram"},
		{ApprovalView: core.ApprovalView{ID: "old2", Kind: core.KindSkill, Chat: "web", Tool: "notes",
			Summary: "Skill: notes", State: "expired", CreatedAt: now.Add(-3 * time.Hour), ExpiresAt: now.Add(-2 * time.Hour)}},
	}
	return f, ac
}

// noScript fails when a page holds a script or a raw hostile string.
func noScript(t *testing.T, page, body string) {
	t.Helper()
	for _, bad := range []string{"<script", "<img", hostileAttr, "\u202e"} {
		if strings.Contains(body, bad) {
			t.Errorf("%s holds %q raw", page, bad)
		}
	}
	if strings.Contains(body, `href="javascript:`) || strings.Contains(body, `action="javascript:`) {
		t.Errorf("%s links to javascript:", page)
	}
}

// TestApprovalsPage: the waiting request as a card with its buttons and
// its link, the decided ones with their state and who decided; what the
// model wrote is inert.
func TestApprovalsPage(t *testing.T) {
	f, _ := newApprovalsFixture(t)
	for _, p := range []string{"/approvals", "/approvals/req1"} {
		if resp, _ := f.req(t, "GET", p, nil, ""); resp.StatusCode != 303 || resp.Header.Get("Location") != "/login" {
			t.Errorf("%s signed out: %d %s", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	cookie := f.login(t, nil)
	csrf := f.csrf(t, cookie)
	resp, body := f.req(t, "GET", "/approvals", map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 {
		t.Fatalf("approvals: %d %s", resp.StatusCode, body)
	}
	for _, want := range []string{
		`<a href="/approvals" aria-current="page">`,
		"<pre>Tool: run_shell\n  command: &lt;script&gt;alert(1)&lt;/script&gt; &#34;&gt;&lt;img src=x onerror=alert(1)&gt; javascript:alert(1) \\u202eexe.txt</pre>",
		"<code>tool_call</code>", "<code>run_shell</code>", "<code>web</code>, turn 4", "(in 30 min)",
		`<form method="post" action="/approvals/req1/approve"><input type="hidden" name="csrf" value="` + csrf + `">`,
		`action="/approvals/req1/deny"`, `<a href="/approvals/req1">The full request</a>`,
		// The decided ones, newest first, with their state and who decided.
		`<td class="state-denied">denied</td>`, "<td>telegram</td>", `<code>&#34;javascript:alert(1)&#34;</code>`,
		`<a href="/approvals/old1">Tool: &#34;&gt;&lt;img src=x onerror=alert(1)&gt;</a>`,
		`<td class="state-expired">expired</td>`, "<td>nobody (it expired)</td>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Index(body, "old1") > strings.Index(body, "old2") {
		t.Error("the decided requests are not in the order given (newest first)")
	}
	noScript(t, "/approvals", body)
}

// TestApprovalsPageEmpty: nothing waiting, nothing decided, and an
// Approver that cannot list the decided ones.
func TestApprovalsPageEmpty(t *testing.T) {
	f := newSessionFixture(t) // fakeCore: no RecentApprovals
	cookie := f.login(t, nil)
	resp, body := f.req(t, "GET", "/approvals", map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 || !strings.Contains(body, "Nothing is waiting for you.") ||
		!strings.Contains(body, "The requests decided lately cannot be listed here.") {
		t.Errorf("approvals: %d %s", resp.StatusCode, body)
	}
}

// TestApprovalPage: one request whole, every argument byte shown inert;
// the buttons only while it waits; an unknown one is a 404 page.
func TestApprovalPage(t *testing.T) {
	f, _ := newApprovalsFixture(t)
	cookie := f.login(t, nil)
	get := func(id string) (int, string) {
		resp, body := f.req(t, "GET", "/approvals/"+id, map[string]string{"s": cookie}, "")
		return resp.StatusCode, body
	}
	status, body := get("big") // fakeCore's: a 6 KiB command with its danger in the middle
	if status != 200 {
		t.Fatalf("big: %d %s", status, body)
	}
	whole := strings.Repeat("a", 3000) + `\x1b[2J; rm -rf ~ \u202e` + strings.Repeat("b", 3000)
	json := strings.Repeat("a", 3000) + `\u001b[2J; rm -rf ~ \u202e` + strings.Repeat("b", 3000)
	for _, want := range []string{
		"Every argument, whole (6", "  command: " + whole, `{&#34;command&#34;:&#34;` + json + `&#34;}`,
		`<dd class="state-expired">expired</dd>`, // its expiry (zero) is past: no buttons
	} {
		if !strings.Contains(body, want) {
			t.Errorf("big lacks %q", want)
		}
	}
	if strings.Contains(body, "\x1b") || strings.Contains(body, "/approve") {
		t.Error("big holds a raw escape character, or buttons")
	}
	noScript(t, "big", body)

	status, body = get("req1")
	for _, want := range []string{
		"<pre>Tool: run_shell\n  command: &lt;script&gt;alert(1)&lt;/script&gt;", "  command: &lt;script&gt;alert(1)&lt;/script&gt;\n",
		`<dd class="state-pending">pending</dd>`, "(in 30 min)",
		`action="/approvals/req1/approve"`, `action="/approvals/req1/deny"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("req1 lacks %q", want)
		}
	}
	if status != 200 {
		t.Errorf("req1: %d %s", status, body)
	}
	noScript(t, "req1", body)

	status, body = get("old1") // decided: no buttons
	if status != 200 || !strings.Contains(body, `<dd class="state-denied">denied</dd>`) || strings.Contains(body, "/approve") {
		t.Errorf("old1: %d %s", status, body)
	}
	status, body = get("nope")
	if status != 404 || !strings.Contains(body, "There is no such approval request.") || !strings.Contains(body, "<!doctype html>") {
		t.Errorf("unknown: %d %s", status, body)
	}
	if status, _ := get("broken"); status != 500 {
		t.Errorf("broken: %d", status)
	}
}

// TestDecideFromForms: the buttons decide as "web" and come back to the
// page they were on; a refusal shows why; a post without the CSRF token
// or from another origin decides nothing.
func TestDecideFromForms(t *testing.T) {
	f, ac := newApprovalsFixture(t)
	cookie := f.login(t, nil)
	csrf := f.csrf(t, cookie)
	form := map[string]string{"s": cookie, "Origin": f.origin(), "Content-Type": "application/x-www-form-urlencoded"}
	post := func(h map[string]string, path string, v url.Values) (int, string, string) {
		resp, body := f.req(t, "POST", path, h, v.Encode())
		return resp.StatusCode, resp.Header.Get("Location"), body
	}
	if st, loc, body := post(form, "/approvals/req1/approve", url.Values{"csrf": {csrf}, "from": {"chat"}}); st != 303 || loc != "/chat?note=approved" {
		t.Errorf("approve from the chat: %d %s %s", st, loc, body)
	}
	if st, loc, body := post(form, "/approvals/req2/deny", url.Values{"csrf": {csrf}}); st != 303 || loc != "/approvals?note=denied" {
		t.Errorf("deny: %d %s %s", st, loc, body)
	}
	if st, loc, _ := post(form, "/approvals/req3/approve", url.Values{"csrf": {csrf}, "from": {"https://evil.example"}}); st != 303 || loc != "/approvals?note=approved" {
		t.Errorf("approve from elsewhere: %d %s", st, loc)
	}
	if resp, body := f.req(t, "GET", "/approvals?note=approved", map[string]string{"s": cookie}, ""); resp.StatusCode != 200 || !strings.Contains(body, `<p class="note" role="status">Approved.</p>`) {
		t.Errorf("the note: %d", resp.StatusCode)
	}

	// Refusals: no CSRF token, another origin.
	if st, _, _ := post(form, "/approvals/req1/approve", url.Values{"from": {"chat"}}); st != 403 {
		t.Errorf("without the CSRF token: %d", st)
	}
	other := map[string]string{"s": cookie, "Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}
	if st, _, _ := post(other, "/approvals/req1/deny", url.Values{"csrf": {csrf}}); st != 403 {
		t.Errorf("from another origin: %d", st)
	}
	if st, _, _ := post(map[string]string{"Origin": f.origin(), "Content-Type": "application/x-www-form-urlencoded"}, "/approvals/req1/deny", url.Values{"csrf": {csrf}}); st != 401 {
		t.Errorf("signed out: %d", st)
	}
	want := []string{"req1 approve by web", "req2 deny by web", "req3 approve by web"}
	if strings.Join(ac.decided, "|") != strings.Join(want, "|") {
		t.Errorf("decided %q, want %q", ac.decided, want)
	}

	// The core's refusals: the approvals page with the reason.
	for _, c := range []struct {
		id     string
		status int
		msg    string
	}{
		{"gone", 404, "There is no such approval request."},
		{"done", 409, "This request was already decided."},
		{"late", 409, "This request has expired."},
		{"stale", 409, "the staged tool shout changed since you saw it"},
		{"broken", 500, "The decision could not be carried out: approvals: record the decision on broken: disk I/O error"},
	} {
		st, _, body := post(form, "/approvals/"+c.id+"/approve", url.Values{"csrf": {csrf}, "from": {"chat"}})
		if st != c.status || !strings.Contains(body, `<p class="error" role="alert">`) || !strings.Contains(body, c.msg) ||
			!strings.Contains(body, `action="/approvals/req1/approve"`) {
			t.Errorf("%s: %d %s", c.id, st, body)
		}
	}
	if len(ac.decided) != 3 {
		t.Errorf("a refusal counted as a decision: %q", ac.decided)
	}
}
