package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

// The approvals pages: the requests waiting for the owner, each as a card
// with its approve and deny buttons, and below them the requests closed
// lately; one request whole (/approvals/{id}); and the decisions, which
// the chat page's cards post too. What the model wrote (a summary, an
// argument, a tool's name) goes through internal/inert and is written as
// text (page.t): no markup, and no character that reorders or hides text.

// recentApprovals reads the requests closed lately, newest first
// (core.Reader.RecentApprovals). The approvals page lists them when the
// Approver offers it.
type recentApprovals interface {
	RecentApprovals(ctx context.Context, n int) ([]core.DecidedApproval, error)
}

var _ recentApprovals = (*core.Core)(nil)

// recentShown is how many closed requests the approvals page lists.
const recentShown = 50

// approvalCard is a request as the pages show it: every field a model
// could have worded already made inert.
type approvalCard struct {
	ID      string // as a name (inert.Name)
	Href    string // its page
	Kind    string
	Tool    string
	Chat    string
	Turn    int64
	Summary string // the daemon's rendering, inert.Text
	State   string
	Filed   string // when it was filed, UTC
	Expires string // when it expires, UTC
	Left    string // how long it still waits: "12 min"; "" when it no longer does
	Pending bool   // still waiting for the owner: the buttons are shown
	// Decided is when it was decided (or expired) and By who decided it.
	Decided, By string
	// Short is the summary bounded for the list, its lines kept
	// (shortLines).
	Short string
}

type approvalsPage struct {
	Pending []approvalCard
	Recent  []approvalCard
	// NoRecent says the daemon cannot list the closed requests.
	NoRecent bool
}

type approvalPage struct {
	approvalCard
	Arguments string // every argument whole, inert.Args
	// JSON is the canonical arguments as they are, inert.Text: a
	// character it escapes reads as the JSON escape that means it.
	JSON  string
	Bytes string // the length of the canonical arguments: 6,000
	Whole bool   // the rendering holds all of it: no arguments to add
}

func (s *Server) routeApprovals(mux *http.ServeMux) {
	mux.HandleFunc("GET /approvals", s.uiPage(s.getApprovalsPage))
	mux.HandleFunc("GET /approvals/{id}", s.uiPage(s.getApprovalPage))
	mux.HandleFunc("POST /approvals/{id}/approve", s.uiAction(s.postDecision(true)))
	mux.HandleFunc("POST /approvals/{id}/deny", s.uiAction(s.postDecision(false)))
}

func (s *Server) getApprovalsPage(w http.ResponseWriter, r *http.Request, d pageData) {
	s.renderApprovals(w, r, http.StatusOK, d)
}

// renderApprovals shows the approvals page with d (its Error, if any) and
// status.
func (s *Server) renderApprovals(w http.ResponseWriter, r *http.Request, status int, d pageData) {
	page, err := s.approvalsPage(r.Context())
	if err != nil {
		s.log.Error("web: approvals page", "err", err)
		if d.Error == "" {
			d.Error = "The approval requests could not be read; see the daemon's log."
		}
		if status < 400 {
			status = http.StatusInternalServerError
		}
	}
	s.showApprovals(w, status, d, page)
}

// showApprovals writes the approvals page.
func (s *Server) showApprovals(w http.ResponseWriter, status int, d pageData, data approvalsPage) {
	d.Nav = "approvals"
	s.show(w, status, "Approvals", d, func(p *page) {
		p.m(`<section aria-labelledby="waiting">
<h2 id="waiting">Waiting for you</h2>
`)
		for _, c := range data.Pending {
			pendingCard(p, c, d.CSRF)
		}
		if len(data.Pending) == 0 {
			p.m(`<p class="muted">Nothing is waiting for you.</p>
`)
		}
		p.m(`</section>
<section aria-labelledby="recent">
<h2 id="recent">Decided lately</h2>
`)
		switch {
		case data.NoRecent:
			p.m(`<p class="muted">The requests decided lately cannot be listed here.</p>
`)
		case len(data.Recent) > 0:
			recentTable(p, data.Recent)
		default:
			p.m(`<p class="muted">No request has been decided yet.</p>
`)
		}
		p.m("</section>\n")
	})
}

// pendingCard writes a waiting request as the approvals page lists it:
// its summary, its facts and its buttons.
func pendingCard(p *page, c approvalCard, csrf string) {
	p.m(`<article class="card" aria-label="Request `).t(c.ID).m(`">
<pre>`).t(c.Summary).m(`</pre>
<dl class="facts">
<dt>Kind</dt><dd>`).el("code", "", c.Kind).m(`</dd>
<dt>Tool</dt><dd>`).el("code", "", c.Tool).m(`</dd>
<dt>Chat</dt><dd>`)
	chatTurn(p, c)
	p.m(`</dd>
<dt>Expires</dt><dd>`).t(c.Expires).m(` (in `).t(c.Left).m(`)</dd>
</dl>
<div class="actions">
`)
	decisionButtons(p, c, csrf)
	p.link(c.Href, "The full request").m(`
</div>
</article>
`)
}

// chatTurn writes the chat of c and its turn, if any: "<code>web</code>,
// turn 4".
func chatTurn(p *page, c approvalCard) {
	p.el("code", "", c.Chat)
	if c.Turn != 0 {
		p.m(", turn ").n(c.Turn)
	}
}

// decisionButtons writes the approve and deny buttons of c, one a line.
func decisionButtons(p *page, c approvalCard, csrf string) {
	p.button(c.Href+"/approve", csrf, "Approve", "primary").m("\n")
	p.button(c.Href+"/deny", csrf, "Deny", "danger").m("\n")
}

// recentTable writes the requests decided lately as a table.
func recentTable(p *page, recent []approvalCard) {
	p.m(`<div class="scroll"><table>
<thead><tr><th scope="col">When</th><th scope="col">State</th><th scope="col">By</th><th scope="col">Tool</th><th scope="col">Chat</th><th scope="col">Request</th></tr></thead>
<tbody>
`)
	for _, c := range recent {
		p.m("<tr>\n<td>").t(c.Decided).m("</td>\n")
		p.el("td", "state-"+c.State, c.State).m("\n<td>").t(c.By).m("</td>\n<td>")
		p.el("code", "", c.Tool).m("</td>\n<td>")
		p.el("code", "", c.Chat).m("</td>\n<td class=\"lines\">")
		p.link(c.Href, c.Short).m("</td>\n</tr>\n")
	}
	p.m(`</tbody>
</table></div>
`)
}

// approvalsPage reads what the approvals page shows.
func (s *Server) approvalsPage(ctx context.Context) (approvalsPage, error) {
	var page approvalsPage
	if s.appr == nil {
		page.NoRecent = true
		return page, errors.New("no approvals are served")
	}
	list, err := s.appr.Approvals(ctx)
	if err != nil {
		return page, err
	}
	now := s.now()
	for _, a := range list {
		page.Pending = append(page.Pending, card(a, now))
	}
	rr, ok := s.appr.(recentApprovals)
	if !ok {
		page.NoRecent = true
		return page, nil
	}
	recent, err := rr.RecentApprovals(ctx, recentShown)
	if err != nil {
		page.NoRecent = true
		return page, err
	}
	for _, a := range recent {
		c := card(a.ApprovalView, now)
		c.By = inert.Name(a.DecidedBy)
		switch {
		case !a.DecidedAt.IsZero():
			c.Decided = stamp(a.DecidedAt)
		case a.State == "expired":
			c.Decided, c.By = stamp(a.ExpiresAt), "nobody (it expired)"
		}
		page.Recent = append(page.Recent, c)
	}
	return page, nil
}

// card is a as the pages show it, at now.
func card(a core.ApprovalView, now time.Time) approvalCard {
	c := approvalCard{
		ID: inert.Name(a.ID), Href: "/approvals/" + url.PathEscape(a.ID),
		Kind: inert.Name(a.Kind), Tool: inert.Name(a.Tool), Chat: inert.Name(a.Chat), Turn: a.Turn,
		Summary: inert.Text(a.Summary), Short: shortLines(a.Summary, shortChars, shortLineCount), State: inert.Name(a.State),
		Filed: stamp(a.CreatedAt), Expires: stamp(a.ExpiresAt),
	}
	if a.State == "pending" {
		if left := a.ExpiresAt.Sub(now); left > 0 {
			c.Pending, c.Left = true, waiting(left)
		} else {
			c.State = "expired" // past its expiry; the daemon closes it shortly
		}
	}
	return c
}

// How much of a summary the list of requests shows: in characters, and
// in lines.
const (
	shortChars     = 160
	shortLineCount = 4
)

// shortLines is s bounded for a list: its first lines, at most lines
// (>= 1) of them and max (>= 1) characters in all, a newline counting as
// one; each line inert as inert.Short makes it (a tab, a carriage return
// and every other control or invisible character escaped, backslashes
// doubled), an escape never cut in two. The newlines stay, and the page
// shows them as line breaks (CSS white-space on the element: a newline is
// not markup). It ends in "…" when anything is left out.
func shortLines(s string, max, lines int) string {
	var b strings.Builder
	n, keep := 0, 0 // characters written; bytes of b that leave room for "…"
	add := func(piece string) bool {
		w := utf8.RuneCountInString(piece)
		if n+w > max {
			return false
		}
		if n+w <= max-1 {
			keep = b.Len() + len(piece)
		}
		n += w
		b.WriteString(piece)
		return true
	}
	cut := func() string { return strings.TrimSuffix(b.String()[:keep], "\n") + "…" }
	for i, line := range strings.SplitN(s, "\n", lines+1) {
		if i == lines || i > 0 && !add("\n") {
			return cut()
		}
		for j := 0; j < len(line); {
			_, size := utf8.DecodeRuneInString(line[j:])
			// One character (or invalid byte) at a time, as Line shows it.
			if !add(inert.Line(line[j : j+size])) {
				return cut()
			}
			j += size
		}
	}
	return b.String()
}

// stamp is t as the pages show a moment: UTC to the second.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// waiting says how long d is, roughly: "less than a minute", "12 min",
// "3 h 5 min".
func waiting(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	}
	return fmt.Sprintf("%d h %d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

func (s *Server) getApprovalPage(w http.ResponseWriter, r *http.Request, d pageData) {
	if s.appr == nil {
		d.Error = "There is no such approval request."
		s.showApproval(w, http.StatusNotFound, d, nil)
		return
	}
	a, err := s.appr.Approval(r.Context(), r.PathValue("id"))
	switch {
	case errors.Is(err, core.ErrUnknownApproval):
		d.Error = "There is no such approval request."
		s.showApproval(w, http.StatusNotFound, d, nil)
		return
	case err != nil:
		s.log.Error("web: read approval", "err", err)
		d.Error = "The approval request could not be read; see the daemon's log."
		s.showApproval(w, http.StatusInternalServerError, d, nil)
		return
	}
	page := approvalPage{approvalCard: card(a, s.now()), Bytes: inert.Count(len(a.Arguments)),
		Whole: a.Kind == core.KindPromotion || a.Kind == core.KindSkill || a.Arguments == ""}
	if !page.Whole {
		page.Arguments = inert.Args(a.Arguments, 0, "")
		page.JSON = inert.Text(a.Arguments)
	}
	s.showApproval(w, http.StatusOK, d, &page)
}

// showApproval writes the page of one request; data is nil when there is
// none to show (d.Error says why).
func (s *Server) showApproval(w http.ResponseWriter, status int, d pageData, data *approvalPage) {
	d.Nav = "approvals"
	s.show(w, status, "Approval request", d, func(p *page) {
		if data != nil {
			approvalWhole(p, data, d.CSRF)
		}
		p.m(`<p><a href="/approvals">All requests</a></p>
`)
	})
}

// approvalWhole writes a request whole: its facts, its summary, every
// argument (as the daemon renders them and as JSON) and, while it waits,
// its buttons.
func approvalWhole(p *page, a *approvalPage, csrf string) {
	p.m(`<dl class="facts">
<dt>Request</dt><dd>`).el("code", "", a.ID).m(`</dd>
<dt>State</dt>`).el("dd", "state-"+a.State, a.State).m(`
<dt>Kind</dt><dd>`).el("code", "", a.Kind).m(`</dd>
<dt>Tool</dt><dd>`).el("code", "", a.Tool).m(`</dd>
<dt>Chat</dt><dd>`)
	chatTurn(p, a.approvalCard)
	p.m(`</dd>
<dt>Filed</dt><dd>`).t(a.Filed).m(`</dd>
<dt>Expires</dt><dd>`).t(a.Expires)
	if a.Pending {
		p.m(` (in `).t(a.Left).m(`)`)
	}
	p.m(`</dd>
</dl>
<h2>What shelldon shows you</h2>
<pre>`).t(a.Summary).m("</pre>\n")
	if !a.Whole {
		p.m(`<h2>Every argument, whole (`).t(a.Bytes).m(` bytes of JSON)</h2>
<pre>`).t(a.Arguments).m(`</pre>
<details><summary>The arguments as JSON</summary>
<pre>`).t(a.JSON).m(`</pre>
</details>
`)
	}
	if a.Pending {
		p.m(`<div class="actions">
`)
		decisionButtons(p, a.approvalCard, csrf)
		p.m("</div>\n")
	}
}

// postDecision decides a request from its buttons (approve or deny), as
// "web", and goes back to the page the buttons were on: the chat when the
// form says from=chat, else the approvals page. A refusal (unknown,
// already decided, expired, no longer possible) shows the approvals page
// with the reason.
func (s *Server) postDecision(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.appr == nil {
			s.renderApprovals(w, r, http.StatusNotFound, pageData{CSRF: r.PostForm.Get("csrf"), Error: "There is no such approval request."})
			return
		}
		out, err := s.appr.Decide(r.Context(), r.PathValue("id"), approve, "web", core.Events{})
		status, problem := decisionRefused(err, out)
		if problem != "" {
			if status == http.StatusInternalServerError {
				s.log.Error("web: decide", "err", err)
			}
			s.renderApprovals(w, r, status, pageData{CSRF: r.PostForm.Get("csrf"), Error: problem})
			return
		}
		if err != nil {
			// Decided and carried out; the turn it resumed broke after.
			s.log.Error("web: decided turn broke", "turn", out.Turn, "err", err)
		}
		to, note := "/approvals", "denied"
		if r.PostForm.Get("from") == "chat" {
			to = "/chat"
		}
		if approve {
			note = "approved"
		}
		back(w, r, to, note)
	}
}

// decisionRefused maps Decide's error to a status and the owner's
// message, as postApproval does; "" when the decision was made.
func decisionRefused(err error, out core.Outcome) (int, string) {
	switch {
	case err == nil:
		return 0, ""
	case errors.Is(err, core.ErrUnknownApproval):
		return http.StatusNotFound, "There is no such approval request."
	case errors.Is(err, core.ErrAlreadyDecided):
		return http.StatusConflict, "This request was already decided."
	case errors.Is(err, core.ErrApprovalExpired):
		return http.StatusConflict, "This request has expired."
	case errors.Is(err, core.ErrStaleApproval):
		// Decided, but no longer possible: the reason is the owner's to read.
		return http.StatusConflict, inert.Text(err.Error())
	case out.Turn == 0:
		return http.StatusInternalServerError, "The decision could not be carried out: " + inert.Text(err.Error())
	}
	return 0, ""
}
