package anthropic

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

// The request body of POST /v1/messages.
type wireRequest struct {
	Model     string        `json:"model"`
	MaxTokens int           `json:"max_tokens"`
	System    string        `json:"system,omitempty"`
	Messages  []wireMessage `json:"messages"`
	Tools     []wireTool    `json:"tools,omitempty"`
	Stream    bool          `json:"stream"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"` // textBlock, toolUseBlock, toolResultBlock
}

type textBlock struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

type toolUseBlock struct {
	Type  string          `json:"type"` // "tool_use"
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	Type      string `json:"type"` // "tool_result"
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// placeholder opens a conversation whose first remaining message is the
// assistant's: the API wants the user first, and dropping the assistant's
// message would orphan the tool results that answer it.
const placeholder = "(earlier conversation omitted)"

// buildRequest maps req to the wire request. Consecutive messages of one role
// are merged (the API wants the roles to alternate), empty ones dropped, and
// in a user message the tool results come before any text, as the API
// requires.
func buildRequest(cfg provider.Config, req contracts.Request) wireRequest {
	w := wireRequest{
		Model:     cfg.Model,
		MaxTokens: cfg.MaxTokensFor(req),
		System:    req.System,
		Messages:  []wireMessage{},
		Stream:    cfg.Stream,
	}
	for _, m := range req.Messages {
		role, blocks := messageBlocks(m)
		if len(blocks) == 0 {
			continue
		}
		if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == role {
			w.Messages[n-1].Content = append(w.Messages[n-1].Content, blocks...)
			continue
		}
		if len(w.Messages) == 0 && role == "assistant" {
			w.Messages = append(w.Messages, wireMessage{Role: "user", Content: []any{textBlock{Type: "text", Text: placeholder}}})
		}
		w.Messages = append(w.Messages, wireMessage{Role: role, Content: blocks})
	}
	for i := range w.Messages {
		if w.Messages[i].Role == "user" {
			slices.SortStableFunc(w.Messages[i].Content, func(a, b any) int {
				return rank(a) - rank(b)
			})
		}
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: provider.ToolSchema(t.Parameters)})
	}
	return w
}

func rank(b any) int {
	if _, ok := b.(toolResultBlock); ok {
		return 0
	}
	return 1
}

// messageBlocks returns the wire role and content blocks of one message.
func messageBlocks(m contracts.Message) (string, []any) {
	var blocks []any
	switch m.Role {
	case contracts.RoleAssistant:
		if strings.TrimSpace(m.Text) != "" {
			blocks = append(blocks, textBlock{Type: "text", Text: m.Text})
		}
		for _, tc := range m.ToolCalls {
			blocks = append(blocks, toolUseBlock{Type: "tool_use", ID: toolID(tc.ID), Name: tc.Name, Input: objectOrEmpty(tc.Arguments)})
		}
		return "assistant", blocks
	case contracts.RoleTool:
		for _, r := range m.ToolResults {
			blocks = append(blocks, toolResultBlock{Type: "tool_result", ToolUseID: toolID(r.CallID), Content: r.Content, IsError: !r.OK})
		}
		return "user", blocks
	}
	if strings.TrimSpace(m.Text) != "" {
		blocks = append(blocks, textBlock{Type: "text", Text: m.Text})
	}
	return "user", blocks
}

// toolID makes an id acceptable to the API (^[a-zA-Z0-9_-]+$), the same way
// for a tool_use and its tool_result, so ids minted by another provider still
// pair up.
func toolID(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, id)
}

// objectOrEmpty returns args compacted when it is a JSON object, else {}.
func objectOrEmpty(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(args)) != nil {
		return json.RawMessage("{}")
	}
	return buf.Bytes()
}

// The reply of POST /v1/messages, also the "message" of message_start.
type wireResponse struct {
	Type       string          `json:"type"`
	Model      string          `json:"model"`
	Content    []wireBlock     `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      wireUsage       `json:"usage"`
	Error      json.RawMessage `json:"error"`
}

type wireBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type wireUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// input counts every input token, cached or not.
func (u wireUsage) input() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// hasError reports whether an "error" field is present and not null.
func hasError(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return t != "" && t != "null"
}

// decodeResponse normalizes a plain reply.
func decodeResponse(data []byte) (contracts.Completion, error) {
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return contracts.Completion{}, provider.MalformedError("", "invalid JSON: "+err.Error())
	}
	if w.Type == "error" || hasError(w.Error) {
		return contracts.Completion{}, errorFor(w.Error)
	}
	comp := contracts.Completion{
		Message:    contracts.Message{Role: contracts.RoleAssistant},
		StopReason: w.StopReason,
		Usage:      contracts.Usage{InputTokens: w.Usage.input(), OutputTokens: w.Usage.OutputTokens},
		Model:      w.Model,
	}
	var text strings.Builder
	for _, b := range w.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			comp.Message.ToolCalls = append(comp.Message.ToolCalls, contracts.ToolCall{ID: b.ID, Name: b.Name, Arguments: rawOrEmpty(b.Input)})
		}
	}
	comp.Message.Text = text.String()
	return comp, nil
}

// rawOrEmpty returns the JSON text of a tool's input, or {} when there is none.
func rawOrEmpty(in json.RawMessage) string {
	s := strings.TrimSpace(string(in))
	if s == "" || s == "null" {
		return "{}"
	}
	return s
}
