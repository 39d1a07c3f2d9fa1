package broker_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/shelldon/shelldon/internal/broker/anthropic"
	"github.com/shelldon/shelldon/internal/broker/openai"
	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/inert"
)

// TestProviderErrorShapes: whatever shape a server's error takes (the
// OpenAI and Anthropic objects, Ollama's string, vLLM's and FastAPI's
// detail, proxies' message, Cloudflare's errors list, Gemini's array, an
// HTML page, plain text, terminal escapes), the error the chain reports
// carries its message, one line, inert, bounded, with the HTTP status;
// a body with no message in it gives a short excerpt of itself.
func TestProviderErrorShapes(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("overloaded ", 20_000)
	tests := []struct {
		name        string
		kind        string // "" means both
		status      int
		contentType string
		body        string
		want        string // the error's message, exactly
	}{
		{"openai object", "", 404, "application/json",
			`{"error":{"message":"The model 'm' does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			"invalid_request_error: The model 'm' does not exist"},
		{"anthropic object", "", 529, "application/json",
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			"overloaded_error: Overloaded"},
		{"ollama string", "", 404, "application/json",
			`{"error":"model \"llama9\" not found, try pulling it first"}`,
			`model "llama9" not found, try pulling it first`},
		{"llama.cpp numeric code", "", 500, "application/json",
			`{"error":{"code":500,"message":"the context is full","type":"server_error"}}`,
			"server_error: the context is full"},
		{"vllm message", "", 400, "application/json",
			`{"object":"error","message":"This model's maximum context length is 8192 tokens.","type":"BadRequestError","param":null,"code":400}`,
			"This model's maximum context length is 8192 tokens."},
		{"fastapi detail", "", 404, "application/json", `{"detail":"Not Found"}`, "Not Found"},
		{"fastapi validation", "", 422, "application/json",
			`{"detail":[{"loc":["body","messages",0,"role"],"msg":"field required","type":"value_error.missing"}]}`,
			"body.messages.0.role: field required"},
		{"problem details", "", 403, "application/problem+json",
			`{"type":"about:blank","title":"Forbidden","status":403,"detail":"this key may not use m"}`,
			"Forbidden: this key may not use m"},
		{"proxy message", "", 401, "application/json", `{"message":"Invalid API key"}`, "Invalid API key"},
		{"litellm nested", "", 400, "application/json",
			`{"error":{"message":"litellm.BadRequestError: no deployment for m","type":null,"param":null,"code":"400"}}`,
			"litellm.BadRequestError: no deployment for m"},
		{"cloudflare errors list", "", 400, "application/json",
			`{"success":false,"errors":[{"code":7003,"message":"Could not route to /v1/chat, perhaps your object identifier is invalid?"}],"messages":[]}`,
			"Could not route to /v1/chat, perhaps your object identifier is invalid?"},
		{"gemini array", "", 400, "application/json",
			`[{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}]`,
			"API key not valid. Please pass a valid API key."},
		{"nginx html", "", 502, "text/html",
			"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n",
			"502 Bad Gateway"},
		{"html without a title", "", 503, "text/html",
			"<!DOCTYPE html><html><body><style>p{color:red}</style><p>Service &amp; model\n   are <b>loading</b></p></body></html>",
			"Service & model are loading"},
		{"plain text", "", 503, "text/plain", "upstream connect error or disconnect/reset before headers. reset reason: overflow\n",
			"upstream connect error or disconnect/reset before headers. reset reason: overflow"},
		{"terminal escapes", "", 500, "application/json",
			`{"error":"\u001b[2J\u001b]0;pwned\u0007bad\u001b[31m gateway\u202e\u200b!"}`,
			`bad gateway\u202e\u200b!`},
		{"control bytes in text", "", 500, "text/plain", "bad\x00\x08 \x7fgateway\xff",
			`bad\x00\x08 \x7fgateway\xff`},
		{"no message in the json", "", 500, "application/json", `{"status":"sad","code":17}`,
			`{"status":"sad","code":17}`},
		{"empty body", "", 500, "", "", "Internal Server Error"},
		{"huge", "", 503, "text/plain", long, strings.TrimSpace(long[:200]) + "…"},
		{"anthropic error in a 200", anthropic.Kind, 200, "application/json",
			`{"type":"error","error":"the upstream model is overloaded"}`,
			"the upstream model is overloaded"},
		{"openai error in a 200", openai.Kind, 200, "application/json",
			`{"error":{"detail":"the upstream model is overloaded"}}`,
			"the upstream model is overloaded"},
	}
	for _, tt := range tests {
		for _, kind := range []string{openai.Kind, anthropic.Kind} {
			if tt.kind != "" && tt.kind != kind {
				continue
			}
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if tt.contentType != "" {
						w.Header().Set("Content-Type", tt.contentType)
					}
					w.WriteHeader(tt.status)
					w.Write([]byte(tt.body))
				}))
				t.Cleanup(srv.Close)
				_, err := newProvider(kind, srv.URL, false).Complete(context.Background(), hello, nil)
				var pe *provider.Error
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v, want a *provider.Error", err)
				}
				if pe.Message != tt.want {
					t.Errorf("message\n got %q\nwant %q", pe.Message, tt.want)
				}
				if len(pe.Message) > provider.MaxMessage+len("…") {
					t.Errorf("message of %d bytes, over %d", len(pe.Message), provider.MaxMessage)
				}
				if inert.Text(pe.Message) != pe.Message || strings.ContainsFunc(pe.Message, unicode.IsControl) {
					t.Errorf("message %q is not inert", pe.Message)
				}
				if tt.status != 200 && !strings.Contains(err.Error(), "status "+strconv.Itoa(tt.status)+": ") {
					t.Errorf("error %q does not name the status %d", err, tt.status)
				}
			})
		}
	}
}

// TestStreamedErrorShapes: an error sent inside a stream, in a shape other
// than the format's own, keeps its message (inert) instead of being
// reported as a malformed reply.
func TestStreamedErrorShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind, stream, want string
	}{
		{anthropic.Kind, "event: error\ndata: {\"type\":\"error\",\"error\":\"the upstream \\u001b[1mmodel\\u001b[0m is overloaded\"}\n\n",
			"the upstream model is overloaded"},
		{anthropic.Kind, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
			"overloaded_error: Overloaded"},
		{openai.Kind, "data: {\"error\":\"the upstream model is overloaded\"}\n\n", "the upstream model is overloaded"},
		{openai.Kind, "data: {\"error\":{\"detail\":\"the upstream model is overloaded\"}}\n\n", "the upstream model is overloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.want, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tt.stream)
			}))
			t.Cleanup(srv.Close)
			_, err := newProvider(tt.kind, srv.URL, true).Complete(context.Background(), hello, nil)
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Malformed || pe.Message != tt.want {
				t.Errorf("err = %v (%+v), want the message %q", err, pe, tt.want)
			}
		})
	}
}
