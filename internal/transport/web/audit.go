package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/shelldon/shelldon/internal/core"
)

// maxAuditPage is the most entries one /api/audit page holds: the
// store's cap (store.MaxAuditLimit; a test checks they agree).
const maxAuditPage = 1000

// auditParams are the query parameters of GET /api/audit.
var auditParams = []string{"limit", "before", "chat", "tool", "turn", "kind", "outcome"}

type auditEntry struct {
	ID         int64     `json:"id"`
	At         time.Time `json:"at"`
	Chat       string    `json:"chat"`
	Turn       int64     `json:"turn"`
	Kind       string    `json:"kind"`
	Tool       string    `json:"tool"`
	Args       string    `json:"args"`
	Summary    string    `json:"summary"`
	OK         bool      `json:"ok"`
	DurationMS int64     `json:"duration_ms"`
}

type auditPage struct {
	Audit []auditEntry `json:"audit"`
	// Next is the before of the next (older) page; null on the last.
	Next *int64 `json:"next"`
}

// getAudit answers a page of the audit trail, newest first: limit entries
// (default 50, at most 1000) older than the entry id before, of one chat,
// one tool, one turn, one kind (exactly) or one outcome (ok or failed);
// next names the page after it.
func (s *Server) getAudit(w http.ResponseWriter, r *http.Request) {
	q, msg := auditQuery(r.URL.Query())
	if msg != "" {
		writeError(w, http.StatusBadRequest, "bad_request", msg)
		return
	}
	entries, err := s.audit.Audit(r.Context(), q)
	if err == nil && len(entries) > q.Limit {
		entries = entries[:q.Limit]
	}
	var next *int64
	if err == nil && len(entries) == q.Limit {
		// A full page: the next one exists if one older entry does.
		more := q
		more.Before, more.Limit = entries[len(entries)-1].ID, 1
		var older []core.AuditEntry
		if older, err = s.audit.Audit(r.Context(), more); len(older) > 0 {
			next = &more.Before
		}
	}
	if err != nil {
		s.log.Error("read audit", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "could not read the audit trail")
		return
	}
	out := auditPage{Audit: make([]auditEntry, len(entries)), Next: next}
	for i, e := range entries {
		out.Audit[i] = auditEntry{e.ID, e.At.UTC(), e.Chat, e.Turn, e.Kind, e.Tool, e.Args, e.Summary, e.OK, e.Duration.Milliseconds()}
	}
	writeJSON(w, http.StatusOK, out)
}

// auditQuery reads /api/audit's parameters, or says what is wrong with
// them: an unknown or repeated parameter, a number out of range, a name
// that cannot be one.
func auditQuery(v url.Values) (core.AuditQuery, string) {
	q := core.AuditQuery{Limit: 50}
	for k, vs := range v {
		known := false
		for _, p := range auditParams {
			known = known || k == p
		}
		switch {
		case !known:
			return q, fmt.Sprintf("unknown parameter %q; the parameters are %v", k, auditParams)
		case len(vs) != 1:
			return q, fmt.Sprintf("%q is given %d times", k, len(vs))
		}
	}
	positive := func(name string, most int64) (int64, string) {
		n, err := strconv.ParseInt(v.Get(name), 10, 64)
		if err != nil || n < 1 || n > most {
			return 0, fmt.Sprintf("%q must be a whole number from 1 to %d", name, most)
		}
		return n, ""
	}
	var msg string
	if v.Has("limit") {
		var n int64
		if n, msg = positive("limit", maxAuditPage); msg != "" {
			return q, msg
		}
		q.Limit = int(n)
	}
	if v.Has("before") {
		if q.Before, msg = positive("before", 1<<53); msg != "" {
			return q, msg
		}
	}
	if v.Has("turn") {
		if q.Turn, msg = positive("turn", 1<<53); msg != "" {
			return q, msg
		}
	}
	for _, p := range []struct {
		name string
		to   *string
	}{{"chat", &q.Chat}, {"tool", &q.Tool}} {
		if !v.Has(p.name) {
			continue
		}
		if !validName(v.Get(p.name)) {
			return q, fmt.Sprintf("%q must be 1-64 letters, digits or _.:@-", p.name)
		}
		*p.to = v.Get(p.name)
	}
	if v.Has("kind") {
		if q.Kind = v.Get("kind"); !core.ValidAuditKind(q.Kind) {
			return q, `"kind" must be 1-64 lowercase letters, digits or _.- (such as tool_call)`
		}
	}
	if v.Has("outcome") {
		if q.Outcome = v.Get("outcome"); q.Outcome != core.AuditOK && q.Outcome != core.AuditFailed {
			return q, fmt.Sprintf(`"outcome" must be %s or %s`, core.AuditOK, core.AuditFailed)
		}
	}
	return q, ""
}
