// Package web is shelldon's HTTP API and web UI: chat, audit and health,
// behind a bearer token or a browser's session (session.go). It reaches
// the agent only through the core's calls; it holds no model credential
// and renders nothing the model could word as an approval. Every API
// answer is JSON, an unclean path included, but /metrics, which is the
// Prometheus text format (metrics.go); the UI's pages are HTML the daemon
// writes (page_*.go). It answers only to the hosts the owner
// allows, and never to another origin. The server's limits (timeouts,
// header and body caps, the connection cap of Listener) are in server.go.
package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/core"
)

// Chatter runs a turn: Send one for each request, SendOnce one per
// Idempotency-Key (see core.Core.SendOnce).
type Chatter interface {
	Send(ctx context.Context, chat, text string, ev core.Events) (core.Outcome, error)
	SendOnce(ctx context.Context, chat, key, text string, ev core.Events) (core.Outcome, error)
}

// Approver lists, shows and decides the owner's approval requests.
type Approver interface {
	Approvals(ctx context.Context) ([]core.ApprovalView, error)
	// Approval returns one request, in any state, with its whole
	// arguments; core.ErrUnknownApproval when there is none.
	Approval(ctx context.Context, id string) (core.ApprovalView, error)
	Decide(ctx context.Context, id string, approve bool, by string, ev core.Events) (core.Outcome, error)
}

var _ Approver = (*core.Core)(nil)

// ToolLister lists the built-in and self-coded tools.
type ToolLister interface {
	Tools(ctx context.Context) ([]core.ToolView, error)
	FindTool(name string) (core.ToolDetail, string, error)
	ToolAction(ctx context.Context, action, name, by string) (string, error)
}

// Settings reads and changes the owner's settings.
type Settings interface {
	// Settings is the effective config, secrets only as set or unset.
	Settings() map[string]any
	// SettingsOverlay is what config.local.yaml sets over config.yaml.
	SettingsOverlay() (map[string]any, error)
	// KeyOrigins says where the key in each variable may be sent.
	KeyOrigins() map[string][]string
	// ApplySettings checks a change as a whole, then writes and applies it.
	ApplySettings(ctx context.Context, ch config.SettingsChange) ([]string, error)
}

// AuditReader reads the audit trail.
type AuditReader interface {
	Audit(ctx context.Context, q core.AuditQuery) ([]core.AuditEntry, error)
}

// Server serves the HTTP API.
type Server struct {
	chat   Chatter
	appr   Approver
	tools  ToolLister
	skills SkillKeeper
	sets   Settings
	audit  AuditReader
	token  atomic.Pointer[[]byte] // the API token (SetToken)
	log    *slog.Logger
	mux    *http.ServeMux
	health func() map[string]any

	conv     Conversations // the chat page's history; nil: none shown
	sessions SessionStore  // nil: no browser sessions
	idle     time.Duration
	hosts    hostGuard
	logins   loginLimiter
	now      func() time.Time
}

// Options configure a Server.
type Options struct {
	Chat      Chatter
	Approvals Approver
	Tools     ToolLister
	Skills    SkillKeeper
	Settings  Settings
	Audit     AuditReader
	Schedules ScheduleKeeper // the schedules and their inbox (schedules.go); nil: none
	Memory    Memory         // the remembered facts (memory.go); nil: none
	Usage     UsageReader    // spend by day, model and chat, budgets (usage.go); nil: none
	Metrics   Metrics        // GET /metrics, the Prometheus text format (metrics.go); nil: none
	Token     string         // the bearer token every /api call must carry
	Logger    *slog.Logger
	Health    func() map[string]any // extra fields for /healthz; nil for none
	// Conversations reads a chat for the chat page; nil: none shown.
	Conversations Conversations
	// Sessions keeps the browsers signed in (session.go); nil: only the
	// bearer token is accepted.
	Sessions SessionStore
	// SessionIdle ends a session unused this long; DefaultSessionIdle if 0.
	SessionIdle time.Duration
	// AllowedHosts are the names a request's Host may carry besides
	// localhost, 127.0.0.1 and ::1 (any other is refused).
	AllowedHosts []string
	Now          func() time.Time // default time.Now
}

// New returns the API handler. An empty token is refused: the API is never open.
func New(opts Options) (*Server, error) {
	if len(opts.Token) < 16 {
		return nil, errors.New("web: the API token must be at least 16 characters")
	}
	s := &Server{chat: opts.Chat, appr: opts.Approvals, tools: opts.Tools, skills: opts.Skills, sets: opts.Settings, audit: opts.Audit, log: opts.Logger, health: opts.Health,
		conv: opts.Conversations, sessions: opts.Sessions, idle: opts.SessionIdle, hosts: newHostGuard(opts.AllowedHosts), now: opts.Now}
	tok := []byte(opts.Token)
	s.token.Store(&tok)
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.idle <= 0 {
		s.idle = DefaultSessionIdle
	}
	if s.now == nil {
		s.now = time.Now
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /{$}", s.getHome)
	mux.Handle("GET /static/", serveStatic())
	// Browsers ask for it on their own; nothing to show, and no 404 in
	// their console.
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "private, max-age=86400")
		w.WriteHeader(http.StatusNoContent)
	})
	s.routeChat(mux)
	s.routeSkillPages(mux)
	s.routeSettingsPage(mux)
	s.routeApprovals(mux)
	s.routeAudit(mux)
	s.routeToolPages(mux)
	mux.HandleFunc("GET /login", s.getLogin)
	mux.HandleFunc("POST /login", s.postLogin)
	mux.HandleFunc("POST /logout", s.sessionOnly(s.postLogout))
	mux.HandleFunc("POST /sessions/revoke", s.sessionOnly(s.postRevokeSessionsPage))
	mux.Handle("POST /api/sessions/revoke", s.auth(http.HandlerFunc(s.postRevokeSessions)))
	mux.Handle("POST /api/chat", s.auth(http.HandlerFunc(s.postChat)))
	mux.Handle("GET /api/audit", s.auth(http.HandlerFunc(s.getAudit)))
	mux.Handle("GET /api/approvals", s.auth(http.HandlerFunc(s.getApprovals)))
	mux.Handle("GET /api/tools", s.auth(http.HandlerFunc(s.getTools)))
	mux.Handle("GET /api/settings", s.auth(http.HandlerFunc(s.getSettings)))
	mux.Handle("POST /api/settings", s.auth(http.HandlerFunc(s.postSettings)))
	mux.Handle("GET /api/tools/{name}", s.auth(http.HandlerFunc(s.getTool)))
	mux.Handle("POST /api/tools/{name}/{action}", s.auth(http.HandlerFunc(s.postToolAction)))
	mux.Handle("GET /api/skills", s.auth(http.HandlerFunc(s.getSkills)))
	mux.Handle("POST /api/skills/{name}/{action}", s.auth(http.HandlerFunc(s.postSkillAction)))
	mux.Handle("GET /api/approvals/{id}", s.auth(http.HandlerFunc(s.getApproval)))
	mux.Handle("POST /api/approvals/{id}", s.auth(http.HandlerFunc(s.postApproval)))
	s.routeSchedules(mux, opts.Schedules)
	s.routeMemory(mux, opts.Memory)
	s.routeUsage(mux, opts.Usage)
	s.routeMetrics(mux, opts.Metrics)
	noEndpoint := s.auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path))
	}))
	// "/api" as well as "/api/": without it the mux would redirect.
	mux.Handle("/api", noEndpoint)
	mux.Handle("/api/", noEndpoint)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "not found")
	})
	s.mux = mux
	return s, nil
}

// ServeHTTP answers every request in JSON. A path that is not in its
// clean form (an empty, "." or ".." segment, escaped or not) is refused
// here, before the mux, which would redirect it to an HTML page.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	if !s.hosts.allows(r.Host) {
		// A name the owner did not list: a page on another site that
		// points a name of its own at this address (DNS rebinding).
		writeError(w, http.StatusMisdirectedRequest, "host_not_allowed",
			"this daemon does not answer to that host name; the owner lists the names it answers to in server.allowed_hosts")
		return
	}
	switch r.Method {
	case http.MethodConnect:
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "CONNECT is not served")
		return
	case http.MethodOptions:
		// No CORS: a preflight is refused, so no other origin's page
		// may send what it needs one for.
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "OPTIONS is not served: there is no cross-origin access")
		return
	}
	if tokenInURL(r) {
		writeError(w, http.StatusBadRequest, "token_in_url", "a token never goes in a URL: send it in the Authorization header, or sign in at /login")
		return
	}
	if !cleanPath(r.URL.EscapedPath()) || !cleanPath(r.URL.Path) {
		writeError(w, http.StatusBadRequest, "bad_path", `the path is not in its clean form: no empty, "." or ".." segments`)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// cleanPath reports whether p is absolute and path.Clean leaves it as it
// is, but for a trailing slash: what ServeMux serves without a redirect.
func cleanPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// SetToken makes token the API's from the next request on (the owner
// replaced it on the settings page or through the API) and ends every
// browser's session: one signed in with the token replaced, which may
// have leaked, must not outlive it.
func (s *Server) SetToken(ctx context.Context, token string) error {
	if len(token) < 16 {
		return errors.New("web: the API token must be at least 16 characters")
	}
	tok := []byte(token)
	s.token.Store(&tok)
	if s.sessions == nil {
		return nil
	}
	n, err := s.sessions.RevokeSessions(ctx)
	if err != nil {
		return fmt.Errorf("web: the new token serves, but the browsers' sessions could not be ended: %w", err)
	}
	s.log.Info("the API token was replaced; web sessions ended", "count", n)
	return nil
}

// tokenIs reports whether tok is the API token, in constant time.
func (s *Server) tokenIs(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), *s.token.Load()) == 1
}

// auth requires the bearer token, compared in constant time, or a
// browser's session (session.go): for a request that may change anything,
// from the daemon's own origin and with the session's CSRF token. A
// request that sends an Authorization header is judged by it alone.
func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("Authorization"); h != "" || s.sessions == nil {
			// The scheme is case-insensitive (RFC 9110); the token is not.
			scheme, tok, _ := strings.Cut(h, " ")
			if !strings.EqualFold(scheme, "Bearer") || !s.tokenIs(strings.TrimSpace(tok)) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="shelldon"`)
				writeError(w, http.StatusUnauthorized, "unauthorized", "a valid bearer token is required (Authorization: Bearer <token>)")
				return
			}
			servingOwner(r)
			next.ServeHTTP(w, r)
			return
		}
		s.sessionOnly(next.ServeHTTP)(w, r)
	})
}

// sessionOnly requires a browser's live session, and for a request that
// may change anything, the daemon's own origin and the session's CSRF
// token.
func (s *Server) sessionOnly(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, err := s.session(w, r)
		if err != nil {
			if !errors.Is(err, errNoSession) {
				s.log.Error("web session", "err", err)
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="shelldon"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "a valid bearer token (Authorization: Bearer <token>) or a signed-in browser is required")
			return
		}
		if unsafeMethod(r.Method) {
			if !sameOrigin(r) {
				writeError(w, http.StatusForbidden, "cross_origin", "a browser's request that changes something must come from shelldon's own page (Origin)")
				return
			}
			if !csrfOK(r, sess) {
				writeError(w, http.StatusForbidden, "csrf", "the request lacks this session's CSRF token ("+csrfHeader+")")
				return
			}
		}
		servingOwner(r)
		next(w, r)
	}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"status": "ok"}
	if s.health != nil {
		for k, v := range s.health() {
			body[k] = v
		}
	}
	writeJSON(w, http.StatusOK, body)
}

// validName reports whether name, a chat's or a tool's, is 1-64 letters,
// digits or _.:@-.
func validName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_.:@-", c)
		if !ok {
			return false
		}
	}
	return true
}

type chatRequest struct {
	Chat string `json:"chat"`
	Text string `json:"text"`
}

func (s *Server) postChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if !decode(w, r, &req, maxChatBody) {
		return
	}
	if req.Chat == "" {
		req.Chat = "web"
	}
	if !validName(req.Chat) {
		writeError(w, http.StatusBadRequest, "bad_request", `"chat" must be 1-64 letters, digits or _.:@-`)
		return
	}
	var (
		out core.Outcome
		err error
	)
	if key := r.Header.Get(idempotencyHeader); key != "" {
		if !validKey(key) {
			writeError(w, http.StatusBadRequest, "bad_request", idempotencyHeader+" must be 1-128 printable ASCII characters")
			return
		}
		out, err = s.chat.SendOnce(r.Context(), req.Chat, "api:"+key, req.Text, core.Events{})
	} else {
		out, err = s.chat.Send(r.Context(), req.Chat, req.Text, core.Events{})
	}
	switch {
	case errors.Is(err, core.ErrBadInput):
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	case errors.Is(err, core.ErrRunning):
		writeError(w, http.StatusConflict, "conflict", "the turn of this "+idempotencyHeader+" is still running; ask again when it has finished")
		return
	case err != nil && out.Turn == 0:
		s.log.Error("chat turn failed", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "the turn could not run: "+err.Error())
		return
	case err != nil:
		s.log.Error("chat turn broke", "turn", out.Turn, "err", err)
	}
	if out.Approvals == nil {
		out.Approvals = []core.ApprovalView{}
	}
	writeJSON(w, http.StatusOK, out)
}

// idempotencyHeader names a chat request across a client's retries: its
// turn runs once, and a retry gets that turn's outcome (again says so).
const idempotencyHeader = "Idempotency-Key"

// validKey reports whether an Idempotency-Key is 1-128 printable ASCII
// characters.
func validKey(k string) bool {
	if len(k) == 0 || len(k) > 128 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

func (s *Server) getApprovals(w http.ResponseWriter, r *http.Request) {
	list, err := s.appr.Approvals(r.Context())
	if err != nil {
		s.log.Error("list approvals", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "could not list the approval requests")
		return
	}
	if list == nil {
		list = []core.ApprovalView{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": list})
}

// getApproval returns one request as data: the daemon's rendering
// (summary) and every byte of its canonical arguments (arguments), as JSON
// strings and nothing more; a client that shows them escapes them for its
// own screen.
func (s *Server) getApproval(w http.ResponseWriter, r *http.Request) {
	v, err := s.appr.Approval(r.Context(), r.PathValue("id"))
	switch {
	case errors.Is(err, core.ErrUnknownApproval):
		writeError(w, http.StatusNotFound, "not_found", "no such approval request")
		return
	case err != nil:
		s.log.Error("read approval", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "could not read the approval request")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"approval": v})
}

func (s *Server) getTools(w http.ResponseWriter, r *http.Request) {
	if s.tools == nil {
		writeJSON(w, http.StatusOK, map[string]any{"tools": []core.ToolView{}})
		return
	}
	list, err := s.tools.Tools(r.Context())
	if err != nil {
		s.log.Error("list tools", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "could not list the tools")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": list})
}

func (s *Server) getTool(w http.ResponseWriter, r *http.Request) {
	if s.tools != nil {
		if t, _, err := s.tools.FindTool(r.PathValue("name")); err == nil {
			writeJSON(w, http.StatusOK, map[string]any{"tool": t.Manifest, "code": t.Code, "test": t.Test})
			return
		}
	}
	writeError(w, http.StatusNotFound, "not_found", "no self-coded tool of that name")
}

func (s *Server) postToolAction(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	switch action {
	case "quarantine", "restore", "rollback", "remove":
	default:
		writeError(w, http.StatusNotFound, "not_found", "actions: quarantine, restore, rollback, remove (approve and deny go through /api/approvals)")
		return
	}
	if s.tools == nil {
		writeError(w, http.StatusNotFound, "not_found", "no self-coded tools")
		return
	}
	msg, err := s.tools.ToolAction(r.Context(), action, r.PathValue("name"), "http")
	switch {
	case errors.Is(err, core.ErrNoSuchTool), errors.Is(err, core.ErrNoVersion):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
		return
	case err != nil:
		writeError(w, http.StatusConflict, "conflict", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": msg})
}

func (s *Server) getSettings(w http.ResponseWriter, r *http.Request) {
	if s.sets == nil {
		writeError(w, http.StatusNotFound, "not_found", "settings are not available")
		return
	}
	s.writeSettings(w, nil)
}

// writeSettings answers with the effective config, the overlay and the
// key bindings, and changed when not nil.
func (s *Server) writeSettings(w http.ResponseWriter, changed []string) {
	overlay, err := s.sets.SettingsOverlay()
	if err != nil {
		s.log.Error("read the settings overlay", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "config.local.yaml could not be read; see shelldon doctor")
		return
	}
	body := map[string]any{"config": s.sets.Settings(), "overlay": overlay, "key_origins": s.sets.KeyOrigins()}
	if changed != nil {
		body["changed"] = changed
	}
	writeJSON(w, http.StatusOK, body)
}

type settingsRequest struct {
	Config  map[string]any    `json:"config"`
	Secrets map[string]string `json:"secrets"`
	Revert  []string          `json:"revert"`
	Clear   []string          `json:"clear_secrets"`
}

// postSettings merges config changes into config.local.yaml and secrets
// into .env, reverts keys of the former and clears variables of the
// latter, validated first, applied at once. Secret values are never
// echoed, not even in errors.
func (s *Server) postSettings(w http.ResponseWriter, r *http.Request) {
	if s.sets == nil {
		writeError(w, http.StatusNotFound, "not_found", "settings are not available")
		return
	}
	var req settingsRequest
	if !decode(w, r, &req, maxSettingsBody) {
		return
	}
	ch := config.SettingsChange{Config: req.Config, Secrets: req.Secrets, Revert: req.Revert, Clear: req.Clear}
	if len(ch.Config) == 0 && len(ch.Secrets) == 0 && len(ch.Revert) == 0 && len(ch.Clear) == 0 {
		writeError(w, http.StatusBadRequest, "bad_request", `send {"config": {...}}, {"secrets": {"NAME": "value"}}, {"revert": ["key"]} and/or {"clear_secrets": ["NAME"]}`)
		return
	}
	diff, err := s.sets.ApplySettings(r.Context(), ch)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid", scrubSecrets(err.Error(), req.Secrets))
		return
	}
	if diff == nil {
		diff = []string{}
	}
	s.writeSettings(w, diff)
}

// scrubSecrets is msg with every secret value of the request replaced:
// an error never echoes one, whatever produced it.
func scrubSecrets(msg string, secrets map[string]string) string {
	for name, v := range secrets {
		if v != "" && strings.Contains(msg, v) {
			msg = strings.ReplaceAll(msg, v, "<the value of "+name+">")
		}
	}
	return msg
}

type decision struct {
	Approve *bool `json:"approve"`
}

// postApproval decides a request and answers once the resumed turn ends.
func (s *Server) postApproval(w http.ResponseWriter, r *http.Request) {
	var d decision
	if !decode(w, r, &d, maxDecisionBody) {
		return
	}
	if d.Approve == nil {
		writeError(w, http.StatusBadRequest, "bad_request", `send {"approve": true} or {"approve": false}`)
		return
	}
	out, err := s.appr.Decide(r.Context(), r.PathValue("id"), *d.Approve, "http", core.Events{})
	switch {
	case errors.Is(err, core.ErrUnknownApproval):
		writeError(w, http.StatusNotFound, "not_found", "no such approval request")
		return
	case errors.Is(err, core.ErrAlreadyDecided):
		writeError(w, http.StatusConflict, "already_decided", "this request was already decided")
		return
	case errors.Is(err, core.ErrApprovalExpired):
		writeError(w, http.StatusConflict, "expired", "this request has expired")
		return
	case errors.Is(err, core.ErrStaleApproval):
		// Decided, but no longer possible (a proposed tool changed since
		// the owner saw it): the reason is the owner's to read.
		writeError(w, http.StatusConflict, "stale", err.Error())
		return
	case err != nil && out.Turn == 0:
		s.log.Error("decide", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "the decision could not be carried out: "+err.Error())
		return
	}
	if out.Approvals == nil {
		out.Approvals = []core.ApprovalView{}
	}
	writeJSON(w, http.StatusOK, out)
}
