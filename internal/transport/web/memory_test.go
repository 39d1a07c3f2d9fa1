package web

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/redact"
)

// memoryServer is the API over core's real read side and a real store.
func memoryServer(t *testing.T) (*httptest.Server, *store.Store) {
	t.Helper()
	st := coretest.Store(t)
	r, err := core.NewReader(core.Options{Store: st, Redact: redact.New().JSONArgs, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Memory: r, Token: token, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, st
}

// ids are the ids of a page of facts.
func ids(t *testing.T, out map[string]any) []int64 {
	t.Helper()
	var got []int64
	facts, _ := out["facts"].([]any)
	for _, f := range facts {
		got = append(got, int64(f.(map[string]any)["id"].(float64)))
	}
	return got
}

// TestMemoryAPI: the owner lists the facts a page at a time, searches
// them, reads one, edits one (checked as a remembered fact is) and forgets
// one; what is not there is 404, what is malformed 400, and every call
// needs the token.
func TestMemoryAPI(t *testing.T) {
	t.Parallel()
	srv, st := memoryServer(t)
	auth := map[string]string{"Authorization": "Bearer " + token}
	status, out := do(t, srv, "GET", "/api/memory", auth, "")
	if status != 200 || fmt.Sprint(out) != "map[facts:[] next:<nil>]" {
		t.Fatalf("empty: %d %v", status, out)
	}
	for i, text := range []string{"The cat is called Tom.", "The dog is called Rex.", "Bins go out on Tuesday.", "The boiler is in the attic.", "Tom the cat eats at six."} {
		if _, _, err := st.Remember(t.Context(), "c1", int64(i+1), text, time.Unix(int64(1000+i), 0), 0); err != nil {
			t.Fatal(err)
		}
	}
	status, out = do(t, srv, "GET", "/api/memory?limit=2", auth, "")
	if got := ids(t, out); status != 200 || fmt.Sprint(got) != "[5 4]" || out["next"] != float64(4) {
		t.Errorf("page 1: %d %v", status, out)
	}
	status, out = do(t, srv, "GET", "/api/memory?limit=2&before=2", auth, "")
	if got := ids(t, out); status != 200 || fmt.Sprint(got) != "[1]" || out["next"] != nil {
		t.Errorf("last page: %d %v", status, out)
	}
	status, out = do(t, srv, "GET", "/api/memory?q="+strings.ReplaceAll("cat* AND \"Tom\" NEAR(", " ", "%20"), auth, "")
	if got := ids(t, out); status != 200 || len(got) != 2 || out["next"] != nil {
		t.Errorf("search: %d %v", status, out)
	}
	for _, q := range []string{"?limit=0", "?limit=1001", "?before=x", "?nosuch=1", "?q=a&q=b", "?q=" + strings.Repeat("a", 5000)} {
		if status, out := do(t, srv, "GET", "/api/memory"+q, auth, ""); status != 400 {
			t.Errorf("GET /api/memory%.30s: %d %v", q, status, out)
		}
	}

	status, out = do(t, srv, "GET", "/api/memory/1", auth, "")
	if f, _ := out["fact"].(map[string]any); status != 200 || f["text"] != "The cat is called Tom." || f["chat"] != "c1" || f["turn"] != float64(1) {
		t.Errorf("GET 1: %d %v", status, out)
	}
	for path, want := range map[string]int{"/api/memory/99": 404, "/api/memory/abc": 400, "/api/memory/0": 400, "/api/memory/-1": 400} {
		if status, out := do(t, srv, "GET", path, auth, ""); status != want {
			t.Errorf("GET %s: %d %v, want %d", path, status, out, want)
		}
	}

	jsonH := map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}
	for _, method := range []string{"PATCH", "POST"} {
		status, out = do(t, srv, method, "/api/memory/2", jsonH, `{"text":"The dog is called Rex and is `+method+`ed."}`)
		if f, _ := out["fact"].(map[string]any); status != 200 || f["text"] != "The dog is called Rex and is "+method+"ed." || out["message"] != "Fact #2 is changed." {
			t.Errorf("%s 2: %d %v", method, status, out)
		}
	}
	for _, tc := range []struct {
		path, body string
		want       int
		msg        string
	}{
		{"/api/memory/2", `{"text":"the key is sk-ant-abcdefghijklmnopqrstuvwxyz"}`, 400, "looks like it holds a secret"},
		{"/api/memory/2", `{"text":"  "}`, 400, "the fact is empty"},
		{"/api/memory/2", `{"text":"a\u202eb"}`, 400, "bidirectional"},
		{"/api/memory/2", `{"text":"x","other":1}`, 400, "unknown field"},
		{"/api/memory/2", `{"text":"` + strings.Repeat("a", 20000) + `"}`, 413, "limit"},
		{"/api/memory/99", `{"text":"x"}`, 404, "fact #99: no such fact"},
	} {
		status, out := do(t, srv, "PATCH", tc.path, jsonH, tc.body)
		if msg := fmt.Sprint(out["error"]); status != tc.want || !strings.Contains(msg, tc.msg) {
			t.Errorf("PATCH %s %.40s: %d %v, want %d %q", tc.path, tc.body, status, out, tc.want, tc.msg)
		}
	}
	if f, _ := st.Fact(t.Context(), 2); f.Text != "The dog is called Rex and is POSTed." {
		t.Errorf("a refused edit changed the fact: %+v", f)
	}

	status, out = do(t, srv, "DELETE", "/api/memory/1", auth, "")
	if status != 200 || out["forgotten"] != float64(1) || out["message"] != "Fact #1 is forgotten." {
		t.Errorf("DELETE 1: %d %v", status, out)
	}
	if status, out := do(t, srv, "DELETE", "/api/memory/1", auth, ""); status != 404 {
		t.Errorf("DELETE 1 again: %d %v", status, out)
	}
	if status, _ := do(t, srv, "GET", "/api/memory/1", auth, ""); status != 404 {
		t.Errorf("GET 1 after forget: %d", status)
	}
	rows, err := st.Audit(t.Context(), store.AuditQuery{Limit: 1})
	if err != nil || len(rows) != 1 || rows[0].Kind != store.KindMemoryForgotten || rows[0].Summary != "fact #1 forgotten by http" ||
		rows[0].Args != `{"fact":1,"sha256":"`+store.FactHash("The cat is called Tom.")+`"}` {
		t.Errorf("the audit after forget: %+v, %v", rows, err)
	}

	for _, c := range []struct{ method, path string }{{"GET", "/api/memory"}, {"GET", "/api/memory/2"}, {"PATCH", "/api/memory/2"}, {"DELETE", "/api/memory/2"}} {
		if status, _ := do(t, srv, c.method, c.path, nil, `{"text":"x"}`); status != 401 {
			t.Errorf("%s %s without the token: %d", c.method, c.path, status)
		}
	}
	if f, err := st.Fact(t.Context(), 2); err != nil || f.Text != "The dog is called Rex and is POSTed." {
		t.Errorf("an unauthenticated call changed the fact: %+v, %v", f, err)
	}
}

// TestNoMemoryNoEndpoint: a server given no Memory serves no /api/memory.
func TestNoMemoryNoEndpoint(t *testing.T) {
	t.Parallel()
	srv := newServer(t, &fakeCore{})
	status, out := do(t, srv, "GET", "/api/memory", map[string]string{"Authorization": "Bearer " + token}, "")
	if status != 404 {
		t.Errorf("%d %v", status, out)
	}
}
