package web

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/shelldon/shelldon/internal/core"
)

// The owner's commands on a schedule, as POST /api/schedules/{id}/{action}
// and `shelldon schedules` name them. Creating one is a decision on a
// schedule call: it goes through /api/approvals.
const (
	SchedulePause  = "pause"
	ScheduleResume = "resume"
	ScheduleRemove = "remove"
)

// ScheduleActions are the actions POST /api/schedules/{id}/{action} takes.
var ScheduleActions = []string{SchedulePause, ScheduleResume, ScheduleRemove}

// The refusals a ScheduleKeeper's error wraps; the error's own text is the
// owner's to read.
var (
	// ErrNoSchedule: no schedule has that id: 404.
	ErrNoSchedule = errors.New("no such schedule")
	// ErrScheduleRefused: the schedule cannot do that (it was removed): 409.
	ErrScheduleRefused = errors.New("refused")
)

// ScheduleKeeper lists the schedules, carries out the owner's commands on
// them and keeps the inbox of what their runs said.
type ScheduleKeeper interface {
	// Schedules lists the schedules that are not removed.
	Schedules(ctx context.Context) ([]core.ScheduleView, error)
	// ScheduleAction carries out action (Schedule*) on schedule id,
	// audited as done by by, and returns the schedule as it is now.
	ScheduleAction(ctx context.Context, id int64, action, by string) (core.ScheduleView, error)
	// Inbox lists the inbox oldest first, only unread items when asked.
	Inbox(ctx context.Context, unreadOnly bool) ([]core.InboxItem, error)
	// MarkInboxRead marks the items up to id upTo read; it returns how many.
	MarkInboxRead(ctx context.Context, upTo int64) (int, error)
}

// maxInboxReadBody caps POST /api/inbox/read.
const maxInboxReadBody = 1 << 10

// routeSchedules adds the schedules' and the inbox's endpoints to mux.
func (s *Server) routeSchedules(mux *http.ServeMux, keeper ScheduleKeeper) {
	h := scheduleHandlers{s: s, k: keeper}
	mux.Handle("GET /api/schedules", s.auth(http.HandlerFunc(h.list)))
	mux.Handle("GET /api/schedules/{id}", s.auth(http.HandlerFunc(h.one)))
	mux.Handle("POST /api/schedules/{id}/{action}", s.auth(http.HandlerFunc(h.action)))
	mux.Handle("GET /api/inbox", s.auth(http.HandlerFunc(h.inbox)))
	mux.Handle("POST /api/inbox/read", s.auth(http.HandlerFunc(h.read)))
}

type scheduleHandlers struct {
	s *Server
	k ScheduleKeeper
}

// list answers {"schedules": [...]}, each with its next run.
func (h scheduleHandlers) list(w http.ResponseWriter, r *http.Request) {
	list := []core.ScheduleView{}
	if h.k != nil {
		var err error
		if list, err = h.k.Schedules(r.Context()); err != nil {
			h.s.log.Error("list schedules", "err", err)
			writeError(w, http.StatusInternalServerError, "internal", "could not list the schedules")
			return
		}
	}
	if list == nil {
		list = []core.ScheduleView{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedules": list})
}

// one answers {"schedule": {...}}.
func (h scheduleHandlers) one(w http.ResponseWriter, r *http.Request) {
	id, ok := scheduleID(w, r)
	if !ok {
		return
	}
	if h.k != nil {
		list, err := h.k.Schedules(r.Context())
		if err != nil {
			h.s.log.Error("list schedules", "err", err)
			writeError(w, http.StatusInternalServerError, "internal", "could not read the schedules")
			return
		}
		if i := slices.IndexFunc(list, func(v core.ScheduleView) bool { return v.ID == id }); i >= 0 {
			writeJSON(w, http.StatusOK, map[string]any{"schedule": list[i]})
			return
		}
	}
	writeError(w, http.StatusNotFound, "not_found", "no such schedule")
}

// action pauses, resumes or removes a schedule; the body is not read.
func (h scheduleHandlers) action(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	if !slices.Contains(ScheduleActions, action) {
		writeError(w, http.StatusNotFound, "not_found", "actions: "+strings.Join(ScheduleActions, ", ")+" (a new schedule is approved through /api/approvals)")
		return
	}
	id, ok := scheduleID(w, r)
	if !ok {
		return
	}
	if h.k == nil {
		writeError(w, http.StatusNotFound, "not_found", "no schedules")
		return
	}
	v, err := h.k.ScheduleAction(r.Context(), id, action, "http")
	switch {
	case errors.Is(err, ErrNoSchedule):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
		return
	case errors.Is(err, ErrScheduleRefused):
		writeError(w, http.StatusConflict, "conflict", err.Error())
		return
	case err != nil:
		h.s.log.Error("schedule action", "action", action, "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "the schedule could not be changed: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedule": v})
}

// scheduleID reads the {id} of the path, answering 404 for one that is
// not a schedule's id.
func scheduleID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		writeError(w, http.StatusNotFound, "not_found", "no such schedule: an id is a positive number")
		return 0, false
	}
	return id, true
}

// inbox answers {"inbox": [...]}, oldest first: the unread items (at most
// the oldest 100), or with ?all=1 the newest 100, read or not. Reading
// marks nothing; POST /api/inbox/read does.
func (h scheduleHandlers) inbox(w http.ResponseWriter, r *http.Request) {
	all := false
	switch v := r.URL.Query().Get("all"); v {
	case "", "0", "false":
	case "1", "true":
		all = true
	default:
		writeError(w, http.StatusBadRequest, "bad_request", "all is 1 or 0")
		return
	}
	items := []core.InboxItem{}
	if h.k != nil {
		var err error
		if items, err = h.k.Inbox(r.Context(), !all); err != nil {
			h.s.log.Error("read the inbox", "err", err)
			writeError(w, http.StatusInternalServerError, "internal", "could not read the inbox")
			return
		}
	}
	if items == nil {
		items = []core.InboxItem{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"inbox": items})
}

type inboxRead struct {
	UpTo *int64 `json:"up_to"`
}

// read marks the inbox read up to {"up_to": id}, the last item the client
// showed, so an item that came after it stays unread.
func (h scheduleHandlers) read(w http.ResponseWriter, r *http.Request) {
	var req inboxRead
	if !decode(w, r, &req, maxInboxReadBody) {
		return
	}
	if req.UpTo == nil || *req.UpTo < 0 {
		writeError(w, http.StatusBadRequest, "bad_request", `send {"up_to": ID}, the id of the last item you showed`)
		return
	}
	n := 0
	if h.k != nil {
		var err error
		if n, err = h.k.MarkInboxRead(r.Context(), *req.UpTo); err != nil {
			h.s.log.Error("mark the inbox read", "err", err)
			writeError(w, http.StatusInternalServerError, "internal", "could not mark the inbox read")
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"marked": n})
}
