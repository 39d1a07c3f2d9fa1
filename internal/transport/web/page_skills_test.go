package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/skill"
)

// Skill is the App's SkillDetail, over the test's library.
func (k *libraryKeeper) Skill(_ context.Context, name string) (SkillDetail, error) {
	var out SkillDetail
	sk, files, notes, err := k.lib.Files(name)
	switch {
	case err == nil:
		out.InUse = true
		out.SkillView = SkillView{Name: sk.Name, Source: sk.Source, Version: sk.Version, Description: sk.Description}
		out.Text = string(skill.Format(sk))
		for _, f := range files[1:] {
			sf := SkillFile{Path: f.Path, Size: f.Size}
			if p, err := k.lib.ReadFile(name, f.Path, 0, MaxShownSkillFile); err == nil && p.Next() == 0 {
				sf.Text = p.Text
			}
			out.Files = append(out.Files, sf)
		}
		for _, n := range notes {
			out.Problems = append(out.Problems, n.Error())
		}
	case skill.ValidName(name) != nil, errors.Is(err, skill.ErrNotFound):
	default:
		return SkillDetail{}, err
	}
	if sk.Source == skill.SourceOwner {
		for _, n := range k.lib.Versions(name) {
			data, err := k.lib.Version(name, n)
			if err != nil {
				return SkillDetail{}, err
			}
			out.Versions = append(out.Versions, SkillVersion{Version: n, Text: string(data)})
		}
	}
	if d, err := k.lib.Drafted(name); err == nil {
		out.Draft = string(d.Data)
		out.Name = name
	}
	if !out.InUse && out.Draft == "" {
		return SkillDetail{}, fmt.Errorf("skill %q: %w", name, ErrNoSkill)
	}
	return out, nil
}

func (failingKeeper) Skill(context.Context, string) (SkillDetail, error) {
	return SkillDetail{}, errors.New("skill: read: input/output error")
}

// skillApprover is a fakeCore whose pending requests are given.
type skillApprover struct {
	fakeCore
	pending []core.ApprovalView
}

func (a *skillApprover) Approvals(context.Context) ([]core.ApprovalView, error) {
	return a.pending, nil
}

// newSkillPagesFixture is a signed-in browser's server over a real
// library: the bundled daily-note, the owner's water-plants at version 2
// (version 1 kept, a file beside it, a draft of a change waiting as the
// request ap1), plan-week at version 1, and feed-cat only drafted.
func newSkillPagesFixture(t *testing.T) (*sessionFixture, *libraryKeeper, string, string) {
	t.Helper()
	dir := t.TempDir()
	lib, err := skill.Open(dir, fstest.MapFS{
		"daily-note/SKILL.md": {Data: skillDoc("daily-note", "Write the daily note.", "1. Write it.")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		second(lib.Create("water-plants", "Water the plants.", "1. Water.\n2. Check the soil.")),
		second(lib.Update("water-plants", "Water the plants twice.", "1. Water twice.\n2. Check the soil.")),
		second(lib.Create("plan-week", "Plan the week.", "1. Plan.")),
		second(lib.Stage(false, "water-plants", "Water the plants twice.", "1. Water twice.\n2. Check the soil.\n3. Note it.")),
		second(lib.Stage(true, "feed-cat", "Feed the cat.", "1. Feed.")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, dir+"/water-plants/schedule.md", "Mondays <b>and</b> Thursdays.\n")
	k := &libraryKeeper{lib: lib}
	ap := &skillApprover{pending: []core.ApprovalView{
		{ID: "old1", Kind: core.KindSkill, Tool: "water-plants", CreatedAt: time.Unix(100, 0)},
		{ID: "ap1", Kind: core.KindSkill, Tool: "water-plants", CreatedAt: time.Unix(200, 0)},
		{ID: "call1", Kind: core.KindToolCall, Tool: "feed-cat", CreatedAt: time.Unix(300, 0)},
	}}
	f := newSessionFixtureWith(t, func(o *Options) { o.Skills, o.Approvals = k, ap })
	cookie := f.login(t, nil)
	return f, k, cookie, f.csrf(t, cookie)
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := writeFile(path, data); err != nil {
		t.Fatal(err)
	}
}

// wantIn fails unless body holds each of want.
func wantIn(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s: %q missing from the page:\n%s", what, w, body)
		}
	}
}

// wantOut fails if body holds any of bad.
func wantOut(t *testing.T, what, body string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(body, b) {
			t.Errorf("%s: %q on the page", what, b)
		}
	}
}

// TestSkillPages: the list shows the skills and the drafts with their
// approval requests; a skill's page its text, files, versions as diffs,
// its draft's diff, and the actions it allows, each behind a confirm step.
func TestSkillPages(t *testing.T) {
	t.Parallel()
	f, _, cookie, _ := newSkillPagesFixture(t)
	get := func(path string, status int) string {
		t.Helper()
		resp, body := f.req(t, "GET", path, map[string]string{"s": cookie}, "")
		if resp.StatusCode != status {
			t.Fatalf("GET %s: %d, want %d\n%s", path, resp.StatusCode, status, body)
		}
		if strings.Contains(body, "<script") {
			t.Errorf("GET %s: a script on a page that needs none", path)
		}
		return body
	}

	body := get("/skills", 200)
	wantIn(t, "list", body, `href="/skills/daily-note"`, `href="/skills/water-plants"`, `href="/skills/plan-week"`,
		"Water the plants twice.", "bundled", `href="/skills/feed-cat"`, `href="/approvals/ap1"`, `aria-current="page">Skills`)
	wantOut(t, "list", body, "old1", "call1")

	body = get("/skills/water-plants", 200)
	wantIn(t, "skill", body, "Yours, version 2.", "1. Water twice.", "schedule.md", "Mondays &lt;b&gt;and&lt;/b&gt; Thursdays.",
		`<pre class="diff">`, `<span class="del">- 1. Water.</span>`, `<span class="add">+ 1. Water twice.</span>`,
		`<span class="add">+ 3. Note it.</span>`, "Version 1", "Version 2 (in use)", `href="/approvals/ap1"`,
		`href="/skills/water-plants?confirm=rollback"`, `href="/skills/water-plants?confirm=remove"`)
	wantOut(t, "skill", body, `action="/skills/water-plants/rollback"`)

	body = get("/skills/water-plants?confirm=rollback", 200)
	wantIn(t, "confirm", body, `action="/skills/water-plants/rollback"`, "Roll back water-plants?", `name="csrf"`)
	body = get("/skills/water-plants?confirm=approve", 200)
	wantOut(t, "confirm of no action", body, `method="post" action="/skills/`)

	body = get("/skills/daily-note?confirm=remove", 200)
	wantIn(t, "bundled", body, "Bundled with shelldon", "1. Write it.")
	wantOut(t, "bundled", body, "confirm=rollback", "confirm=remove", `action="/skills/daily-note/remove"`)
	body = get("/skills/plan-week", 200)
	wantOut(t, "one version", body, "confirm=rollback")
	wantIn(t, "one version", body, "confirm=remove")

	body = get("/skills/feed-cat", 200)
	wantIn(t, "draft only", body, "A new skill, drafted", "1. Feed.", "No approval request is waiting")

	get("/skills/no-such", 404)
	get("/skills/Bad%20Name", 404)

	resp, _ := f.req(t, "GET", "/skills", nil, "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Errorf("signed out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = f.req(t, "GET", "/skills/water-plants", nil, "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Errorf("signed out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestSkillPageActions: rollback and remove work from the confirm form,
// as by web, and are refused without the CSRF token or from another
// origin; a refusal shows the page with the reason.
func TestSkillPageActions(t *testing.T) {
	t.Parallel()
	f, k, cookie, csrf := newSkillPagesFixture(t)
	form := func(token string) string { return url.Values{"csrf": {token}}.Encode() }
	post := func(path, origin, body string) (*http.Response, string) {
		t.Helper()
		return f.req(t, "POST", path, map[string]string{"s": cookie, "Origin": origin, "Content-Type": "application/x-www-form-urlencoded"}, body)
	}

	for _, tc := range []struct{ name, origin, body string }{
		{"no csrf", f.origin(), form("")},
		{"wrong csrf", f.origin(), form("nope")},
		{"other origin", "https://evil.example", form(csrf)},
	} {
		if resp, _ := post("/skills/water-plants/rollback", tc.origin, tc.body); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", tc.name, resp.StatusCode)
		}
	}
	if got := k.actions(); len(got) != 0 {
		t.Fatalf("refused posts acted: %v", got)
	}

	resp, body := post("/skills/water-plants/rollback", f.origin(), form(csrf))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/skills/water-plants?note=rolled-back" {
		t.Fatalf("rollback: %d %s %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	_, body = f.req(t, "GET", "/skills/water-plants?note=rolled-back", map[string]string{"s": cookie}, "")
	wantIn(t, "after rollback", body, "Rolled back.", "Yours, version 1.")

	resp, body = post("/skills/plan-week/rollback", f.origin(), form(csrf))
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("refused rollback: %d", resp.StatusCode)
	}
	wantIn(t, "refused rollback", body, `role="alert"`, "no earlier version", "Plan the week.")

	resp, _ = post("/skills/daily-note/remove", f.origin(), form(csrf))
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("remove bundled: %d", resp.StatusCode)
	}
	resp, _ = post("/skills/no-such/remove", f.origin(), form(csrf))
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("remove unknown: %d", resp.StatusCode)
	}
	resp, _ = post("/skills/plan-week/approve", f.origin(), form(csrf))
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("approve here: %d", resp.StatusCode)
	}

	resp, body = post("/skills/plan-week/remove", f.origin(), form(csrf))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/skills?note=removed" {
		t.Fatalf("remove: %d %s %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if got, want := strings.Join(k.actions(), "; "), "rollback water-plants web; remove plan-week web"; got != want {
		t.Errorf("actions %q, want %q", got, want)
	}
}

// hostileKeeper is a SkillKeeper whose every text is the model's worst.
type hostileKeeper struct{ text string }

func (h hostileKeeper) Skills(context.Context) (SkillList, error) {
	return SkillList{Skills: []SkillView{{Name: h.text, Source: "owner", Version: 1, Description: h.text}},
		Drafts: []string{h.text}, Problems: []string{h.text}}, nil
}

func (h hostileKeeper) SkillAction(context.Context, string, string, string) (string, error) {
	return "", fmt.Errorf("%w: %s", ErrSkillRefused, h.text)
}

func (h hostileKeeper) Skill(context.Context, string) (SkillDetail, error) {
	return SkillDetail{SkillView: SkillView{Name: h.text, Source: "owner", Version: 2, Description: h.text}, InUse: true,
		Text: h.text + "\n", Files: []SkillFile{{Path: h.text, Size: 3, Text: h.text}},
		Versions: []SkillVersion{{Version: 1, Text: "x\n"}}, Draft: "y\n" + h.text + "\n", Problems: []string{h.text}}, nil
}

// TestSkillPagesEscapeTheModel: a name, description, text, file name or
// problem the model wrote comes out as text, and a link built from a name
// stays a path on this site.
func TestSkillPagesEscapeTheModel(t *testing.T) {
	t.Parallel()
	for _, hostile := range []string{`<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `javascript:alert(1)`, "abc\u202Edef"} {
		f := newSessionFixtureWith(t, func(o *Options) { o.Skills = hostileKeeper{hostile} })
		cookie := f.login(t, nil)
		csrf := f.csrf(t, cookie)
		for _, path := range []string{"/skills", "/skills/x", "/skills/x?confirm=rollback"} {
			_, body := f.req(t, "GET", path, map[string]string{"s": cookie}, "")
			checkHostile(t, path, body, hostile)
		}
		_, body := f.req(t, "POST", "/skills/x/rollback", map[string]string{"s": cookie, "Origin": f.origin(),
			"Content-Type": "application/x-www-form-urlencoded"}, url.Values{"csrf": {csrf}}.Encode())
		checkHostile(t, "refusal", body, hostile)
	}
}

// checkHostile fails if hostile is on the page raw (but for the harmless
// javascript: text, which must not start a link) or the page has a script.
func checkHostile(t *testing.T, what, body, hostile string) {
	t.Helper()
	if strings.Contains(body, "<script") || strings.Contains(body, "<img") {
		t.Errorf("%s: markup from the model on the page:\n%s", what, body)
	}
	switch {
	case strings.HasPrefix(hostile, "javascript:"):
		if strings.Contains(body, `href="javascript:`) || strings.Contains(body, `href="`+hostile) {
			t.Errorf("%s: a javascript: link", what)
		}
		if what == "/skills" {
			wantIn(t, what, body, `href="/skills/javascript:alert%281%29"`)
		}
	case strings.ContainsRune(hostile, '\u202E'):
		// Escaping does not hide a bidi override; it must stay inside
		// escaped text, never in a link.
		wantOut(t, what, body, "href=\"/skills/abc\u202E")
	default:
		wantOut(t, what, body, hostile)
		wantIn(t, what, body, strings.NewReplacer("<", "&lt;", ">", "&gt;", `"`, "&#34;").Replace(hostile))
	}
}

func writeFile(path, data string) error { return os.WriteFile(path, []byte(data), 0o600) }
