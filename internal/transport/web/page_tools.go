package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
)

// The tools pages: /tools lists the built-in tools and the self-coded
// ones with their state; /tools/{name} shows one whole. A self-coded
// tool's page shows everything the owner approved (description,
// parameters, capabilities, code, test, the gate's report), its versions
// with the code's changes between them, and its strikes, with the owner's
// commands as forms: quarantine, restore, rollback, remove. Rollback and
// remove ask once more first (?confirm=ACTION shows the form that posts
// confirm=yes). Everything shown of a self-coded tool was written by the
// model: it is written as text (page.t), which also makes its invisible
// and direction-changing characters visible. The versions and their diffs
// are in page_tool_versions.go, the commands in page_tool_actions.go.

// toolRow is a tool in the list.
type toolRow struct {
	core.ToolView
	Path string // its page, escaped; "" when the name is not one a link may carry
}

type toolsPage struct {
	Builtin []toolRow
	Self    []toolRow
}

// toolPage is what /tools/{name} shows.
type toolPage struct {
	Name    string
	Path    string                 // /tools/{name}, escaped
	Builtin *contracts.BuiltinTool // a built-in tool; nil for a self-coded one
	Self    *selfToolView
	Confirm string // "rollback" or "remove" when the page asks to confirm it
}

// selfToolView is a self-coded tool as its page shows it.
type selfToolView struct {
	State        string
	Version      int
	Language     string
	Description  string
	Schema       string // pretty-printed
	Capabilities []toolCapability
	Code, Test   string
	Gate         string
	Strikes      int
	Versions     []toolVersion // newest first
	History      bool          // whether the earlier versions could be read
}

type toolCapability struct {
	Kind   string
	Values []string
}

func (s *Server) routeToolPages(mux *http.ServeMux) {
	mux.HandleFunc("GET /tools", s.uiPage(s.getToolsPage))
	mux.HandleFunc("GET /tools/{name}", s.uiPage(s.getToolPage))
	mux.HandleFunc("POST /tools/{name}/{action}", s.uiAction(s.postToolPageAction))
}

func (s *Server) getToolsPage(w http.ResponseWriter, r *http.Request, d pageData) {
	data, err := s.toolsPage(r.Context())
	if err != nil {
		s.log.Error("web: tools page", "err", err)
		d.Error = "The tools could not be listed; see the daemon's log."
	}
	s.showTools(w, http.StatusOK, d, data)
}

func (s *Server) toolsPage(ctx context.Context) (toolsPage, error) {
	var page toolsPage
	var list []core.ToolView
	if s.tools == nil {
		for _, b := range contracts.BuiltinTools() {
			list = append(list, core.ToolView{Name: b.Name, Tier: string(b.Tier), Runs: string(b.Runs),
				Source: core.SourceBuiltin, State: "live", Summary: b.Summary})
		}
	} else {
		var err error
		if list, err = s.tools.Tools(ctx); err != nil {
			return page, err
		}
	}
	for _, v := range list {
		row := toolRow{ToolView: v, Path: toolPath(v.Name)}
		if v.Source == core.SourceSelf {
			page.Self = append(page.Self, row)
		} else {
			page.Builtin = append(page.Builtin, row)
		}
	}
	return page, nil
}

// toolPath is the page of the tool called name, or "" when name is not a
// valid one.
func toolPath(name string) string {
	if !validName(name) {
		return ""
	}
	return "/tools/" + url.PathEscape(name)
}

func (s *Server) getToolPage(w http.ResponseWriter, r *http.Request, d pageData) {
	data, status, problem := s.toolPage(r.Context(), r.PathValue("name"))
	if problem != "" {
		d.Error = problem
		s.showTool(w, status, d, toolPage{})
		return
	}
	if c := r.URL.Query().Get("confirm"); data.Self != nil {
		if _, confirmed, _ := toolAction(c); confirmed {
			data.Confirm = c
		}
	}
	s.showTool(w, status, d, data)
}

// noToolPage is what the page says of a name no tool has.
const noToolPage = "There is no tool of that name."

// toolPage reads what the page of the tool called name shows, and the
// page's status, or what to say instead.
func (s *Server) toolPage(ctx context.Context, name string) (page toolPage, status int, problem string) {
	if !validName(name) {
		return toolPage{}, http.StatusNotFound, noToolPage
	}
	page = toolPage{Name: name, Path: toolPath(name)}
	if s.tools != nil {
		t, state, err := s.tools.FindTool(name)
		switch {
		case err == nil:
			page.Self = s.selfToolView(ctx, t, state)
			return page, http.StatusOK, ""
		case !errors.Is(err, core.ErrNoSuchTool):
			s.log.Error("web: read tool", "tool", name, "err", err)
			return toolPage{}, http.StatusInternalServerError, "The tool could not be read: " + err.Error()
		}
	}
	for _, b := range contracts.BuiltinTools() {
		if b.Name == name {
			page.Builtin = &b
			return page, http.StatusOK, ""
		}
	}
	return toolPage{}, http.StatusNotFound, noToolPage
}

// selfToolView is t, in state, as its page shows it.
func (s *Server) selfToolView(ctx context.Context, t core.ToolDetail, state string) *selfToolView {
	v := &selfToolView{State: state, Version: t.Version, Language: t.Language,
		Description: t.Meta.Description, Schema: toolSchemaText(t.Meta.ParamsSchema),
		Code: t.Code, Test: t.Test, Gate: t.Gate}
	kinds := make([]string, 0, len(t.Meta.Capabilities))
	for k := range t.Meta.Capabilities {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		row := toolCapability{Kind: k}
		for _, c := range t.Meta.Capabilities[k] {
			row.Values = append(row.Values, c)
		}
		v.Capabilities = append(v.Capabilities, row)
	}
	if list, err := s.tools.Tools(ctx); err == nil {
		for _, tv := range list {
			if tv.Source == core.SourceSelf && tv.Name == t.Name && tv.Version == t.Version {
				v.Strikes = tv.Strikes
			}
		}
	} else {
		s.log.Error("web: tool strikes", "tool", t.Name, "err", err)
	}
	versions := []core.ToolDetail{t}
	if h, ok := s.tools.(ToolHistory); ok {
		all, err := h.ToolVersions(t.Name)
		if err != nil {
			s.log.Error("web: tool versions", "tool", t.Name, "err", err)
		} else {
			v.History = true
			// Every version up to the one shown, oldest first: a staged
			// proposal may be newer than the live one the page shows, and
			// is not part of this one's history.
			versions = versions[:0]
			for _, o := range all {
				if o.Version < t.Version {
					versions = append(versions, o)
				}
			}
			versions = append(versions, t)
		}
	}
	for i := len(versions) - 1; i >= 0; i-- {
		cur := versions[i]
		row := toolVersion{Version: cur.Version, State: cur.State, ProposedAt: toolTime(cur.ProposedAt),
			ApprovedAt: toolTime(cur.ApprovedAt), ApprovedBy: cur.ApprovedBy, Hash: cur.Hash, Imported: cur.Imported}
		if i == 0 {
			row.First = true
		} else {
			row.Diff, row.Whole, row.Same = toolCodeDiff(versions[i-1].Code, cur.Code)
			if row.Whole {
				row.Old, row.New = versions[i-1].Code, cur.Code
			}
		}
		v.Versions = append(v.Versions, row)
	}
	return v
}

// toolSchemaText is raw indented, or raw as it is when it is not JSON.
func toolSchemaText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// showTools writes the list of tools.
func (s *Server) showTools(w http.ResponseWriter, status int, d pageData, data toolsPage) {
	d.Nav = "tools"
	s.show(w, status, "Tools", d, func(p *page) {
		p.m(`<section aria-labelledby="self-tools">
<h2 id="self-tools">Self-coded tools</h2>
`)
		if len(data.Self) > 0 {
			p.m(`<table class="tools">
<thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Version</th><th scope="col">Language</th><th scope="col">Strikes</th></tr></thead>
<tbody>
`)
			for _, t := range data.Self {
				p.m("<tr>\n")
				toolNameCell(p, t)
				p.m(`<td><span class="state `).t(t.State).m(`">`).t(t.State).m("</span></td>\n<td>").n(int64(t.Version)).
					m("</td>\n<td>").t(t.Language).m("</td>\n<td>").n(int64(t.Strikes)).m("</td>\n</tr>\n")
			}
			p.m("</tbody>\n</table>\n")
		} else {
			p.m(`<p class="muted">shelldon has written no tools yet.</p>`)
		}
		p.m(`
</section>
<section aria-labelledby="builtin-tools">
<h2 id="builtin-tools">Built-in tools</h2>
<table class="tools">
<thead><tr><th scope="col">Name</th><th scope="col">Tier</th><th scope="col">Runs in</th><th scope="col">What it does</th></tr></thead>
<tbody>
`)
		for _, t := range data.Builtin {
			p.m("<tr>\n")
			toolNameCell(p, t)
			p.m("<td>")
			toolTier(p, t.Tier)
			p.m("</td>\n<td>").t(t.Runs).m("</td>\n<td>").t(t.Summary).m("</td>\n</tr>\n")
		}
		p.m("</tbody>\n</table>\n</section>\n")
	})
}

// toolNameCell writes the list's cell of t's name, a link to its page
// when it has one.
func toolNameCell(p *page, t toolRow) {
	p.m("<td>")
	if t.Path != "" {
		p.m(`<a href="`).t(t.Path).m(`">`).el("code", "", t.Name).m("</a>")
	} else {
		p.el("code", "", t.Name)
	}
	p.m("</td>\n")
}

// toolTier writes a tool's tier: RISKY stands out.
func toolTier(p *page, tier string) {
	if tier == string(contracts.TierRisky) {
		p.m("<strong>RISKY</strong>")
	} else {
		p.m("FREE")
	}
}

// showTool writes the page of one tool; with the zero data (the tool
// could not be found or read), only the way back to the list.
func (s *Server) showTool(w http.ResponseWriter, status int, d pageData, data toolPage) {
	d.Nav = "tools"
	title := "Tool"
	if data.Name != "" {
		title = "Tool " + data.Name
	}
	s.show(w, status, title, d, func(p *page) {
		p.m(`<p><a href="/tools">All tools</a></p>
`)
		if data.Builtin != nil {
			toolBuiltinFacts(p, data.Builtin)
		}
		if data.Self != nil {
			toolSelfFacts(p, data.Self)
			toolCommands(p, d.CSRF, data)
			toolSelfText(p, data.Self)
			toolVersions(p, data.Self)
		}
		p.m("\n")
	})
}

// toolBuiltinFacts writes what the page of a built-in tool shows.
func toolBuiltinFacts(p *page, b *contracts.BuiltinTool) {
	p.m(`
<dl class="facts">
<dt>Kind</dt><dd>built-in</dd>
<dt>Tier</dt><dd>`)
	toolTier(p, string(b.Tier))
	if b.Tier == contracts.TierRisky {
		p.m(": each call waits for your approval")
	}
	p.m("</dd>\n<dt>Runs in</dt><dd>").t(string(b.Runs)).m("</dd>\n<dt>What it does</dt><dd>").t(b.Summary).
		m("</dd>\n<dt>Parameters</dt><dd>")
	for i, name := range b.Params {
		if i > 0 {
			p.m(", ")
		}
		p.el("code", "", name)
	}
	if len(b.Params) == 0 {
		p.m("none")
	}
	p.m("</dd>\n<dt>Description for the model</dt><dd>").el("code", "", b.DescriptionFile).m("</dd>\n</dl>\n")
}

// toolSelfFacts writes the facts of a self-coded tool.
func toolSelfFacts(p *page, v *selfToolView) {
	p.m(`
<dl class="facts">
<dt>Kind</dt><dd>self-coded, FREE, each call in a sandbox of its own</dd>
<dt>State</dt><dd><span class="state `).t(v.State).m(`">`).t(v.State).m(`</span></dd>
<dt>Version</dt><dd>`).n(int64(v.Version)).m(`</dd>
<dt>Language</dt><dd>`).t(v.Language).m(`</dd>
<dt>Strikes</dt><dd>`).n(int64(v.Strikes)).m(`</dd>
</dl>
<h2 id="commands">Commands</h2>
`)
}

// toolSelfText writes what the model wrote of a self-coded tool and the
// gate's report on it.
func toolSelfText(p *page, v *selfToolView) {
	p.m(`<h2 id="description">Description</h2>
<pre class="text">`).t(v.Description).m(`</pre>
<h2 id="parameters">Parameters</h2>
`)
	if v.Schema != "" {
		p.el("pre", "", v.Schema)
	} else {
		p.m(`<p class="muted">None declared.</p>`)
	}
	p.m(`
<h2 id="capabilities">What it may reach</h2>
`)
	if len(v.Capabilities) > 0 {
		p.m("<dl class=\"facts\">\n")
		for _, c := range v.Capabilities {
			p.m("<dt>").el("code", "", c.Kind).m("</dt><dd>")
			for i, val := range c.Values {
				if i > 0 {
					p.m(", ")
				}
				p.el("code", "", val)
			}
			if len(c.Values) == 0 {
				p.m(`<span class="muted">nothing listed</span>`)
			}
			p.m("</dd>\n")
		}
		p.m("</dl>")
	} else {
		p.m(`<p>Nothing beyond its arguments: no files, no network.</p>`)
	}
	p.m(`
<h2 id="code">Code</h2>
`).el("pre", "code", v.Code).m(`
<h2 id="test">Test</h2>
`).el("pre", "code", v.Test).m(`
<h2 id="gate">The gate's report</h2>
`)
	if v.Gate != "" {
		p.el("pre", "", v.Gate)
	} else {
		p.m(`<p class="muted">No report kept.</p>`)
	}
	p.m(`
<h2 id="versions">Versions</h2>
`)
}
