package app

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
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
type skillStore struct{ lib *skill.Library }

// catalogBudget bounds the skills catalog in the system prompt.
const catalogBudget = 2000

func (s skillStore) Catalog() string { return s.lib.Catalog(catalogBudget) }

func (s skillStore) Do(_ context.Context, req contracts.SkillRequest) (string, error) {
	switch req.Op {
	case "list":
		list, _, err := s.lib.List()
		if err != nil {
			return "", err
		}
		if len(list) == 0 {
			return "There are no skills yet; create_skill drafts one for the owner to approve.", nil
		}
		var b strings.Builder
		for _, sk := range list {
			fmt.Fprintf(&b, "%s (%s): %s\n", sk.Name, sk.Source, sk.Description)
		}
		return strings.TrimRight(b.String(), "\n"), nil
	case "use":
		sk, err := s.lib.Get(req.Name)
		if err != nil {
			return "", err
		}
		out := fmt.Sprintf("Skill %s: %s\n\n%s", sk.Name, sk.Description, sk.Body)
		if len(sk.Files) > 0 {
			out += "\n\nFiles beside it (not loaded): " + strings.Join(sk.Files, ", ")
		}
		return out, nil
	}
	return "", fmt.Errorf("unknown skills operation %q", req.Op)
}

// Stage keeps the draft a create_skill or update_skill makes, apart from
// the skills in use, for the owner to approve.
func (s skillStore) Stage(_ context.Context, req contracts.SkillRequest) (core.SkillDraft, error) {
	var create bool
	switch req.Op {
	case "create":
		create = true
	case "update":
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
