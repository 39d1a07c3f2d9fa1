package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core/store"
)

// sessionFixture is a server with browser sessions in a real store and a
// clock the test moves.
type sessionFixture struct {
	srv   *httptest.Server
	s     *Server
	st    *store.Store
	core  *fakeCore
	mu    sync.Mutex
	clock time.Time
}

func newSessionFixture(t *testing.T, allowed ...string) *sessionFixture {
	t.Helper()
	return newSessionFixtureWith(t, func(o *Options) { o.AllowedHosts = allowed })
}

// newSessionFixtureWith is newSessionFixture with tune applied to the
// server's options (a fakeCore, the store's sessions, an hour's idle).
func newSessionFixtureWith(t *testing.T, tune func(*Options)) *sessionFixture {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &sessionFixture{st: st, core: &fakeCore{}, clock: time.Now()}
	opts := Options{Chat: f.core, Approvals: f.core, Audit: f.core, Token: token, Sessions: st,
		SessionIdle: time.Hour, Now: f.now}
	if tune != nil {
		tune(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.s = s
	f.srv = httptest.NewServer(s)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *sessionFixture) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clock
}

func (f *sessionFixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock = f.clock.Add(d)
}

// req sends method path with the headers (a cookie "s" is sent as the
// session cookie) and body; redirects are not followed.
func (f *sessionFixture) req(t *testing.T, method, path string, header map[string]string, body string) (*http.Response, string) {
	t.Helper()
	r, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "s" {
			r.AddCookie(&http.Cookie{Name: sessionCookie, Value: v})
			continue
		}
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	c := *f.srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Errorf("%s %s: Access-Control-Allow-Origin %q", method, path, v)
	}
	return resp, string(b)
}

func (f *sessionFixture) origin() string { return f.srv.URL }

// login signs in with the token and returns the session cookie's value.
func (f *sessionFixture) login(t *testing.T, extra map[string]string) string {
	t.Helper()
	h := map[string]string{"Origin": f.origin(), "Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range extra {
		h[k] = v
	}
	resp, body := f.req(t, "POST", "/login", h, url.Values{"token": {token}}.Encode())
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("login: %d %s %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.MaxAge != 3600 {
				t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/, Max-Age=3600", c)
			}
			return c.Value
		}
	}
	t.Fatalf("login set no session cookie: %v", resp.Header["Set-Cookie"])
	return ""
}

// csrf reads the session's CSRF token from the home page.
func (f *sessionFixture) csrf(t *testing.T, cookie string) string {
	t.Helper()
	resp, body := f.req(t, "GET", "/chat", map[string]string{"s": cookie}, "")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if resp.StatusCode != 200 || m == nil {
		t.Fatalf("home: %d %s", resp.StatusCode, body)
	}
	return m[1]
}

// TestLoginSessionAndCSRF: the token typed into the form starts a session
// whose cookie reads the API and, from shelldon's own origin with the
// session's CSRF token, changes things; the store keeps only the cookie's
// hash.
func TestLoginSessionAndCSRF(t *testing.T) {
	f := newSessionFixture(t)
	resp, body := f.req(t, "GET", "/", nil, "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Fatalf("home without a session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body = f.req(t, "GET", "/login", nil, "")
	// Referrer-Policy same-origin: under no-referrer a browser sends
	// "Origin: null" with the page's own forms, which sameOrigin refuses.
	if resp.StatusCode != 200 || !strings.Contains(body, `type="password"`) || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
		resp.Header.Get("Referrer-Policy") != "same-origin" {
		t.Fatalf("login page: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	cookie := f.login(t, nil)
	list, err := f.st.Sessions(context.Background())
	if err != nil || len(list) != 1 || list[0].ID != sessionID(cookie) || strings.Contains(list[0].ID, cookie) {
		t.Fatalf("sessions %+v, %v: want one, named by the cookie's hash", list, err)
	}
	csrf := f.csrf(t, cookie)

	if resp, body := f.req(t, "GET", "/api/audit", map[string]string{"s": cookie}, ""); resp.StatusCode != 200 {
		t.Fatalf("audit with the session: %d %s", resp.StatusCode, body)
	}
	chat := `{"text":"hi"}`
	for _, tt := range []struct {
		name   string
		header map[string]string
		code   int
	}{
		{"no Origin", map[string]string{"s": cookie, csrfHeader: csrf}, 403},
		{"another origin", map[string]string{"s": cookie, csrfHeader: csrf, "Origin": "http://evil.example"}, 403},
		{"same host, other port", map[string]string{"s": cookie, csrfHeader: csrf, "Origin": "http://127.0.0.1:1"}, 403},
		{"Origin null", map[string]string{"s": cookie, csrfHeader: csrf, "Origin": "null"}, 403},
		{"Origin with a path", map[string]string{"s": cookie, csrfHeader: csrf, "Origin": f.origin() + "/x"}, 403},
		{"no CSRF token", map[string]string{"s": cookie, "Origin": f.origin()}, 403},
		{"wrong CSRF token", map[string]string{"s": cookie, "Origin": f.origin(), csrfHeader: csrf + "x"}, 403},
		{"another session's shape", map[string]string{"s": cookie + "x", "Origin": f.origin(), csrfHeader: csrf}, 401},
		{"a cookie of the right shape, unknown", map[string]string{"s": randomToken(), "Origin": f.origin(), csrfHeader: csrf}, 401},
		{"a wrong bearer beside a good session", map[string]string{"s": cookie, "Origin": f.origin(), csrfHeader: csrf, "Authorization": "Bearer nope"}, 401},
		{"same origin with the token", map[string]string{"s": cookie, "Origin": f.origin(), csrfHeader: csrf}, 200},
	} {
		before := len(f.core.sent)
		resp, body := f.req(t, "POST", "/api/chat", tt.header, chat)
		if resp.StatusCode != tt.code {
			t.Errorf("%s: %d %s, want %d", tt.name, resp.StatusCode, body, tt.code)
		}
		if ran := len(f.core.sent) > before; ran != (tt.code == 200) {
			t.Errorf("%s: turn ran = %v", tt.name, ran)
		}
	}
}

// TestSessionEnds: a session ends at sign-out, when unused for the idle
// period (each use renews it), at the next login from its browser
// (rotation), and when the owner revokes them all.
func TestSessionEnds(t *testing.T) {
	f := newSessionFixture(t)
	alive := func(cookie string) bool {
		resp, _ := f.req(t, "GET", "/api/audit", map[string]string{"s": cookie}, "")
		return resp.StatusCode == 200
	}

	a := f.login(t, nil)
	f.advance(50 * time.Minute)
	if !alive(a) {
		t.Fatal("a session used within the hour ended")
	}
	f.advance(50 * time.Minute) // 100 minutes after login, 50 after its last use
	if !alive(a) {
		t.Fatal("a session ended although each use renews it")
	}
	f.advance(61 * time.Minute)
	if alive(a) {
		t.Fatal("a session unused for over an hour still works")
	}

	b := f.login(t, nil)
	c := f.login(t, map[string]string{"s": b})
	if alive(b) || !alive(c) {
		t.Fatalf("after a login from the same browser: old alive %v, new alive %v", alive(b), alive(c))
	}

	form := map[string]string{"s": c, "Origin": f.origin(), "Content-Type": "application/x-www-form-urlencoded"}
	if resp, _ := f.req(t, "POST", "/logout", form, "csrf=wrong"); resp.StatusCode != 403 || !alive(c) {
		t.Fatalf("logout with a wrong CSRF token: %d, alive %v", resp.StatusCode, alive(c))
	}
	resp, _ := f.req(t, "POST", "/logout", form, "csrf="+url.QueryEscape(f.csrf(t, c)))
	if resp.StatusCode != http.StatusSeeOther || alive(c) {
		t.Fatalf("logout: %d, alive %v", resp.StatusCode, alive(c))
	}

	// The settings page's "Sign out everywhere": every session ends.
	g, h := f.login(t, nil), f.login(t, nil)
	form["s"] = g
	if resp, _ := f.req(t, "POST", "/sessions/revoke", form, "csrf=wrong"); resp.StatusCode != 403 || !alive(g) {
		t.Fatalf("sign out everywhere with a wrong CSRF token: %d", resp.StatusCode)
	}
	resp, _ = f.req(t, "POST", "/sessions/revoke", form, "csrf="+url.QueryEscape(f.csrf(t, g)))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?note=signed-out" || alive(g) || alive(h) {
		t.Fatalf("sign out everywhere: %d %s, alive %v %v", resp.StatusCode, resp.Header.Get("Location"), alive(g), alive(h))
	}

	d, e := f.login(t, nil), f.login(t, nil)
	resp, body := f.req(t, "POST", "/api/sessions/revoke", map[string]string{"Authorization": "Bearer " + token}, "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"revoked":2`) || alive(d) || alive(e) {
		t.Fatalf("revoke: %d %s, alive %v %v", resp.StatusCode, body, alive(d), alive(e))
	}
}

// TestLoginExpiresIdleSessions: a session left unused past the idle limit
// is refused but, never used again, would keep its row; the next login
// deletes it, and only the sessions the request check would still accept
// stay (one idle exactly the limit included). A refused login deletes
// nothing.
func TestLoginExpiresIdleSessions(t *testing.T) {
	f := newSessionFixture(t) // an hour's idle
	ctx := context.Background()
	stale := f.login(t, nil)
	f.advance(time.Minute)
	edge := f.login(t, nil)
	f.advance(30 * time.Minute)
	fresh := f.login(t, nil)
	f.advance(30 * time.Minute) // stale: 61 minutes idle, edge: 60, fresh: 30

	ids := func() map[string]bool {
		t.Helper()
		list, err := f.st.Sessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, s := range list {
			out[s.ID] = true
		}
		return out
	}
	if got := ids(); !got[sessionID(stale)] || len(got) != 3 {
		t.Fatalf("before a login: %d sessions, stale kept %v; want all 3", len(got), got[sessionID(stale)])
	}
	h := map[string]string{"Origin": f.origin(), "Content-Type": "application/x-www-form-urlencoded"}
	if resp, _ := f.req(t, "POST", "/login", h, url.Values{"token": {token + "x"}}.Encode()); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", resp.StatusCode)
	}
	if got := ids(); !got[sessionID(stale)] {
		t.Fatal("a refused login expired sessions")
	}

	next := f.login(t, nil)
	got := ids()
	for _, tt := range []struct {
		name, cookie string
		kept         bool
	}{
		{"idle past the limit", stale, false},
		{"idle exactly the limit", edge, true},
		{"idle half the limit", fresh, true},
		{"the new login", next, true},
	} {
		if got[sessionID(tt.cookie)] != tt.kept {
			t.Errorf("%s: kept %v, want %v", tt.name, !tt.kept, tt.kept)
		}
	}
	if len(got) != 3 {
		t.Errorf("after the login: %d sessions, want 3", len(got))
	}
	for _, c := range []string{edge, fresh, next} {
		if resp, _ := f.req(t, "GET", "/api/audit", map[string]string{"s": c}, ""); resp.StatusCode != 200 {
			t.Errorf("a kept session is refused: %d", resp.StatusCode)
		}
	}
}

// TestLoginRefusals: a wrong token, a form from elsewhere, and a guesser's
// pace start no session.
func TestLoginRefusals(t *testing.T) {
	f := newSessionFixture(t)
	form := func(origin, tok string) (*http.Response, string) {
		h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
		if origin != "" {
			h["Origin"] = origin
		}
		return f.req(t, "POST", "/login", h, url.Values{"token": {tok}}.Encode())
	}
	for _, tt := range []struct {
		name, origin, token string
		code                int
	}{
		{"no Origin", "", token, 403},
		{"another origin", "http://evil.example", token, 403},
		{"wrong token", f.origin(), token + "x", 401},
		{"empty token", f.origin(), "", 401},
		{"a prefix of the token", f.origin(), token[:16], 401},
	} {
		resp, body := form(tt.origin, tt.token)
		if resp.StatusCode != tt.code || len(resp.Cookies()) != 0 {
			t.Errorf("%s: %d, cookies %v, want %d and none: %s", tt.name, resp.StatusCode, resp.Cookies(), tt.code, body)
		}
	}
	// Three wrong tokens above; seven more fill the minute.
	for range loginFailures - 3 {
		form(f.origin(), "nope")
	}
	if resp, _ := form(f.origin(), token); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("login after %d failures in a minute: %d, want 429", loginFailures, resp.StatusCode)
	}
	f.advance(time.Minute)
	f.login(t, nil)
	if list, _ := f.st.Sessions(context.Background()); len(list) != 1 {
		t.Fatalf("%d sessions, want 1", len(list))
	}
}

// TestHostOriginAndURLGuards: a request naming a host the owner did not
// list is refused before anything else; no answer allows another origin;
// a token in a URL is refused, never read.
func TestHostOriginAndURLGuards(t *testing.T) {
	f := newSessionFixture(t, "pi.local", "192.168.1.20")
	bearer := map[string]string{"Authorization": "Bearer " + token}
	for _, tt := range []struct {
		host string
		code int
	}{
		{"127.0.0.1", 200}, {"localhost:7433", 200}, {"LOCALHOST", 200}, {"[::1]:80", 200}, {"pi.local", 200},
		{"pi.local.", 200}, {"192.168.1.20:7433", 200},
		{"evil.example", 421}, {"pi.local.evil.example", 421}, {"evil-pi.local", 421}, {"192.168.1.21", 421},
		{"127.0.0.2", 421}, {"0.0.0.0", 421}, {"localhost.evil.example", 421}, {"pi.local:7433:1", 421},
		{"user@pi.local", 421}, {"[::1", 421},
	} {
		h := map[string]string{"Host": tt.host, "Authorization": bearer["Authorization"]}
		if resp, body := f.req(t, "GET", "/api/audit", h, ""); resp.StatusCode != tt.code {
			t.Errorf("Host %q: %d %s, want %d", tt.host, resp.StatusCode, body, tt.code)
		}
	}
	if resp, _ := f.req(t, "OPTIONS", "/api/chat", map[string]string{"Origin": "http://evil.example",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}, ""); resp.StatusCode != 405 {
		t.Errorf("preflight: %d, want 405", resp.StatusCode)
	}
	for _, p := range []string{"/api/audit?token=" + token, "/login?token=" + token, "/?access_token=x", "/api/audit?limit=5&Token=x", "/healthz?csrf=x"} {
		if resp, body := f.req(t, "GET", p, bearer, ""); resp.StatusCode != 400 || !strings.Contains(body, "token_in_url") {
			t.Errorf("GET %s: %d %s, want 400 token_in_url", p, resp.StatusCode, body)
		}
	}
}

// TestSetToken: a replaced token serves from the next request, the old
// one is refused for a program and for the login form, and every browser
// session ends (one signed in with a token that may have leaked must not
// outlive it); a token too short to be one is refused and changes nothing.
func TestSetToken(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	cookie := f.login(t, nil)
	const newToken = "a-new-token-for-the-api-0123456789"
	bearer := func(tok string) int {
		resp, _ := f.req(t, "GET", "/api/audit", map[string]string{"Authorization": "Bearer " + tok}, "")
		return resp.StatusCode
	}
	if err := f.s.SetToken(t.Context(), "short"); err == nil {
		t.Fatal("a 5-character token was taken")
	}
	if bearer(token) != 200 {
		t.Fatal("a refused SetToken changed the token")
	}
	if err := f.s.SetToken(t.Context(), newToken); err != nil {
		t.Fatal(err)
	}
	if code := bearer(token); code != 401 {
		t.Errorf("the old token: %d, want 401", code)
	}
	if code := bearer(newToken); code != 200 {
		t.Errorf("the new token: %d, want 200", code)
	}
	if resp, _ := f.req(t, "GET", "/api/audit", map[string]string{"s": cookie}, ""); resp.StatusCode != 401 {
		t.Errorf("a session from before the change: %d, want 401", resp.StatusCode)
	}
	h := map[string]string{"Origin": f.origin(), "Content-Type": "application/x-www-form-urlencoded"}
	if resp, _ := f.req(t, "POST", "/login", h, url.Values{"token": {token}}.Encode()); resp.StatusCode != 401 {
		t.Errorf("login with the old token: %d, want 401", resp.StatusCode)
	}
	if resp, _ := f.req(t, "POST", "/login", h, url.Values{"token": {newToken}}.Encode()); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("login with the new token: %d, want 303", resp.StatusCode)
	}
}
