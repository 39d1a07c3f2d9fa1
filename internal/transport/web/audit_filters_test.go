package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
)

// filterStore is a real store holding 40 entries, oldest first: every
// fifth an approval_expired (not OK), the rest tool_call, every third of
// those failed; chats alternate web and tg:1. It returns the store and
// the ids of the entries keep selects, newest first.
func filterStore(t *testing.T, st *store.Store) func(keep func(store.AuditEntry) bool) []int64 {
	t.Helper()
	var all []store.AuditEntry
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 40 {
		e := store.AuditEntry{At: at.Add(time.Duration(i) * time.Second), Chat: []string{"web", "tg:1"}[i%2], Turn: int64(i + 1),
			Kind: store.KindToolCall, Tool: "run_shell", Summary: fmt.Sprintf("entry %d", i+1), OK: i%3 != 0}
		if i%5 == 4 {
			e.Kind, e.OK = "approval_expired", false
		}
		id, err := st.AppendAudit(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		e.ID = id
		all = append(all, e)
	}
	return func(keep func(store.AuditEntry) bool) []int64 {
		var ids []int64
		for i := len(all) - 1; i >= 0; i-- {
			if keep(all[i]) {
				ids = append(ids, all[i].ID)
			}
		}
		return ids
	}
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestAuditAPIKindAndOutcome: GET /api/audit over a real store selects by
// kind and outcome, alone, together and with chat, and following next
// (the filters kept) visits each match once, newest first.
func TestAuditAPIKindAndOutcome(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ids := filterStore(t, st)
	s, err := New(Options{Chat: &fakeCore{}, Approvals: &fakeCore{}, Audit: st, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	auth := map[string]string{"Authorization": "Bearer " + token}

	for _, tc := range []struct {
		query string
		want  []int64
	}{
		{"kind=approval_expired", ids(func(e store.AuditEntry) bool { return e.Kind == "approval_expired" })},
		{"kind=tool_call&outcome=failed", ids(func(e store.AuditEntry) bool { return e.Kind == "tool_call" && !e.OK })},
		{"outcome=failed", ids(func(e store.AuditEntry) bool { return !e.OK })},
		{"outcome=ok", ids(func(e store.AuditEntry) bool { return e.OK })},
		{"outcome=ok&chat=tg:1", ids(func(e store.AuditEntry) bool { return e.OK && e.Chat == "tg:1" })},
		{"kind=tool_strike", nil},
		{"kind=custom.kind-2", nil}, // a plain name the daemon does not write: no entry, no error
	} {
		var got []int64
		v, _ := url.ParseQuery(tc.query)
		v.Set("limit", "3")
		for pages := 0; ; pages++ {
			status, out := do(t, srv, "GET", "/api/audit?"+v.Encode(), auth, "")
			if status != 200 || pages > 20 {
				t.Fatalf("%s: %d %v", v.Encode(), status, out)
			}
			for _, row := range out["audit"].([]any) {
				got = append(got, int64(row.(map[string]any)["id"].(float64)))
			}
			next, ok := out["next"].(float64)
			if !ok {
				break
			}
			v.Set("before", fmt.Sprint(int64(next)))
		}
		if !cmp.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}
}

// TestAuditAPIKindAndOutcomeRefused: a kind that is not a plain lowercase
// name, an outcome other than ok or failed, an empty or repeated one, is
// a 400 that names the parameter and does not echo the value; nothing
// reaches the core.
func TestAuditAPIKindAndOutcomeRefused(t *testing.T) {
	t.Parallel()
	f := &fakeCore{}
	srv := newServer(t, f)
	auth := map[string]string{"Authorization": "Bearer " + token}
	kind, outcome := `"kind" must be 1-64 lowercase letters, digits or _.-`, `"outcome" must be ok or failed`
	for q, want := range map[string]string{
		"kind=":                                  kind,
		"kind=Tool_Call":                         kind,
		"kind=tool%20call":                       kind,
		"kind=tool_call'--":                      kind,
		"kind=tool:call":                         kind,
		"kind=" + strings.Repeat("k", 65):        kind,
		"kind=%00":                               kind,
		"kind=tool_call%E2%80%AE":                kind,
		"kind=" + url.QueryEscape(hostileScript): kind,
		"kind=%EF%BD%94ool":                      kind, // a fullwidth t
		"kind=a&kind=b":                          `"kind" is given 2 times`,
		"outcome=":                               outcome,
		"outcome=OK":                             outcome,
		"outcome=true":                           outcome,
		"outcome=1":                              outcome,
		"outcome=failure":                        outcome,
		"outcome=%20ok":                          outcome,
		"outcome=" + url.QueryEscape(hostileAttr):   outcome,
		"outcome=ok&outcome=failed":                 `"outcome" is given 2 times`,
		"ok=true":                                   `unknown parameter "ok"`,
		"kind=tool_call&outcome=maybe&limit=5":      outcome,
		"kind=" + url.QueryEscape(hostileBidi):      kind,
		"kind=tool_call&outcome=" + hostileBidi[:3]: outcome,
	} {
		status, out := do(t, srv, "GET", "/api/audit?"+q, auth, "")
		e, _ := out["error"].(map[string]any)
		msg := fmt.Sprint(e["message"])
		if status != 400 || !strings.Contains(msg, want) || strings.Contains(msg, "script") || strings.Contains(msg, "img") || strings.Contains(msg, "\u202e") {
			t.Errorf("%s: %d %v, want 400 saying %s", q, status, out, want)
		}
	}
	if len(f.queries) != 0 {
		t.Errorf("bad parameters reached the core: %+v", f.queries)
	}
	for q, want := range map[string]store.AuditQuery{
		"kind=tool_call":                  {Limit: 50, Kind: "tool_call"},
		"kind=x.y-z_9&outcome=ok":         {Limit: 50, Kind: "x.y-z_9", Outcome: core.AuditOK},
		"outcome=failed&before=7&limit=2": {Limit: 2, Outcome: core.AuditFailed, Before: 7},
		"kind=" + strings.Repeat("k", 64): {Limit: 50, Kind: strings.Repeat("k", 64)},
	} {
		f.queries = nil
		if status, out := do(t, srv, "GET", "/api/audit?"+q, auth, ""); status != 200 || len(f.queries) == 0 || f.queries[0] != want {
			t.Errorf("%s: %d %v, queries %+v, want %+v", q, status, out, f.queries, want)
		}
	}
}

// auditFixture is a signed-in session fixture whose audit trail is the
// real store's.
func auditFixture(t *testing.T) (*sessionFixture, string) {
	t.Helper()
	f := newSessionFixtureWith(t, func(o *Options) { o.Audit = o.Sessions.(*store.Store) })
	return f, f.login(t, nil)
}

// TestAuditPageKindAndOutcome: the form offers every kind the daemon
// writes and any/ok/failed, each field labelled, and shows what is
// chosen; the older and newest links keep every filter; an unknown but
// plain kind is offered too; a hostile one is refused, shown inert.
func TestAuditPageKindAndOutcome(t *testing.T) {
	f, cookie := auditFixture(t)
	ids := filterStore(t, f.st)
	get := func(path string) (int, string) {
		t.Helper()
		resp, body := f.req(t, "GET", path, map[string]string{"s": cookie}, "")
		return resp.StatusCode, body
	}

	status, body := get("/audit")
	if status != 200 {
		t.Fatalf("audit: %d", status)
	}
	for _, want := range []string{
		`<label for="kind">Kind</label><select id="kind" name="kind">`, `<option value="">any</option>`,
		`<label for="outcome">Outcome</label><select id="outcome" name="outcome">`,
		`<option value="ok">ok</option>`, `<option value="failed">failed</option>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the form lacks %q", want)
		}
	}
	for _, k := range core.AuditKinds() {
		if !strings.Contains(body, `<option value="`+k+`">`+k+`</option>`) {
			t.Errorf("the form does not offer kind %s", k)
		}
	}
	if strings.Contains(body, " selected") {
		t.Error("an unfiltered page selects a choice")
	}
	// Every field of the form has a label naming it.
	for _, name := range regexp.MustCompile(`(?:input|select) type="text" id="([a-z]+)"|<select id="([a-z]+)"`).FindAllStringSubmatch(body, -1) {
		id := name[1] + name[2]
		if !strings.Contains(body, `<label for="`+id+`">`) {
			t.Errorf("field %s has no label", id)
		}
	}

	// A filtered page, two at a time: the choices shown, the rows those
	// of the filter, the links keeping it.
	want := ids(func(e store.AuditEntry) bool { return e.Kind == "tool_call" && !e.OK && e.Chat == "web" })
	status, body = get("/audit?chat=web&kind=tool_call&outcome=failed&turn=&limit=2")
	if status != 200 || rows(body) != 2 || len(want) < 4 {
		t.Fatalf("filtered: %d, %d rows, %v", status, rows(body), want)
	}
	older := fmt.Sprintf(`href="/audit?before=%d&amp;chat=web&amp;kind=tool_call&amp;limit=2&amp;outcome=failed" rel="next">Older</a>`, want[1])
	for _, s := range []string{
		`<option value="tool_call" selected>tool_call</option>`, `<option value="failed" selected>failed</option>`,
		`<a href="/audit">Clear</a>`, older,
		fmt.Sprintf(`<td class="lines">entry %d</td>`, want[0]), fmt.Sprintf(`<td class="lines">entry %d</td>`, want[1]),
	} {
		if !strings.Contains(body, s) {
			t.Errorf("the filtered page lacks %q\n%s", s, body)
		}
	}
	if strings.Count(body, " selected") != 2 {
		t.Errorf("%d choices selected, want 2", strings.Count(body, " selected"))
	}
	status, body = get(fmt.Sprintf("/audit?chat=web&kind=tool_call&outcome=failed&limit=2&before=%d", want[1]))
	if status != 200 || !strings.Contains(body, fmt.Sprintf(`<td class="lines">entry %d</td>`, want[2])) ||
		!strings.Contains(body, `<a href="/audit?chat=web&amp;kind=tool_call&amp;limit=2&amp;outcome=failed">Newest</a>`) {
		t.Errorf("older page: %d\n%s", status, body)
	}

	// Outcome alone, then ok: every row says so.
	_, body = get("/audit?outcome=ok&limit=100")
	if strings.Contains(body, `<span class="no">`) || rows(body) != len(ids(func(e store.AuditEntry) bool { return e.OK })) {
		t.Errorf("outcome=ok shows %d rows, some not OK", rows(body))
	}
	_, body = get("/audit?outcome=failed&limit=100")
	if strings.Contains(body, `<span class="yes">`) || rows(body) != len(ids(func(e store.AuditEntry) bool { return !e.OK })) {
		t.Errorf("outcome=failed shows %d rows, some OK", rows(body))
	}

	// A plain kind the daemon does not write is offered, chosen.
	status, body = get("/audit?kind=custom.kind-2")
	if status != 200 || !strings.Contains(body, `<option value="custom.kind-2" selected>custom.kind-2</option>`) ||
		!strings.Contains(body, "No entry matches the filter.") {
		t.Errorf("unknown kind: %d\n%s", status, body)
	}

	// Hostile values: 400, the reason, the value given back inert.
	for q, msg := range map[string]string{
		"kind=" + url.QueryEscape(hostileScript):      `&#34;kind&#34; must be 1-64 lowercase letters`,
		"kind=" + url.QueryEscape(hostileAttr):        `&#34;kind&#34; must be 1-64 lowercase letters`,
		"kind=" + url.QueryEscape("tool"+hostileBidi): `&#34;kind&#34; must be 1-64 lowercase letters`,
		"outcome=" + url.QueryEscape(hostileAttr):     `&#34;outcome&#34; must be ok or failed`,
		"outcome=" + url.QueryEscape(hostileScript):   `&#34;outcome&#34; must be ok or failed`,
	} {
		status, body := get("/audit?" + q)
		if status != 400 || !strings.Contains(body, msg) {
			t.Errorf("%s: %d %s", q, status, body)
		}
		noScript(t, q, body)
	}
	if _, body := get("/audit?kind=" + url.QueryEscape(hostileAttr)); !strings.Contains(body,
		`<option value="&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" selected>&#34;&gt;&lt;img src=x onerror=alert(1)&gt;</option>`) {
		t.Error("the bad kind is not given back, escaped, as the chosen kind")
	}
}

// TestAuditPageSummaryLines: a summary's lines show as lines, each still
// inert: no markup, no control or bidirectional character, a literal
// backslash-n told apart from a line break; long ones are bounded.
func TestAuditPageSummaryLines(t *testing.T) {
	f, cookie := auditFixture(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, sum := range []string{
		"gate passed\nv2 </td><script>alert(1)</script>\n\u202eevil\x1b[2J and \\n literal\r\n\tlast",
		strings.Repeat("many\n", 30),
		strings.Repeat("w", 1000),
	} {
		if _, err := f.st.AppendAudit(context.Background(), store.AuditEntry{At: at, Kind: "tool_proposed", Tool: "shout", Summary: sum, OK: true}); err != nil {
			t.Fatal(err)
		}
	}
	resp, body := f.req(t, "GET", "/audit", map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 || rows(body) != 3 {
		t.Fatalf("audit: %d, %d rows", resp.StatusCode, rows(body))
	}
	for _, want := range []string{
		"<td class=\"lines\">gate passed\nv2 &lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;\n\\u202eevil\\x1b[2J and \\\\n literal\\r\n\\tlast</td>",
		"<td class=\"lines\">" + strings.Repeat("many\n", 19) + "many…</td>",
		"<td class=\"lines\">" + strings.Repeat("w", auditSummaryShown-1) + "…</td>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q\n%s", want, body)
		}
	}
	if strings.ContainsAny(body, "\u202e\x1b\r") || strings.Contains(body, "<script") || strings.Contains(body, "</td><script") {
		t.Error("a summary reached the page raw")
	}
	noScript(t, "/audit", body)
	css, err := uiFS.ReadFile("ui/static/app.css")
	if err != nil || !regexp.MustCompile(`td\.lines \{[^}]*white-space: pre-`).Match(css) {
		t.Errorf("app.css does not show a summary's lines as lines: %v", err)
	}
}
