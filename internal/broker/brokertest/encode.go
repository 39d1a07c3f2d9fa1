package brokertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/contracts"
)

// writeAnthropic answers a Messages request with reply, streamed when the
// request asked for it. n numbers the request, for generated ids.
func writeAnthropic(w http.ResponseWriter, rec Recorded, reply Reply, n int) {
	calls := withIDs(reply.ToolCalls, "toolu_fake", n)
	stop := "end_turn"
	if len(calls) > 0 {
		stop = "tool_use"
	}
	model := rec.Model
	if !rec.Stream {
		content := []any{}
		if reply.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": reply.Text})
		}
		for _, c := range calls {
			input := json.RawMessage(c.Arguments)
			var obj map[string]any
			if json.Unmarshal(input, &obj) != nil || obj == nil {
				input = json.RawMessage("{}") // the plain wire format carries only JSON objects
			}
			content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": input})
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": fmt.Sprintf("msg_fake_%d", n), "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": reply.Usage.InputTokens, "output_tokens": reply.Usage.OutputTokens},
		})
		return
	}
	sse := newSSE(w)
	sse.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_fake_%d", n), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": reply.Usage.InputTokens, "output_tokens": 1},
	}})
	index := 0
	if reply.Text != "" {
		sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		sse.event("ping", map[string]any{"type": "ping"})
		for _, p := range pieces(reply.Text, 12) {
			sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": p}})
		}
		sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, c := range calls {
		sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, p := range pieces(c.Arguments, 16) {
			sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	sse.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": reply.Usage.OutputTokens}})
	sse.event("message_stop", map[string]any{"type": "message_stop"})
}

// writeOpenAI answers a Chat Completions request with reply, streamed when
// the request asked for it. n numbers the request, for generated ids.
func writeOpenAI(w http.ResponseWriter, rec Recorded, reply Reply, n int) {
	calls := withIDs(reply.ToolCalls, "call_fake", n)
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	id := fmt.Sprintf("chatcmpl-fake%d", n)
	usage := map[string]any{
		"prompt_tokens": reply.Usage.InputTokens, "completion_tokens": reply.Usage.OutputTokens,
		"total_tokens": reply.Usage.InputTokens + reply.Usage.OutputTokens,
	}
	if !rec.Stream {
		msg := map[string]any{"role": "assistant", "content": nil}
		if reply.Text != "" {
			msg["content"] = reply.Text
		}
		if len(calls) > 0 {
			var tcs []any
			for _, c := range calls {
				tcs = append(tcs, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
			}
			msg["tool_calls"] = tcs
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": 1700000000, "model": rec.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	sse := newSSE(w)
	chunk := func(delta map[string]any, finish any) {
		sse.data(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": rec.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, p := range pieces(reply.Text, 12) {
		chunk(map[string]any{"content": p}, nil)
	}
	for i, c := range calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
		for _, p := range pieces(c.Arguments, 16) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	sse.data(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": rec.Model, "choices": []any{}, "usage": usage})
	sse.raw("data: [DONE]\n\n")
}

// withIDs returns calls with every empty ID filled in and empty arguments
// made {}.
func withIDs(calls []contracts.ToolCall, prefix string, n int) []contracts.ToolCall {
	out := make([]contracts.ToolCall, len(calls))
	for i, c := range calls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("%s_%d_%d", prefix, n, i)
		}
		if c.Arguments == "" {
			c.Arguments = "{}"
		}
		out[i] = c
	}
	return out
}

// pieces cuts s into pieces of at most size bytes, on rune boundaries.
func pieces(s string, size int) []string {
	var out []string
	for len(s) > 0 {
		cut := min(size, len(s))
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// sseWriter writes server-sent events, flushing each one.
type sseWriter struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w}
}

func (s *sseWriter) event(name string, v any) {
	data, _ := json.Marshal(v)
	s.raw("event: " + name + "\ndata: " + string(data) + "\n\n")
}

func (s *sseWriter) data(v any) {
	data, _ := json.Marshal(v)
	s.raw("data: " + string(data) + "\n\n")
}

func (s *sseWriter) raw(text string) {
	fmt.Fprint(s.w, text)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}
