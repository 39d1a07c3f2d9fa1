package web

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
)

// raw sends request as it is, byte for byte (no client cleans its path),
// and returns the response.
func raw(t *testing.T, srv *httptest.Server, request string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write([]byte(request)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", request, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestUncleanPathsAnswerJSON: a path ServeMux would redirect (unclean,
// escaped dot segments, the subtree root without its slash) is answered
// in JSON with 400 or 404, never a redirect or an HTML page, with or
// without the token, and never reaches a handler.
func TestUncleanPathsAnswerJSON(t *testing.T) {
	t.Parallel()
	f := &fakeCore{}
	srv := newServer(t, f)
	paths := []string{
		"/api/../api/approvals", "/api/./approvals", "//api/approvals", "/api//approvals",
		"/api/approvals/../approvals/abc", "/api/%2e%2e/api/approvals", "/api/%2E%2E/api/audit",
		"/api/approvals/%2e%2e", "/api/approvals/.", "/api", "/api/", "/healthz/", "/./healthz",
		"/healthz/..", "/api/chat/", "/api/tools/x/", "/api/tools/x/y/z", "/..", "/%2e%2e/api/audit",
		"*", "/api/approvals/abc/",
	}
	for _, p := range paths {
		for _, method := range []string{"GET", "POST", "DELETE"} {
			for _, tok := range []string{"", "Authorization: Bearer " + token + "\r\n"} {
				resp := raw(t, srv, fmt.Sprintf("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"approve\":true}", method, p, tok))
				if resp.StatusCode != 400 && resp.StatusCode != 404 && resp.StatusCode != 401 {
					t.Errorf("%s %s (token %v): status %d", method, p, tok != "", resp.StatusCode)
				}
				if loc := resp.Header.Get("Location"); loc != "" {
					t.Errorf("%s %s: redirected to %s", method, p, loc)
				}
				var body struct {
					Error struct{ Code, Message string }
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" || json.NewDecoder(resp.Body).Decode(&body) != nil || body.Error.Message == "" {
					t.Errorf("%s %s: %d %q, not a JSON error", method, p, resp.StatusCode, ct)
				}
			}
		}
	}
	if len(f.sent) != 0 {
		t.Errorf("an unclean path reached a handler: %q", f.sent)
	}
	resp := raw(t, srv, "CONNECT /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if resp.StatusCode != 405 || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("CONNECT: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// FuzzPath: whatever the request line, the API answers JSON and never
// redirects.
func FuzzPath(f *testing.F) {
	for _, p := range []string{"/api/../api/approvals", "/api", "//x", "/api/approvals/%2e%2e", "/healthz", "/a/./b/"} {
		f.Add(p)
	}
	s, err := New(Options{Chat: &fakeCore{}, Approvals: &fakeCore{}, Audit: &fakeCore{}, Token: token})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + p + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\n\r\n")))
		if err != nil {
			return // the server would refuse it before any handler
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code/100 == 3 || w.Header().Get("Location") != "" || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("GET %q: %d %v %q", p, w.Code, w.Header(), w.Body.String())
		}
	})
}

// TestBodies: each endpoint that reads a body takes exactly one JSON
// value, under its own cap, refused by Content-Length before reading.
func TestBodies(t *testing.T) {
	t.Parallel()
	f := &fakeCore{}
	srv := newServer(t, f)
	auth := map[string]string{"Authorization": "Bearer " + token}
	cases := []struct {
		name, path, body string
		status           int
		msg              string
	}{
		{"trailing object", "/api/chat", `{"text":"hi"}{"text":"again"}`, 400, "more than one JSON value"},
		{"trailing garbage", "/api/chat", `{"text":"hi"} x`, 400, "invalid JSON body"},
		{"trailing array", "/api/chat", `{"text":"hi"}[]`, 400, "more than one JSON value"},
		{"trailing white space", "/api/chat", "{\"text\":\"hi\"}\r\n\t ", 200, ""},
		{"empty", "/api/chat", ``, 400, "empty"},
		{"decision with trailing data", "/api/approvals/abc", `{"approve":true}{"approve":false}`, 400, "more than one JSON value"},
		{"decision over its cap", "/api/approvals/abc", `{"approve":true,"x":"` + strings.Repeat("a", maxDecisionBody) + `"}`, 413, "1024 bytes"},
		{"chat at the core's limit", "/api/chat", `{"text":"` + strings.Repeat(`\u0001`, core.MaxInput) + `"}`, 200, ""},
		{"chat over its cap", "/api/chat", `{"text":"` + strings.Repeat("a", maxChatBody) + `"}`, 413, "limit"},
	}
	for _, tc := range cases {
		status, out := do(t, srv, "POST", tc.path, auth, tc.body)
		e, _ := out["error"].(map[string]any)
		if status != tc.status || tc.msg != "" && !strings.Contains(fmt.Sprint(e["message"]), tc.msg) {
			t.Errorf("%s: %d %.200v, want %d %q", tc.name, status, out, tc.status, tc.msg)
		}
	}
	if want := []string{"web:hi", "web:" + strings.Repeat("\x01", core.MaxInput)}; !cmp.Equal(f.sent, want) {
		t.Errorf("the core got %d messages, want the two good ones", len(f.sent))
	}

	// A declared length over the cap is refused before a byte of the body
	// is read: the client has not sent it.
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", token, maxChatBody+1)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 413 || !resp.Close {
		t.Fatalf("declared over the cap: %v %v", resp, err)
	}
}

// TestMaxAuditPage: the API's page and the store's cap are one number.
func TestMaxAuditPage(t *testing.T) {
	if maxAuditPage != store.MaxAuditLimit {
		t.Fatalf("maxAuditPage %d, store.MaxAuditLimit %d", maxAuditPage, store.MaxAuditLimit)
	}
}

// TestAuditPages: following next from the first page visits every
// matching entry once, newest first, and the last page's next is null;
// before, tool, chat and turn reach the query.
func TestAuditPages(t *testing.T) {
	t.Parallel()
	f := &fakeCore{}
	for id := int64(23); id >= 1; id-- {
		tool := "get_time"
		if id%3 == 0 {
			tool = "run_shell"
		}
		f.audits = append(f.audits, store.AuditEntry{ID: id, Chat: fmt.Sprint("c", id%2), Turn: id / 5, Tool: tool, At: time.Unix(1700000000+id, 0)})
	}
	srv := newServer(t, f)
	auth := map[string]string{"Authorization": "Bearer " + token}

	walk := func(query string) (ids []int64, pages int) {
		t.Helper()
		next := query
		for {
			status, out := do(t, srv, "GET", "/api/audit?"+next, auth, "")
			if status != 200 {
				t.Fatalf("%s%s: %d %v", query, next, status, out)
			}
			pages++
			for _, row := range out["audit"].([]any) {
				ids = append(ids, int64(row.(map[string]any)["id"].(float64)))
			}
			n, ok := out["next"].(float64)
			if _, present := out["next"]; !present {
				t.Fatalf("no next in %v", out)
			}
			if !ok {
				return ids, pages
			}
			v, _ := url.ParseQuery(query)
			v.Set("before", fmt.Sprint(int64(n)))
			next = v.Encode()
			if pages > 30 {
				t.Fatal("the pages do not end")
			}
		}
	}
	var all, shells []int64
	for id := int64(23); id >= 1; id-- {
		all = append(all, id)
		if id%3 == 0 {
			shells = append(shells, id)
		}
	}
	for _, tc := range []struct {
		query string
		want  []int64
		pages int
	}{
		{"limit=5", all, 5},
		{"limit=23", all, 1}, // a full page with nothing after it has no next
		{"limit=1000", all, 1},
		{"limit=2&tool=run_shell", shells, 4},
		{"limit=4&before=10", all[14:], 3},
		{"limit=4&before=1", nil, 1},
	} {
		ids, pages := walk(tc.query)
		if !cmp.Equal(ids, tc.want) || pages != tc.pages {
			t.Errorf("%s: %d pages %v, want %d pages %v", tc.query, pages, ids, tc.pages, tc.want)
		}
	}

	f.queries = nil
	do(t, srv, "GET", "/api/audit?chat=c1&tool=run_shell&turn=3&before=99&limit=7", auth, "")
	if want := (store.AuditQuery{Limit: 7, Chat: "c1", Tool: "run_shell", Turn: 3, Before: 99}); len(f.queries) == 0 || f.queries[0] != want {
		t.Errorf("queries = %+v, want first %+v", f.queries, want)
	}
	f.queries = nil
	do(t, srv, "GET", "/api/audit", auth, "")
	if want := (store.AuditQuery{Limit: 50}); len(f.queries) != 1 || f.queries[0] != want {
		t.Errorf("default query = %+v, want %+v", f.queries, want)
	}
}

// TestAuditParameters: every parameter out of its range, unknown or
// repeated is a 400 that names it, and reaches no query.
func TestAuditParameters(t *testing.T) {
	t.Parallel()
	f := &fakeCore{}
	srv := newServer(t, f)
	auth := map[string]string{"Authorization": "Bearer " + token}
	bad := map[string]string{
		"limit=0": `"limit"`, "limit=-1": `"limit"`, "limit=1001": `"limit"`, "limit=x": `"limit"`, "limit=1e3": `"limit"`,
		"limit=": `"limit"`, "limit=%2010": `"limit"`, "limit=99999999999999999999": `"limit"`,
		"before=0": `"before"`, "before=-5": `"before"`, "before=abc": `"before"`, "before=": `"before"`, "before=9007199254740993": `"before"`,
		"turn=0": `"turn"`, "turn=x": `"turn"`,
		"tool=": `"tool"`, "tool=a/b": `"tool"`, "tool=" + strings.Repeat("t", 65): `"tool"`, "tool=%00": `"tool"`,
		"chat=": `"chat"`, "chat=a%20b": `"chat"`,
		"befor=3": `unknown parameter "befor"`, "limit=1&limit=2": `"limit" is given 2 times`,
		"tool=a&tool=b": `"tool" is given 2 times`,
	}
	for q, want := range bad {
		status, out := do(t, srv, "GET", "/api/audit?"+q, auth, "")
		e, _ := out["error"].(map[string]any)
		if status != 400 || !strings.Contains(fmt.Sprint(e["message"]), want) {
			t.Errorf("%s: %d %v, want 400 naming %s", q, status, out, want)
		}
	}
	if len(f.queries) != 0 {
		t.Errorf("bad parameters reached the core: %+v", f.queries)
	}
	for _, q := range []string{"limit=1", "limit=1000", "before=9007199254740992", "tool=skill:x.y-z_1", "chat=web"} {
		if status, out := do(t, srv, "GET", "/api/audit?"+q, auth, ""); status != 200 {
			t.Errorf("%s: %d %v", q, status, out)
		}
	}
	f.err = fmt.Errorf("store: disk I/O error")
	if status, out := do(t, srv, "GET", "/api/audit", auth, ""); status != 500 || strings.Contains(fmt.Sprint(out), "disk") {
		t.Errorf("a storage failure: %d %v", status, out)
	}
}
