package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/skill"
	"github.com/shelldon/shelldon/internal/transport/web"
)

// ownerSkills gives home the owner's skill water-plants at version 2
// (version 1 kept) and plan-week at version 1.
func ownerSkills(t *testing.T, home string) {
	t.Helper()
	lib, err := skill.Open(filepath.Join(home, "skills"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Create("water-plants", "Water the plants.", "1. Water."); err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Update("water-plants", "Water the plants twice.", "1. Water twice."); err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Create("plan-week", "Plan the week.", "1. Plan."); err != nil {
		t.Fatal(err)
	}
}

// skillAudit is the audit trail's rows of the owner's commands on skills,
// oldest first, as "kind tool summary".
func skillAudit(t *testing.T, a *App) []string {
	t.Helper()
	entries, err := a.Store.Audit(context.Background(), core.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(entries) - 1; i >= 0; i-- {
		if e := entries[i]; strings.HasPrefix(e.Kind, "skill_") {
			if !e.OK || e.Turn != 0 || e.Chat != "" {
				t.Errorf("audit row %+v: want ok, outside any turn", e)
			}
			out = append(out, e.Kind+" "+e.Tool+" "+e.Summary)
		}
	}
	return out
}

func post(t *testing.T, url, token string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("POST %s: %d, not JSON: %v", url, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

// TestSkillActionsThroughTheDaemon: the daemon's API rolls back and
// removes the skills of its own library (the one its turns read), audits
// each as by http, and refuses what a skill cannot do with the library's
// reason.
func TestSkillActionsThroughTheDaemon(t *testing.T) {
	home, environ := testHome(t)
	ownerSkills(t, home)
	a, d := serveHome(t, home, environ)
	base := "http://" + d.Addr().String()

	if code, _ := post(t, base+"/api/skills/water-plants/rollback", "wrong-token-0123456789"); code != 401 {
		t.Errorf("without the token: %d", code)
	}
	for _, st := range []struct {
		path   string
		status int
		msg    string
	}{
		{"/api/skills/water-plants/rollback", 200, "water-plants is back at version 1."},
		{"/api/skills/water-plants/rollback", 409, `skill "water-plants": no earlier version before version 1`},
		{"/api/skills/daily-note/remove", 409, `skill "daily-note": bundled skills are read-only: it cannot be removed`},
		{"/api/skills/daily-note/rollback", 409, `skill "daily-note": no earlier version: the bundled version is the only one`},
		{"/api/skills/no-such/remove", 404, `skill "no-such": no such skill`},
		{"/api/skills/-bad-/remove", 404, `skill: name "-bad-"`},
		{"/api/skills/plan-week/remove", 200, "Removed plan-week (kept aside in skills/.removed)."},
	} {
		code, out := post(t, base+st.path, testToken)
		msg, _ := out["message"].(string)
		if e, ok := out["error"].(map[string]any); ok {
			msg, _ = e["message"].(string)
		}
		if code != st.status || !strings.HasPrefix(msg, st.msg) {
			t.Errorf("POST %s: %d %q, want %d %q", st.path, code, msg, st.status, st.msg)
		}
	}
	// The daemon's own library, which its turns' catalog reads.
	if s, err := a.skillLib.Get("water-plants"); err != nil || s.Version != 1 || s.Body != "1. Water." {
		t.Errorf("water-plants after the rollback: %+v %v", s, err)
	}
	if catalog := (skillStore{lib: a.skillLib}).Catalog(); strings.Contains(catalog, "plan-week") || !strings.Contains(catalog, `water-plants: "Water the plants."`) {
		t.Errorf("the daemon's catalog:\n%s", catalog)
	}
	want := []string{
		"skill_rolled_back water-plants by http: back at version 1",
		"skill_removed plan-week by http",
	}
	if diff := cmp.Diff(want, skillAudit(t, a)); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	code, body := get(t, base+"/api/skills", testToken)
	var list web.SkillList
	if code != 200 || json.Unmarshal([]byte(body), &list) != nil {
		t.Fatalf("GET /api/skills: %d %s", code, body)
	}
	var names []string
	for _, s := range list.Skills {
		names = append(names, s.Name+"/"+s.Source)
	}
	if diff := cmp.Diff([]string{"daily-note/bundled", "make-a-tool/bundled", "water-plants/owner"}, names); diff != "" {
		t.Errorf("GET /api/skills (-want +got):\n%s\n%s", diff, body)
	}
}

// TestSkillActionHere: with no daemon, the command's own App does it,
// audited as by cli; refusals are classed as the API classes them.
func TestSkillActionHere(t *testing.T) {
	home, environ := testHome(t)
	ownerSkills(t, home)
	ctx := context.Background()
	a, err := OpenFor(ctx, ForReading, home, environ, io.Discard, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if msg, err := a.SkillAction(ctx, web.SkillRollback, "water-plants", "cli"); err != nil || msg != "water-plants is back at version 1." {
		t.Errorf("rollback: %q %v", msg, err)
	}
	for _, tc := range []struct {
		action, name string
		kind         error
	}{
		{web.SkillRollback, "water-plants", web.ErrSkillRefused},
		{web.SkillRemove, "daily-note", web.ErrSkillRefused},
		{web.SkillRemove, "no-such", web.ErrNoSkill},
		{web.SkillRemove, "../escape", web.ErrNoSkill},
		{"approve", "plan-week", web.ErrSkillRefused},
	} {
		_, err := a.SkillAction(ctx, tc.action, tc.name, "cli")
		if !errors.Is(err, tc.kind) {
			t.Errorf("%s %s: %v, want %v", tc.action, tc.name, err, tc.kind)
		}
		if err != nil && strings.HasPrefix(err.Error(), tc.kind.Error()) {
			t.Errorf("%s %s: the message %q starts with the class, not the reason", tc.action, tc.name, err)
		}
	}
	if diff := cmp.Diff([]string{"skill_rolled_back water-plants by cli: back at version 1"}, skillAudit(t, a)); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
}
