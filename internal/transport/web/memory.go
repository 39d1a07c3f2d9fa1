package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/shelldon/shelldon/internal/core"
)

// Memory lists and shows the remembered facts, and carries out the
// owner's edits and forgets, each audited as done by by.
type Memory interface {
	Memories(ctx context.Context, q core.FactQuery) ([]core.Fact, error)
	// Memory returns one fact; core.ErrNoSuchFact when there is none.
	Memory(ctx context.Context, id int64) (core.Fact, error)
	// EditMemory refuses a text a fact may not hold with core.ErrBadInput.
	EditMemory(ctx context.Context, id int64, text, by string) (core.Fact, error)
	ForgetMemory(ctx context.Context, id int64, by string) (core.Fact, error)
}

var _ Memory = (*core.Core)(nil)

// memoryAPI serves /api/memory over a Memory.
type memoryAPI struct {
	m   Memory
	log *slog.Logger
}

// routeMemory adds the /api/memory endpoints to mux; with m nil there are
// none.
func (s *Server) routeMemory(mux *http.ServeMux, m Memory) {
	if m == nil {
		return
	}
	a := memoryAPI{m: m, log: s.log}
	mux.Handle("GET /api/memory", s.auth(http.HandlerFunc(a.list)))
	mux.Handle("GET /api/memory/{id}", s.auth(http.HandlerFunc(a.get)))
	mux.Handle("POST /api/memory/{id}", s.auth(http.HandlerFunc(a.edit)))
	mux.Handle("PATCH /api/memory/{id}", s.auth(http.HandlerFunc(a.edit)))
	mux.Handle("DELETE /api/memory/{id}", s.auth(http.HandlerFunc(a.forget)))
}

// maxMemoryBody fits a fact of core.MaxFactChars characters at their most
// escaped (a surrogate pair, \uXXXX\uXXXX, for each).
const maxMemoryBody = 16 << 10

// memoryParams are the query parameters of GET /api/memory.
var memoryParams = []string{"q", "limit", "before"}

type memoryPage struct {
	Facts []core.Fact `json:"facts"`
	// Next is the before of the next (older) page of the list; null on
	// the last, and for a search (its best matches are one page).
	Next *int64 `json:"next"`
}

// getMemory lists the facts newest first, limit (default 50, at most
// 1000) older than the fact id before; or, with q, searches them for its
// words, best match first.
func (a memoryAPI) list(w http.ResponseWriter, r *http.Request) {
	q, msg := memoryQuery(r.URL.Query())
	if msg != "" {
		writeError(w, http.StatusBadRequest, "bad_request", msg)
		return
	}
	facts, err := a.m.Memories(r.Context(), q)
	if err != nil {
		a.log.Error("list facts", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "could not read the memory")
		return
	}
	out := memoryPage{Facts: facts}
	if out.Facts == nil {
		out.Facts = []core.Fact{}
	}
	if q.Query == "" && len(facts) == q.Limit {
		more := q
		more.Before, more.Limit = facts[len(facts)-1].ID, 1
		older, err := a.m.Memories(r.Context(), more)
		if err != nil {
			a.log.Error("list facts", "err", err)
			writeError(w, http.StatusInternalServerError, "internal", "could not read the memory")
			return
		}
		if len(older) > 0 {
			out.Next = &more.Before
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// memoryQuery reads /api/memory's parameters, or says what is wrong with
// them.
func memoryQuery(v url.Values) (core.FactQuery, string) {
	q := core.FactQuery{Limit: 50}
	for k, vs := range v {
		if !slices.Contains(memoryParams, k) {
			return q, fmt.Sprintf("unknown parameter %q; /api/memory takes %s", k, strings.Join(memoryParams, ", "))
		}
		if len(vs) > 1 {
			return q, fmt.Sprintf("the parameter %s is given %d times", k, len(vs))
		}
	}
	q.Query = v.Get("q")
	if len(q.Query) > 4<<10 {
		return q, "q is over 4096 bytes"
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			return q, "limit must be a number from 1 to 1000"
		}
		q.Limit = n
	}
	if s := v.Get("before"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return q, "before must be a fact id (a positive number)"
		}
		q.Before = n
	}
	return q, ""
}

// factID reads the {id} of a /api/memory/{id} path, or answers 400.
func factID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		writeError(w, http.StatusBadRequest, "bad_request", "a fact's id is a positive number")
		return 0, false
	}
	return id, true
}

// factError answers the error of a memory call.
func (a memoryAPI) fail(w http.ResponseWriter, what string, err error) {
	switch {
	case errors.Is(err, core.ErrNoSuchFact):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, core.ErrBadInput):
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
	default:
		a.log.Error(what, "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "could not "+what)
	}
}

func (a memoryAPI) get(w http.ResponseWriter, r *http.Request) {
	id, ok := factID(w, r)
	if !ok {
		return
	}
	f, err := a.m.Memory(r.Context(), id)
	if err != nil {
		a.fail(w, "read the fact", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"fact": f})
}

type factEdit struct {
	Text string `json:"text"`
}

// editFact replaces a fact's text with the owner's (POST or PATCH).
func (a memoryAPI) edit(w http.ResponseWriter, r *http.Request) {
	id, ok := factID(w, r)
	if !ok {
		return
	}
	var req factEdit
	if !decode(w, r, &req, maxMemoryBody) {
		return
	}
	f, err := a.m.EditMemory(r.Context(), id, req.Text, "http")
	if err != nil {
		a.fail(w, "edit the fact", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"fact": f, "message": fmt.Sprintf("Fact #%d is changed.", f.ID)})
}

// forgetFact forgets a fact: gone from the memory and from every later
// prompt; the audit keeps its id and hash.
func (a memoryAPI) forget(w http.ResponseWriter, r *http.Request) {
	id, ok := factID(w, r)
	if !ok {
		return
	}
	if _, err := a.m.ForgetMemory(r.Context(), id, "http"); err != nil {
		a.fail(w, "forget the fact", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"forgotten": id, "message": fmt.Sprintf("Fact #%d is forgotten.", id)})
}
