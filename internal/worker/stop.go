package worker

import (
	"fmt"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
)

// stop ends the turn before the model gave its own final answer. The owner
// reads the reply: why it stopped, the model's latest words, the latest
// tool results. The history keeps what happened (the owner's message, the
// calls that ran and their results) closed by a note from shelldon
// (contracts.StoppedNote), never by words put in the model's mouth, which the model
// would read in later turns as its own.
func (t *turn) stop(reason, msg string) {
	t.res.Stopped = reason
	var b strings.Builder
	switch reason {
	case contracts.StopDeadline:
		fmt.Fprintf(&b, "I ran out of time for this turn (%s budget, %d tool calls made).", t.lim.Budget, t.res.ToolCalls)
	case contracts.StopCancelled:
		b.WriteString("Turn cancelled.")
	default:
		b.WriteString(msg)
	}
	if t.lastText != "" {
		b.WriteString("\n\nWhat I had so far: " + t.lastText)
	}
	if last := t.lastResults(); last != "" {
		b.WriteString("\n\nLatest tool results:\n" + last)
	}
	t.res.Reply = b.String()
	t.append(contracts.StoppedNote(reason))
}

// lastResults summarizes the most recent tool results of this turn.
func (t *turn) lastResults() string {
	for i := len(t.res.Messages) - 1; i >= 0; i-- {
		m := t.res.Messages[i]
		if m.Role != contracts.RoleTool {
			continue
		}
		var b strings.Builder
		for _, r := range m.ToolResults {
			fmt.Fprintf(&b, "- %s: %s\n", r.Name, capText(r.Content, 500))
		}
		return strings.TrimRight(b.String(), "\n")
	}
	return ""
}

// errorPrefix begins the content of a failed tool result: the model reads
// "error: <message>" once, whichever wire format carries it (the OpenAI
// adapter adds it only where it is missing; Anthropic's sets is_error too).
const errorPrefix = "error: "

// failure is the content of a failed tool result: errorPrefix and msg, with
// any "error:" msg already starts with (a tool's own wording) dropped, so
// the model never reads "error: error: ...".
func failure(msg string) string {
	msg = strings.TrimSpace(msg)
	for len(msg) >= len("error:") && strings.EqualFold(msg[:len("error:")], "error:") {
		msg = strings.TrimSpace(msg[len("error:"):])
	}
	return errorPrefix + capText(msg, MaxResultBytes)
}
