package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/worker"
)

//go:embed about.md
var aboutText string

//go:embed about_tool.md
var aboutDescription string

type aboutArgs struct {
	Topic string `json:"topic,omitempty" jsonschema:"one of: providers, approvals, sandbox, files, gate, quarantine, skills, memory, telegram, tools; empty lists them"`
}

// aboutSections are the self-knowledge document's sections, by topic.
func aboutSections() (map[string]string, []string) {
	sections := map[string]string{}
	var order []string
	for _, part := range strings.Split("\n"+aboutText, "\n## ")[1:] {
		title, body, _ := strings.Cut(part, "\n")
		title = strings.TrimSpace(title)
		sections[title] = strings.TrimSpace(body)
		order = append(order, title)
	}
	return sections, order
}

func aboutTool(Env) (*worker.Tool, error) {
	sections, order := aboutSections()
	return worker.NewBuiltin(contracts.ToolAbout, aboutDescription,
		func(_ context.Context, in aboutArgs) (string, error) {
			topic := strings.ToLower(strings.TrimSpace(in.Topic))
			if topic == "" {
				return "Topics: " + strings.Join(order, ", "), nil
			}
			if s, ok := sections[topic]; ok {
				return s, nil
			}
			for _, t := range order { // a word of a topic is enough: "switching" finds providers
				if strings.Contains(sections[t], topic) || strings.HasPrefix(t, topic) {
					return sections[t], nil
				}
			}
			return "", fmt.Errorf("no topic %q; topics: %s", in.Topic, strings.Join(order, ", "))
		})
}
