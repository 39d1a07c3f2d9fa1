package brokertest

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
)

// anthropicBlock is any content block of a Messages API request.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// decodeAnthropic reads a Messages API request body back into the neutral
// form.
func decodeAnthropic(body []byte) (contracts.Request, error) {
	var w struct {
		MaxTokens int             `json:"max_tokens"`
		System    json.RawMessage `json:"system"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return contracts.Request{}, err
	}
	req := contracts.Request{System: textOf(w.System), MaxTokens: w.MaxTokens}
	names := map[string]string{}
	for _, m := range w.Messages {
		var blocks []anthropicBlock
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			blocks = append(blocks, anthropicBlock{Type: "text", Text: s})
		} else if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return contracts.Request{}, err
		}
		if m.Role == "assistant" {
			msg := contracts.Message{Role: contracts.RoleAssistant}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					msg.Text += b.Text
				case "tool_use":
					names[b.ID] = b.Name
					msg.ToolCalls = append(msg.ToolCalls, contracts.ToolCall{ID: b.ID, Name: b.Name, Arguments: compact(b.Input)})
				}
			}
			req.Messages = append(req.Messages, msg)
			continue
		}
		results := contracts.Message{Role: contracts.RoleTool}
		user := contracts.Message{Role: contracts.RoleUser}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				user.Text += b.Text
			case "tool_result":
				results.ToolResults = append(results.ToolResults, contracts.ToolResult{
					CallID: b.ToolUseID, Name: names[b.ToolUseID], OK: !b.IsError, Content: textOf(b.Content),
				})
			}
		}
		if len(results.ToolResults) > 0 {
			req.Messages = append(req.Messages, results)
		}
		if user.Text != "" || len(results.ToolResults) == 0 {
			req.Messages = append(req.Messages, user)
		}
	}
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, contracts.ToolSpec{Name: t.Name, Description: t.Description, Parameters: json.RawMessage(compact(t.InputSchema))})
	}
	return req, nil
}

// decodeOpenAI reads a Chat Completions request body back into the neutral
// form. A tool message whose content starts with "error: " is a failed
// result.
func decodeOpenAI(body []byte) (contracts.Request, error) {
	var w struct {
		MaxTokens           int `json:"max_tokens"`
		MaxCompletionTokens int `json:"max_completion_tokens"`
		Messages            []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return contracts.Request{}, err
	}
	req := contracts.Request{MaxTokens: w.MaxCompletionTokens}
	if req.MaxTokens == 0 {
		req.MaxTokens = w.MaxTokens
	}
	names := map[string]string{}
	var system []string
	for _, m := range w.Messages {
		text := textOf(m.Content)
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "assistant":
			msg := contracts.Message{Role: contracts.RoleAssistant, Text: text}
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Function.Name
				msg.ToolCalls = append(msg.ToolCalls, contracts.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			}
			req.Messages = append(req.Messages, msg)
		case "tool":
			res := contracts.ToolResult{CallID: m.ToolCallID, Name: names[m.ToolCallID], OK: true, Content: text}
			if rest, ok := strings.CutPrefix(text, "error: "); ok {
				res.OK, res.Content = false, rest
			}
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == contracts.RoleTool {
				req.Messages[n-1].ToolResults = append(req.Messages[n-1].ToolResults, res)
			} else {
				req.Messages = append(req.Messages, contracts.Message{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{res}})
			}
		default:
			req.Messages = append(req.Messages, contracts.Message{Role: contracts.RoleUser, Text: text})
		}
	}
	req.System = strings.Join(system, "\n\n")
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, contracts.ToolSpec{Name: t.Function.Name, Description: t.Function.Description, Parameters: json.RawMessage(compact(t.Function.Parameters))})
	}
	return req, nil
}

// textOf reads content that is a string or an array of text parts.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func compact(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}
