package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
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
	testKey   = "sk-proj-TESTKEY0123456789abcdefABCDEF"
	testModel = "gpt-4.1-mini"
	respModel = "gpt-4.1-mini-2025-04-14"
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
			{Role: contracts.RoleAssistant, ToolCalls: []contracts.ToolCall{
				{ID: "call_Qx1Lh3c8aB2nP0zK7mV4wR9t", Name: "get_time", Arguments: "{}"},
				{ID: "call_Zt5Yp2d9eC3oQ1aL8nW5xS0u", Name: "read_file", Arguments: `{"path":"notes.txt"}`},
			}},
			{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{
				{CallID: "call_Qx1Lh3c8aB2nP0zK7mV4wR9t", Name: "get_time", OK: true, Content: "2025-06-01T12:00:00Z"},
				{CallID: "call_Zt5Yp2d9eC3oQ1aL8nW5xS0u", Name: "read_file", OK: false, Content: "no such file: notes.txt"},
			}},
			{Role: contracts.RoleAssistant, Text: "Anything else?", ToolCalls: []contracts.ToolCall{{ID: "call_3", Name: "get_time"}}},
			{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{{CallID: "call_3", Name: "get_time", OK: true, Content: "12:00"}}},
			{Role: contracts.RoleUser},
		},
		MaxTokens: 512,
	}
)

func assistant(text string, calls ...contracts.ToolCall) contracts.Message {
	return contracts.Message{Role: contracts.RoleAssistant, Text: text, ToolCalls: calls}
}

// redirect sends every request to target whatever its URL says, so a client
// configured for api.openai.com talks to a local server.
type redirect struct {
	target *url.URL
	host   *string
}

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	*r.host = req.URL.Host
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.target.Scheme, r.target.Host
	return http.DefaultTransport.RoundTrip(req)
}

func TestTranscripts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string // testdata/<name>.response.http
		golden   string // testdata/<golden>.request.json
		req      contracts.Request
		stream   bool
		official bool // configure https://api.openai.com/v1
		want     contracts.Completion
		wantText string
		wantErr  *provider.Error
	}{
		{
			name: "text", golden: "simple", req: simpleReq,
			want: contracts.Completion{Message: assistant("The capital of France is Paris."), StopReason: "stop", Usage: contracts.Usage{InputTokens: 27, OutputTokens: 8}},
		},
		{
			name: "text", golden: "official", req: simpleReq, official: true,
			want: contracts.Completion{Message: assistant("The capital of France is Paris."), StopReason: "stop", Usage: contracts.Usage{InputTokens: 27, OutputTokens: 8}},
		},
		{
			name: "text_stream", golden: "simple_stream", req: simpleReq, stream: true,
			want:     contracts.Completion{Message: assistant("The capital of France is Paris."), StopReason: "stop", Usage: contracts.Usage{InputTokens: 27, OutputTokens: 8}},
			wantText: "The capital of France is Paris.",
		},
		{
			// A server that ignores "stream": true and answers with one JSON body.
			name: "text", golden: "simple_stream", req: simpleReq, stream: true,
			want: contracts.Completion{Message: assistant("The capital of France is Paris."), StopReason: "stop", Usage: contracts.Usage{InputTokens: 27, OutputTokens: 8}},
		},
		{
			name: "tools", golden: "tools", req: toolsReq,
			want: contracts.Completion{
				Message: assistant("",
					contracts.ToolCall{ID: "call_Qx1Lh3c8aB2nP0zK7mV4wR9t", Name: "get_time", Arguments: "{}"},
					contracts.ToolCall{ID: "call_Zt5Yp2d9eC3oQ1aL8nW5xS0u", Name: "read_file", Arguments: `{"path":"notes.txt"}`}),
				StopReason: "tool_calls", Usage: contracts.Usage{InputTokens: 118, OutputTokens: 46},
			},
		},
		{
			name: "tools_stream", golden: "tools_stream", req: toolsReq, stream: true,
			want: contracts.Completion{
				Message: assistant("Checking both.",
					contracts.ToolCall{ID: "call_Qx1Lh3c8aB2nP0zK7mV4wR9t", Name: "get_time", Arguments: "{}"},
					contracts.ToolCall{ID: "call_Zt5Yp2d9eC3oQ1aL8nW5xS0u", Name: "read_file", Arguments: `{"path": "notes.txt"}`}),
				StopReason: "tool_calls", Usage: contracts.Usage{InputTokens: 118, OutputTokens: 52},
			},
			wantText: "Checking both.",
		},
		{
			name: "round_trip", golden: "round_trip", req: roundTripReq,
			want: contracts.Completion{Message: assistant("It is 12:00 UTC. I could not read notes.txt: the file does not exist."), StopReason: "stop", Usage: contracts.Usage{InputTokens: 201, OutputTokens: 21}},
		},
		{
			name: "args_not_json", golden: "tools", req: toolsReq,
			want: contracts.Completion{Message: assistant("", contracts.ToolCall{ID: "call_Bad1", Name: "read_file", Arguments: `{"path": "notes`}), StopReason: "length", Usage: contracts.Usage{InputTokens: 118, OutputTokens: 16}},
		},
		{
			name: "args_not_json_stream", golden: "tools_stream", req: toolsReq, stream: true,
			want: contracts.Completion{Message: assistant("", contracts.ToolCall{ID: "call_Bad2", Name: "read_file", Arguments: "path=notes.txt"}), StopReason: "tool_calls"},
		},
		{
			name: "unknown_tool", golden: "tools", req: toolsReq,
			want: contracts.Completion{Message: assistant("", contracts.ToolCall{ID: "call_Rk7", Name: "launch_rockets", Arguments: `{"count":3}`}), StopReason: "tool_calls", Usage: contracts.Usage{InputTokens: 118, OutputTokens: 15}},
		},
		{
			name: "ollama", golden: "tools", req: toolsReq,
			want: contracts.Completion{Message: assistant("", contracts.ToolCall{ID: "call_x9y8z7", Name: "read_file", Arguments: `{"path":"notes.txt"}`}), StopReason: "tool_calls", Usage: contracts.Usage{InputTokens: 180, OutputTokens: 22}, Model: "qwen3:1.7b"},
		},
		{
			name: "empty_choices", golden: "simple", req: simpleReq,
			want: contracts.Completion{Message: assistant(""), Usage: contracts.Usage{InputTokens: 27}},
		},
		{
			name: "empty_content", golden: "simple", req: simpleReq,
			want: contracts.Completion{Message: assistant(""), StopReason: "length", Usage: contracts.Usage{InputTokens: 27}},
		},
		{
			name: "refusal", golden: "simple", req: simpleReq,
			want: contracts.Completion{Message: assistant("I'm sorry, I can't help with that."), StopReason: "stop", Usage: contracts.Usage{InputTokens: 27, OutputTokens: 9}},
		},
		{
			name: "bad_json", golden: "simple", req: simpleReq,
			wantErr: &provider.Error{Retryable: true, Malformed: true, Message: "invalid JSON"},
		},
		{
			name: "truncated_stream", golden: "simple_stream", req: simpleReq, stream: true,
			wantErr: &provider.Error{Retryable: true, Malformed: true, Message: "[DONE]"}, wantText: "The capital",
		},
		{
			name: "stream_error", golden: "simple_stream", req: simpleReq, stream: true,
			wantErr: &provider.Error{Retryable: true, Message: "server_error: The server had an error"},
		},
		{
			name: "error_200", golden: "simple", req: simpleReq,
			wantErr: &provider.Error{Message: "invalid_request_error: The model `gpt-4.1-mini` does not exist"},
		},
		{
			name: "not_found", golden: "simple", req: simpleReq,
			wantErr: &provider.Error{Status: 404, Message: "invalid_request_error: The model `gpt-4.1-mini` does not exist"},
		},
		{
			name: "rate_limited", golden: "simple_stream", req: simpleReq, stream: true,
			wantErr: &provider.Error{Status: 429, Retryable: true, RetryAfter: 19250 * time.Millisecond, Message: "requests: Rate limit reached"},
		},
		{
			name: "server_error", golden: "simple", req: simpleReq,
			wantErr: &provider.Error{Status: 500, Retryable: true, Message: "server_error: The server had an error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.golden, func(t *testing.T) {
			t.Parallel()
			srv, ex := brokertest.Replay(t, tt.name)
			cfg := provider.Config{BaseURL: srv.URL + "/v1/", Model: testModel, APIKey: testKey, Stream: tt.stream, HTTPClient: srv.Client()}
			var host string
			if tt.official {
				target, _ := url.Parse(srv.URL)
				cfg.BaseURL = "https://api.openai.com/v1"
				cfg.HTTPClient = &http.Client{Transport: redirect{target: target, host: &host}}
			}
			var text strings.Builder
			got, err := New(cfg).Complete(context.Background(), tt.req, func(d string) { text.WriteString(d) })

			method, path, header, body := ex.Request()
			if method != http.MethodPost || path != "/v1/chat/completions" {
				t.Errorf("sent %s %s, want POST /v1/chat/completions", method, path)
			}
			if tt.official && host != "api.openai.com" {
				t.Errorf("sent to host %q, want api.openai.com", host)
			}
			for k, v := range map[string]string{"Authorization": "Bearer " + testKey, "Content-Type": "application/json"} {
				if g := header.Get(k); g != v {
					t.Errorf("header %s = %q, want %q", k, g, v)
				}
			}
			brokertest.CheckGolden(t, tt.golden, body)
			if text.String() != tt.wantText {
				t.Errorf("onText got %q, want %q", text.String(), tt.wantText)
			}
			if tt.wantErr != nil {
				checkError(t, err, tt.wantErr, "openai:"+testModel)
				return
			}
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			tt.want.Provider = "openai"
			if tt.want.Model == "" {
				tt.want.Model = respModel
			}
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

func TestNoKeyNoAuthorization(t *testing.T) {
	t.Parallel()
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Values("Authorization")
		w.Write([]byte(`{"model":"llama3.2","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`))
	}))
	defer srv.Close()
	got, err := New(provider.Config{Name: "local", BaseURL: srv.URL + "/v1", Model: "llama3.2"}).Complete(context.Background(), simpleReq, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(auth) != 0 {
		t.Errorf("sent Authorization %q without a key", auth)
	}
	if got.Provider != "local" || got.Message.Text != "hi" {
		t.Errorf("got %+v", got)
	}
}

func TestKeyEchoedInErrorIsRedacted(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
				"message": "Incorrect API key provided: " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + " (" + r.Header.Get("Authorization") + ")",
				"type":    "invalid_request_error", "code": "invalid_api_key",
			}})
		}))
		defer srv.Close()
		c := New(provider.Config{BaseURL: srv.URL + "/v1", Model: testModel, APIKey: "opaque-key-without-a-known-shape", Stream: stream})
		_, err := c.Complete(context.Background(), simpleReq, nil)
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Status != 401 || pe.Retryable {
			t.Fatalf("err = %v, want a 401 that is not retryable", err)
		}
		if strings.Contains(err.Error(), "opaque-key") {
			t.Errorf("error holds the key: %q", err)
		}
		if !strings.Contains(err.Error(), "Incorrect API key provided") {
			t.Errorf("error lost the provider's message: %q", err)
		}
	}
}

func TestPing(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
			http.Error(w, `{"error":{"message":"not found"}}`, 404)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			http.Error(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, 401)
			return
		}
		w.Write([]byte(`{"object":"list","data":[{"id":"gpt-4.1-mini","object":"model","created":1744316542,"owned_by":"system"}]}`))
	}))
	defer srv.Close()
	if err := New(provider.Config{BaseURL: srv.URL + "/v1/", APIKey: testKey}).Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
	err := New(provider.Config{BaseURL: srv.URL + "/v1", APIKey: "wrong"}).Ping(context.Background())
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Status != 401 {
		t.Errorf("Ping with a wrong key: %v, want status 401", err)
	}
}

func TestMergeToolCallDeltas(t *testing.T) {
	t.Parallel()
	idx := func(i int) *int { return &i }
	tc := func(index *int, id, name, args string) respToolCall {
		var c respToolCall
		c.Index, c.ID, c.Function.Name = index, id, name
		if args != "" {
			c.Function.Arguments, _ = json.Marshal(args)
		}
		return c
	}
	tests := []struct {
		name   string
		deltas []respToolCall
		want   []call
	}{
		{"interleaved by index", []respToolCall{
			tc(idx(0), "a", "f", ""), tc(idx(1), "b", "g", `{"x"`), tc(idx(0), "", "", `{}`), tc(idx(1), "", "", `:1}`),
		}, []call{{id: "a", name: "f"}, {id: "b", name: "g"}}},
		{"no index, new id starts a call", []respToolCall{
			tc(nil, "a", "f", `{}`), tc(nil, "b", "g", `{"y":2}`),
		}, []call{{id: "a", name: "f"}, {id: "b", name: "g"}}},
		{"name repeated in every chunk", []respToolCall{
			tc(idx(0), "a", "f", `{"a"`), tc(idx(0), "a", "f", `:1}`),
		}, []call{{id: "a", name: "f"}}},
		{"name in pieces", []respToolCall{
			tc(idx(0), "a", "read_", ""), tc(idx(0), "", "file", ""), tc(idx(0), "", "", "{}"),
		}, []call{{id: "a", name: "read_file"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []*call
			tally := provider.NewTally(provider.Caps{})
			for _, d := range tt.deltas {
				var err error
				if calls, err = merge(calls, d, tally); err != nil {
					t.Fatal(err)
				}
			}
			if len(calls) != len(tt.want) {
				t.Fatalf("got %d calls, want %d", len(calls), len(tt.want))
			}
			for i, c := range calls {
				if c.id != tt.want[i].id || c.name != tt.want[i].name {
					t.Errorf("call %d = %s %s, want %s %s", i, c.id, c.name, tt.want[i].id, tt.want[i].name)
				}
			}
		})
	}
}

func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","choices":[{"index":0,"message":{"content":"hi","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":1}}`,
		`{"choices":[{"message":{"content":[{"type":"text","text":"x"}],"tool_calls":[{"function":{"arguments":{"a":1}}}]}}]}`,
		`{"error":{"message":"x","code":500}}`, `{"error":"boom"}`, `null`, `[]`, `{"choices":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		comp, err := decodeResponse(data)
		if err == nil && comp.Message.Role != contracts.RoleAssistant {
			t.Errorf("role %q", comp.Message.Role)
		}
	})
}

func FuzzDecodeStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\",\"tool_calls\":[{\"index\":0,\"id\":\"x\",\"function\":{\"name\":\"f\",\"arguments\":\"{\"}}]}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"}\"}}]}}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1}}\n\ndata: [DONE]",
		"data: {\"error\":{\"message\":\"x\"}}\n\n", "data: [\n\n", "data: {}\n\n",
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
		if comp.Message.Text != streamed.String() && streamed.Len() > 0 {
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
			msg := strings.Repeat("x", pad) + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			data, _ := json.Marshal(map[string]any{"error": map[string]any{"type": "server_error", "message": msg}})
			w.Write(data)
		}))
		_, err := New(provider.Config{BaseURL: srv.URL, APIKey: key}).Complete(context.Background(), simpleReq, nil)
		srv.Close()
		if err == nil || strings.Contains(err.Error(), key[:8]) {
			t.Errorf("pad %d: err = %v", pad, err)
		}
	}
}
