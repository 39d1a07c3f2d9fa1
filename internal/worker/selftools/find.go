package selftools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/worker"
)

//go:embed find_tools.md
var findDescription string

type findArgs struct {
	Query string `json:"query" jsonschema:"words for what the tool should do, e.g. convert currency"`
}

// maxFoundLine caps the description shown for each tool find_tools adds.
const maxFoundLine = 200

// FindTool is find_tools: it asks f for the live self-coded tools most
// relevant to its query that the turn does not offer yet and adds each to
// reg (as offer makes it), so the loop's next model call offers them. A
// found tool whose name reg holds already is left out.
func FindTool(reg *worker.Registry, f worker.ToolFinder, offer func(contracts.SelfTool) *worker.Tool) (*worker.Tool, error) {
	return worker.NewBuiltin(contracts.ToolFindTools, findDescription,
		func(ctx context.Context, in findArgs) (string, error) {
			if strings.TrimSpace(in.Query) == "" {
				return "", errors.New("query is empty: say in a few words what the tool should do")
			}
			if f == nil {
				return "", errors.New("find_tools cannot reach shelldon here")
			}
			found, err := f.FindTools(ctx, in.Query)
			if err != nil {
				return "", err
			}
			var b strings.Builder
			for _, st := range found {
				if _, taken := reg.Get(st.Name); taken {
					continue
				}
				if err := reg.Add(offer(st)); err != nil {
					return "", fmt.Errorf("add %s: %w", st.Name, err)
				}
				fmt.Fprintf(&b, "\n- %s: %s", st.Name, trim(oneLine(st.Description), maxFoundLine))
			}
			if b.Len() == 0 {
				return fmt.Sprintf("No other tool matches %q. Try other words, or propose_tool to write one.", in.Query), nil
			}
			return "These tools are yours from the next step on:" + b.String(), nil
		})
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
