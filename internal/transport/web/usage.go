package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/shelldon/shelldon/internal/core"
)

// UsageReader reports what was spent: tokens and dollars by day, model,
// chat and origin, and the budgets' state.
type UsageReader interface {
	// UsageReport covers the last days, today included; core.ErrBadInput
	// for days out of range.
	UsageReport(ctx context.Context, days int) (core.UsageReport, error)
}

var _ UsageReader = (*core.Core)(nil)

// defaultUsageDays is what GET /api/usage covers without ?days.
const defaultUsageDays = 30

// routeUsage adds GET /api/usage to mux; with u nil there is none.
func (s *Server) routeUsage(mux *http.ServeMux, u UsageReader) {
	if u == nil {
		return
	}
	mux.Handle("GET /api/usage", s.auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		getUsage(w, r, u, s.log)
	})))
}

// getUsage answers GET /api/usage?days=N (1 to core.MaxUsageDays,
// default 30): the core.UsageReport, read only.
func getUsage(w http.ResponseWriter, r *http.Request, u UsageReader, log *slog.Logger) {
	days := defaultUsageDays
	for k, vs := range r.URL.Query() {
		if k != "days" {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("unknown parameter %q; /api/usage takes days", k))
			return
		}
		n, err := strconv.Atoi(vs[0])
		if len(vs) > 1 || err != nil || n < 1 || n > core.MaxUsageDays {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("days must be one number from 1 to %d", core.MaxUsageDays))
			return
		}
		days = n
	}
	rep, err := u.UsageReport(r.Context(), days)
	switch {
	case errors.Is(err, core.ErrBadInput):
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	case err != nil:
		log.Error("usage report", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "could not read the usage")
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
