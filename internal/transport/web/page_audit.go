package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

// The audit page: the audit trail as a table, newest first, a page at a
// time, with a GET form that filters it by chat, tool, turn, kind and
// outcome (the parameters of GET /api/audit, checked the same way) and
// links to the older page and back to the newest that keep the filters.
// Summaries and arguments, which a model or a tool may have worded, go
// through internal/inert and are written as text (page.t); a summary's
// lines are shown as lines (shortLines, as on the approvals page).

// auditArgShown bounds each argument of an entry on the page, in bytes;
// the rest is named by a note (GET /api/audit has every byte).
const auditArgShown = 300

// Bounds of a summary on the page: its characters and its lines (GET
// /api/audit has all of it).
const (
	auditSummaryShown = 300
	auditSummaryLines = 20
)

// auditRow is an audit entry as the page shows it.
type auditRow struct {
	At       string
	Kind     string
	Tool     string
	Chat     string
	Turn     int64
	OK       bool
	Summary  string // shortLines: its lines, each inert
	Args     string // inert.Args, bounded
	Duration string
}

// auditForm is the filter form's fields, as the owner typed or chose them.
type auditForm struct {
	Chat, Tool, Turn, Kind, Outcome, Limit string
}

type auditPageData struct {
	Form     auditForm
	Rows     []auditRow
	Older    string // the next (older) page's URL; "" on the last
	Newest   string // the first page's URL with the same filters; "" on the first
	Filtered bool   // a filter is set
}

func (s *Server) routeAudit(mux *http.ServeMux) {
	mux.HandleFunc("GET /audit", s.uiPage(s.getAuditPage))
}

func (s *Server) getAuditPage(w http.ResponseWriter, r *http.Request, d pageData) {
	v := r.URL.Query()
	// An empty field of the form is no filter.
	for k, vs := range v {
		if len(vs) == 1 && vs[0] == "" {
			delete(v, k)
		}
	}
	page := auditPageData{Form: auditForm{Chat: v.Get("chat"), Tool: v.Get("tool"), Turn: v.Get("turn"),
		Kind: v.Get("kind"), Outcome: v.Get("outcome"), Limit: v.Get("limit")}}
	q, msg := auditQuery(v)
	if msg != "" {
		d.Error = "The filter cannot be used: " + msg + "."
		s.showAudit(w, http.StatusBadRequest, d, page)
		return
	}
	if s.audit == nil {
		d.Error = "The audit trail is not available."
		s.showAudit(w, http.StatusNotFound, d, page)
		return
	}
	entries, more, err := s.auditSlice(r, q)
	if err != nil {
		s.log.Error("web: audit page", "err", err)
		d.Error = "The audit trail could not be read; see the daemon's log."
		s.showAudit(w, http.StatusInternalServerError, d, page)
		return
	}
	page.Filtered = q.Chat != "" || q.Tool != "" || q.Turn != 0 || q.Kind != "" || q.Outcome != ""
	for _, e := range entries {
		row := auditRow{At: e.At.UTC().Format("2006-01-02 15:04:05"), Kind: inert.Name(e.Kind), Tool: inert.Name(e.Tool),
			Chat: inert.Name(e.Chat), Turn: e.Turn, OK: e.OK, Summary: shortLines(e.Summary, auditSummaryShown, auditSummaryLines)}
		if e.Tool == "" {
			row.Tool = ""
		}
		if e.Chat == "" {
			row.Chat = ""
		}
		if e.Args != "" {
			row.Args = inert.Args(e.Args, auditArgShown, "GET /api/audit has every byte")
		}
		if e.Duration > 0 {
			row.Duration = e.Duration.Round(time.Millisecond).String()
		}
		page.Rows = append(page.Rows, row)
	}
	link := func(before int64) string {
		u := url.Values{}
		if q.Chat != "" {
			u.Set("chat", q.Chat)
		}
		if q.Tool != "" {
			u.Set("tool", q.Tool)
		}
		if q.Turn != 0 {
			u.Set("turn", strconv.FormatInt(q.Turn, 10))
		}
		if q.Kind != "" {
			u.Set("kind", q.Kind)
		}
		if q.Outcome != "" {
			u.Set("outcome", q.Outcome)
		}
		if v.Has("limit") {
			u.Set("limit", strconv.Itoa(q.Limit))
		}
		if before != 0 {
			u.Set("before", strconv.FormatInt(before, 10))
		}
		if len(u) == 0 {
			return "/audit"
		}
		return "/audit?" + u.Encode()
	}
	if more {
		page.Older = link(entries[len(entries)-1].ID)
	}
	if q.Before != 0 {
		page.Newest = link(0)
	}
	s.showAudit(w, http.StatusOK, d, page)
}

// showAudit writes the audit page: the filter form, the entries (or
// why there are none, unless d.Error says what went wrong) and the links
// to the other pages.
func (s *Server) showAudit(w http.ResponseWriter, status int, d pageData, data auditPageData) {
	d.Nav = "audit"
	s.show(w, status, "Audit", d, func(p *page) {
		auditFilters(p, data.Form, data.Filtered)
		switch {
		case len(data.Rows) > 0:
			auditTable(p, data.Rows)
		case d.Error == "":
			p.m(`<p class="muted">No entry`)
			if data.Filtered {
				p.m(` matches the filter`)
			}
			p.m(".</p>\n")
		}
		if data.Newest != "" || data.Older != "" {
			p.m(`<nav aria-label="Pages of the audit trail" class="actions pager">
`)
			if data.Newest != "" {
				p.link(data.Newest, "Newest").m("\n")
			}
			if data.Older != "" {
				p.m(`<a href="`).t(data.Older).m(`" rel="next">Older</a>`).m("\n")
			}
			p.m("</nav>\n")
		}
	})
}

// auditFilters writes the GET form that filters the trail, holding what
// the owner typed or chose: the kinds to choose from are those the
// daemon writes (core.AuditKinds), and the one asked for if it is not
// among them.
func auditFilters(p *page, f auditForm, filtered bool) {
	p.m(`<form method="get" action="/audit" class="filters" aria-label="Filter the audit trail">
`)
	auditInput(p, "chat", "Chat", f.Chat, `maxlength="64"`)
	auditInput(p, "tool", "Tool", f.Tool, `maxlength="64"`)
	auditInput(p, "turn", "Turn", f.Turn, `inputmode="numeric"`)
	kinds := core.AuditKinds()
	if f.Kind != "" && !slices.Contains(kinds, f.Kind) {
		kinds = append(kinds, f.Kind)
	}
	auditSelect(p, "kind", "Kind", f.Kind, kinds)
	auditSelect(p, "outcome", "Outcome", f.Outcome, []string{core.AuditOK, core.AuditFailed})
	auditInput(p, "limit", "Per page", f.Limit, `inputmode="numeric" placeholder="50"`)
	p.m(`<p class="actions"><button type="submit" class="primary">Show</button>`)
	if filtered {
		p.m(` <a href="/audit">Clear</a>`)
	}
	p.m(`</p>
</form>
`)
}

// auditInput writes a text field of the filter form with its label:
// name is its name and id, attrs its other attributes.
func auditInput(p *page, name, label markup, value string, attrs markup) {
	p.m(`<p><label for="`).m(name).m(`">`).m(label).m(`</label><input type="text" id="`).m(name).m(`" name="`).m(name).m(`" value="`).t(value).m(`" `).m(attrs).m(` autocomplete="off"></p>
`)
}

// auditSelect writes a select of the filter form with its label: name is
// its name and id; its first choice, "any", is no filter.
func auditSelect(p *page, name, label markup, value string, options []string) {
	p.m(`<p><label for="`).m(name).m(`">`).m(label).m(`</label><select id="`).m(name).m(`" name="`).m(name).m(`">
<option value="">any</option>
`)
	for _, o := range options {
		p.m(`<option value="`).t(o).m(`"`)
		if o == value {
			p.m(` selected`)
		}
		p.m(`>`).t(o).m("</option>\n")
	}
	p.m("</select></p>\n")
}

// auditTable writes the entries as a table, one row each.
func auditTable(p *page, rows []auditRow) {
	p.m(`<div class="scroll"><table class="audit">
<thead><tr><th scope="col">Time (UTC)</th><th scope="col">Kind</th><th scope="col">Tool</th><th scope="col">Chat</th><th scope="col">Turn</th><th scope="col">OK</th><th scope="col">Summary</th><th scope="col">Duration</th></tr></thead>
<tbody>
`)
	for _, r := range rows {
		p.m("<tr>\n<td>").t(r.At).m("</td>\n<td>").el("code", "", r.Kind).m("</td>\n<td>")
		if r.Tool != "" {
			p.el("code", "", r.Tool)
		}
		p.m("</td>\n<td>")
		if r.Chat != "" {
			p.el("code", "", r.Chat)
		}
		p.m("</td>\n<td>")
		if r.Turn != 0 {
			p.n(r.Turn)
		}
		p.m("</td>\n<td>")
		if r.OK {
			p.m(`<span class="yes">yes</span>`)
		} else {
			p.m(`<span class="no">no</span>`)
		}
		// The summary's lines: the cell shows its newlines as line
		// breaks (CSS td.lines), nothing in it is markup.
		p.m("</td>\n<td class=\"lines\">").t(r.Summary)
		if r.Args != "" {
			p.m(`<details><summary>Arguments</summary><pre>`).t(r.Args).m(`</pre></details>`)
		}
		p.m("</td>\n<td>").t(r.Duration).m("</td>\n</tr>\n")
	}
	p.m(`</tbody>
</table></div>
`)
}

// auditSlice reads the page q selects, and whether an older entry exists:
// one entry more than the page holds, or, for a page at the store's cap,
// a second read of one.
func (s *Server) auditSlice(r *http.Request, q core.AuditQuery) ([]core.AuditEntry, bool, error) {
	ask := q
	if q.Limit < maxAuditPage {
		ask.Limit = q.Limit + 1
	}
	entries, err := s.audit.Audit(r.Context(), ask)
	if err != nil {
		return nil, false, err
	}
	if len(entries) > q.Limit {
		return entries[:q.Limit], true, nil
	}
	if len(entries) < q.Limit || q.Limit < maxAuditPage {
		return entries, false, nil
	}
	probe := q
	probe.Before, probe.Limit = entries[len(entries)-1].ID, 1
	older, err := s.audit.Audit(r.Context(), probe)
	if err != nil {
		return nil, false, err
	}
	return entries, len(older) > 0, nil
}
