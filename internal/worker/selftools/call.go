package selftools

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/worker"
)

// selfTool is a live self-coded tool: FREE, each call in a sandboxed child
// that reads the tool (read-only), checks its hash and runs it with only
// the capabilities the owner granted.
func selfTool(env Env, st contracts.SelfTool) *worker.Tool {
	return &worker.Tool{
		Name:        st.Name,
		Description: st.Description + " (a tool you wrote; version " + itoa(st.Version) + ")",
		Tier:        contracts.TierFree,
		Params:      paramsOf(st.Parameters),
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			var out CallResult
			pol := sandbox.Policy{
				Timeout: callTimeout, Limits: callLimits, MaxOutput: 64 << 10,
				ReadOnly: []string{st.Dir},
				// The network only for a tool granted http; its hosts are
				// enforced by the host function in the child.
				Network: len(st.Capabilities["http"]) > 0,
			}
			if err := runChild(ctx, env, ToolCallArgs, CallRequest{Tool: st, Args: args}, pol, &out); err != nil {
				return "", err
			}
			if out.Error != "" {
				return "", errors.New(out.Error)
			}
			return out.Result, nil
		},
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
