package web

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
)

// The owner's commands on a skill, as POST /api/skills/{name}/{action},
// the command line and the SkillKeeper name them. Approving or denying a
// draft is a decision: it goes through /api/approvals.
const (
	SkillRollback = "rollback"
	SkillRemove   = "remove"
)

// SkillActions are the actions POST /api/skills/{name}/{action} takes.
var SkillActions = []string{SkillRollback, SkillRemove}

// The refusals a SkillKeeper's error wraps, so that the API tells the
// owner's mistake from a failure; the error's own text is the owner's to
// read.
var (
	// ErrNoSkill: no skill has that name (or none can have it): 404.
	ErrNoSkill = errors.New("no such skill")
	// ErrSkillRefused: the skill cannot do that (nothing to roll back to,
	// a bundled skill cannot be removed): 409.
	ErrSkillRefused = errors.New("refused")
)

// SkillKeeper lists the skills and carries out the owner's commands on
// them, on the library the daemon's turns and promotions use.
type SkillKeeper interface {
	Skills(ctx context.Context) (SkillList, error)
	// SkillAction carries out action (SkillRollback, SkillRemove) on the
	// skill name, audited as done by by, and returns what to tell the
	// owner. A refusal wraps ErrNoSkill or ErrSkillRefused; any other
	// error is a failure.
	SkillAction(ctx context.Context, action, name, by string) (string, error)
	// Skill returns one skill for its page: the text in use, the files
	// beside it, the kept versions and the draft waiting, if any. A name
	// with neither a skill in use nor a draft wraps ErrNoSkill.
	Skill(ctx context.Context, name string) (SkillDetail, error)
}

// SkillDetail is one skill as the page /skills/{name} shows it.
type SkillDetail struct {
	SkillView
	InUse    bool           // false: only a draft of a new skill
	Text     string         // the SKILL.md in use, as shelldon reads it
	Files    []SkillFile    // the files beside SKILL.md
	Versions []SkillVersion // the owner's kept earlier versions, by number
	Draft    string         // the SKILL.md drafted, waiting for approval; "" when none
	Problems []string       // what beside SKILL.md was left out, and why
}

// SkillFile is a file beside a SKILL.md.
type SkillFile struct {
	Path string
	Size int64
	Text string // the whole file when it is small text (MaxShownSkillFile); else ""
}

// MaxShownSkillFile is the largest file beside a SKILL.md whose text the
// skill's page shows.
const MaxShownSkillFile = 16 << 10

// SkillVersion is a kept earlier version of the owner's skill.
type SkillVersion struct {
	Version int
	Text    string // its SKILL.md as written
}

// SkillList is the answer of GET /api/skills.
type SkillList struct {
	// Skills are the skills in use, the owner's copy winning over a
	// bundled one of the same name, sorted by name.
	Skills []SkillView `json:"skills"`
	// Drafts name the skills with a draft waiting for the owner's
	// approval (a new skill among them is in Skills only once approved).
	Drafts []string `json:"drafts"`
	// Problems are what was skipped: an owner's skill that does not load,
	// a file beside a SKILL.md that is not listed.
	Problems []string `json:"problems"`
}

// SkillView is one skill in use.
type SkillView struct {
	Name        string `json:"name"`
	Source      string `json:"source"`            // "bundled" or "owner"
	Version     int    `json:"version,omitempty"` // the owner's version; 0 (left out) for a bundled skill
	Description string `json:"description"`
}

func (s *Server) getSkills(w http.ResponseWriter, r *http.Request) {
	var list SkillList
	if s.skills != nil {
		var err error
		if list, err = s.skills.Skills(r.Context()); err != nil {
			s.log.Error("list skills", "err", err)
			writeError(w, http.StatusInternalServerError, "internal", "could not list the skills")
			return
		}
	}
	// Lists, never null.
	for _, l := range []*[]string{&list.Drafts, &list.Problems} {
		if *l == nil {
			*l = []string{}
		}
	}
	if list.Skills == nil {
		list.Skills = []SkillView{}
	}
	writeJSON(w, http.StatusOK, list)
}

// postSkillAction rolls a skill back or removes it; the body is not read.
func (s *Server) postSkillAction(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	if !slices.Contains(SkillActions, action) {
		writeError(w, http.StatusNotFound, "not_found", "actions: "+strings.Join(SkillActions, ", ")+" (approve and deny go through /api/approvals)")
		return
	}
	if s.skills == nil {
		writeError(w, http.StatusNotFound, "not_found", "no skills")
		return
	}
	msg, err := s.skills.SkillAction(r.Context(), action, r.PathValue("name"), "http")
	switch {
	case errors.Is(err, ErrNoSkill):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
		return
	case errors.Is(err, ErrSkillRefused):
		writeError(w, http.StatusConflict, "conflict", err.Error())
		return
	case err != nil:
		s.log.Error("skill action", "action", action, "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "the skill could not be changed: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": msg})
}
