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
// *Error, and a reply over one of caps stops at the cap with an OverCap
// *Error.
func decodeStream(r io.Reader, caps provider.Caps, onText func(string)) (contracts.Completion, error) {
	comp := contracts.Completion{Message: contracts.Message{Role: contracts.RoleAssistant}}
	var text, refusal strings.Builder
	var calls []*call
	tally := provider.NewTally(caps)
	sse := provider.NewSSEReader(r, tally.Caps().Stream)
	for {
		ev, err := sse.Next()
		switch {
		case errors.Is(err, io.EOF):
			return contracts.Completion{}, provider.MalformedError("", "stream ended before [DONE]")
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
			s := contentText(d.Content)
			if err := tally.Text(provider.WireSize(s) + provider.WireSize(d.Refusal)); err != nil {
				return contracts.Completion{}, err
			}
			if s != "" {
				text.WriteString(s)
				if onText != nil {
					onText(s)
				}
			}
			refusal.WriteString(d.Refusal)
			for _, tc := range d.ToolCalls {
				if calls, err = merge(calls, tc, tally); err != nil {
					return contracts.Completion{}, err
				}
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

// merge folds one tool-call delta into calls, counting it in tally. The
// delta's index says which call it continues; a server that sends no index
// starts a new call whenever the id is new.
func merge(calls []*call, tc respToolCall, tally *provider.Tally) ([]*call, error) {
	var c *call
	if tc.Index != nil {
		for _, x := range calls {
			if x.index == *tc.Index {
				c = x
				break
			}
		}
		if c == nil {
			if err := tally.Call(); err != nil {
				return calls, err
			}
			c = &call{index: *tc.Index}
			calls = append(calls, c)
		}
	} else {
		if n := len(calls); n > 0 && (tc.ID == "" || tc.ID == calls[n-1].id) {
			c = calls[n-1]
		} else {
			if err := tally.Call(); err != nil {
				return calls, err
			}
			c = &call{index: -1 - n}
			calls = append(calls, c)
		}
	}
	// What the delta adds is counted before it is kept: a new id, a new
	// piece of the name, the arguments. A server that repeats the id and
	// the name in every delta is not charged for the repeats.
	s, ok := fragment(tc.Function.Arguments)
	if !ok {
		s = ""
	}
	added := provider.WireSize(s)
	if tc.ID != "" && tc.ID != c.id {
		added += len(tc.ID)
	}
	name := tc.Function.Name
	switch {
	case name == "" || name == c.name || c.sawArgs:
		name = "" // nothing new: a repeated name, or one after the arguments began
	case c.name != "":
		name = c.name + name // a server that streams the name in pieces
	}
	if name != "" {
		if err := tally.Name(len(name)); err != nil {
			return calls, err
		}
		added += len(name) - len(c.name)
	}
	if err := tally.Args(added); err != nil {
		return calls, err
	}
	if tc.ID != "" {
		c.id = tc.ID
	}
	if name != "" {
		c.name = name
	}
	if s != "" {
		c.args.WriteString(s)
		c.sawArgs = true
	}
	return calls, nil
}
