package web

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/skill"
)

// libraryKeeper is a SkillKeeper over a real skill library, its refusals
// classed as the app's are; it records each action it carried out.
type libraryKeeper struct {
	lib *skill.Library

	mu   sync.Mutex
	done []string // "action name by"
}

func (k *libraryKeeper) Skills(context.Context) (SkillList, error) {
	list, problems, err := k.lib.List()
	if err != nil {
		return SkillList{}, err
	}
	out := SkillList{Drafts: k.lib.Drafts()}
	for _, s := range list {
		out.Skills = append(out.Skills, SkillView{Name: s.Name, Source: s.Source, Version: s.Version, Description: s.Description})
	}
	for _, p := range problems {
		out.Problems = append(out.Problems, p.Error())
	}
	return out, nil
}

func (k *libraryKeeper) SkillAction(_ context.Context, action, name, by string) (string, error) {
	var msg string
	var err error
	switch action {
	case SkillRollback:
		var s skill.Skill
		if s, err = k.lib.Rollback(name); err == nil {
			msg = fmt.Sprintf("%s is back at version %d.", s.Name, s.Version)
		}
	case SkillRemove:
		if err = k.lib.Remove(name); err == nil {
			msg = "Removed " + name + "."
		}
	default:
		return "", fmt.Errorf("%w: no action %q", ErrSkillRefused, action)
	}
	switch {
	case skill.ValidName(name) != nil, errors.Is(err, skill.ErrNotFound):
		return "", fmt.Errorf("%w: %w", ErrNoSkill, err)
	case errors.Is(err, skill.ErrNoVersion), errors.Is(err, skill.ErrBundled):
		return "", fmt.Errorf("%w: %w", ErrSkillRefused, err)
	case err != nil:
		return "", err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.done = append(k.done, action+" "+name+" "+by)
	return msg, nil
}

func (k *libraryKeeper) actions() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.done)
}

// skillDoc is a SKILL.md.
func skillDoc(name, desc, body string) []byte {
	return []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body + "\n")
}

func second[T any](_ T, err error) error { return err }

// skillsServer serves the API over a real library in a temp dir: the
// bundled skill daily-note, and the owner's water-plants at version 2
// (version 1 kept) and plan-week at version 1.
func skillsServer(t *testing.T) (*httptest.Server, *libraryKeeper) {
	t.Helper()
	lib, err := skill.Open(t.TempDir(), fstest.MapFS{
		"daily-note/SKILL.md": {Data: skillDoc("daily-note", "Write the daily note.", "1. Write it.")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		second(lib.Create("water-plants", "Water the plants.", "1. Water.")),
		second(lib.Update("water-plants", "Water the plants twice.", "1. Water twice.")),
		second(lib.Create("plan-week", "Plan the week.", "1. Plan.")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	k := &libraryKeeper{lib: lib}
	s, err := New(Options{Chat: &fakeCore{}, Skills: k, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, k
}

// TestSkillsNeedTheToken: without the bearer token nothing is listed and
// nothing changes.
func TestSkillsNeedTheToken(t *testing.T) {
	t.Parallel()
	srv, k := skillsServer(t)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/api/skills"},
		{"POST", "/api/skills/water-plants/rollback"},
		{"POST", "/api/skills/water-plants/remove"},
		{"POST", "/api/skills/water-plants/nosuch"},
	} {
		for _, auth := range []map[string]string{nil, {"Authorization": "Bearer wrong-token-0123456789"}} {
			if status, out := do(t, srv, tc.method, tc.path, auth, "{}"); status != 401 || out["error"] == nil {
				t.Errorf("%s %s %v: %d %v", tc.method, tc.path, auth, status, out)
			}
		}
	}
	if got := k.actions(); len(got) != 0 {
		t.Errorf("an unauthenticated request acted: %v", got)
	}
	if s, err := k.lib.Get("water-plants"); err != nil || s.Version != 2 {
		t.Errorf("water-plants: %+v %v", s, err)
	}
}

func TestGetSkills(t *testing.T) {
	t.Parallel()
	srv, k := skillsServer(t)
	if _, err := k.lib.Stage(true, "new-one", "A new one.", "1. New."); err != nil {
		t.Fatal(err)
	}
	status, out := do(t, srv, "GET", "/api/skills", map[string]string{"Authorization": "Bearer " + token}, "")
	want := map[string]any{
		"skills": []any{
			map[string]any{"name": "daily-note", "source": "bundled", "description": "Write the daily note."},
			map[string]any{"name": "plan-week", "source": "owner", "version": float64(1), "description": "Plan the week."},
			map[string]any{"name": "water-plants", "source": "owner", "version": float64(2), "description": "Water the plants twice."},
		},
		"drafts":   []any{"new-one"},
		"problems": []any{},
	}
	if status != 200 {
		t.Errorf("status %d", status)
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}

	// No keeper: empty lists, never null.
	s, err := New(Options{Chat: &fakeCore{}, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	none := httptest.NewServer(s)
	t.Cleanup(none.Close)
	_, out = do(t, none, "GET", "/api/skills", map[string]string{"Authorization": "Bearer " + token}, "")
	if diff := cmp.Diff(map[string]any{"skills": []any{}, "drafts": []any{}, "problems": []any{}}, out); diff != "" {
		t.Errorf("no keeper (-want +got):\n%s", diff)
	}
}

// TestSkillActions: rollback and remove change the library and answer
// what to tell the owner; an unknown skill is 404, what a skill cannot do
// 409, an unknown action 404, each with a message saying why.
func TestSkillActions(t *testing.T) {
	t.Parallel()
	srv, k := skillsServer(t)
	auth := map[string]string{"Authorization": "Bearer " + token}
	steps := []struct {
		name, path string
		status     int
		msg        string // in the message or the error's message
	}{
		{"rollback", "/api/skills/water-plants/rollback", 200, "water-plants is back at version 1."},
		{"nothing left to roll back", "/api/skills/water-plants/rollback", 409, "no earlier version"},
		{"rollback a bundled skill", "/api/skills/daily-note/rollback", 409, "the bundled version is the only one"},
		{"remove a bundled skill", "/api/skills/daily-note/remove", 409, "bundled skills are read-only"},
		{"rollback an unknown skill", "/api/skills/no-such/rollback", 404, `skill "no-such": no such skill`},
		{"remove an unknown skill", "/api/skills/no-such/remove", 404, "no such skill"},
		{"a name no skill can have", "/api/skills/Bad_Name/remove", 404, "Bad_Name"},
		{"approve is a decision", "/api/skills/plan-week/approve", 404, "actions: rollback, remove (approve and deny go through /api/approvals)"},
		{"an unknown action", "/api/skills/plan-week/delete", 404, "actions: rollback, remove"},
		{"remove", "/api/skills/plan-week/remove", 200, "Removed plan-week."},
		{"remove it again", "/api/skills/plan-week/remove", 404, "no such skill"},
	}
	for _, st := range steps {
		status, out := do(t, srv, "POST", st.path, auth, "{}")
		got := fmt.Sprint(out["message"])
		if e, ok := out["error"].(map[string]any); ok {
			got = fmt.Sprint(e["message"])
		}
		if status != st.status || !strings.Contains(got, st.msg) {
			t.Errorf("%s: %d %v, want %d with %q", st.name, status, out, st.status, st.msg)
		}
	}
	if s, err := k.lib.Get("water-plants"); err != nil || s.Version != 1 || s.Body != "1. Water." {
		t.Errorf("after the rollback: %+v %v", s, err)
	}
	if _, err := k.lib.Get("plan-week"); !errors.Is(err, skill.ErrNotFound) {
		t.Errorf("after the removal: %v", err)
	}
	if s, err := k.lib.Get("daily-note"); err != nil || s.Source != skill.SourceBundled {
		t.Errorf("the bundled skill: %+v %v", s, err)
	}
	want := []string{"rollback water-plants http", "remove plan-week http"}
	if diff := cmp.Diff(want, k.actions()); diff != "" {
		t.Errorf("actions, by (-want +got):\n%s", diff)
	}
}

// failingKeeper fails as a broken disk would.
type failingKeeper struct{}

func (failingKeeper) Skills(context.Context) (SkillList, error) {
	return SkillList{}, errors.New("skill: list: input/output error")
}

func (failingKeeper) SkillAction(context.Context, string, string, string) (string, error) {
	return "", errors.New(`skill "x": keep the current version: input/output error`)
}

// TestSkillFailures: a failure is 500 and says so; no keeper is 404.
func TestSkillFailures(t *testing.T) {
	t.Parallel()
	auth := map[string]string{"Authorization": "Bearer " + token}
	for _, tc := range []struct {
		name   string
		keeper SkillKeeper
		method string
		path   string
		status int
		msg    string
	}{
		{"list fails", failingKeeper{}, "GET", "/api/skills", 500, "could not list the skills"},
		{"action fails", failingKeeper{}, "POST", "/api/skills/x/rollback", 500, "the skill could not be changed: skill \"x\": keep the current version: input/output error"},
		{"no keeper", nil, "POST", "/api/skills/x/rollback", 404, "no skills"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := New(Options{Chat: &fakeCore{}, Skills: tc.keeper, Token: token})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(s)
			t.Cleanup(srv.Close)
			status, out := do(t, srv, tc.method, tc.path, auth, "{}")
			e, _ := out["error"].(map[string]any)
			if status != tc.status || fmt.Sprint(e["message"]) != tc.msg {
				t.Errorf("%d %v, want %d %q", status, out, tc.status, tc.msg)
			}
		})
	}
}
