package brokertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/broker/anthropic"
	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/broker/openai"
	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

type pinger interface {
	provider.Provider
	Ping(context.Context) error
}

func client(kind string, cfg provider.Config) pinger {
	if kind == "anthropic" {
		return anthropic.New(cfg)
	}
	return openai.New(cfg)
}

var tools = []contracts.ToolSpec{
	{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
}

// TestToolLoop drives a whole tool round trip through each adapter, plain
// and streamed, and checks that the server decodes what the adapter sent back
// into the very request it started from.
func TestToolLoop(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"anthropic", "openai"} {
		for _, stream := range []bool{false, true} {
			t.Run(kind+map[bool]string{false: "/plain", true: "/stream"}[stream], func(t *testing.T) {
				t.Parallel()
				srv := brokertest.NewServer(t, kind, brokertest.Sequence(
					brokertest.Reply{Text: "Let me look.", ToolCalls: []contracts.ToolCall{
						{Name: "read_file", Arguments: `{"path":"a.txt"}`},
						{ID: "mine", Name: "read_file", Arguments: `{"path":"b.txt"}`},
					}, Usage: contracts.Usage{InputTokens: 10, OutputTokens: 5}},
				))
				p := client(kind, provider.Config{BaseURL: srv.BaseURL(), Model: "m-1", APIKey: "k-123456", Stream: stream})

				req := contracts.Request{
					System:    "be brief",
					Messages:  []contracts.Message{{Role: contracts.RoleUser, Text: "read a and b"}},
					Tools:     tools,
					MaxTokens: 1000,
				}
				var streamed strings.Builder
				first, err := p.Complete(context.Background(), req, func(d string) { streamed.WriteString(d) })
				if err != nil {
					t.Fatal(err)
				}
				if first.Message.Text != "Let me look." || len(first.Message.ToolCalls) != 2 || first.Usage != (contracts.Usage{InputTokens: 10, OutputTokens: 5}) {
					t.Fatalf("first completion = %+v", first)
				}
				if stream && streamed.String() != "Let me look." {
					t.Errorf("streamed %q", streamed.String())
				}
				calls := first.Message.ToolCalls
				if calls[0].ID == "" || calls[1].ID != "mine" || calls[1].Arguments != `{"path":"b.txt"}` {
					t.Errorf("tool calls = %+v", calls)
				}

				req.Messages = append(req.Messages, first.Message, contracts.Message{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{
					{CallID: calls[0].ID, Name: "read_file", OK: true, Content: "A"},
					{CallID: calls[1].ID, Name: "read_file", OK: false, Content: "no such file"},
				}})
				second, err := p.Complete(context.Background(), req, nil)
				if err != nil {
					t.Fatal(err)
				}
				if second.Message.Text != "done" || second.Model != "m-1" {
					t.Errorf("second completion = %+v", second)
				}

				recs := srv.Requests()
				if len(recs) != 2 {
					t.Fatalf("%d requests recorded, want 2", len(recs))
				}
				if diff := cmp.Diff(req, recs[1].Request); diff != "" {
					t.Errorf("decoded request (-sent +decoded):\n%s", diff)
				}
				if recs[1].Stream != stream || recs[1].Model != "m-1" || recs[1].Method != http.MethodPost {
					t.Errorf("recorded %+v", recs[1])
				}
			})
		}
	}
}

func TestReplies(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"anthropic", "openai"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := brokertest.NewServer(t, kind, brokertest.Sequence(
				brokertest.Reply{Status: 429, Text: "slow down", Header: http.Header{"Retry-After": {"3"}}},
				brokertest.Reply{Raw: `{"not": "a reply"`},
				brokertest.Reply{Delay: 10 * time.Second},
			))
			p := client(kind, provider.Config{BaseURL: srv.BaseURL(), Model: "m", Timeout: 100 * time.Millisecond})
			if err := p.Ping(context.Background()); err != nil {
				t.Errorf("Ping: %v", err)
			}

			_, err := p.Complete(context.Background(), contracts.Request{Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "hi"}}}, nil)
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Status != 429 || pe.RetryAfter != 3*time.Second || !strings.Contains(pe.Message, "slow down") {
				t.Errorf("429 reply: err = %v", err)
			}
			_, err = p.Complete(context.Background(), contracts.Request{Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "hi"}}}, nil)
			if !errors.As(err, &pe) || !pe.Malformed {
				t.Errorf("raw reply: err = %v, want malformed", err)
			}
			start := time.Now()
			_, err = p.Complete(context.Background(), contracts.Request{Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "hi"}}}, nil)
			if !errors.As(err, &pe) || !pe.Retryable || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
				t.Errorf("delayed reply: err = %v after %v, want a timeout", err, time.Since(start))
			}
			if n := len(srv.Requests()); n != 4 {
				t.Errorf("%d requests recorded, want 4", n)
			}
			if r := srv.Requests()[0]; r.Method != http.MethodGet || r.Path != "/v1/models" {
				t.Errorf("first request %s %s, want GET /v1/models", r.Method, r.Path)
			}
		})
	}
}

func TestUnknownRoute(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", nil)
	resp, err := http.Get(srv.BaseURL() + "/embeddings")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %d, want 404", resp.StatusCode)
	}
}

// TestTook: the server reports its own time per request, the reply's
// delay included, in the order the requests came.
func TestTook(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", brokertest.Sequence(
		brokertest.Reply{Text: "slow", Delay: 40 * time.Millisecond}, brokertest.Reply{Text: "fast"}))
	c := client("openai", provider.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "m"})
	for range 2 {
		if _, err := c.Complete(context.Background(), contracts.Request{Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "hi"}}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	took := srv.Took()
	if len(took) != 2 || took[0] < 40*time.Millisecond || took[1] <= 0 || took[1] >= 40*time.Millisecond {
		t.Errorf("Took = %v, want [>=40ms, >0 and <40ms]", took)
	}
}
