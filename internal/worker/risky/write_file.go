package risky

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/workspace"
)

//go:embed write_file.md
var writeFileDescription string

type writeFileArgs struct {
	Path    string `json:"path" jsonschema:"the file's path, relative to the workspace"`
	Content string `json:"content" jsonschema:"the whole new content of the file (at most 64 KiB)"`
}

func writeFileTool(env Env) (*worker.Tool, error) {
	check := func(in writeFileArgs) error {
		if len(in.Content) > workspace.MaxWrite {
			return fmt.Errorf("write_file: the content is %d bytes; the limit is %d, nothing was written", len(in.Content), workspace.MaxWrite)
		}
		if _, err := env.Workspace.CheckWrite(in.Path); err != nil {
			return fmt.Errorf("write_file: %w", err)
		}
		return nil
	}
	t, err := worker.NewBuiltin(contracts.ToolWriteFile, writeFileDescription,
		func(ctx context.Context, in writeFileArgs) (string, error) {
			if err := check(in); err != nil {
				return "", err
			}
			// The owner approved the path as it resolved then; write only if
			// it still resolves there.
			var res workspace.WriteResult
			var err error
			if rel := worker.BindingFrom(ctx); rel != "" {
				res, err = env.Workspace.WriteFileExpect(in.Path, rel, []byte(in.Content))
			} else {
				res, err = env.Workspace.WriteFile(in.Path, []byte(in.Content))
			}
			if err != nil {
				return "", fmt.Errorf("write_file: %w", err)
			}
			verb := "replaced"
			if res.Created {
				verb = "created"
			}
			return fmt.Sprintf("%s %s (%d bytes)", verb, res.Path, res.Size), nil
		})
	if err != nil {
		return nil, err
	}
	t.Guard = "the workspace guard (jail, deny list, size)"
	t.Check = decodeCheck(check)
	t.Bind = func(_ context.Context, raw json.RawMessage) (string, error) {
		var in writeFileArgs
		if err := json.Unmarshal(raw, &in); err != nil {
			return "", err
		}
		return env.Workspace.CheckWrite(in.Path)
	}
	return t, nil
}
