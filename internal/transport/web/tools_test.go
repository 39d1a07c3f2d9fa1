package web

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/core"
)

// fakeTools serves GET /api/tools from a fixed list.
type fakeTools struct {
	list []core.ToolView
	err  error
}

func (f fakeTools) Tools(context.Context) ([]core.ToolView, error) { return f.list, f.err }

func (f fakeTools) FindTool(string) (core.ToolDetail, string, error) {
	return core.ToolDetail{}, "", core.ErrNoSuchTool
}

func (f fakeTools) ToolAction(context.Context, string, string, string) (string, error) {
	return "", core.ErrNoSuchTool
}

func TestGetTools(t *testing.T) {
	t.Parallel()
	list := []core.ToolView{
		{Name: "git", Tier: "risky", Runs: "sandbox", Source: core.SourceBuiltin, State: "live", Summary: "local git"},
		{Name: "word_count", Tier: "free", Runs: "sandbox", Source: core.SourceSelf, State: "staged", Version: 2, Language: "starlark"},
	}
	cases := []struct {
		name   string
		tools  ToolLister
		status int
		want   map[string]any
	}{
		{"no lister", nil, 200, map[string]any{"tools": []any{}}},
		{"builtin and self", fakeTools{list: list}, 200, map[string]any{"tools": []any{
			map[string]any{"name": "git", "tier": "risky", "runs": "sandbox", "source": "builtin", "state": "live", "summary": "local git"},
			map[string]any{"name": "word_count", "tier": "free", "runs": "sandbox", "source": "self", "state": "staged",
				"version": float64(2), "language": "starlark"},
		}}},
		{"broken", fakeTools{err: errors.New("disk gone")}, 500, map[string]any{"error": map[string]any{"code": "internal", "message": "could not list the tools"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := New(Options{Chat: &fakeCore{}, Tools: tc.tools, Token: token})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(s)
			t.Cleanup(srv.Close)
			status, out := do(t, srv, "GET", "/api/tools", map[string]string{"Authorization": "Bearer " + token}, "")
			if status != tc.status {
				t.Errorf("status %d, want %d", status, tc.status)
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}
