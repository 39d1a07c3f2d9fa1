package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sort"

	"github.com/shelldon/shelldon/internal/core"
)

// The skills pages: /skills lists the skills in use and the drafts
// waiting for the owner; /skills/{name} shows one skill's text, its files,
// its versions (each as a diff against the one before) and its draft (as a
// diff against the text in use), with its rollback and remove, each behind
// a confirm step (?confirm=ACTION). A draft is approved on its approval
// request's page (/approvals/{id}), never here. The versions and the draft's
// diff are written by page_skill_versions.go.

// skillDraftLink is a draft on the skills page.
type skillDraftLink struct {
	Name     string
	Href     string // the skill's page
	Approval string // the approval request's page; "" when none is waiting
}

type skillRow struct {
	SkillView
	Href string
}

type skillsPage struct {
	Skills   []skillRow
	Drafts   []skillDraftLink
	Problems []string
}
type skillPage struct {
	Found       bool
	Skill       SkillDetail
	Href        string // this page
	Versions    []skillVersionRow
	DraftDiff   *skillTextDiff // the draft against the text in use; nil: no draft, or a new skill
	Approval    string         // the draft's approval request's page; "" when none is waiting
	CanRollback bool
	CanRemove   bool
	Confirm     string // the action the owner is asked to confirm; "" when none
}

func (s *Server) routeSkillPages(mux *http.ServeMux) {
	mux.HandleFunc("GET /skills", s.uiPage(s.getSkillsPage))
	mux.HandleFunc("GET /skills/{name}", s.uiPage(s.getSkillPage))
	mux.HandleFunc("POST /skills/{name}/{action}", s.uiAction(s.postSkillPage))
}

func skillHref(name string) string { return "/skills/" + url.PathEscape(name) }

func skillApprovalHref(id string) string { return "/approvals/" + url.PathEscape(id) }

// skillApprovals maps each skill with a draft waiting for a decision to
// its newest approval request's id.
func (s *Server) skillApprovals(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	if s.appr == nil {
		return out, nil
	}
	list, err := s.appr.Approvals(ctx)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].CreatedAt.Before(list[j].CreatedAt) })
	for _, a := range list {
		if a.Kind == core.KindSkill {
			out[a.Tool] = a.ID
		}
	}
	return out, nil
}

func (s *Server) getSkillsPage(w http.ResponseWriter, r *http.Request, d pageData) {
	d.Nav = "skills"
	var page skillsPage
	if s.skills != nil {
		list, err := s.skills.Skills(r.Context())
		if err != nil {
			s.log.Error("web: skills page", "err", err)
			d.Error = "The skills could not be listed; see the daemon's log."
		}
		for _, v := range list.Skills {
			page.Skills = append(page.Skills, skillRow{SkillView: v, Href: skillHref(v.Name)})
		}
		ids, err := s.skillApprovals(r.Context())
		if err != nil {
			s.log.Error("web: skills page: approvals", "err", err)
			d.Error = "The approval requests could not be read; see the daemon's log."
		}
		for _, n := range list.Drafts {
			dl := skillDraftLink{Name: n, Href: skillHref(n)}
			if id := ids[n]; id != "" {
				dl.Approval = skillApprovalHref(id)
			}
			page.Drafts = append(page.Drafts, dl)
		}
		page.Problems = list.Problems
	}
	s.showSkills(w, http.StatusOK, d, page)
}

func (s *Server) getSkillPage(w http.ResponseWriter, r *http.Request, d pageData) {
	confirm := r.URL.Query().Get("confirm")
	if !slices.Contains(SkillActions, confirm) {
		confirm = ""
	}
	status, page := s.skillPage(r.Context(), r.PathValue("name"), &d)
	if page.Found && (confirm == SkillRollback && page.CanRollback || confirm == SkillRemove && page.CanRemove) {
		page.Confirm = confirm
	}
	s.showSkill(w, status, d, page)
}

// skillPage reads what /skills/{name} shows, and sets d.Error when it
// cannot; status is the page's.
func (s *Server) skillPage(ctx context.Context, name string, d *pageData) (int, skillPage) {
	d.Nav = "skills"
	page := skillPage{Href: skillHref(name)}
	if s.skills == nil {
		d.Error = "No skill of that name."
		return http.StatusNotFound, page
	}
	det, err := s.skills.Skill(ctx, name)
	switch {
	case errors.Is(err, ErrNoSkill):
		d.Error = "No skill of that name."
		return http.StatusNotFound, page
	case err != nil:
		s.log.Error("web: skill page", "err", err)
		d.Error = "The skill could not be read: " + err.Error()
		return http.StatusInternalServerError, page
	}
	page.Found, page.Skill = true, det
	if det.InUse && det.Source == "owner" {
		page.CanRemove = true
		texts := map[int]string{det.Version: det.Text}
		for _, v := range det.Versions {
			texts[v.Version] = v.Text
			if v.Version < det.Version {
				page.CanRollback = true
			}
		}
		nums := make([]int, 0, len(texts))
		for n := range texts {
			nums = append(nums, n)
		}
		sort.Sort(sort.Reverse(sort.IntSlice(nums)))
		for _, n := range nums {
			row := skillVersionRow{Version: n, Current: n == det.Version, Text: texts[n]}
			if prev, ok := texts[n-1]; ok {
				row.Prev, row.Diff = n-1, newSkillDiff(prev, texts[n])
			}
			page.Versions = append(page.Versions, row)
		}
	}
	if det.Draft != "" && det.InUse {
		dd := newSkillDiff(det.Text, det.Draft)
		page.DraftDiff = &dd
	}
	if det.Draft != "" {
		ids, err := s.skillApprovals(ctx)
		if err != nil {
			s.log.Error("web: skill page: approvals", "err", err)
		}
		if id := ids[det.Name]; id != "" {
			page.Approval = skillApprovalHref(id)
		}
	}
	return http.StatusOK, page
}

// postSkillPage rolls a skill back or removes it, from the confirm form.
func (s *Server) postSkillPage(w http.ResponseWriter, r *http.Request) {
	name, action := r.PathValue("name"), r.PathValue("action")
	d := pageData{CSRF: r.PostForm.Get("csrf")}
	if !slices.Contains(SkillActions, action) || s.skills == nil {
		status, page := s.skillPage(r.Context(), name, &d)
		if status == http.StatusOK {
			status, d.Error = http.StatusNotFound, "No such action on a skill."
		}
		s.showSkill(w, status, d, page)
		return
	}
	_, err := s.skills.SkillAction(r.Context(), action, name, "web")
	if err == nil {
		if action == SkillRemove {
			back(w, r, "/skills", "removed")
		} else {
			back(w, r, skillHref(name), "rolled-back")
		}
		return
	}
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrNoSkill):
		status = http.StatusNotFound
	case errors.Is(err, ErrSkillRefused):
		status = http.StatusConflict
	default:
		s.log.Error("web: skill action", "action", action, "err", err)
	}
	_, page := s.skillPage(r.Context(), name, &d)
	d.Error = "The skill was not changed: " + err.Error()
	s.showSkill(w, status, d, page)
}

// showSkills writes the skills page.
func (s *Server) showSkills(w http.ResponseWriter, status int, d pageData, data skillsPage) {
	s.show(w, status, "Skills", d, func(p *page) {
		p.m(`<section aria-labelledby="in-use">
<h2 id="in-use">In use</h2>
`)
		if len(data.Skills) > 0 {
			p.m(`<table class="skills">
<thead><tr><th scope="col">Skill</th><th scope="col">Source</th><th scope="col">Version</th><th scope="col">What it is for</th></tr></thead>
<tbody>
`)
			for _, sk := range data.Skills {
				p.m(`<tr><td>`).link(sk.Href, sk.Name).m(`</td><td>`)
				if sk.Source == "owner" {
					p.m(`yours`)
				} else {
					p.m(`bundled`)
				}
				p.m(`</td><td>`)
				if sk.Version != 0 {
					p.n(int64(sk.Version))
				} else {
					p.m(`–`)
				}
				p.m(`</td><td>`).t(sk.Description).m("</td></tr>\n")
			}
			p.m(`</tbody>
</table>
`)
		} else {
			p.m(`<p class="muted">No skills yet.</p>`)
		}
		p.m(`
</section>
<section aria-labelledby="drafts">
<h2 id="drafts">Drafts waiting for you</h2>
`)
		if len(data.Drafts) > 0 {
			p.m("<ul>\n")
			for _, dl := range data.Drafts {
				p.m(`<li>`).link(dl.Href, dl.Name)
				if dl.Approval != "" {
					p.m(`: `).link(dl.Approval, "its approval request")
				} else {
					p.m(` <span class="muted">(no approval request waiting)</span>`)
				}
				p.m("</li>\n")
			}
			p.m("</ul>\n")
		} else {
			p.m(`<p class="muted">No drafts.</p>`)
		}
		p.m("\n</section>\n")
		skillProblems(p, "Skipped", data.Problems)
		p.m("\n")
	})
}

// skillProblems writes the problems section of a skills page, if any.
func skillProblems(p *page, heading markup, problems []string) {
	if len(problems) == 0 {
		return
	}
	p.m(`<section aria-labelledby="problems">
<h2 id="problems">`).m(heading).m(`</h2>
<ul>`)
	for _, pr := range problems {
		p.m(`<li>`).el("pre", "", pr).m("</li>\n")
	}
	p.m(`</ul>
</section>`)
}

// showSkill writes a skill's page.
func (s *Server) showSkill(w http.ResponseWriter, status int, d pageData, data skillPage) {
	title := "Skill"
	if data.Found {
		title += " " + data.Skill.Name
	}
	s.show(w, status, title, d, func(p *page) {
		p.m(`<p><a href="/skills">All skills</a></p>
`)
		if !data.Found {
			p.m("\n")
			return
		}
		p.m("\n")
		skillSummary(p, d.CSRF, data)
		p.m("\n\n")
		if data.Skill.Draft != "" {
			skillDraft(p, data)
		}
		p.m("\n\n")
		if data.Skill.InUse {
			skillInUse(p, data.Skill)
		}
		p.m("\n\n")
		if len(data.Versions) > 0 {
			skillVersions(p, data.Versions)
		}
		p.m("\n\n")
		skillProblems(p, "Left out", data.Skill.Problems)
		p.m("\n\n")
	})
}

// skillSummary writes what a skill is, and its actions: the confirm step
// of the one asked for, or the links that ask for them.
func skillSummary(p *page, csrf string, data skillPage) {
	sk := data.Skill
	if sk.InUse {
		p.m(`<p>`)
		if sk.Source == "owner" {
			p.m(`Yours, version `).n(int64(sk.Version)).m(`.`)
		} else {
			p.m(`Bundled with shelldon (read-only).`)
		}
		p.m(`</p>
<p class="skill-desc">`).t(sk.Description).m("</p>\n")
	} else {
		p.m(`<p>A new skill, drafted and not yet in use.</p>`)
	}
	p.m("\n\n")
	switch {
	case data.Confirm != "":
		rollback := data.Confirm == SkillRollback
		p.m(`<section aria-labelledby="confirm" class="card">
<h2 id="confirm">`)
		if rollback {
			p.m(`Roll back `).t(sk.Name).m(`?`)
		} else {
			p.m(`Remove `).t(sk.Name).m(`?`)
		}
		p.m(`</h2>
<p>`)
		label := "Remove"
		if rollback {
			label = "Roll back"
			p.m(`The version before this one becomes the one in use; this one is kept as a version.`)
		} else {
			p.m(`Your copy and its versions are moved aside (skills/.removed); a bundled skill of that name, if any, is offered again.`)
		}
		p.m(`</p>
<div class="actions">
`).button(data.Href+"/"+data.Confirm, csrf, label, "danger").m("\n").link(data.Href, "Cancel").m(`
</div>
</section>
`)
	case data.CanRollback || data.CanRemove:
		p.m(`<p class="actions">`)
		if data.CanRollback {
			p.link(data.Href+"?confirm=rollback", "Roll back…")
		}
		p.m(` `)
		if data.CanRemove {
			p.link(data.Href+"?confirm=remove", "Remove…")
		}
		p.m(`</p>`)
	}
}

// skillInUse writes the SKILL.md in use and the files beside it.
func skillInUse(p *page, sk SkillDetail) {
	p.m(`<section aria-labelledby="text">
<h2 id="text">SKILL.md</h2>
`).el("pre", "", sk.Text).m(`
</section>

<section aria-labelledby="files">
<h2 id="files">Files beside it</h2>
`)
	if len(sk.Files) > 0 {
		p.m(`<table>
<thead><tr><th scope="col">File</th><th scope="col">Bytes</th></tr></thead>
<tbody>`)
		for _, f := range sk.Files {
			p.m(`<tr><td>`).el("code", "", f.Path).m(`</td><td>`).n(f.Size).m("</td></tr>\n")
		}
		p.m(`</tbody>
</table>
`)
		for _, f := range sk.Files {
			if f.Text != "" {
				p.el("h3", "", f.Path).m("\n").el("pre", "", f.Text).m("\n")
			}
		}
	} else {
		p.m(`<p class="muted">None.</p>`)
	}
	p.m(`
</section>`)
}
