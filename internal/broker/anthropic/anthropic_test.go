package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

const (
	testKey   = "sk-ant-api03-TESTKEY0123456789abcdef"
	testModel = "claude-sonnet-4-20250514"
	system    = "You are shelldon, a personal assistant."
)

var (
	tools = []contracts.ToolSpec{
		{Name: "get_time", Description: "Return the current time.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		{Name: "read_file", Description: "Read a file of the workspace.", Parameters: json.RawMessage(`{"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}`)},
	}
	simpleReq = contracts.Request{
		System:   system,
		Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "What is the capital of France?"}},
	}
	toolsReq = contracts.Request{
		System:   system,
		Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "What time is it, and what is in notes.txt?"}},
		Tools:    tools,
	}
	roundTripReq = contracts.Request{
		System: system,
		Tools:  tools,
		Messages: []contracts.Message{
			{Role: contracts.RoleUser, Text: "What time is it, and what is in notes.txt?"},
			{Role: contracts.RoleAssistant, Text: "I'll check the time and read the file.", ToolCalls: []contracts.ToolCall{
				{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_time", Arguments: "{}"},
				{ID: "toolu_01B7xk3QpL2nV8cR5tY1mZ4w", Name: "read_file", Arguments: `{"path": "notes.txt"}`},
			}},
			{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{
				{CallID: "toolu_01A09q90qw90lq917835lq9", Name: "get_time", OK: true, Content: "2025-06-01T12:00:00Z"},
				{CallID: "toolu_01B7xk3QpL2nV8cR5tY1mZ4w", Name: "read_file", OK: false, Content: "no such file: notes.txt"},
			}},
		},
	}
	// mergeReq needs every fix-up of the Anthropic mapping: a leading
	// assistant message, consecutive and empty messages, arguments that are
	// not JSON, an id from another provider, text after tool results.
	mergeReq = contracts.Request{
		Tools: tools[1:],
		Messages: []contracts.Message{
			{Role: contracts.RoleAssistant, Text: "Welcome back."},
			{Role: contracts.RoleUser, Text: "Read notes.txt"},
			{Role: contracts.RoleUser, Text: "  "},
			{Role: contracts.RoleUser, Text: "please"},
			{Role: contracts.RoleAssistant, ToolCalls: []contracts.ToolCall{{ID: "call:1/x", Name: "read_file", Arguments: `{"path": "notes`}}},
			{Role: contracts.RoleAssistant},
			{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{{CallID: "call:1/x", Name: "read_file", OK: false, Content: "arguments are not valid JSON"}}},
			{Role: contracts.RoleUser, Text: "Try again."},
		},
		MaxTokens: 1024,
	}
)

func assistant(text string, calls ...contracts.ToolCall) contracts.Message {
	return contracts.Message{Role: contracts.RoleAssistant, Text: text, ToolCalls: calls}
}

func TestTranscripts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string // testdata/<name>.response.http
		golden   string // testdata/<golden>.request.json
		req      contracts.Request
		stream   bool
		want     contracts.Completion
		wantText string // what onText received, joined
		wantErr  *provider.Error
	}{
		{
			name: "text", golden: "simple", req: simpleReq,
			want: contracts.Completion{Message: assistant("The capital of France is Paris."), StopReason: "end_turn", Usage: contracts.Usage{InputTokens: 21, OutputTokens: 10}},
		},
		{
			// A proxy that ignores "stream": true and answers with one JSON body.
			name: "text", golden: "simple_stream", req: simpleReq, stream: true,
			want: contracts.Completion{Message: assistant("The capital of France is Paris."), StopReason: "end_turn", Usage: contracts.Usage{InputTokens: 21, OutputTokens: 10}},
		},
		{
			name: "text_stream", golden: "simple_stream", req: simpleReq, stream: true,
			want:     contracts.Completion{Message: assistant("The capital of France is Paris."), StopReason: "end_turn", Usage: contracts.Usage{InputTokens: 21, OutputTokens: 10}},
			wantText: "The capital of France is Paris.",
		},
		{
			name: "tools", golden: "tools", req: toolsReq,
			want: contracts.Completion{
				Message: assistant("I'll check the time and read the file.",
					contracts.ToolCall{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_time", Arguments: "{}"},
					contracts.ToolCall{ID: "toolu_01B7xk3QpL2nV8cR5tY1mZ4w", Name: "read_file", Arguments: `{"path":"notes.txt"}`}),
				StopReason: "tool_use", Usage: contracts.Usage{InputTokens: 540, OutputTokens: 96},
			},
		},
		{
			name: "tools_stream", golden: "tools_stream", req: toolsReq, stream: true,
			want: contracts.Completion{
				Message: assistant("I'll check the time and read the file.",
					contracts.ToolCall{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_time", Arguments: "{}"},
					contracts.ToolCall{ID: "toolu_01CzQ4sMxtwPf6bTsE8hvQ2k", Name: "read_file", Arguments: `{"path": "notes.txt"}`}),
				StopReason: "tool_use", Usage: contracts.Usage{InputTokens: 540, OutputTokens: 89},
			},
			wantText: "I'll check the time and read the file.",
		},
		{
			name: "round_trip", golden: "round_trip", req: roundTripReq,
			want: contracts.Completion{Message: assistant("It is 12:00 UTC. I could not read notes.txt: the file does not exist."), StopReason: "end_turn", Usage: contracts.Usage{InputTokens: 587, OutputTokens: 24}},
		},
		{
			name: "text", golden: "merge", req: mergeReq,
			want: contracts.Completion{Message: assistant("The capital of France is Paris."), StopReason: "end_turn", Usage: contracts.Usage{InputTokens: 21, OutputTokens: 10}},
		},
		{
			name: "args_not_json_stream", golden: "tools_stream", req: toolsReq, stream: true,
			want: contracts.Completion{
				Message:    assistant("", contracts.ToolCall{ID: "toolu_01Nq2", Name: "read_file", Arguments: `{"path": "notes`}),
				StopReason: "max_tokens", Usage: contracts.Usage{InputTokens: 412, OutputTokens: 4096},
			},
		},
		{
			name: "unknown_tool", golden: "tools", req: toolsReq,
			want: contracts.Completion{
				Message:    assistant("", contracts.ToolCall{ID: "toolu_01Zz9", Name: "launch_rockets", Arguments: `{"count":3}`}),
				StopReason: "tool_use", Usage: contracts.Usage{InputTokens: 412, OutputTokens: 30},
			},
		},
		{
			name: "empty", golden: "simple", req: simpleReq,
			want: contracts.Completion{Message: assistant(""), StopReason: "end_turn", Usage: contracts.Usage{InputTokens: 21}},
		},
		{
			name: "bad_json", golden: "simple", req: simpleReq,
			wantErr: &provider.Error{Retryable: true, Malformed: true, Message: "invalid JSON"},
		},
		{
			name: "truncated_stream", golden: "simple_stream", req: simpleReq, stream: true,
			wantErr: &provider.Error{Retryable: true, Malformed: true, Message: "message_stop"}, wantText: "The capital",
		},
		{
			name: "stream_protocol", golden: "simple_stream", req: simpleReq, stream: true,
			wantErr: &provider.Error{Retryable: true, Malformed: true, Message: "not a tool_use"},
		},
		{
			name: "stream_error", golden: "simple_stream", req: simpleReq, stream: true,
			wantErr: &provider.Error{Status: 529, Retryable: true, Message: "overloaded_error: Overloaded"},
		},
		{
			name: "error_200", golden: "simple", req: simpleReq,
			wantErr: &provider.Error{Status: 400, Message: "invalid_request_error: messages: roles must alternate"},
		},
		{
			name: "not_found", golden: "simple", req: simpleReq,
			wantErr: &provider.Error{Status: 404, Message: "not_found_error: model: claude-sonnet-4-20250514"},
		},
		{
			name: "rate_limited", golden: "simple", req: simpleReq,
			wantErr: &provider.Error{Status: 429, Retryable: true, RetryAfter: 30 * time.Second, Message: "rate_limit_error: This request would exceed"},
		},
		{
			name: "overloaded", golden: "simple_stream", req: simpleReq, stream: true,
			wantErr: &provider.Error{Status: 529, Retryable: true, Message: "overloaded_error: Overloaded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.golden, func(t *testing.T) {
			t.Parallel()
			srv, ex := brokertest.Replay(t, tt.name)
			c := New(provider.Config{BaseURL: srv.URL + "/", Model: testModel, APIKey: testKey, Stream: tt.stream, HTTPClient: srv.Client()})
			var text strings.Builder
			got, err := c.Complete(context.Background(), tt.req, func(d string) { text.WriteString(d) })

			method, path, header, body := ex.Request()
			if method != http.MethodPost || path != "/v1/messages" {
				t.Errorf("sent %s %s, want POST /v1/messages", method, path)
			}
			for k, v := range map[string]string{"X-Api-Key": testKey, "Anthropic-Version": "2023-06-01", "Content-Type": "application/json"} {
				if g := header.Get(k); g != v {
					t.Errorf("header %s = %q, want %q", k, g, v)
				}
			}
			brokertest.CheckGolden(t, tt.golden, body)
			if text.String() != tt.wantText {
				t.Errorf("onText got %q, want %q", text.String(), tt.wantText)
			}
			if tt.wantErr != nil {
				checkError(t, err, tt.wantErr, "anthropic:"+testModel)
				return
			}
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			tt.want.Provider, tt.want.Model = "anthropic", testModel
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("completion (-want +got):\n%s", diff)
			}
		})
	}
}

// checkError compares err with want: every field but Message exactly, and
// Message as a substring.
func checkError(t *testing.T, err error, want *provider.Error, name string) {
	t.Helper()
	var got *provider.Error
	if !errors.As(err, &got) {
		t.Fatalf("err = %v (%T), want a *provider.Error", err, err)
	}
	want.Provider = name
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(provider.Error{}), cmpopts.IgnoreFields(provider.Error{}, "Message")); diff != "" {
		t.Errorf("error %v (-want +got):\n%s", err, diff)
	}
	if !strings.Contains(got.Message, want.Message) {
		t.Errorf("error message %q does not contain %q", got.Message, want.Message)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("error %q holds the key", err)
	}
}

func TestKeyEchoedInErrorIsRedacted(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			key := r.Header.Get("X-Api-Key")
			json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{
				"type": "authentication_error", "message": "invalid x-api-key " + key + " (Bearer " + key + ")",
			}})
		}))
		defer srv.Close()
		c := New(provider.Config{BaseURL: srv.URL, Model: testModel, APIKey: "opaque-key-without-a-known-shape", Stream: stream})
		_, err := c.Complete(context.Background(), simpleReq, nil)
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Status != 401 || pe.Retryable {
			t.Fatalf("err = %v, want a 401 that is not retryable", err)
		}
		if strings.Contains(err.Error(), "opaque-key") || strings.Contains(pe.Message, "opaque-key") {
			t.Errorf("error holds the key: %q", err)
		}
		if !strings.Contains(err.Error(), "authentication_error: invalid x-api-key") {
			t.Errorf("error lost the provider's message: %q", err)
		}
	}
}

func TestPing(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/models" || r.Header.Get("Anthropic-Version") != APIVersion {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"bad route"}}`, 404)
			return
		}
		if r.Header.Get("X-Api-Key") != testKey {
			http.Error(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, 401)
			return
		}
		w.Write([]byte(`{"data":[{"type":"model","id":"claude-sonnet-4-20250514","display_name":"Claude Sonnet 4","created_at":"2025-05-22T00:00:00Z"}],"has_more":false}`))
	}))
	defer srv.Close()
	for _, base := range []string{srv.URL, srv.URL + "/", srv.URL + "/v1"} {
		if err := New(provider.Config{BaseURL: base, APIKey: testKey}).Ping(context.Background()); err != nil {
			t.Errorf("Ping(%s): %v", base, err)
		}
	}
	err := New(provider.Config{BaseURL: srv.URL, APIKey: "wrong"}).Ping(context.Background())
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Status != 401 {
		t.Errorf("Ping with a wrong key: %v, want status 401", err)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	if got := New(provider.Config{Model: "m"}).Name(); got != "anthropic:m" {
		t.Errorf("Name() = %q", got)
	}
	if got := New(provider.Config{Name: "main", Model: "m"}).Name(); got != "main" {
		t.Errorf("Name() = %q", got)
	}
}

func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"type":"message","model":"m","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t","name":"n","input":{"a":1}}],"usage":{"input_tokens":1}}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"x"}}`,
		`{"content":[{"type":"tool_use","input":null}]}`, `null`, `[]`, `{"content":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		comp, err := decodeResponse(data)
		if err == nil && comp.Message.Role != contracts.RoleAssistant {
			t.Errorf("role %q", comp.Message.Role)
		}
		for _, tc := range comp.Message.ToolCalls {
			if tc.Arguments == "" {
				t.Errorf("empty arguments")
			}
		}
	})
}

func FuzzDecodeStream(f *testing.F) {
	for _, s := range []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n" +
			"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"b\"}}\n\n" +
			"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"\"}}\n\n" +
			"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n" +
			"data: {\"type\":\"message_stop\"}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n",
		"data: {}\n\n", "data: [\n\n", "event: message_stop\ndata: {}\n\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var streamed strings.Builder
		comp, err := decodeStream(strings.NewReader(in), provider.Caps{}, func(d string) { streamed.WriteString(d) })
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Errorf("error %v is not a *provider.Error", err)
			}
			return
		}
		if comp.Message.Text != streamed.String() {
			t.Errorf("text %q but streamed %q", comp.Message.Text, streamed.String())
		}
	})
}

// TestKeyAtTheCut puts the key where the message is trimmed: redaction must
// come first, or a prefix of the key would survive the cut.
func TestKeyAtTheCut(t *testing.T) {
	t.Parallel()
	const key = "opaque0123456789opaque0123456789"
	for pad := provider.MaxMessage - 40; pad < provider.MaxMessage; pad += 7 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			msg := strings.Repeat("x", pad) + r.Header.Get("X-Api-Key")
			data, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}})
			w.Write([]byte("event: error\ndata: " + string(data) + "\n\n"))
		}))
		_, err := New(provider.Config{BaseURL: srv.URL, APIKey: key, Stream: true}).Complete(context.Background(), simpleReq, nil)
		srv.Close()
		if err == nil || strings.Contains(err.Error(), key[:8]) {
			t.Errorf("pad %d: err = %v", pad, err)
		}
	}
}
