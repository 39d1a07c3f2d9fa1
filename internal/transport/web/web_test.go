package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
)

const token = "0123456789abcdef0123456789abcdef"

type fakeCore struct {
	sent    []string
	err     error
	audits  []store.AuditEntry // newest first
	queries []store.AuditQuery
}

func (f *fakeCore) Send(_ context.Context, chat, text string, _ core.Events) (core.Outcome, error) {
	f.sent = append(f.sent, chat+":"+text)
	if strings.TrimSpace(text) == "" {
		return core.Outcome{}, fmt.Errorf("%w: empty", core.ErrBadInput)
	}
	if f.err != nil {
		return core.Outcome{}, f.err
	}
	return core.Outcome{Turn: 7, Reply: "hi " + chat}, nil
}

func (f *fakeCore) SendOnce(ctx context.Context, chat, key, text string, ev core.Events) (core.Outcome, error) {
	return f.Send(ctx, chat, key+"|"+text, ev)
}

func (f *fakeCore) Approvals(context.Context) ([]core.ApprovalView, error) { return nil, nil }

// bigCommand is a 6 KiB command with its dangerous part in the middle.
var bigCommand = strings.Repeat("a", 3000) + "\x1b[2J; rm -rf ~ \u202e" + strings.Repeat("b", 3000)

func (f *fakeCore) Approval(_ context.Context, id string) (core.ApprovalView, error) {
	switch id {
	case "big":
		args, _ := json.Marshal(map[string]string{"command": bigCommand})
		return core.ApprovalView{ID: id, Kind: "tool_call", Tool: "run_shell", Arguments: string(args),
			Summary: "Tool: run_shell\n  command: aaa … [bytes not shown] … bbb", State: "pending"}, nil
	case "broken":
		return core.ApprovalView{}, errors.New("store: disk I/O error")
	}
	return core.ApprovalView{}, core.ErrUnknownApproval
}

func (f *fakeCore) Decide(_ context.Context, id string, approve bool, _ string, _ core.Events) (core.Outcome, error) {
	switch id {
	case "gone":
		return core.Outcome{}, core.ErrUnknownApproval
	case "done":
		return core.Outcome{}, core.ErrAlreadyDecided
	case "late":
		return core.Outcome{}, core.ErrApprovalExpired
	case "stale":
		return core.Outcome{}, fmt.Errorf("%w: the staged tool shout changed since you saw it", core.ErrStaleApproval)
	case "broken":
		return core.Outcome{}, errors.New("approvals: record the decision on broken: disk I/O error")
	}
	return core.Outcome{Turn: 9, Reply: fmt.Sprintf("decided %s %v", id, approve)}, nil
}

// Audit selects as the store does from f.audits, newest (highest id)
// first; it records each query.
func (f *fakeCore) Audit(_ context.Context, q store.AuditQuery) ([]store.AuditEntry, error) {
	f.queries = append(f.queries, q)
	if f.err != nil {
		return nil, f.err
	}
	var out []store.AuditEntry
	for _, e := range f.audits {
		if (q.Chat == "" || e.Chat == q.Chat) && (q.Tool == "" || e.Tool == q.Tool) && (q.Turn == 0 || e.Turn == q.Turn) && (q.Before == 0 || e.ID < q.Before) && len(out) < q.Limit &&
			(q.Kind == "" || e.Kind == q.Kind) && (q.Outcome == "" || e.OK == (q.Outcome == core.AuditOK)) {
			out = append(out, e)
		}
	}
	return out, nil
}

func newServer(t *testing.T, f *fakeCore) *httptest.Server {
	t.Helper()
	s, err := New(Options{Chat: f, Approvals: f, Audit: f, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, srv *httptest.Server, method, path string, header map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestNewRefusesWeakToken(t *testing.T) {
	t.Parallel()
	for _, tok := range []string{"", "short"} {
		if _, err := New(Options{Token: tok}); err == nil {
			t.Errorf("New accepted token %q", tok)
		}
	}
}

func TestAuthHostileHeaders(t *testing.T) {
	t.Parallel()
	f := &fakeCore{}
	srv := newServer(t, f)
	cases := map[string]string{
		"missing":         "",
		"no scheme":       token,
		"basic":           "Basic " + token,
		"prefix of token": "Bearer " + token[:31],
		"token plus more": "Bearer " + token + "x",
		"token twice":     "Bearer " + token + token,
		"empty bearer":    "Bearer ",
		"tab inside":      "Bearer " + token[:10] + "\t" + token[10:],
		"other case":      "Bearer " + strings.ToUpper(token),
		"comma list":      "Bearer x, Bearer " + token,
	}
	for name, h := range cases {
		status, out := do(t, srv, "POST", "/api/chat", map[string]string{"Authorization": h}, `{"text":"hi"}`)
		if status != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, status)
		}
		if e, _ := out["error"].(map[string]any); e == nil || e["code"] != "unauthorized" {
			t.Errorf("%s: body %v", name, out)
		}
	}
	if len(f.sent) != 0 {
		t.Fatalf("unauthenticated requests reached the core: %q", f.sent)
	}
	status, out := do(t, srv, "POST", "/api/chat", map[string]string{"Authorization": "bearer " + token}, `{"chat":"me","text":"hi"}`)
	if status != 200 || out["reply"] != "hi me" || out["turn"] != float64(7) {
		t.Fatalf("good token: %d %v", status, out)
	}
	if apps, ok := out["approvals"].([]any); !ok || len(apps) != 0 {
		t.Errorf("approvals = %v, want []", out["approvals"])
	}
}

func TestChatValidation(t *testing.T) {
	t.Parallel()
	f := &fakeCore{}
	srv := newServer(t, f)
	auth := map[string]string{"Authorization": "Bearer " + token}
	cases := []struct {
		name, body string
		ct         string
		status     int
	}{
		{"not json", `{"text":`, "", 400},
		{"unknown field", `{"text":"hi","admin":true}`, "", 400},
		{"empty text", `{"text":"  "}`, "", 400},
		{"chat with slash", `{"chat":"a/b","text":"hi"}`, "", 400},
		{"chat too long", `{"chat":"` + strings.Repeat("a", 65) + `","text":"hi"}`, "", 400},
		{"form encoded", `text=hi`, "application/x-www-form-urlencoded", 415},
		{"huge body", `{"text":"` + strings.Repeat("a", 2<<20) + `"}`, "", 413},
	}
	for _, tc := range cases {
		h := map[string]string{"Authorization": auth["Authorization"]}
		if tc.ct != "" {
			h["Content-Type"] = tc.ct
		}
		status, out := do(t, srv, "POST", "/api/chat", h, tc.body)
		if status != tc.status {
			t.Errorf("%s: status %d, want %d (%v)", tc.name, status, tc.status, out)
		}
		if e, _ := out["error"].(map[string]any); e == nil || e["message"] == "" {
			t.Errorf("%s: no JSON error: %v", tc.name, out)
		}
	}
}

func TestChatInternalError(t *testing.T) {
	t.Parallel()
	srv := newServer(t, &fakeCore{err: errors.New("store: disk full")})
	status, out := do(t, srv, "POST", "/api/chat", map[string]string{"Authorization": "Bearer " + token}, `{"text":"hi"}`)
	if status != 500 {
		t.Fatalf("status %d %v", status, out)
	}
}

func TestAuditAndHealth(t *testing.T) {
	t.Parallel()
	f := &fakeCore{}
	for i := range 5 {
		f.audits = append(f.audits, store.AuditEntry{ID: int64(5 - i), At: time.Unix(1700000000, 0), Tool: "get_time", OK: true, Duration: 1500 * time.Microsecond})
	}
	srv := newServer(t, f)
	auth := map[string]string{"Authorization": "Bearer " + token}
	status, out := do(t, srv, "GET", "/api/audit?limit=2", auth, "")
	rows, _ := out["audit"].([]any)
	if status != 200 || len(rows) != 2 {
		t.Fatalf("audit: %d %v", status, out)
	}
	row := rows[0].(map[string]any)
	if row["tool"] != "get_time" || row["duration_ms"] != float64(1) || row["ok"] != true {
		t.Errorf("row = %v", row)
	}
	for _, bad := range []string{"0", "-1", "1001", "x", "1e3"} {
		if status, _ := do(t, srv, "GET", "/api/audit?limit="+bad, auth, ""); status != 400 {
			t.Errorf("limit=%s: status %d", bad, status)
		}
	}
	if status, out := do(t, srv, "GET", "/healthz", nil, ""); status != 200 || out["status"] != "ok" {
		t.Errorf("healthz: %d %v", status, out)
	}
	if status, _ := do(t, srv, "DELETE", "/api/chat", auth, ""); status != 404 && status != 405 {
		t.Errorf("DELETE /api/chat: %d", status)
	}
}

func TestApprovalsAPI(t *testing.T) {
	t.Parallel()
	srv := newServer(t, &fakeCore{})
	auth := map[string]string{"Authorization": "Bearer " + token}
	if status, out := do(t, srv, "GET", "/api/approvals", auth, ""); status != 200 || out["approvals"] == nil {
		t.Fatalf("list: %d %v", status, out)
	}
	cases := []struct {
		id, body string
		status   int
	}{
		{"abc", `{"approve":true}`, 200},
		{"abc", `{"approve":false}`, 200},
		{"abc", `{}`, 400},
		{"abc", `{"approve":"yes"}`, 400},
		{"gone", `{"approve":true}`, 404},
		{"done", `{"approve":true}`, 409},
		{"late", `{"approve":false}`, 409},
		{"stale", `{"approve":true}`, 409},
		{"broken", `{"approve":true}`, 500},
	}
	for _, tc := range cases {
		if status, out := do(t, srv, "POST", "/api/approvals/"+tc.id, auth, tc.body); status != tc.status {
			t.Errorf("POST %s %s: %d %v, want %d", tc.id, tc.body, status, out, tc.status)
		}
	}
	if status, _ := do(t, srv, "POST", "/api/approvals/abc", nil, `{"approve":true}`); status != 401 {
		t.Errorf("decision without a token: %d", status)
	}
	// A stale request answers with its reason; a storage failure is never
	// "already decided".
	_, out := do(t, srv, "POST", "/api/approvals/stale", auth, `{"approve":true}`)
	if e, _ := out["error"].(map[string]any); e["code"] != "stale" || !strings.Contains(fmt.Sprint(e["message"]), "changed since you saw it") {
		t.Errorf("stale: %v", out)
	}
	_, out = do(t, srv, "POST", "/api/approvals/broken", auth, `{"approve":true}`)
	if e, _ := out["error"].(map[string]any); e["code"] != "internal" || strings.Contains(fmt.Sprint(e["message"]), "already decided") {
		t.Errorf("storage failure: %v", out)
	}
}

// TestApprovalReturnsEveryByte: GET /api/approvals/{id} returns the whole
// canonical arguments as data, a JSON string unescaped beyond JSON.
func TestApprovalReturnsEveryByte(t *testing.T) {
	t.Parallel()
	srv := newServer(t, &fakeCore{})
	auth := map[string]string{"Authorization": "Bearer " + token}
	status, out := do(t, srv, "GET", "/api/approvals/big", auth, "")
	if status != 200 {
		t.Fatalf("get: %d %v", status, out)
	}
	a, _ := out["approval"].(map[string]any)
	var args map[string]string
	if err := json.Unmarshal([]byte(fmt.Sprint(a["arguments"])), &args); err != nil || args["command"] != bigCommand {
		t.Fatalf("arguments are not the whole command (%v): %.200v", err, a["arguments"])
	}
	if a["summary"] == nil || a["tool"] != "run_shell" || a["id"] != "big" {
		t.Errorf("approval = %.300v", a)
	}
	for id, want := range map[string]int{"nosuch": 404, "broken": 500} {
		if status, out := do(t, srv, "GET", "/api/approvals/"+id, auth, ""); status != want {
			t.Errorf("GET %s: %d %v, want %d", id, status, out, want)
		}
	}
	if status, _ := do(t, srv, "GET", "/api/approvals/big", nil, ""); status != 401 {
		t.Errorf("without a token: %d", status)
	}
}
