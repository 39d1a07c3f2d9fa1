package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

// One event of a streamed reply; which fields are set depends on Type.
type wireEvent struct {
	Type         string        `json:"type"`
	Message      *wireResponse `json:"message"`
	Index        int           `json:"index"`
	ContentBlock *wireBlock    `json:"content_block"`
	Delta        *wireDelta    `json:"delta"`
	Usage        *wireUsage    `json:"usage"`
	Error        *wireError    `json:"error"`
}

type wireDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

// block is one content block being assembled.
type block struct {
	kind     string // "text", "tool_use" or another type, ignored
	text     strings.Builder
	id, name string
	start    json.RawMessage // the input given in content_block_start
	json     strings.Builder
}

// decodeStream reads a streamed reply up to message_stop. Text deltas go to
// onText as they come. Errors of the reader pass through unchanged; anything
// the stream itself gets wrong is an *Error.
func decodeStream(r io.Reader, onText func(string)) (contracts.Completion, error) {
	comp := contracts.Completion{Message: contracts.Message{Role: contracts.RoleAssistant}}
	blocks := map[int]*block{}
	sse := provider.NewSSEReader(r)
	for {
		ev, err := sse.Next()
		switch {
		case errors.Is(err, io.EOF):
			return contracts.Completion{}, provider.MalformedError("", errNoStop.Error())
		case errors.Is(err, provider.ErrSSETooLong):
			return contracts.Completion{}, provider.MalformedError("", err.Error())
		case err != nil:
			return contracts.Completion{}, err
		}
		var e wireEvent
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return contracts.Completion{}, provider.MalformedError("", fmt.Sprintf("event %q: invalid JSON: %v", ev.Type, err))
		}
		if e.Type == "" {
			e.Type = ev.Type
		}
		switch e.Type {
		case "message_start":
			if m := e.Message; m != nil {
				comp.Model = m.Model
				comp.Usage = contracts.Usage{InputTokens: m.Usage.input(), OutputTokens: m.Usage.OutputTokens}
			}
		case "content_block_start":
			b := &block{}
			if cb := e.ContentBlock; cb != nil {
				b.kind, b.id, b.name, b.start = cb.Type, cb.ID, cb.Name, cb.Input
				if cb.Type == "text" && cb.Text != "" {
					b.text.WriteString(cb.Text)
					emit(onText, cb.Text)
				}
			}
			blocks[e.Index] = b
		case "content_block_delta":
			if e.Delta == nil {
				continue
			}
			b := blocks[e.Index]
			switch e.Delta.Type {
			case "text_delta":
				if b == nil {
					b = &block{kind: "text"}
					blocks[e.Index] = b
				}
				if b.kind != "text" {
					return contracts.Completion{}, provider.MalformedError("", fmt.Sprintf("text_delta for block %d, which is a %s", e.Index, b.kind))
				}
				b.text.WriteString(e.Delta.Text)
				emit(onText, e.Delta.Text)
			case "input_json_delta":
				if b == nil || b.kind != "tool_use" {
					return contracts.Completion{}, provider.MalformedError("", fmt.Sprintf("input_json_delta for block %d, which is not a tool_use", e.Index))
				}
				b.json.WriteString(e.Delta.PartialJSON)
			}
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				comp.StopReason = e.Delta.StopReason
			}
			if u := e.Usage; u != nil {
				comp.Usage.OutputTokens = u.OutputTokens
				if in := u.input(); in > 0 {
					comp.Usage.InputTokens = in
				}
			}
		case "message_stop":
			comp.Message.Text, comp.Message.ToolCalls = assemble(blocks)
			return comp, nil
		case "error":
			return contracts.Completion{}, errorFor(e.Error)
		}
		// ping, content_block_stop and event types added later: nothing to do.
	}
}

// assemble joins the blocks in index order: the text blocks into one text,
// the tool_use blocks into tool calls.
func assemble(blocks map[int]*block) (string, []contracts.ToolCall) {
	idx := make([]int, 0, len(blocks))
	for i := range blocks {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var text strings.Builder
	var calls []contracts.ToolCall
	for _, i := range idx {
		b := blocks[i]
		switch b.kind {
		case "text":
			text.WriteString(b.text.String())
		case "tool_use":
			args := b.json.String()
			if strings.TrimSpace(args) == "" {
				args = rawOrEmpty(b.start)
			}
			calls = append(calls, contracts.ToolCall{ID: b.id, Name: b.name, Arguments: args})
		}
	}
	return text.String(), calls
}

func emit(onText func(string), s string) {
	if onText != nil && s != "" {
		onText(s)
	}
}
