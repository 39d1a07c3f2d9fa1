package web

import (
	"time"

	"github.com/shelldon/shelldon/internal/core"
)

// A self-coded tool's versions on its page (/tools/{name}), newest first,
// each with the change of its code from the one before; see page_tools.go.

// ToolHistory reads every version a self-coded tool's directory keeps
// (the archived ones, then the current one), oldest first. A ToolLister
// that is one too has the tool page show the versions before the current
// one and the changes between them; without it, only the current version
// is shown.
type ToolHistory interface {
	ToolVersions(name string) ([]core.ToolDetail, error)
}

var _ ToolHistory = (*core.Core)(nil)

// toolVersion is one version and the change of its code from the one
// before it.
type toolVersion struct {
	Version    int
	State      string
	ProposedAt string
	ApprovedAt string
	ApprovedBy string
	Hash       string
	First      bool           // no version before it is known
	Diff       []toolDiffLine // the change of the code; nil with Whole set
	Whole      bool           // too large to diff: Old and New are shown whole
	Old, New   string
	Same       bool // the code did not change (only the test or the manifest)
	// Imported is, for a version that came in a bundle, where from and the
	// bundle's history: records only, never versions a rollback reaches.
	Imported *core.ToolImport
}

// toolDiffLine is a line of a diff as the page shows it.
type toolDiffLine struct {
	Class string // "add", "del" or ""
	Text  string // the line with its mark: "+ ", "- " or "  "
}

// toolCodeDiff is the change from old to new as the page shows it, or whole
// when the texts are too long to diff; same when they are equal.
func toolCodeDiff(old, new string) (lines []toolDiffLine, whole, same bool) {
	if old == new {
		return nil, false, true
	}
	dl, ok := lineDiff(old, new)
	if !ok {
		return nil, true, false
	}
	lines = make([]toolDiffLine, len(dl))
	for i, l := range dl {
		switch l.Op {
		case '+':
			lines[i] = toolDiffLine{"add", "+ " + l.Text}
		case '-':
			lines[i] = toolDiffLine{"del", "- " + l.Text}
		default:
			lines[i] = toolDiffLine{"", "  " + l.Text}
		}
	}
	return lines, false, false
}

func toolTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// toolVersions writes a self-coded tool's versions, newest first, each
// with the change of its code from the one before.
func toolVersions(p *page, v *selfToolView) {
	if !v.History {
		p.m(`<p class="muted">Only this version is shown: the daemon does not read the archived ones for this page.</p>`)
	}
	p.m("\n")
	for _, ver := range v.Versions {
		p.m("<div class=\"card version\">\n<h3>Version ").n(int64(ver.Version))
		if ver.State != "" {
			p.m(` <span class="muted">(`).t(ver.State).m(`)</span>`)
		}
		proposed := ver.ProposedAt
		if proposed == "" {
			proposed = "unknown"
		}
		p.m("</h3>\n<dl class=\"facts\">\n<dt>Proposed</dt><dd>").t(proposed).m("</dd>\n<dt>Approved</dt><dd>")
		switch {
		case ver.ApprovedAt == "":
			p.m("not yet")
		case ver.ApprovedBy != "":
			p.t(ver.ApprovedAt).m(" by ").t(ver.ApprovedBy)
		default:
			p.t(ver.ApprovedAt)
		}
		p.m("</dd>\n<dt>Content hash</dt><dd>").el("code", "hash", ver.Hash).m("</dd>\n</dl>\n")
		toolImported(p, ver.Imported)
		toolVersionChange(p, ver)
		p.m("\n</div>\n")
	}
}

// toolVersionChange writes how a version's code differs from the one
// before's.
func toolVersionChange(p *page, ver toolVersion) {
	switch {
	case ver.First:
		p.m(`<p class="muted">The first version known.</p>
`)
	case ver.Same:
		p.m(`<p class="muted">The code is the same as the version before's.</p>
`)
	case ver.Whole:
		p.m(`<p class="muted">Too long to compare line by line; both are shown whole.</p>
<h4>The version before</h4>
`).el("pre", "code", ver.Old).m(`
<h4>This version</h4>
`).el("pre", "code", ver.New).m("\n")
	default:
		p.m(`<p class="muted">The code's changes from the version before (+ added, - removed):</p>
<pre class="diff">`)
		for _, l := range ver.Diff {
			p.el("span", l.Class, l.Text).m("\n")
		}
		p.m("</pre>")
	}
}

// toolImported writes where an imported version came from and the
// bundle's history: every value the bundle held is text from elsewhere.
func toolImported(p *page, imp *core.ToolImport) {
	if imp == nil {
		return
	}
	p.m(`<p class="imported">Imported from the bundle `).el("code", "", imp.Bundle).m(` (version `).n(int64(imp.SourceVersion)).
		m(` there, exported `).t(toolTime(imp.ExportedAt)).m(`); its gate ran here.</p>
`)
	if len(imp.History) == 0 {
		return
	}
	p.m(`<details><summary>Its history on the other machine (records only: a rollback never reaches these)</summary>
<ul class="imported-history">
`)
	for _, h := range imp.History {
		p.m(`<li>version `).n(int64(h.Version)).m(`, `).t(h.Language).m(`, approved there `).t(toolTime(h.ApprovedAt))
		if h.ApprovedBy != "" {
			p.m(` by `).t(h.ApprovedBy)
		}
		p.m(`, hash `).el("code", "hash", h.Hash).m("</li>\n")
	}
	p.m("</ul>\n</details>\n")
}
