package risky

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/worker"
)

//go:embed update_config.md
var updateConfigDescription string

// Configurer applies an approved config change (the daemon does; the worker
// cannot read or write the config).
type Configurer interface {
	Configure(ctx context.Context, changes json.RawMessage) ([]string, error)
}

type updateConfigArgs struct {
	Changes map[string]any `json:"changes" jsonschema:"the settings to change, as nested keys, e.g. {\"provider\": {\"name\": \"ollama\", \"model\": \"qwen2.5:3b\"}} to switch to the configured provider named ollama"`
}

func updateConfigTool(env Env) (*worker.Tool, error) {
	t, err := worker.NewBuiltin(contracts.ToolUpdateConfig, updateConfigDescription,
		func(ctx context.Context, in updateConfigArgs) (string, error) {
			if err := contracts.CheckAgentConfig(in.Changes); err != nil {
				return "", fmt.Errorf("update_config: %w", err)
			}
			if env.Config == nil {
				return "", errors.New("update_config: not available here")
			}
			raw, _ := json.Marshal(in.Changes)
			diff, err := env.Config.Configure(ctx, raw)
			if err != nil {
				return "", fmt.Errorf("update_config: %w", err)
			}
			if len(diff) == 0 {
				return "nothing changed: the config already had these values", nil
			}
			return "changed, from the next turn on:\n" + strings.Join(diff, "\n"), nil
		})
	if err != nil {
		return nil, err
	}
	t.Guard = "the config guard (keys the agent may change)"
	t.Check = decodeCheck(func(in updateConfigArgs) error {
		if err := contracts.CheckAgentConfig(in.Changes); err != nil {
			return fmt.Errorf("update_config: %w", err)
		}
		if err := contracts.CheckProviderNames(in.Changes, env.Providers); err != nil {
			return fmt.Errorf("update_config: %w", err)
		}
		return nil
	})
	return t, nil
}
