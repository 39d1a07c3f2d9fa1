package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core"
)

// toolPageLister is a ToolLister (and ToolHistory) over self-coded tools kept
// in memory: each name's versions, oldest first, the last one in state;
// the owner's commands change the state as the toolbox would.
type toolPageLister struct {
	mu       sync.Mutex
	versions map[string][]core.ToolDetail
	state    map[string]string
	strikes  map[string]int
	acted    []string // action:name:by
	history  bool     // whether ToolVersions answers
}

func (p *toolPageLister) Tools(context.Context) ([]core.ToolView, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []core.ToolView{
		{Name: "get_time", Tier: "free", Runs: "worker", Source: core.SourceBuiltin, State: "live", Summary: "the current local time"},
		{Name: "run_shell", Tier: "risky", Runs: "sandbox", Source: core.SourceBuiltin, State: "live", Summary: "a shell command"},
	}
	for name, vs := range p.versions {
		if st := p.state[name]; st != "" {
			t := vs[len(vs)-1]
			out = append(out, core.ToolView{Name: name, Tier: "free", Runs: "sandbox", Source: core.SourceSelf, State: st,
				Version: t.Version, Language: t.Language, Hash: t.Hash, Strikes: p.strikes[name]})
		}
	}
	return out, nil
}

func (p *toolPageLister) FindTool(name string) (core.ToolDetail, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.state[name]
	if st == "" {
		return core.ToolDetail{}, "", core.ErrNoSuchTool
	}
	vs := p.versions[name]
	return vs[len(vs)-1], st, nil
}

func (p *toolPageLister) ToolVersions(name string) ([]core.ToolDetail, error) {
	if !p.history {
		return nil, fmt.Errorf("selfcode: archive of %s unreadable", name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.versions[name], nil
}

func (p *toolPageLister) ToolAction(_ context.Context, action, name, by string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acted = append(p.acted, action+":"+name+":"+by)
	st := p.state[name]
	if st == "" {
		return "", core.ErrNoSuchTool
	}
	switch action {
	case "quarantine":
		if st != "live" {
			return "", fmt.Errorf("selfcode: quarantine %s: %w", name, core.ErrNoSuchTool)
		}
		p.state[name] = "quarantined"
	case "restore":
		if st != "quarantined" {
			return "", fmt.Errorf("selfcode: restore %s: %w", name, core.ErrNoSuchTool)
		}
		p.state[name] = "live"
	case "rollback":
		if len(p.versions[name]) < 2 {
			return "", core.ErrNoVersion
		}
		p.versions[name] = p.versions[name][:len(p.versions[name])-1]
	case "remove":
		delete(p.state, name)
	}
	return "done", nil
}

// toolHostile is what a model might write to break out of the page.
const toolHostile = `<script>alert(1)</script> "><img src=x onerror=alert(1)> javascript:alert(1) </pre><b>x</b>` + "\u202e" + `gnp.exe`

func toolFixtureDetail(name string, version int, code string) core.ToolDetail {
	var t core.ToolDetail // set field by field: transports do not import selfcode
	t.Name, t.Version, t.Language, t.State = name, version, "starlark", "live"
	t.Meta.Description = "counts words " + toolHostile
	t.Meta.ParamsSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"` +
		strings.ReplaceAll(`</pre><script>alert(2)</script>`, `/`, `\/`) + `"}}}`)
	t.Meta.Capabilities = map[string][]string{"http": {"https://example.com/<x>"}}
	t.Gate = "test passed\n" + toolHostile
	t.ProposedAt = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	t.ApprovedAt, t.ApprovedBy = time.Date(2026, 11, 30, 10, 5, 0, 0, time.UTC), "telegram <admin>"
	t.Code, t.Test = code, "def test():\n    assert_eq(run('a b'), 2)  # "+toolHostile+"\n"
	t.Hash = fmt.Sprintf("%064x", version)
	return t
}

func newToolsFixture(t *testing.T, history bool) (*sessionFixture, *toolPageLister) {
	t.Helper()
	v1 := "def run(text):\n    return len(text.split())\n"
	v2 := "def run(text):\n    # " + toolHostile + "\n    return len(text.split(' '))\n"
	old := toolFixtureDetail("word_count", 1, v1)
	old.State = "archived"
	pt := &toolPageLister{history: history,
		versions: map[string][]core.ToolDetail{"word_count": {old, toolFixtureDetail("word_count", 2, v2)}},
		state:    map[string]string{"word_count": "live"},
		strikes:  map[string]int{"word_count": 2},
	}
	f := newSessionFixtureWith(t, func(o *Options) { o.Tools = pt })
	return f, pt
}

// pageEscape is s as page.t writes it.
func pageEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// toolNoRaw fails when body holds any of the toolHostile strings unescaped, or
// a script tag.
func toolNoRaw(t *testing.T, where, body string) {
	t.Helper()
	for _, bad := range []string{"<script", "<img src=x", "</pre><b>", "<b>x</b>", "\u202e", "<admin>", "<x>"} {
		if strings.Contains(body, bad) {
			t.Errorf("%s holds %q raw", where, bad)
		}
	}
	if strings.Contains(body, `href="javascript:`) {
		t.Errorf("%s links to javascript:", where)
	}
}

func TestToolsPages(t *testing.T) {
	f, _ := newToolsFixture(t, true)
	for _, p := range []string{"/tools", "/tools/word_count", "/tools/get_time"} {
		if resp, _ := f.req(t, "GET", p, nil, ""); resp.StatusCode != 303 || resp.Header.Get("Location") != "/login" {
			t.Errorf("%s signed out: %d %s", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	cookie := f.login(t, nil)
	get := func(p string) (int, string) {
		t.Helper()
		resp, body := f.req(t, "GET", p, map[string]string{"s": cookie}, "")
		return resp.StatusCode, body
	}

	status, body := get("/tools")
	if status != 200 {
		t.Fatalf("/tools: %d", status)
	}
	for _, want := range []string{`<a href="/tools/word_count"><code>word_count</code></a>`, `<span class="state live">live</span>`,
		`<td>2</td>`, `<a href="/tools/run_shell"><code>run_shell</code></a>`, "<strong>RISKY</strong>", `aria-current="page">Tools`,
		`<th scope="col">Strikes</th>`} {
		if !strings.Contains(body, want) {
			t.Errorf("/tools lacks %q", want)
		}
	}
	toolNoRaw(t, "/tools", body)

	status, body = get("/tools/word_count")
	if status != 200 {
		t.Fatalf("/tools/word_count: %d %s", status, body)
	}
	esc := pageEscape(strings.ReplaceAll(toolHostile, "\u202e", `\u202e`))
	for _, want := range []string{
		"<title>Tool word_count · shelldon</title>",
		"counts words " + esc,
		"      &#34;description&#34;: &#34;&lt;\\/pre&gt;&lt;script&gt;alert(2)&lt;\\/script&gt;&#34;\n", // the schema, indented, escaped
		"<code>https://example.com/&lt;x&gt;</code>",
		"test passed\n" + esc,
		"  # " + esc,
		"by telegram &lt;admin&gt;",
		"2026-11-30 10:05 UTC",
		`<dt>Strikes</dt><dd>2</dd>`,
		`<h3>Version 2 <span class="muted">(live)</span>`, `<h3>Version 1 <span class="muted">(archived)</span>`, "The first version known.",
		`<span class="add">+     # ` + esc + `</span>`,
		`<span class="del">-     return len(text.split())</span>`,
		`<span class="add">+     return len(text.split(&#39; &#39;))</span>`,
		`<span>  def run(text):</span>`,
		`action="/tools/word_count/quarantine"`,
		`<input type="hidden" name="confirm" value="remove">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the tool page lacks %q", want)
		}
	}
	if strings.Contains(body, `action="/tools/word_count/remove"`) {
		t.Error("the remove form is shown before the owner asked for it")
	}
	toolNoRaw(t, "the tool page", body)

	status, body = get("/tools/get_time")
	if status != 200 || !strings.Contains(body, "<dt>Tier</dt><dd>FREE</dd>") || !strings.Contains(body, "the current local time and UTC") {
		t.Errorf("built-in page: %d %s", status, body)
	}
	if status, _ = get("/tools/run_shell"); status != 200 {
		t.Errorf("run_shell: %d", status)
	}
	for _, p := range []string{"/tools/nope", "/tools/" + url.PathEscape(`<script>`), "/tools/" + strings.Repeat("a", 65)} {
		if status, body = get(p); status != 404 || !strings.Contains(body, "There is no tool of that name.") {
			t.Errorf("%s: %d", p, status)
		}
		toolNoRaw(t, p, body)
	}
}

func TestToolPageWithoutHistory(t *testing.T) {
	f, _ := newToolsFixture(t, false)
	cookie := f.login(t, nil)
	resp, body := f.req(t, "GET", "/tools/word_count", map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 || !strings.Contains(body, "Only this version is shown") || !strings.Contains(body, "<h3>Version 2") ||
		strings.Contains(body, "<h3>Version 1") {
		t.Errorf("page without history: %d %s", resp.StatusCode, body)
	}
}

func TestToolsPageActions(t *testing.T) {
	f, pt := newToolsFixture(t, true)
	cookie := f.login(t, nil)
	csrf := f.csrf(t, cookie)
	form := map[string]string{"s": cookie, "Origin": f.origin(), "Content-Type": "application/x-www-form-urlencoded"}
	post := func(header map[string]string, p string, v url.Values) (int, string, string) {
		t.Helper()
		resp, body := f.req(t, "POST", p, header, v.Encode())
		return resp.StatusCode, resp.Header.Get("Location"), body
	}
	with := url.Values{"csrf": {csrf}}
	confirmed := url.Values{"csrf": {csrf}, "confirm": {"yes"}}

	// Refused before anything is done: no CSRF token, another origin.
	if code, _, _ := post(form, "/tools/word_count/quarantine", url.Values{}); code != 403 {
		t.Errorf("without the CSRF token: %d", code)
	}
	other := map[string]string{"s": cookie, "Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}
	if code, _, _ := post(other, "/tools/word_count/quarantine", with); code != 403 {
		t.Errorf("from another origin: %d", code)
	}
	if len(pt.acted) != 0 {
		t.Fatalf("a refused post acted: %q", pt.acted)
	}

	if code, loc, body := post(form, "/tools/word_count/quarantine", with); code != 303 || loc != "/tools/word_count?note=quarantined" {
		t.Fatalf("quarantine: %d %s %s", code, loc, body)
	}
	resp, body := f.req(t, "GET", "/tools/word_count?note=quarantined", map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 || !strings.Contains(body, `<p class="note" role="status">Quarantined.</p>`) ||
		!strings.Contains(body, `action="/tools/word_count/restore"`) || strings.Contains(body, `action="/tools/word_count/quarantine"`) {
		t.Errorf("after quarantine: %d %s", resp.StatusCode, body)
	}
	// Quarantining it again is refused, with the page and the daemon's reason.
	if code, _, body := post(form, "/tools/word_count/quarantine", with); code != 404 || !strings.Contains(body, "Could not quarantine word_count: selfcode: quarantine word_count: no such tool") ||
		!strings.Contains(body, "<h3>Version 2") {
		t.Errorf("quarantine twice: %d %s", code, body)
	}
	if code, loc, _ := post(form, "/tools/word_count/restore", with); code != 303 || loc != "/tools/word_count?note=restored" {
		t.Errorf("restore: %d %s", code, loc)
	}

	// Rollback and remove ask first: without confirm=yes the post only
	// leads to the page that asks.
	for _, action := range []string{"rollback", "remove"} {
		before := len(pt.acted)
		code, loc, _ := post(form, "/tools/word_count/"+action, with)
		if code != 303 || loc != "/tools/word_count?confirm="+action || len(pt.acted) != before {
			t.Errorf("%s unconfirmed: %d %s, acted %q", action, code, loc, pt.acted)
		}
		resp, body := f.req(t, "GET", loc, map[string]string{"s": cookie}, "")
		if resp.StatusCode != 200 || !strings.Contains(body, `<form method="post" action="/tools/word_count/`+action+`"><input type="hidden" name="csrf" value="`+csrf+`"><input type="hidden" name="confirm" value="yes">`) {
			t.Errorf("%s confirm page: %d %s", action, resp.StatusCode, body)
		}
	}
	if code, loc, _ := post(form, "/tools/word_count/rollback", confirmed); code != 303 || loc != "/tools/word_count?note=rolled-back" {
		t.Errorf("rollback: %d %s", code, loc)
	}
	if code, _, body := post(form, "/tools/word_count/rollback", confirmed); code != 404 || !strings.Contains(body, "no earlier version to roll back to") {
		t.Errorf("rollback with no version before: %d %s", code, body)
	}
	if code, loc, _ := post(form, "/tools/word_count/remove", confirmed); code != 303 || loc != "/tools?note=removed" {
		t.Errorf("remove: %d %s", code, loc)
	}
	if code, _, body := post(form, "/tools/word_count/remove", confirmed); code != 404 || !strings.Contains(body, "no such tool") {
		t.Errorf("remove twice: %d %s", code, body)
	}
	if code, _, _ := post(form, "/tools/word_count/approve", with); code != 404 {
		t.Errorf("an unknown command: %d", code)
	}
	want := []string{"quarantine:word_count:web", "quarantine:word_count:web", "restore:word_count:web",
		"rollback:word_count:web", "rollback:word_count:web", "remove:word_count:web", "remove:word_count:web"}
	if strings.Join(pt.acted, " ") != strings.Join(want, " ") {
		t.Errorf("acted %q, want %q", pt.acted, want)
	}
}

func TestToolDiffTooLarge(t *testing.T) {
	long := strings.Repeat("x = 1\n", maxDiffLines+1)
	lines, whole, same := toolCodeDiff(long, long+"y = 2\n")
	if lines != nil || !whole || same {
		t.Errorf("too large: %d lines, whole %v, same %v", len(lines), whole, same)
	}
	if _, whole, same := toolCodeDiff("a\n", "a\n"); whole || !same {
		t.Error("equal code is not the same")
	}
}

// TestToolPageWholeVersions: code too long to diff shows both versions
// whole, escaped.
func TestToolPageWholeVersions(t *testing.T) {
	f, pt := newToolsFixture(t, true)
	long := strings.Repeat("x = '</pre>'\n", maxDiffLines+1)
	pt.versions["word_count"] = append(pt.versions["word_count"], toolFixtureDetail("word_count", 3, long))
	cookie := f.login(t, nil)
	resp, body := f.req(t, "GET", "/tools/word_count", map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 || !strings.Contains(body, "Too long to compare line by line") ||
		strings.Count(body, "x = &#39;&lt;/pre&gt;&#39;\n") != 2*(maxDiffLines+1) {
		t.Errorf("whole versions: %d, %d copies", resp.StatusCode, strings.Count(body, "x = &#39;&lt;/pre&gt;&#39;\n"))
	}
	toolNoRaw(t, "the tool page", body)
}

// TestToolPageImportedVersion: a version that came in a bundle says where
// from, and lists the bundle's history as records a rollback never
// reaches; every value the bundle held is text, inert.
func TestToolPageImportedVersion(t *testing.T) {
	f, pt := newToolsFixture(t, true)
	v := toolFixtureDetail("word_count", 3, "def run(text):\n    return 'imported'\n")
	v.Imported = &core.ToolImport{Bundle: "<b>word_count</b>.json\u202e", BundleHash: "abc", ExportedAt: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		SourceVersion: 7, History: []core.ToolImportedVersion{
			{Version: 6, Language: "starlark", Hash: "h6", ApprovedAt: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), ApprovedBy: "<script>x</script>"},
			{Version: 7, Language: "starlark", Hash: "h7", ApprovedAt: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)},
		}}
	pt.versions["word_count"] = append(pt.versions["word_count"], v)
	cookie := f.login(t, nil)
	resp, body := f.req(t, "GET", "/tools/word_count", map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	wantIn(t, "imported version", body, "Imported from the bundle <code>&lt;b&gt;word_count&lt;/b&gt;.json",
		"(version 7 there, exported 2026-11-30", "a rollback never reaches these", "version 6, starlark, approved there 2026-11-01",
		"by &lt;script&gt;x&lt;/script&gt;", `<code class="hash">h7</code>`)
	wantOut(t, "imported version", body, "<script>x", "<b>word_count", "\u202e")
	toolNoRaw(t, "the tool page", body)
}
