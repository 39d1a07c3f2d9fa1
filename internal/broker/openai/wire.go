package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

// The request body of POST /chat/completions.
type wireRequest struct {
	Model               string             `json:"model"`
	Messages            []wireMessage      `json:"messages"`
	Tools               []wireTool         `json:"tools,omitempty"`
	Stream              bool               `json:"stream"`
	StreamOptions       *wireStreamOptions `json:"stream_options,omitempty"`
	MaxTokens           int                `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                `json:"max_completion_tokens,omitempty"`
}

type wireStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"` // null for an assistant message of tool calls only
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string      `json:"type"` // "function"
	Function wireToolDef `json:"function"`
}

type wireToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// buildRequest maps req to the wire request. Empty messages are dropped;
// each tool result becomes one "tool" message, its content prefixed with
// "error: " when the tool failed and the content does not already say so
// (the worker writes a failure as "error: <message>"; the model reads the
// prefix once).
func buildRequest(cfg provider.Config, req contracts.Request, newTokenField bool) wireRequest {
	w := wireRequest{Model: cfg.Model, Messages: []wireMessage{}, Stream: cfg.Stream}
	if cfg.Stream {
		w.StreamOptions = &wireStreamOptions{IncludeUsage: true}
	}
	if n := cfg.MaxTokensFor(req); newTokenField {
		w.MaxCompletionTokens = n
	} else {
		w.MaxTokens = n
	}
	if req.System != "" {
		w.Messages = append(w.Messages, wireMessage{Role: "system", Content: ptr(req.System)})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case contracts.RoleAssistant:
			if m.Text == "" && len(m.ToolCalls) == 0 {
				continue
			}
			wm := wireMessage{Role: "assistant"}
			if m.Text != "" {
				wm.Content = ptr(m.Text)
			}
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				wm.ToolCalls = append(wm.ToolCalls, wireToolCall{ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: args}})
			}
			w.Messages = append(w.Messages, wm)
		case contracts.RoleTool:
			for _, r := range m.ToolResults {
				content := r.Content
				if !r.OK && !hasErrorPrefix(content) {
					content = errorPrefix + content
				}
				w.Messages = append(w.Messages, wireMessage{Role: "tool", ToolCallID: r.CallID, Content: ptr(content)})
			}
		default:
			if m.Text == "" {
				continue
			}
			w.Messages = append(w.Messages, wireMessage{Role: "user", Content: ptr(m.Text)})
		}
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireToolDef{Name: t.Name, Description: t.Description, Parameters: provider.ToolSchema(t.Parameters)}})
	}
	return w
}

func ptr(s string) *string { return &s }

// errorPrefix marks a failed tool result in a "tool" message, which has no
// error flag of its own.
const errorPrefix = "error: "

// hasErrorPrefix reports whether content already begins with "error:", in
// any case.
func hasErrorPrefix(content string) bool {
	return len(content) >= len("error:") && strings.EqualFold(content[:len("error:")], "error:")
}

// The reply of POST /chat/completions; a streamed chunk has the same shape
// with Delta in place of Message.
type wireResponse struct {
	Model   string          `json:"model"`
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int          `json:"index"`
	Message      *respMessage `json:"message"`
	Delta        *respMessage `json:"delta"`
	FinishReason string       `json:"finish_reason"`
}

type respMessage struct {
	Content   json.RawMessage `json:"content"` // a string, null, or an array of parts
	Refusal   string          `json:"refusal"`
	ToolCalls []respToolCall  `json:"tool_calls"`
}

type respToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // a string; some servers send an object
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// decodeResponse normalizes a plain reply. No choices, or a choice without
// content, is an empty Message, not an error.
func decodeResponse(data []byte) (contracts.Completion, error) {
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return contracts.Completion{}, provider.MalformedError("", "invalid JSON: "+err.Error())
	}
	if e := errorFor(w.Error); e != nil {
		return contracts.Completion{}, e
	}
	comp := contracts.Completion{Message: contracts.Message{Role: contracts.RoleAssistant}, Model: w.Model}
	if w.Usage != nil {
		comp.Usage = contracts.Usage{InputTokens: w.Usage.PromptTokens, OutputTokens: w.Usage.CompletionTokens}
	}
	for _, ch := range w.Choices {
		if ch.Index != 0 {
			continue
		}
		comp.StopReason = ch.FinishReason
		if m := ch.Message; m != nil {
			comp.Message.Text = contentText(m.Content)
			if comp.Message.Text == "" {
				comp.Message.Text = m.Refusal
			}
			for _, tc := range m.ToolCalls {
				comp.Message.ToolCalls = append(comp.Message.ToolCalls, contracts.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: arguments(tc.Function.Arguments)})
			}
		}
		break
	}
	return comp, nil
}

// contentText reads a message's content: a string, or the text of an array
// of parts; anything else is no text.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// arguments returns a tool call's arguments verbatim: the string as sent, or
// the JSON text of a non-string value; none at all is {}.
func arguments(raw json.RawMessage) string {
	if s, ok := fragment(raw); ok {
		if strings.TrimSpace(s) == "" {
			return "{}"
		}
		return s
	}
	return "{}"
}

// fragment reads an arguments value or piece: a JSON string, or any other
// JSON value as its compact text. ok is false when there is none.
func fragment(raw json.RawMessage) (string, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(t, &s) == nil {
		return s, true
	}
	var buf bytes.Buffer
	if json.Compact(&buf, t) != nil {
		return string(t), true
	}
	return buf.String(), true
}

// errorFor turns an error value found in a 200 reply (an object such as
// {"message","type","code"} or a plain string) into an *Error; nil when there
// is none. An error that names no client mistake is retryable.
func errorFor(raw json.RawMessage) *provider.Error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	var e struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	var s string
	if json.Unmarshal(t, &s) == nil {
		e.Message = s
	} else if json.Unmarshal(t, &e) != nil || e.Message == "" && e.Type == "" {
		// Not the usual object: find the message wherever this server
		// put it.
		e.Message, _ = provider.ErrorValueText(t)
	}
	status, code := 0, e.Type
	if n, err := strconv.Atoi(strings.TrimSpace(string(e.Code))); err == nil {
		status = n
	} else if json.Unmarshal(e.Code, &s) == nil && s != "" {
		code = s
	}
	retryable := true
	switch {
	case status != 0:
		retryable = provider.RetryableStatus(status)
	case code == "invalid_request_error", code == "invalid_api_key", code == "authentication_error",
		code == "permission_error", code == "not_found_error", code == "model_not_found",
		code == "insufficient_quota", code == "context_length_exceeded":
		retryable = false
	}
	msg := e.Message
	if e.Type != "" {
		msg = e.Type + ": " + msg
	}
	if msg == "" {
		msg = "error without a message"
	}
	// Not cleaned here: Attempt.Fail redacts with the key before trimming,
	// so a cut can never leave part of the key behind.
	return &provider.Error{Status: status, Retryable: retryable, Message: msg}
}
