package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/core"
)

// How a browser is signed in (issue 16): the owner types the API token
// once into the login form; the daemon answers with a session cookie
// (HttpOnly, SameSite=Strict, Secure over TLS) that names a session kept
// in the store by the SHA-256 of its value, with a CSRF token of its own.
// The cookie authenticates the UI's own requests; a request that changes
// anything must also come from the daemon's own origin (Origin) and carry
// the session's CSRF token (the X-CSRF-Token header, or a "csrf" form
// field). Programs keep sending the bearer token. A session ends when the
// owner signs out, after SessionIdle unused, or when the owner revokes
// them all. An idle session is refused when next used, and its row is
// deleted then or at the next login, whichever comes first. No answer
// carries a CORS header, and the token is never accepted in a URL.

// SessionStore keeps the browser sessions (the store's web_sessions).
type SessionStore interface {
	CreateSession(ctx context.Context, s core.Session) error
	Session(ctx context.Context, id string, idleAfter time.Time) (core.Session, error)
	TouchSession(ctx context.Context, id string, at time.Time) error
	DeleteSession(ctx context.Context, id string) error
	RevokeSessions(ctx context.Context) (int, error)
	// ExpireSessions deletes the sessions last seen before idleAfter.
	ExpireSessions(ctx context.Context, idleAfter time.Time) (int, error)
}

const (
	// sessionCookie names the cookie that holds a session's secret.
	sessionCookie = "shelldon_session"
	// csrfHeader carries a session's CSRF token on the UI's requests.
	csrfHeader = "X-CSRF-Token"
	// touchEvery is how stale a session's last use may get before a
	// request records it again (and renews the cookie).
	touchEvery = time.Minute
	// maxLoginBody caps the login form: a token and nothing else.
	maxLoginBody = 4 << 10
	// loginFailures is how many failed logins a minute are answered;
	// more wait for the next minute. The token is long and random; this
	// keeps a guesser's pace, and the daemon's work, small.
	loginFailures = 10
)

// DefaultSessionIdle is how long a session lasts unused when Options does
// not say.
const DefaultSessionIdle = 30 * 24 * time.Hour

// errNoSession is a request without a live session.
var errNoSession = errors.New("no live session")

// hostGuard holds the names a request's Host may carry.
type hostGuard map[string]bool

// newHostGuard allows loopback's names and the given ones (config.HostName
// forms; others are ignored: the config refused them already).
func newHostGuard(extra []string) hostGuard {
	g := hostGuard{"localhost": true, "127.0.0.1": true, "::1": true}
	for _, h := range extra {
		if n, ok := config.HostName(h); ok {
			g[n] = true
		}
	}
	return g
}

// allows says whether hostport, a Host header's value, names an allowed
// host (any port).
func (g hostGuard) allows(hostport string) bool {
	n, ok := config.HostName(hostOnly(hostport))
	return ok && g[n]
}

// hostOnly is hostport without its port: "[::1]:80" is "[::1]", "a:80" is
// "a", and a value without a port is itself.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return hostport
}

// sameOrigin says whether r's Origin header names the host r was sent to
// (scheme http or https; the port as in Host). A request without an
// Origin, or with "null", is not same-origin: every browser sends Origin
// on a POST.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// unsafeMethod says whether a request of method may change something.
func unsafeMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// sessionID is the store's name for a cookie's value: its SHA-256, in hex.
func sessionID(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:])
}

// randomToken is 32 random bytes, base64url without padding.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// validCookieValue says whether v has the shape randomToken gives: a
// cookie of any other shape is not looked up.
func validCookieValue(v string) bool {
	if len(v) != 43 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// session is the live session r's cookie names, touched if stale, or
// errNoSession.
func (s *Server) session(w http.ResponseWriter, r *http.Request) (core.Session, error) {
	if s.sessions == nil {
		return core.Session{}, errNoSession
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil || !validCookieValue(c.Value) {
		return core.Session{}, errNoSession
	}
	id := sessionID(c.Value)
	now := s.now()
	sess, err := s.sessions.Session(r.Context(), id, now.Add(-s.idle))
	if errors.Is(err, core.ErrNoSession) {
		return core.Session{}, errNoSession
	}
	if err != nil {
		return core.Session{}, err
	}
	if now.Sub(sess.LastSeen) >= touchEvery {
		if err := s.sessions.TouchSession(r.Context(), id, now); err == nil {
			s.setSessionCookie(w, r, c.Value)
		}
	}
	return sess, nil
}

// csrfOK says whether r carries sess's CSRF token, in the header or, for
// a form, the "csrf" field (a form's body is read here, capped at the
// largest form's, the chat's message).
func csrfOK(r *http.Request, sess core.Session) bool {
	got := r.Header.Get(csrfHeader)
	if got == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		r.Body = http.MaxBytesReader(nil, r.Body, maxChatBody)
		if err := r.ParseForm(); err == nil {
			got = r.PostForm.Get("csrf")
		}
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.CSRF)) == 1
}

// setSessionCookie sets the session cookie to value, for s.idle.
func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, value string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: value, Path: "/", MaxAge: int(s.idle / time.Second),
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
}

// clearSessionCookie tells the browser to drop the session cookie.
func clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
}

// loginLimiter counts failed logins per minute.
type loginLimiter struct {
	mu     sync.Mutex
	minute int64
	failed int
}

// allow says whether a login may be tried now.
func (l *loginLimiter) allow(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := now.Unix() / 60; m != l.minute {
		l.minute, l.failed = m, 0
	}
	return l.failed < loginFailures
}

func (l *loginLimiter) fail(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := now.Unix() / 60; m != l.minute {
		l.minute, l.failed = m, 0
	}
	l.failed++
}

// tokenInURL says whether r's query carries something named like a
// credential: the token never travels in a URL (it would stay in the
// history, the logs and the Referer), so such a request is refused
// rather than read.
func tokenInURL(r *http.Request) bool {
	for k := range r.URL.Query() {
		switch strings.ToLower(k) {
		case "token", "access_token", "api_token", "auth", "authorization", "session", "csrf":
			return true
		}
	}
	return false
}

// getLogin shows the login form, or sends a signed-in browser home.
func (s *Server) getLogin(w http.ResponseWriter, r *http.Request) {
	if _, err := s.session(w, r); err == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s.login(w, http.StatusOK, pageData{Note: note(r.URL.Query().Get("note"))})
}

// postLogin checks the token typed into the form and starts a session:
// a new one, whatever cookie came with the request (whose session, if
// any, ends: the session is rotated at each login). A login also deletes
// the sessions idle too long, which no request would otherwise remove.
func (s *Server) postLogin(w http.ResponseWriter, r *http.Request) {
	if s.sessions == nil {
		s.login(w, http.StatusServiceUnavailable, pageData{Error: "Signing in from a browser is not available on this daemon."})
		return
	}
	if !sameOrigin(r) {
		s.login(w, http.StatusForbidden, pageData{Error: "This form must be sent from shelldon's own page."})
		return
	}
	now := s.now()
	if !s.logins.allow(now) {
		w.Header().Set("Retry-After", "60")
		s.login(w, http.StatusTooManyRequests, pageData{Error: "Too many wrong tokens in the last minute. Wait a minute and try again."})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
	if err := r.ParseForm(); err != nil {
		s.login(w, http.StatusBadRequest, pageData{Error: "The form could not be read."})
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	if !s.tokenIs(tok) {
		s.logins.fail(now)
		s.log.Warn("web login refused: wrong token", "remote", r.RemoteAddr)
		s.login(w, http.StatusUnauthorized, pageData{Error: "That is not the API token."})
		return
	}
	if c, err := r.Cookie(sessionCookie); err == nil && validCookieValue(c.Value) {
		_ = s.sessions.DeleteSession(r.Context(), sessionID(c.Value))
	}
	// Housekeeping: a failure leaves the rows for the next login.
	if n, err := s.sessions.ExpireSessions(r.Context(), now.Add(-s.idle)); err != nil {
		s.log.Error("web login: expire idle sessions", "err", err)
	} else if n > 0 {
		s.log.Info("web sessions expired", "count", n)
	}
	value := randomToken()
	agent := r.UserAgent()
	sess := core.Session{ID: sessionID(value), CSRF: randomToken(), Created: now, LastSeen: now, Agent: agent}
	if err := s.sessions.CreateSession(r.Context(), sess); err != nil {
		s.log.Error("web login: create session", "err", err)
		s.login(w, http.StatusInternalServerError, pageData{Error: "The session could not be saved; see the daemon's log."})
		return
	}
	s.log.Info("web login", "remote", r.RemoteAddr)
	s.setSessionCookie(w, r, value)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// postLogout ends the browser's session.
func (s *Server) postLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil && validCookieValue(c.Value) && s.sessions != nil {
		if err := s.sessions.DeleteSession(r.Context(), sessionID(c.Value)); err != nil {
			s.log.Error("web logout", "err", err)
		}
	}
	clearSessionCookie(w, r)
	back(w, r, "/login", "signed-out")
}

// postRevokeSessionsPage is the settings page's "Sign out everywhere".
func (s *Server) postRevokeSessionsPage(w http.ResponseWriter, r *http.Request) {
	if s.sessions != nil {
		n, err := s.sessions.RevokeSessions(r.Context())
		if err != nil {
			s.log.Error("revoke web sessions", "err", err)
			s.show(w, http.StatusInternalServerError, "Settings", pageData{Error: "The sessions could not be ended; see the daemon's log."}, func(*page) {})
			return
		}
		s.log.Info("web sessions revoked", "count", n)
	}
	clearSessionCookie(w, r)
	back(w, r, "/login", "signed-out")
}

// postRevokeSessions ends every browser session, the caller's included.
func (s *Server) postRevokeSessions(w http.ResponseWriter, r *http.Request) {
	if s.sessions == nil {
		writeJSON(w, http.StatusOK, map[string]int{"revoked": 0})
		return
	}
	n, err := s.sessions.RevokeSessions(r.Context())
	if err != nil {
		s.log.Error("revoke web sessions", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "the sessions could not be revoked")
		return
	}
	s.log.Info("web sessions revoked", "count", n)
	clearSessionCookie(w, r)
	writeJSON(w, http.StatusOK, map[string]int{"revoked": n})
}

// getHome sends a signed-in browser to the chat, any other to the login
// form.
func (s *Server) getHome(w http.ResponseWriter, r *http.Request) {
	if _, err := s.session(w, r); err != nil {
		if !errors.Is(err, errNoSession) {
			s.log.Error("web session", "err", err)
		}
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/chat", http.StatusSeeOther)
}

// login shows the login form.
func (s *Server) login(w http.ResponseWriter, status int, d pageData) {
	s.show(w, status, "Sign in", d, func(p *page) {
		p.m(`<form method="post" action="/login" class="login">
<p><label for="token">API token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus></p>
<p><button type="submit">Sign in</button></p>
</form>
<p>The token is in <code>SHELLDON_API_TOKEN</code>, or else in the file <code>api_token</code> in shelldon's home.</p>
`)
	})
}
