package app

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/skill"
)

//go:embed skills
var bundledSkills embed.FS

// bundled is the read-only skills shipped in the binary.
func bundled() fs.FS {
	sub, _ := fs.Sub(bundledSkills, "skills")
	return sub
}

// skillStore serves the worker's skills tools from the library.
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
			return "There are no skills yet; create_skill writes one.", nil
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
	case "create":
		sk, err := s.lib.Create(req.Name, req.Description, req.Body)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Created the skill %s (version %d). use_skill loads it.", sk.Name, sk.Version), nil
	case "update":
		sk, err := s.lib.Update(req.Name, req.Description, req.Body)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Updated the skill %s (version %d); the previous version is kept.", sk.Name, sk.Version), nil
	}
	return "", fmt.Errorf("unknown skills operation %q", req.Op)
}
