package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

// call is one tool call being assembled from stream chunks.
type call struct {
	index    int
	id, name string
	args     strings.Builder
	sawArgs  bool
}

// decodeStream reads a streamed reply up to "data: [DONE]". Content deltas
// go to onText as they come; tool calls are merged by index. Errors of the
// reader pass through unchanged; anything the stream itself gets wrong is an
// *Error.
func decodeStream(r io.Reader, onText func(string)) (contracts.Completion, error) {
	comp := contracts.Completion{Message: contracts.Message{Role: contracts.RoleAssistant}}
	var text, refusal strings.Builder
	var calls []*call
	sse := provider.NewSSEReader(r)
	for {
		ev, err := sse.Next()
		switch {
		case errors.Is(err, io.EOF):
			return contracts.Completion{}, provider.MalformedError("", "stream ended before [DONE]")
		case errors.Is(err, provider.ErrSSETooLong):
			return contracts.Completion{}, provider.MalformedError("", err.Error())
		case err != nil:
			return contracts.Completion{}, err
		}
		if strings.TrimSpace(ev.Data) == "[DONE]" {
			break
		}
		var chunk wireResponse
		if err := json.Unmarshal([]byte(ev.Data), &chunk); err != nil {
			return contracts.Completion{}, provider.MalformedError("", fmt.Sprintf("chunk: invalid JSON: %v", err))
		}
		if e := errorFor(chunk.Error); e != nil {
			return contracts.Completion{}, e
		}
		if chunk.Model != "" {
			comp.Model = chunk.Model
		}
		if u := chunk.Usage; u != nil {
			comp.Usage = contracts.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.FinishReason != "" {
				comp.StopReason = ch.FinishReason
			}
			d := ch.Delta
			if d == nil {
				d = ch.Message // some servers repeat the whole message
			}
			if d == nil {
				continue
			}
			if s := contentText(d.Content); s != "" {
				text.WriteString(s)
				if onText != nil {
					onText(s)
				}
			}
			refusal.WriteString(d.Refusal)
			for _, tc := range d.ToolCalls {
				calls = merge(calls, tc)
			}
		}
	}
	comp.Message.Text = text.String()
	if comp.Message.Text == "" {
		comp.Message.Text = refusal.String()
	}
	for _, c := range calls {
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		comp.Message.ToolCalls = append(comp.Message.ToolCalls, contracts.ToolCall{ID: c.id, Name: c.name, Arguments: args})
	}
	return comp, nil
}

// merge folds one tool-call delta into calls. The delta's index says which
// call it continues; a server that sends no index starts a new call whenever
// the id is new.
func merge(calls []*call, tc respToolCall) []*call {
	var c *call
	if tc.Index != nil {
		for _, x := range calls {
			if x.index == *tc.Index {
				c = x
				break
			}
		}
		if c == nil {
			c = &call{index: *tc.Index}
			calls = append(calls, c)
		}
	} else {
		if n := len(calls); n > 0 && (tc.ID == "" || tc.ID == calls[n-1].id) {
			c = calls[n-1]
		} else {
			c = &call{index: -1 - n}
			calls = append(calls, c)
		}
	}
	if tc.ID != "" {
		c.id = tc.ID
	}
	switch name := tc.Function.Name; {
	case name == "" || name == c.name || c.sawArgs:
		// nothing new: a repeated name, or one after the arguments began
	case c.name == "":
		c.name = name
	default:
		c.name += name // a server that streams the name in pieces
	}
	if s, ok := fragment(tc.Function.Arguments); ok && s != "" {
		c.args.WriteString(s)
		c.sawArgs = true
	}
	return calls
}
