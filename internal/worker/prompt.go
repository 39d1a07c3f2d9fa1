package worker

import (
	_ "embed"
	"fmt"
	"strings"
	"time"
)

//go:embed prompt.md
var basePrompt string

// SystemPrompt assembles a turn's system prompt: shelldon's standing
// instructions, the current time, and the owner's extra instructions.
func SystemPrompt(now time.Time, extra string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(basePrompt))
	fmt.Fprintf(&b, "\n\nThe time at the start of this turn: %s.", now.Format("Monday, 2 January 2006, 15:04 MST"))
	if extra = strings.TrimSpace(extra); extra != "" {
		b.WriteString("\n\nThe owner's instructions:\n" + extra)
	}
	return b.String()
}
