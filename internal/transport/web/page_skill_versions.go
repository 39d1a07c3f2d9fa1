package web

// A skill's versions and its draft on its page (/skills/{name}), each as
// a diff against the text before it; see page_skills.go.

// skillDiffRow is a line of a diff as the page shows it.
type skillDiffRow struct {
	Class string // "add", "del" or ""
	Mark  string // "+ ", "- " or "  ", so that the diff reads without colour
	Text  string
}

// skillTextDiff is old to new as the page shows it: the diff lines, or (Whole)
// the new text whole when the texts are too long to diff.
type skillTextDiff struct {
	Lines []skillDiffRow
	Whole string
}

func newSkillDiff(old, new string) skillTextDiff {
	lines, ok := lineDiff(old, new)
	if !ok {
		return skillTextDiff{Whole: new}
	}
	out := skillTextDiff{Lines: make([]skillDiffRow, 0, len(lines))}
	for _, l := range lines {
		r := skillDiffRow{Mark: "  ", Text: l.Text}
		switch l.Op {
		case '+':
			r.Class, r.Mark = "add", "+ "
		case '-':
			r.Class, r.Mark = "del", "- "
		}
		out.Lines = append(out.Lines, r)
	}
	return out
}

// skillVersionRow is a version of the owner's skill, with its diff against the
// version numbered one below (none for the first).
type skillVersionRow struct {
	Version int
	Current bool
	Prev    int // the version the diff is against; 0: none, Text is whole
	Diff    skillTextDiff
	Text    string
}

// skillDraft writes a skill's draft: where to approve it, and what it
// changes.
func skillDraft(p *page, data skillPage) {
	p.m(`<section aria-labelledby="draft">
<h2 id="draft">Draft waiting for approval</h2>
`)
	if data.Approval != "" {
		p.m(`<p>`).link(data.Approval, "Approve or deny it on its approval request").m(`</p>`)
	} else {
		p.m(`<p class="muted">No approval request is waiting for this draft.</p>`)
	}
	p.m("\n")
	if data.DraftDiff != nil {
		p.m(`<p>Against the version in use:</p>
`)
		skillDiff(p, *data.DraftDiff)
	} else {
		p.el("pre", "", data.Skill.Draft)
	}
	p.m(`
</section>`)
}

// skillVersions writes the owner's versions of a skill, newest first, each
// against the one before.
func skillVersions(p *page, versions []skillVersionRow) {
	p.m(`<section aria-labelledby="versions">
<h2 id="versions">Versions</h2>
`)
	for _, v := range versions {
		p.m(`<h3>Version `).n(int64(v.Version))
		if v.Current {
			p.m(` (in use)`)
		}
		p.m("</h3>\n")
		if v.Prev != 0 {
			p.m(`<p>Against version `).n(int64(v.Prev)).m(`:</p>
`)
			skillDiff(p, v.Diff)
		} else {
			p.el("pre", "", v.Text)
		}
		p.m("\n")
	}
	p.m(`</section>`)
}

// skillDiff writes a diff, or the whole new text when it was too long to
// compare.
func skillDiff(p *page, d skillTextDiff) {
	if len(d.Lines) == 0 {
		p.m(`<p class="muted">Too long to compare line by line; the whole text:</p>
`).el("pre", "", d.Whole)
		return
	}
	p.m(`<pre class="diff">`)
	for _, l := range d.Lines {
		p.m(`<span`)
		if l.Class != "" {
			p.m(` class="`).t(l.Class).m(`"`)
		}
		p.m(`>`).t(l.Mark).t(l.Text).m("</span>\n")
	}
	p.m(`</pre>`)
}
