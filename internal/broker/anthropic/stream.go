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
	Type         string          `json:"type"`
	Message      *wireResponse   `json:"message"`
	Index        int             `json:"index"`
	ContentBlock *wireBlock      `json:"content_block"`
	Delta        *wireDelta      `json:"delta"`
	Usage        *wireUsage      `json:"usage"`
	Error        json.RawMessage `json:"error"`
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
// the stream itself gets wrong is an *Error, and a reply over one of caps
// stops at the cap with an OverCap *Error.
func decodeStream(r io.Reader, caps provider.Caps, onText func(string)) (contracts.Completion, error) {
	comp := contracts.Completion{Message: contracts.Message{Role: contracts.RoleAssistant}}
	blocks := map[int]*block{}
	tally := provider.NewTally(caps)
	starts := 0
	sse := provider.NewSSEReader(r, tally.Caps().Stream)
	for {
		ev, err := sse.Next()
		switch {
		case errors.Is(err, io.EOF):
			return contracts.Completion{}, provider.MalformedError("", errNoStop.Error())
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
			// Every block is counted, whatever its kind or index, so
			// neither the map nor the time to assemble it grows past
			// the caps.
			if starts++; starts > maxBlocks(tally.Caps()) {
				return contracts.Completion{}, provider.OverCapError(fmt.Sprintf("the model's reply exceeded %d content blocks", maxBlocks(tally.Caps())))
			}
			b := &block{}
			if cb := e.ContentBlock; cb != nil {
				b.kind, b.id, b.name, b.start = cb.Type, cb.ID, cb.Name, cb.Input
				switch cb.Type {
				case "text":
					if err := tally.Text(provider.WireSize(cb.Text)); err != nil {
						return contracts.Completion{}, err
					}
					if cb.Text != "" {
						b.text.WriteString(cb.Text)
						emit(onText, cb.Text)
					}
				case "tool_use":
					if err := tally.Call(); err != nil {
						return contracts.Completion{}, err
					}
					if err := tally.Name(len(cb.Name)); err != nil {
						return contracts.Completion{}, err
					}
					if err := tally.Args(len(cb.ID) + len(cb.Name) + provider.WireSize(string(cb.Input))); err != nil {
						return contracts.Completion{}, err
					}
				default:
					b.start = nil // kept only for a tool_use
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
					if starts++; starts > maxBlocks(tally.Caps()) {
						return contracts.Completion{}, provider.OverCapError(fmt.Sprintf("the model's reply exceeded %d content blocks", maxBlocks(tally.Caps())))
					}
					b = &block{kind: "text"}
					blocks[e.Index] = b
				}
				if b.kind != "text" {
					return contracts.Completion{}, provider.MalformedError("", fmt.Sprintf("text_delta for block %d, which is a %s", e.Index, b.kind))
				}
				if err := tally.Text(provider.WireSize(e.Delta.Text)); err != nil {
					return contracts.Completion{}, err
				}
				b.text.WriteString(e.Delta.Text)
				emit(onText, e.Delta.Text)
			case "input_json_delta":
				if b == nil || b.kind != "tool_use" {
					return contracts.Completion{}, provider.MalformedError("", fmt.Sprintf("input_json_delta for block %d, which is not a tool_use", e.Index))
				}
				if err := tally.Args(provider.WireSize(e.Delta.PartialJSON)); err != nil {
					return contracts.Completion{}, err
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

// maxBlocks caps the content blocks of one reply: a text or thinking block
// beside each tool call, and a few more.
func maxBlocks(caps provider.Caps) int { return 2*caps.Calls + 8 }

// assemble joins the blocks in index order: the text blocks into one text,
// the tool_use blocks into tool calls.
func assemble(blocks map[int]*block) (string, []contracts.ToolCall) {
	idx := make([]int, 0, len(blocks))
	for i := range blocks {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var texts []string
	var calls []contracts.ToolCall
	for _, i := range idx {
		b := blocks[i]
		switch b.kind {
		case "text":
			texts = append(texts, b.text.String()) // no copy
		case "tool_use":
			args := b.json.String()
			if strings.TrimSpace(args) == "" {
				args = rawOrEmpty(b.start)
			}
			calls = append(calls, contracts.ToolCall{ID: b.id, Name: b.name, Arguments: args})
		}
	}
	if len(texts) == 1 {
		return texts[0], calls // the usual case: not copied again
	}
	return strings.Join(texts, ""), calls
}

func emit(onText func(string), s string) {
	if onText != nil && s != "" {
		onText(s)
	}
}
