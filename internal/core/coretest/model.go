package coretest

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
)

// Step answers one model call; it may look at the request first, or block
// until ctx ends.
type Step func(ctx context.Context, req contracts.Request) (contracts.Completion, error)

// Model is a scripted model, in the daemon's place of the broker: each call
// takes the next Step of its script, and every request is recorded. A call
// the script has no step for is an error, so a test scripts every call it
// expects.
type Model struct {
	mu    sync.Mutex
	steps []Step
	reqs  []contracts.Request
}

var _ core.Completer = (*Model)(nil)

// Script appends steps to the script.
func (m *Model) Script(steps ...Step) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps = append(m.steps, steps...)
}

// Complete answers from the script, streaming the answer's text to onText.
func (m *Model) Complete(ctx context.Context, req contracts.Request, onText func(string)) (contracts.Completion, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	n := len(m.reqs)
	if len(m.steps) == 0 {
		m.mu.Unlock()
		return contracts.Completion{}, fmt.Errorf("coretest: the model's script has no step for call %d", n)
	}
	step := m.steps[0]
	m.steps = m.steps[1:]
	m.mu.Unlock()
	c, err := step(ctx, req)
	if err == nil && onText != nil && c.Message.Text != "" {
		onText(c.Message.Text)
	}
	return c, err
}

// Requests returns every request the model got, in order.
func (m *Model) Requests() []contracts.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]contracts.Request(nil), m.reqs...)
}

// Left is how many steps of the script are still unused.
func (m *Model) Left() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.steps)
}

// Reply is a step that answers text and asks for calls.
func Reply(text string, calls ...contracts.ToolCall) Step {
	c := Completion(text, calls...)
	return func(context.Context, contracts.Request) (contracts.Completion, error) { return c, nil }
}

// Completion is an assistant message with text and calls, with some usage.
func Completion(text string, calls ...contracts.ToolCall) contracts.Completion {
	return contracts.Completion{
		Message: contracts.Message{Role: contracts.RoleAssistant, Text: text, ToolCalls: calls},
		Usage:   contracts.Usage{InputTokens: 10, OutputTokens: 5}, Provider: "coretest", Model: "scripted",
	}
}

// Call is a tool call as the model asks for it.
func Call(id, name, args string) contracts.ToolCall {
	return contracts.ToolCall{ID: id, Name: name, Arguments: args}
}

// Results is a step that reports the tool results the request ends with,
// one "name ok=true content" per result joined by " | " after "RESULTS: ",
// so a test can read from the reply what the model was told.
func Results(_ context.Context, req contracts.Request) (contracts.Completion, error) {
	var parts []string
	if n := len(req.Messages); n > 0 {
		for _, r := range req.Messages[n-1].ToolResults {
			parts = append(parts, fmt.Sprintf("%s ok=%v %s", r.Name, r.OK, r.Content))
		}
	}
	return Completion("RESULTS: " + strings.Join(parts, " | ")), nil
}

// Offered is the names of the tools a request offered the model.
func Offered(req contracts.Request) []string {
	names := make([]string, len(req.Tools))
	for i, t := range req.Tools {
		names[i] = t.Name
	}
	return names
}
