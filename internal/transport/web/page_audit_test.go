package web

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core/store"
)

// auditTrail is n entries, newest (highest id) first: every tenth in the
// chat "tg:1", every other of the tool "run_shell", the newest written by
// a hostile model.
func auditTrail(n int, at time.Time) []store.AuditEntry {
	out := make([]store.AuditEntry, 0, n)
	for id := int64(n); id >= 1; id-- {
		e := store.AuditEntry{ID: id, At: at.Add(time.Duration(id) * time.Second), Chat: "web", Turn: id, Kind: "tool_call",
			Tool: "get_time", Summary: fmt.Sprintf("entry %d", id), OK: id%3 != 0, Duration: 1500 * time.Microsecond}
		if id%10 == 0 {
			e.Chat = "tg:1"
		}
		if id%2 == 0 {
			e.Tool, e.Args = "run_shell", `{"command":"ls"}`
		}
		out = append(out, e)
	}
	out[0].Tool = hostileURL
	out[0].Summary = hostileScript + " " + hostileAttr + " " + hostileBidi
	out[0].Args = `{"command":"` + strings.ReplaceAll(hostileAttr, `"`, `\"`) + ` \u202e` + strings.Repeat("x", 1000) + `"}`
	return out
}

// rows counts the table's body rows.
func rows(body string) int { return strings.Count(body, "<tr>") - 1 }

// TestAuditPage: the trail as a table, a page at a time, filtered by a
// GET form, readable without JavaScript; what a model wrote is inert;
// filters are checked as GET /api/audit checks them.
func TestAuditPage(t *testing.T) {
	f := newSessionFixture(t)
	f.core.audits = auditTrail(120, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	if resp, _ := f.req(t, "GET", "/audit", nil, ""); resp.StatusCode != 303 || resp.Header.Get("Location") != "/login" {
		t.Fatalf("audit signed out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookie := f.login(t, nil)
	get := func(path string) (int, string) {
		t.Helper()
		resp, body := f.req(t, "GET", path, map[string]string{"s": cookie}, "")
		return resp.StatusCode, body
	}

	status, body := get("/audit")
	if status != 200 || rows(body) != 50 {
		t.Fatalf("audit: %d, %d rows\n%s", status, rows(body), body)
	}
	for _, want := range []string{
		`<a href="/audit" aria-current="page">`, `<label for="chat">Chat</label><input type="text" id="chat" name="chat" value=""`,
		`<th scope="col">Summary</th>`,
		"<td>2026-03-01 12:02:00</td>", `<code>&#34;javascript:alert(1)&#34;</code>`, "<td>120</td>",
		`<td class="lines">&lt;script&gt;alert(1)&lt;/script&gt; &#34;&gt;&lt;img src=x onerror=alert(1)&gt; \u202eexe.txt`,
		`<summary>Arguments</summary><pre>  command: &#34;&gt;&lt;img src=x onerror=alert(1)&gt; \u202exxx`, "GET /api/audit has every byte",
		`<span class="yes">yes</span>`, `<span class="no">no</span>`, "<td>2ms</td>",
		`<a href="/audit?before=71" rel="next">Older</a>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(body, "Newest</a>") {
		t.Error("the first page links to the newest")
	}
	noScript(t, "/audit", body)

	// The next pages, then the last.
	status, body = get("/audit?before=71")
	if status != 200 || rows(body) != 50 || !strings.Contains(body, `<td class="lines">entry 69</td>`) ||
		!strings.Contains(body, `href="/audit?before=21"`) || !strings.Contains(body, `<a href="/audit">Newest</a>`) {
		t.Errorf("second page: %d, %d rows", status, rows(body))
	}
	status, body = get("/audit?before=21")
	if status != 200 || rows(body) != 20 || strings.Contains(body, "Older</a>") {
		t.Errorf("last page: %d, %d rows", status, rows(body))
	}

	// Filters, as the form sends them: an empty field is no filter.
	status, body = get("/audit?chat=tg%3A1&tool=run_shell&turn=&limit=5")
	if status != 200 || rows(body) != 5 || !strings.Contains(body, `value="tg:1"`) || !strings.Contains(body, `<a href="/audit">Clear</a>`) ||
		!strings.Contains(body, `href="/audit?before=70&amp;chat=tg%3A1&amp;limit=5&amp;tool=run_shell"`) {
		t.Errorf("filtered: %d, %d rows\n%s", status, rows(body), body)
	}
	if q := f.core.queries[len(f.core.queries)-1]; q.Chat != "tg:1" || q.Tool != "run_shell" || q.Turn != 0 || q.Limit != 6 {
		t.Errorf("filtered query %+v", q)
	}
	status, body = get("/audit?turn=7")
	if status != 200 || rows(body) != 1 || !strings.Contains(body, `<td class="lines">entry 7</td>`) || strings.Contains(body, "Older</a>") {
		t.Errorf("one turn: %d, %d rows", status, rows(body))
	}
	status, body = get("/audit?chat=nobody")
	if status != 200 || !strings.Contains(body, "No entry matches the filter.") {
		t.Errorf("no match: %d", status)
	}

	// Bad values: the page with the reason, 400, the value shown inert.
	for q, msg := range map[string]string{
		"turn=abc":                             `&#34;turn&#34; must be a whole number`,
		"limit=0":                              `&#34;limit&#34; must be a whole number from 1 to 1000`,
		"limit=1001":                           `&#34;limit&#34; must be a whole number from 1 to 1000`,
		"before=-1":                            `&#34;before&#34; must be a whole number`,
		"kind=Tool_Call":                       `&#34;kind&#34; must be 1-64 lowercase letters`,
		"outcome=yes":                          `&#34;outcome&#34; must be ok or failed`,
		"colour=red":                           `unknown parameter &#34;colour&#34;`,
		"chat=a&chat=b":                        `&#34;chat&#34; is given 2 times`,
		"chat=" + url.QueryEscape(hostileAttr): `&#34;chat&#34; must be 1-64 letters`,
	} {
		status, body := get("/audit?" + q)
		if status != 400 || !strings.Contains(body, `<p class="error" role="alert">The filter cannot be used: `) || !strings.Contains(body, msg) {
			t.Errorf("%s: %d %s", q, status, body)
		}
		noScript(t, q, body)
	}
	if _, body := get("/audit?chat=" + url.QueryEscape(hostileAttr)); !strings.Contains(body, `value="&#34;&gt;&lt;img src=x onerror=alert(1)&gt;"`) {
		t.Error("the bad chat is not given back, escaped, in its field")
	}
}

// TestAuditPageAtTheCap: a page of the store's cap learns whether an
// older entry exists with a second read.
func TestAuditPageAtTheCap(t *testing.T) {
	f := newSessionFixture(t)
	f.core.audits = auditTrail(maxAuditPage+1, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	cookie := f.login(t, nil)
	resp, body := f.req(t, "GET", fmt.Sprintf("/audit?limit=%d", maxAuditPage), map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 || rows(body) != maxAuditPage || !strings.Contains(body, `href="/audit?before=2&amp;limit=1000"`) {
		t.Errorf("at the cap: %d, %d rows", resp.StatusCode, rows(body))
	}
	resp, body = f.req(t, "GET", fmt.Sprintf("/audit?limit=%d&before=2", maxAuditPage), map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 || rows(body) != 1 || strings.Contains(body, "Older</a>") {
		t.Errorf("after the cap: %d, %d rows", resp.StatusCode, rows(body))
	}
}
