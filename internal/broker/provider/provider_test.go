package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-api03-SECRETSECRETSECRET_1234"
	tests := []struct {
		name, in string
		secrets  []string
		want     string
	}{
		{"configured key", "bad key " + key + "!", []string{key}, "bad key [REDACTED]!"},
		{"key twice", key + key, []string{key}, "[REDACTED][REDACTED]"},
		{"odd key by value", "key is abc123xyz, really", []string{"abc123xyz"}, "key is [REDACTED], really"},
		{"openai shape", "Incorrect API key provided: sk-proj-AbCdEf0123456789.", nil, "Incorrect API key provided: [REDACTED]."},
		{"bearer", "Authorization: Bearer eyJhbGciOi.J9.x_y-z", nil, "Authorization: Bearer [REDACTED]"},
		{"json api key", `{"x-api-key": "hunter2hunter2"}`, nil, `{"x-api-key": "[REDACTED]"}`},
		{"query param", "GET /v1?api_key=abcdef&x=1", nil, "GET /v1?api_key=[REDACTED]&x=1"},
		{"url key", `Post "https://h/v1?key=AIzaSyX&alt=sse": dial tcp`, nil, `Post "https://h/v1?key=[REDACTED]&alt=sse": dial tcp`},
		{"token counts survive", "max_tokens: 4096, input_tokens=12", nil, "max_tokens: 4096, input_tokens=12"},
		{"nothing secret", "model: claude-x not found", []string{""}, "model: claude-x not found"},
		{"longer secret first", "xx-longsecret", []string{"long", "xx-longsecret"}, "[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Redact(tt.in, tt.secrets...); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCleanTrimsAfterRedacting(t *testing.T) {
	t.Parallel()
	key := "k3y-" + strings.Repeat("Z", 40)
	msg := strings.Repeat("é", MaxMessage/2-10) + key + strings.Repeat("x", 500)
	got := Clean(msg, key)
	if strings.Contains(got, "ZZZZ") {
		t.Errorf("Clean left part of the key: %q", got)
	}
	if len(got) > MaxMessage+len("…") {
		t.Errorf("Clean kept %d bytes, want at most %d", len(got), MaxMessage)
	}
	if !strings.HasSuffix(got, "…") {
		t.Errorf("Clean(%q...) does not mark the cut", got[:20])
	}
}

func TestStatusError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		header     http.Header
		body       string
		retryable  bool
		retryAfter time.Duration
		wantMsg    string
	}{
		{"anthropic not found", 404, nil, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`, false, 0, "not_found_error: model: claude-nope"},
		{"openai rate limit", 429, http.Header{"Retry-After": {"7"}}, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, true, 7 * time.Second, "requests: Rate limit reached"},
		{"openai quota", 429, nil, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`, false, 0, "insufficient_quota: You exceeded your current quota"},
		{"overloaded", 529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, true, 0, "overloaded_error: Overloaded"},
		{"ollama string", 404, nil, `{"error":"model \"llama9\" not found, try pulling it first"}`, false, 0, `model "llama9" not found, try pulling it first`},
		{"html", 502, nil, "<html>\n  Bad   Gateway</html>", true, 0, "Bad Gateway"},
		{"empty", 500, nil, "", true, 0, "Internal Server Error"},
		{"retry-after-ms", 503, http.Header{"Retry-After-Ms": {"1500"}}, "{}", true, 1500 * time.Millisecond, "{}"},
		{"conflict", 409, nil, `{"detail":"busy"}`, true, 0, "busy"},
		{"unauthorized", 401, nil, `{"message":"no"}`, false, 0, "no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := tt.header
			if h == nil {
				h = http.Header{}
			}
			e := StatusError("p", &http.Response{StatusCode: tt.status, Header: h}, []byte(tt.body))
			if e.Status != tt.status || e.Retryable != tt.retryable || e.RetryAfter != tt.retryAfter || e.Message != tt.wantMsg {
				t.Errorf("got %+v, want status %d retryable %v retryAfter %v message %q", *e, tt.status, tt.retryable, tt.retryAfter, tt.wantMsg)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{"0.5", 500 * time.Millisecond},
		{"-1", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		if got := ParseRetryAfter(http.Header{"Retry-After": {tt.v}}, now); got != tt.want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestErrorString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    *Error
		want string
	}{
		{&Error{Provider: "a", Status: 404, Message: "model not found"}, "a: status 404: model not found"},
		{&Error{Provider: "a", Malformed: true, Message: "invalid JSON"}, "a: malformed reply: invalid JSON"},
		{&Error{Message: "dial tcp: refused"}, "request failed: dial tcp: refused"},
		{&Error{Provider: "a", Status: 401, Message: "bad key sk-ant-abcdefghijkl"}, "a: status 401: bad key [REDACTED]"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestAttemptTimeouts(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		case "/trickle": // a stream that keeps flowing for longer than the timeout
			for range 8 {
				w.Write([]byte("data: x\n\n"))
				w.(http.Flusher).Flush()
				time.Sleep(40 * time.Millisecond)
			}
		case "/echo":
			w.WriteHeader(401)
			w.Write([]byte(`{"error":{"message":"bad key: ` + r.Header.Get("X-Key") + `"}}`))
		}
	}))
	defer srv.Close()
	h := &HTTP{Provider: "p", Client: srv.Client(), Timeout: 150 * time.Millisecond, Secrets: []string{"my-secret-key"}}

	t.Run("no answer is a retryable timeout", func(t *testing.T) {
		_, err := h.Do(context.Background(), "GET", srv.URL+"/slow", nil, nil, false)
		var pe *Error
		if !errors.As(err, &pe) || !pe.Retryable || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want a retryable timeout", err)
		}
	})
	t.Run("cancelled caller is not retryable", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := h.Do(ctx, "GET", srv.URL+"/slow", nil, nil, false)
		var pe *Error
		if !errors.As(err, &pe) || pe.Retryable || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want a non-retryable cancellation", err)
		}
	})
	t.Run("a flowing stream outlives the timeout", func(t *testing.T) {
		a, err := h.Do(context.Background(), "GET", srv.URL+"/trickle", nil, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		r := NewSSEReader(a.Body, 0)
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Errorf("stream: %v", err)
				}
				break
			}
			n++
		}
		if n != 8 {
			t.Errorf("read %d events, want 8", n)
		}
	})
	t.Run("echoed secret is redacted", func(t *testing.T) {
		_, err := h.Do(context.Background(), "GET", srv.URL+"/echo", http.Header{"X-Key": {"my-secret-key"}}, nil, false)
		if err == nil || strings.Contains(err.Error(), "my-secret-key") || !strings.Contains(err.Error(), "bad key") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("refused connection is retryable", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		url := dead.URL
		dead.Close()
		_, err := h.Do(context.Background(), "GET", url, nil, nil, false)
		var pe *Error
		if !errors.As(err, &pe) || !pe.Retryable || pe.Status != 0 {
			t.Errorf("err = %v, want retryable network error", err)
		}
	})
}

func TestCleanIsInertAndStable(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"\x1b[2J\x1b]0;title\x07ok\x1b[0m",
		"a\u202eb\u200bc\x00d\xffe\r\nf",
		strings.Repeat("\x01é", MaxMessage),
		strings.Repeat("x", MaxMessage-2) + "\u202e\u202e",
	} {
		got := Clean(in)
		if strings.ContainsAny(got, "\x1b\x07\x00\r\n\u202e\u200b") || !utf8.ValidString(got) {
			t.Errorf("Clean(%q) = %q: not inert", in, got)
		}
		if len(got) > MaxMessage+len("…") {
			t.Errorf("Clean(%q) kept %d bytes", in, len(got))
		}
		if again := Clean(got); again != got {
			t.Errorf("Clean is not stable: %q, then %q", got, again)
		}
	}
	if got := Clean("\x1b[31mred\x1b[0m alert"); got != "red alert" {
		t.Errorf("escape sequences: %q", got)
	}
}

// TestToolSchema: a schema that is a JSON object goes to the provider as
// it is; anything else (none, null, another JSON value, not JSON) becomes
// an empty object schema, which every provider accepts.
func TestToolSchema(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"type":"object","properties":{"a":{"type":"string"}}}`: `{"type":"object","properties":{"a":{"type":"string"}}}`,
		" \n{\"type\":\"object\"} ":                              " \n{\"type\":\"object\"} ",
		``:                                                       string(emptySchema),
		`null`:                                                   string(emptySchema),
		`[{"type":"object"}]`:                                    string(emptySchema),
		`"{}"`:                                                   string(emptySchema),
		`{"type":"object"`:                                       string(emptySchema),
		`{"a":1} {"b":2}`:                                        string(emptySchema),
		`{"a":1}]`:                                               string(emptySchema),
		"\x00{}":                                                 string(emptySchema),
	} {
		if got := string(ToolSchema(json.RawMessage(in))); got != want {
			t.Errorf("ToolSchema(%q) = %q, want %q", in, got, want)
		}
	}
}
