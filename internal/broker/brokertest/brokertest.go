// Package brokertest provides a fake model provider: an HTTP server on
// 127.0.0.1 that speaks the Anthropic Messages or the OpenAI Chat Completions
// wire format, answers from a script and records every request, decoded back
// into the neutral contracts.Request. Other packages use it for end-to-end
// tests that never leave the machine. It executes nothing.
package brokertest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

// Recorded is one request the server received.
type Recorded struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	// Request is Body decoded back into the neutral form: the system
	// prompt, the messages (tool results included, their Name recovered
	// from the matching call), the tools and the token cap. It is zero when
	// Body is not a request of the server's kind.
	Request contracts.Request
	Model   string // the "model" of the body
	Stream  bool   // the "stream" flag of the body
}

// Reply is what the server answers to one request.
type Reply struct {
	Text      string
	ToolCalls []contracts.ToolCall // an empty ID gets a generated one
	// Status other than 0 and 200 sends an error reply of that status in
	// the kind's error format, with Text (or the status text) as message.
	Status int
	// Raw, if set, is sent verbatim as the body (with Status, default 200),
	// with the content type that fits the request's stream flag.
	Raw   string
	Delay time.Duration // wait before answering (cut short if the client leaves)
	Usage contracts.Usage
	// Header holds extra reply headers, such as Retry-After.
	Header http.Header
}

// Server is a fake provider.
type Server struct {
	kind   string
	srv    *httptest.Server
	script func(Recorded) Reply

	mu    sync.Mutex
	reqs  []Recorded
	took  []time.Duration // the handler's time for each of reqs, once it answered
	posts int
}

// NewServer starts a fake provider of kind "anthropic" or "openai" that
// answers each request with script(request); a nil script always answers
// "done". The script is called for every request, models listings included
// (only the Status and Delay of its reply matter there). The server is closed
// when the test ends.
func NewServer(t testing.TB, kind string, script func(r Recorded) Reply) *Server {
	t.Helper()
	if kind != "anthropic" && kind != "openai" {
		t.Fatalf("brokertest: unknown kind %q", kind)
	}
	if script == nil {
		script = func(Recorded) Reply { return Reply{Text: "done"} }
	}
	s := &Server{kind: kind, script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// BaseURL is the base_url to configure: the server's root for anthropic, the
// root plus /v1 for openai, following each API's convention.
func (s *Server) BaseURL() string {
	if s.kind == "openai" {
		return s.srv.URL + "/v1"
	}
	return s.srv.URL
}

// Requests returns every request received so far, oldest first.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Took returns how long the server took to answer each request so far,
// oldest first (0 for one still being answered): from the start of its
// handler, which reads the body, to its end, the reply written. It is
// the fake provider's own time, which a benchmark of a turn subtracts.
func (s *Server) Took() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.took)
}

// Sequence returns a script that answers the POST requests with replies in
// order, then with a "done" text reply forever. Other requests (models
// listings) get a plain 200.
func Sequence(replies ...Reply) func(Recorded) Reply {
	var mu sync.Mutex
	next := 0
	return func(r Recorded) Reply {
		if r.Method != http.MethodPost {
			return Reply{}
		}
		mu.Lock()
		defer mu.Unlock()
		if next < len(replies) {
			next++
			return replies[next-1]
		}
		return Reply{Text: "done"}
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, _ := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	rec := Recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	var head struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	_ = json.Unmarshal(body, &head)
	rec.Model, rec.Stream = head.Model, head.Stream
	if r.Method == http.MethodPost {
		if s.kind == "anthropic" {
			rec.Request, _ = decodeAnthropic(body)
		} else {
			rec.Request, _ = decodeOpenAI(body)
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	s.took = append(s.took, 0)
	idx := len(s.reqs) - 1
	if r.Method == http.MethodPost {
		s.posts++
	}
	n := s.posts
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.took[idx] = time.Since(start)
		s.mu.Unlock()
	}()

	var post, models string
	if s.kind == "anthropic" {
		post, models = "/v1/messages", "/v1/models"
	} else {
		post, models = "/v1/chat/completions", "/v1/models"
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == post:
	case r.Method == http.MethodGet && r.URL.Path == models:
	default:
		s.writeError(w, http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path)
		return
	}

	reply := s.script(rec)
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range reply.Header {
		w.Header()[k] = slices.Clone(v)
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	switch {
	case reply.Raw != "":
		if rec.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, reply.Raw)
	case status != http.StatusOK:
		msg := reply.Text
		if msg == "" {
			msg = http.StatusText(status)
		}
		s.writeError(w, status, msg)
	case r.Method == http.MethodGet:
		s.writeModels(w)
	case s.kind == "anthropic":
		writeAnthropic(w, rec, reply, n)
	default:
		writeOpenAI(w, rec, reply, n)
	}
}

func (s *Server) writeError(w http.ResponseWriter, status int, msg string) {
	var body any
	if s.kind == "anthropic" {
		body = map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(status), "message": msg}}
	} else {
		typ := "invalid_request_error"
		if status >= 500 {
			typ = "server_error"
		}
		body = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}}
	}
	writeJSON(w, status, body)
}

func (s *Server) writeModels(w http.ResponseWriter) {
	if s.kind == "anthropic" {
		writeJSON(w, http.StatusOK, map[string]any{
			"data":     []any{map[string]any{"type": "model", "id": "claude-fake", "display_name": "Claude Fake", "created_at": "2025-01-01T00:00:00Z"}},
			"has_more": false, "first_id": "claude-fake", "last_id": "claude-fake",
		})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   []any{map[string]any{"id": "gpt-fake", "object": "model", "created": 0, "owned_by": "brokertest"}},
	})
}

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}
