package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/skill"
)

// skillsReviewedFile marks a skills directory whose skills the agent wrote
// before its drafts needed approval have been put before the owner.
const skillsReviewedFile = ".agent-skills-reviewed"

// reviewAgentSkills puts before the owner, once, every skill in use that
// the agent wrote (create_skill, update_skill) before its drafts needed
// the owner's approval: each is taken out of use and filed as a draft in
// the chat that wrote it. The audit trail says which they are. It runs at
// the daemon's start; the marker file makes it once.
func reviewAgentSkills(ctx context.Context, cfg *config.Config, c *core.Core, lib *skill.Library) (int, error) {
	marker := filepath.Join(cfg.Path("skills"), skillsReviewedFile)
	if _, err := os.Stat(marker); err == nil {
		return 0, nil
	}
	type origin struct {
		chat string
		turn int64
	}
	wrote := map[string]origin{}
	for _, tool := range []string{contracts.ToolCreateSkill, contracts.ToolUpdateSkill} {
		var before int64
		for {
			page, err := c.Audit(ctx, core.AuditQuery{Tool: tool, Limit: 1000, Before: before})
			if err != nil {
				return 0, fmt.Errorf("review the agent's skills: %w", err)
			}
			for _, e := range page {
				var args struct{ Name string }
				if e.OK && e.Kind == store.KindToolCall && json.Unmarshal([]byte(e.Args), &args) == nil && args.Name != "" {
					if _, seen := wrote[args.Name]; !seen { // newest first: the last writer's chat
						wrote[args.Name] = origin{e.Chat, e.Turn}
					}
				}
			}
			if len(page) < 1000 {
				break
			}
			before = page[len(page)-1].ID
		}
	}
	pending, err := c.Approvals(ctx)
	if err != nil {
		return 0, fmt.Errorf("review the agent's skills: %w", err)
	}
	filed := map[string]bool{}
	for _, p := range pending {
		if p.Kind == core.KindSkill {
			filed[p.Tool] = true
		}
	}
	n := 0
	for name, o := range wrote {
		if filed[name] {
			continue
		}
		d, err := lib.Withhold(name)
		if errors.Is(err, skill.ErrNotFound) {
			// Removed since, or an update of a bundled skill that changed
			// nothing; or withheld by a run a crash cut short before it
			// filed the draft, which is filed now.
			if d, err = lib.Drafted(name); err != nil {
				continue
			}
		}
		if err != nil {
			return n, fmt.Errorf("review the agent's skill %s: %w", name, err)
		}
		if _, err := c.ProposeSkill(ctx, o.chat, o.turn, core.SkillDraft{Name: d.Name, Text: string(d.Data), Live: string(d.Live), Hash: d.Hash}); err != nil {
			return n, fmt.Errorf("review the agent's skill %s: %w", name, err)
		}
		n++
	}
	if err := config.WriteFileAtomic(marker, []byte("The skills the agent wrote before its drafts needed approval were filed for the owner.\n"), 0o600); err != nil {
		return n, fmt.Errorf("review the agent's skills: %w", err)
	}
	return n, nil
}
