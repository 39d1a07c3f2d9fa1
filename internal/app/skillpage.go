package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/shelldon/shelldon/internal/skill"
	"github.com/shelldon/shelldon/internal/transport/web"
)

// Skill is one skill for the web UI's page: the SKILL.md in use (as
// shelldon reads it), the files beside it (a small text one with its
// text), the kept versions and the draft waiting for the owner. A skill
// only drafted has just its draft.
func (a *App) Skill(_ context.Context, name string) (web.SkillDetail, error) {
	if err := skill.ValidName(name); err != nil {
		return web.SkillDetail{}, refusal{fmt.Errorf("skill: %w", err), web.ErrNoSkill}
	}
	var out web.SkillDetail
	sk, files, notes, err := a.skillLib.Files(name)
	switch {
	case err == nil:
		out.InUse = true
		out.SkillView = web.SkillView{Name: sk.Name, Source: sk.Source, Version: sk.Version, Description: sk.Description}
		out.Text = string(skill.Format(sk))
		for _, f := range files[1:] { // SKILL.md first
			sf := web.SkillFile{Path: f.Path, Size: f.Size}
			if f.Size <= web.MaxShownSkillFile {
				if p, err := a.skillLib.ReadFile(name, f.Path, 0, web.MaxShownSkillFile); err == nil && p.Next() == 0 {
					sf.Text = p.Text
				}
			}
			out.Files = append(out.Files, sf)
		}
		for _, n := range notes {
			out.Problems = append(out.Problems, n.Error())
		}
	case !errors.Is(err, skill.ErrNotFound):
		return web.SkillDetail{}, err
	}
	if sk.Source == skill.SourceOwner {
		for _, n := range a.skillLib.Versions(name) {
			data, err := a.skillLib.Version(name, n)
			if err != nil {
				out.Problems = append(out.Problems, err.Error())
				continue
			}
			out.Versions = append(out.Versions, web.SkillVersion{Version: n, Text: string(data)})
		}
	}
	d, err := a.skillLib.Drafted(name)
	switch {
	case err == nil:
		out.Draft = string(d.Data)
		if !out.InUse {
			out.Name = name
		}
	case !errors.Is(err, skill.ErrNoDraft):
		out.Problems = append(out.Problems, err.Error())
	}
	if !out.InUse && out.Draft == "" {
		return web.SkillDetail{}, refusal{fmt.Errorf("skill %q: %w", name, skill.ErrNotFound), web.ErrNoSkill}
	}
	return out, nil
}
