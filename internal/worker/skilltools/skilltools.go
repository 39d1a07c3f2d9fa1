// Package skilltools offers the skills tools in the worker: list_skills,
// use_skill, read_skill_file, create_skill and update_skill, all FREE.
// Skills are written procedures over existing tools; nothing in a skill is
// executed. The daemon keeps them (in $SHELLDON_HOME/skills, outside the
// worker's view), so each tool is a request to it, which tells the daemon
// the most a result may hold (worker.MaxResultBytes): what is longer comes
// in pages, never cut silently.
package skilltools

import (
	"context"
	_ "embed"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/worker"
)

// Daemon serves the skills requests.
type Daemon interface {
	Skill(ctx context.Context, req contracts.SkillRequest) (string, error)
}

//go:embed list_skills.md
var listDescription string

//go:embed use_skill.md
var useDescription string

//go:embed read_skill_file.md
var readDescription string

//go:embed create_skill.md
var createDescription string

//go:embed update_skill.md
var updateDescription string

type nameArgs struct {
	Name string `json:"name" jsonschema:"the skill's name, e.g. weekly-report"`
}

type readArgs struct {
	Skill  string `json:"skill" jsonschema:"the skill's name, e.g. form-filler"`
	Path   string `json:"path,omitempty" jsonschema:"a file in the skill's folder, e.g. reference.md or forms/intake.md; omit it or use . to list the skill's files"`
	Offset int64  `json:"offset,omitempty" jsonschema:"the byte to read from, as the previous page said; omit it for the start"`
}

type writeArgs struct {
	Name        string `json:"name" jsonschema:"lowercase letters, digits and single hyphens, e.g. weekly-report"`
	Description string `json:"description" jsonschema:"one line: what the skill does and when to use it"`
	Body        string `json:"body" jsonschema:"the procedure, in markdown: the steps, which tools to call with which arguments, what to check"`
}

// Register adds the five skills tools to reg.
func Register(reg *worker.Registry, d Daemon) error {
	const max = worker.MaxResultBytes
	list, err := worker.NewBuiltin(contracts.ToolListSkills, listDescription,
		func(ctx context.Context, _ struct{}) (string, error) {
			return d.Skill(ctx, contracts.SkillRequest{Op: contracts.SkillList, Max: max})
		})
	if err != nil {
		return err
	}
	use, err := worker.NewBuiltin(contracts.ToolUseSkill, useDescription,
		func(ctx context.Context, in nameArgs) (string, error) {
			return d.Skill(ctx, contracts.SkillRequest{Op: contracts.SkillUse, Name: in.Name, Max: max})
		})
	if err != nil {
		return err
	}
	read, err := worker.NewBuiltin(contracts.ToolReadSkill, readDescription,
		func(ctx context.Context, in readArgs) (string, error) {
			return d.Skill(ctx, contracts.SkillRequest{Op: contracts.SkillRead, Name: in.Skill, Path: in.Path, Offset: in.Offset, Max: max})
		})
	if err != nil {
		return err
	}
	create, err := worker.NewBuiltin(contracts.ToolCreateSkill, createDescription,
		func(ctx context.Context, in writeArgs) (string, error) {
			return d.Skill(ctx, contracts.SkillRequest{Op: contracts.SkillCreate, Name: in.Name, Description: in.Description, Body: in.Body})
		})
	if err != nil {
		return err
	}
	update, err := worker.NewBuiltin(contracts.ToolUpdateSkill, updateDescription,
		func(ctx context.Context, in writeArgs) (string, error) {
			return d.Skill(ctx, contracts.SkillRequest{Op: contracts.SkillUpdate, Name: in.Name, Description: in.Description, Body: in.Body})
		})
	if err != nil {
		return err
	}
	for _, t := range []*worker.Tool{list, use, read, create, update} {
		if err := reg.Add(t); err != nil {
			return err
		}
	}
	return nil
}
