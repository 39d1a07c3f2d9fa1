package app

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/skill"
	"github.com/shelldon/shelldon/internal/transport/web"
)

//go:embed skills
var bundledSkills embed.FS

// bundled is the read-only skills shipped in the binary.
func bundled() fs.FS {
	sub, _ := fs.Sub(bundledSkills, "skills")
	return sub
}

// skillStore serves the worker's skills tools from the library, and makes
// the drafts the owner approves live (core.SkillStore).
type skillStore struct {
	lib *skill.Library
	log *slog.Logger // nil: nothing logged
}

// catalogBudget bounds the skills catalog in the system prompt.
const catalogBudget = 2000

func (s skillStore) Catalog() string { return s.lib.Catalog(catalogBudget) }

// Bounds on an answer to a skills tool when the request gives none
// (contracts.SkillRequest.Max, the worker's cap on a tool's result), and
// the least it may be.
const (
	defaultSkillAnswer = 32 << 10
	minSkillAnswer     = 1 << 10
)

// answerMax is the most bytes an answer to req may hold.
func answerMax(req contracts.SkillRequest) int {
	switch {
	case req.Max <= 0:
		return defaultSkillAnswer
	case req.Max < minSkillAnswer:
		return minSkillAnswer
	}
	return req.Max
}

// Do serves the skills tools that read: list_skills, use_skill (which
// records the use, for the catalog's choice) and read_skill_file. Each
// answer fits in req.Max bytes; what does not is paged, the answer saying
// how to read the rest, never cut silently.
func (s skillStore) Do(_ context.Context, req contracts.SkillRequest) (string, error) {
	limit := answerMax(req)
	switch req.Op {
	case contracts.SkillList:
		list, _, err := s.lib.List()
		if err != nil {
			return "", err
		}
		if len(list) == 0 {
			return "There are no skills yet; create_skill drafts one for the owner to approve.", nil
		}
		return listAnswer(list, limit), nil
	case contracts.SkillUse:
		sk, err := s.lib.Get(req.Name)
		if err != nil {
			return "", err
		}
		if err := s.lib.Used(sk.Name); err != nil && s.log != nil {
			s.log.Warn("record a skill's use", "skill", sk.Name, "err", err)
		}
		return useAnswer(sk, limit), nil
	case contracts.SkillRead:
		return s.read(req, limit)
	}
	return "", fmt.Errorf("unknown skills operation %q", req.Op)
}

// listAnswer lists every skill, one a line with its description on one
// line, within limit bytes: the descriptions are shortened if they must be,
// then left out, and only then are skills left out, with a line saying how
// many.
func listAnswer(list []skill.Skill, limit int) string {
	line := func(sk skill.Skill, desc int) string {
		if desc == 0 {
			return fmt.Sprintf("%s (%s)\n", sk.Name, sk.Source)
		}
		d := []rune(sk.DescriptionLine())
		if desc > 0 && len(d) > desc {
			d = append(d[:desc-1], '…')
		}
		return fmt.Sprintf("%s (%s): %s\n", sk.Name, sk.Source, string(d))
	}
	note := map[int]string{
		skill.MaxCatalogDescription: "(descriptions shortened to fit; use_skill shows one whole)",
		0:                           "(descriptions left out to fit; use_skill shows one)",
	}
	for _, desc := range []int{-1, skill.MaxCatalogDescription, 0} {
		var b strings.Builder
		for _, sk := range list {
			b.WriteString(line(sk, desc))
		}
		if desc != -1 {
			b.WriteString(note[desc])
		}
		if out := strings.TrimRight(b.String(), "\n"); len(out) <= limit {
			return out
		}
	}
	var b strings.Builder
	for i, sk := range list {
		l := line(sk, 0)
		if tail := fmt.Sprintf("(%d more skills not listed: too many for one answer)", len(list)-i); b.Len()+len(l)+len(tail) > limit {
			b.WriteString(tail)
			break
		}
		b.WriteString(l)
	}
	return b.String()
}

// useAnswer is use_skill's answer: the skill's name, description and body,
// and the files beside it, within limit bytes. A body too long for that is
// cut at a line's end where it can be, and the answer says where in
// SKILL.md read_skill_file reads on.
func useAnswer(sk skill.Skill, limit int) string {
	head := fmt.Sprintf("Skill %s: %s\n\n", sk.Name, sk.DescriptionLine())
	files := ""
	if len(sk.Files) > 0 {
		files = "\n\nFiles beside it (not loaded; read_skill_file reads them): " + strings.Join(sk.Files, ", ")
	}
	if out := head + sk.Body + files; len(out) <= limit {
		return out
	}
	note := func(shown int) string {
		return fmt.Sprintf("\n\n[The procedure goes on: this shows the first %s of its %s bytes. "+
			"Read the rest with read_skill_file(skill: %q, path: %q, offset: %d).]",
			inert.Count(shown), inert.Count(len(sk.Body)), sk.Name, "SKILL.md", sk.BodyOffset()+int64(shown))
	}
	room := limit - len(head) - len(files) - len(note(len(sk.Body)))
	if room < limit/4 && files != "" {
		files = fmt.Sprintf("\n\n%d files beside it (not loaded): read_skill_file with path \".\" lists them.", len(sk.Files))
		room = limit - len(head) - len(files) - len(note(len(sk.Body)))
		if len(head)+len(sk.Body)+len(files) <= limit {
			return head + sk.Body + files
		}
	}
	if sk.Body == "" {
		return head + files // only a description of 1,024 characters over a cap under 4 KiB
	}
	cut := max(min(room, len(sk.Body)-1), 0)
	for cut > 0 && !utf8.RuneStart(sk.Body[cut]) {
		cut--
	}
	if nl := strings.LastIndexByte(sk.Body[:cut], '\n'); nl >= cut*3/4 {
		cut = nl + 1 // end at a line's end, unless that loses much
	}
	return head + sk.Body[:cut] + note(cut) + files
}

// read serves read_skill_file: the files of a skill, or a page of one.
func (s skillStore) read(req contracts.SkillRequest, limit int) (string, error) {
	// Room for the header and the line that says where the rest starts,
	// each naming the skill and the path.
	reserve := 300 + 2*(len(req.Name)+len(req.Path))
	page, err := s.lib.ReadFile(req.Name, req.Path, req.Offset, max(limit-reserve, 256))
	if err != nil {
		return "", err
	}
	if page.Folder() {
		var b strings.Builder
		if page.Path == "." {
			fmt.Fprintf(&b, "The files of the skill %s:\n", page.Skill)
		} else {
			fmt.Fprintf(&b, "The files of the skill %s under %s/:\n", page.Skill, page.Path)
		}
		for _, f := range page.Files {
			fmt.Fprintf(&b, "- %s (%s bytes)\n", f.Path, inert.Count(int(f.Size)))
		}
		fmt.Fprintf(&b, "read_skill_file(skill: %q, path: PATH) reads one, as text; shelldon never runs a skill's file.", page.Skill)
		return b.String(), nil
	}
	end := page.Offset + int64(len(page.Text))
	if page.Offset == 0 && page.Next() == 0 {
		return fmt.Sprintf("%s/%s (%s bytes):\n\n%s", page.Skill, page.Path, inert.Count(int(page.Size)), page.Text), nil
	}
	out := fmt.Sprintf("%s/%s, bytes %d to %d of %d:\n\n%s", page.Skill, page.Path, page.Offset, end, page.Size, page.Text)
	if next := page.Next(); next > 0 {
		out += fmt.Sprintf("\n\n[%s more bytes: read_skill_file(skill: %q, path: %q, offset: %d) reads on.]",
			inert.Count(int(page.Size-next)), page.Skill, page.Path, next)
	} else {
		out += "\n\n[The end of the file.]"
	}
	return out, nil
}

// Stage keeps the draft a create_skill or update_skill makes, apart from
// the skills in use, for the owner to approve.
func (s skillStore) Stage(_ context.Context, req contracts.SkillRequest) (core.SkillDraft, error) {
	var create bool
	switch req.Op {
	case contracts.SkillCreate:
		create = true
	case contracts.SkillUpdate:
	default:
		return core.SkillDraft{}, fmt.Errorf("unknown skills operation %q", req.Op)
	}
	d, err := s.lib.Stage(create, req.Name, req.Description, req.Body)
	if err != nil {
		return core.SkillDraft{}, err
	}
	return core.SkillDraft{Name: d.Name, Text: string(d.Data), Live: string(d.Live), Hash: d.Hash}, nil
}

// Promote makes an approved draft the skill in use, if it is still the
// draft the owner saw.
func (s skillStore) Promote(_ context.Context, a store.Approval) (string, string, error) {
	sk, err := s.lib.Promote(a.Tool, a.ArgsHash)
	if err != nil {
		return "", "not promoted: " + err.Error(), err
	}
	return fmt.Sprintf("The skill %s (version %d) is in use from the next turn.", sk.Name, sk.Version),
		fmt.Sprintf("promoted v%d", sk.Version), nil
}

// Deny discards a denied draft.
func (s skillStore) Deny(_ context.Context, a store.Approval) { s.discard(a) }

// Discard drops an expired draft.
func (s skillStore) Discard(_ context.Context, a store.Approval) { s.discard(a) }

// discard drops the draft of a, unless a newer draft of that name has
// replaced it (that one has a request of its own).
func (s skillStore) discard(a store.Approval) {
	if d, err := s.lib.Drafted(a.Tool); err == nil && d.Hash == a.ArgsHash {
		_ = s.lib.Discard(a.Tool)
	}
}

// Promoted tells whether an interrupted promotion of a happened.
func (s skillStore) Promoted(a store.Approval) string {
	if s.lib.InUse(a.Tool, a.ArgsHash) {
		return "promoted"
	}
	return "not promoted: interrupted"
}

// The audit kinds of the owner's commands on a skill.
const (
	auditSkillRolledBack = "skill_rolled_back"
	auditSkillRemoved    = "skill_removed"
)

var _ web.SkillKeeper = (*App)(nil)

// Skills lists the skills in use, the drafts waiting for the owner and
// what was skipped (GET /api/skills).
func (a *App) Skills(context.Context) (web.SkillList, error) {
	list, problems, err := a.skillLib.List()
	if err != nil {
		return web.SkillList{}, err
	}
	out := web.SkillList{Drafts: a.skillLib.Drafts()}
	for _, s := range list {
		out.Skills = append(out.Skills, web.SkillView{Name: s.Name, Source: s.Source, Version: s.Version, Description: s.Description})
	}
	for _, p := range problems {
		out.Problems = append(out.Problems, p.Error())
	}
	return out, nil
}

// SkillAction carries out an owner's command on a skill (web.SkillRollback,
// web.SkillRemove) on the App's library: in the daemon, the one its turns
// read and its promotions of drafts write, so the change is in the next
// turn's catalog and never interleaves with a promotion. It is audited as
// done by by ("http" through the API, "cli" by a command with no daemon
// running). A refusal wraps web.ErrNoSkill or web.ErrSkillRefused.
func (a *App) SkillAction(ctx context.Context, action, name, by string) (string, error) {
	if err := skill.ValidName(name); err != nil {
		return "", refusal{fmt.Errorf("skill: %w", err), web.ErrNoSkill}
	}
	var kind, msg, summary string
	switch action {
	case web.SkillRollback:
		s, err := a.skillLib.Rollback(name)
		if err != nil {
			return "", skillRefusal(err)
		}
		kind, msg = auditSkillRolledBack, fmt.Sprintf("%s is back at version %d.", s.Name, s.Version)
		summary = fmt.Sprintf("by %s: back at version %d", by, s.Version)
	case web.SkillRemove:
		if err := a.skillLib.Remove(name); err != nil {
			return "", skillRefusal(err)
		}
		kind, msg, summary = auditSkillRemoved, fmt.Sprintf("Removed %s (kept aside in skills/.removed).", name), "by "+by
	default:
		return "", refusal{fmt.Errorf("skill %q: no action %q (%s)", name, action, strings.Join(web.SkillActions, ", ")), web.ErrSkillRefused}
	}
	if _, err := a.Store.AppendAudit(context.WithoutCancel(ctx), store.AuditEntry{
		At: timeNow(), Kind: kind, Tool: name, Summary: summary, OK: true,
	}); err != nil {
		a.Log.Error("audit", "kind", kind, "tool", name, "err", err)
	}
	return msg, nil
}

// skillRefusal is err of the skill library as the API tells it: an
// unknown skill, a skill that cannot do what was asked, or (neither) a
// failure.
func skillRefusal(err error) error {
	switch {
	case errors.Is(err, skill.ErrNotFound):
		return refusal{err, web.ErrNoSkill}
	case errors.Is(err, skill.ErrNoVersion), errors.Is(err, skill.ErrBundled):
		return refusal{err, web.ErrSkillRefused}
	}
	return err
}

// refusal is err, the owner's to read as it is, classed as kind.
type refusal struct{ err, kind error }

func (r refusal) Error() string   { return r.err.Error() }
func (r refusal) Unwrap() []error { return []error{r.err, r.kind} }
