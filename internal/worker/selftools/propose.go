package selftools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/worker"
)

//go:embed propose_tool.md
var proposeDescription string

type proposeArgs struct {
	Name     string `json:"name" jsonschema:"the tool's name: lowercase letters, digits and _, e.g. word_count"`
	Code     string `json:"code" jsonschema:"the tool's source: DESCRIPTION, PARAMS_SCHEMA, CAPABILITIES and def run(...)"`
	Test     string `json:"test" jsonschema:"the test: top-level test_* functions (Starlark: use assert.eq etc.; Python: from <name> import run and plain assert)"`
	Language string `json:"language,omitempty" jsonschema:"starlark (the default) or python"`
}

func proposeTool(env Env) (*worker.Tool, error) {
	return worker.NewBuiltin(contracts.ToolProposeTool, proposeDescription,
		func(ctx context.Context, in proposeArgs) (string, error) {
			name, err := selfcode.Normalize(in.Name)
			if err != nil {
				return "", err
			}
			lang := in.Language
			if lang == "" {
				lang = selfcode.Starlark
			}
			switch {
			case lang != selfcode.Starlark && lang != selfcode.Python:
				return "", fmt.Errorf("language must be %q or %q", selfcode.Starlark, selfcode.Python)
			case lang == selfcode.Python && !env.Python:
				return "", errors.New("python3 is not installed here; write the tool in starlark")
			case len(in.Code) > selfcode.MaxSource || len(in.Test) > selfcode.MaxSource:
				return "", fmt.Errorf("code and test are limited to %d bytes each", selfcode.MaxSource)
			}
			var gate GateResult
			err = runChild(ctx, env, GateRequest{Name: name, Language: lang, Code: in.Code, Test: in.Test, PyCache: env.PyCache},
				GatePolicy(env, lang), &gate)
			if err != nil {
				return "", fmt.Errorf("gate: the test run failed: %v", err)
			}
			if !gate.Passed {
				return "", fmt.Errorf("gate failed; fix the tool or its test and propose again:\n%s", gate.Report)
			}
			got, err := env.Daemon.Propose(ctx, contracts.Proposal{
				Name: name, Language: lang, Code: in.Code, Test: in.Test,
				Description: gate.Description, Parameters: gate.Parameters, Capabilities: gate.Capabilities,
				Gate: gate.Report,
			})
			if err != nil {
				return "", fmt.Errorf("the gate passed, but the proposal could not be filed: %v", err)
			}
			return fmt.Sprintf("Gate passed:\n%s\n\nThe owner has been asked to approve %s (version %d, request %s). "+
				"Once approved it is one of your tools from the next turn on; it is not available in this turn.",
				gate.Report, name, got.Version, got.ApprovalID), nil
		})
}
