package broker_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/broker"
	"github.com/shelldon/shelldon/internal/broker/anthropic"
	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/broker/openai"
	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

var hello = contracts.Request{Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "hello"}}}

// sleeps records the waits of a chain instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// fake is a provider whose answers a function decides.
type fake struct {
	name  string
	calls atomic.Int32
	fn    func(n int, onText func(string)) (contracts.Completion, error)
}

func (f *fake) Name() string { return f.name }

func (f *fake) Complete(ctx context.Context, req contracts.Request, onText func(string)) (contracts.Completion, error) {
	n := int(f.calls.Add(1))
	return f.fn(n, onText)
}

func answer(text string) (contracts.Completion, error) {
	return contracts.Completion{Message: contracts.Message{Role: contracts.RoleAssistant, Text: text}}, nil
}

func retryable(status int) error {
	return &provider.Error{Provider: "x", Status: status, Retryable: true}
}

func newAnthropic(srv *brokertest.Server, key string) provider.Provider {
	return anthropic.New(provider.Config{BaseURL: srv.BaseURL(), Model: "claude-t", APIKey: key, Timeout: 2 * time.Second})
}

func newOpenAI(srv *brokertest.Server, key string) provider.Provider {
	return openai.New(provider.Config{BaseURL: srv.BaseURL(), Model: "gpt-t", APIKey: key, Timeout: 2 * time.Second})
}

func TestRetryAndFallback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		first     []brokertest.Reply // replies of the first (anthropic) provider
		timeout   time.Duration      // per attempt of the first provider
		want      string             // the answer's text; "" means an error
		wantFirst int                // requests the first provider got
		wantOther int                // requests the second (openai) provider got
		sleeps    func([]time.Duration) bool
	}{
		{
			name:  "429 honors Retry-After",
			first: []brokertest.Reply{{Status: 429, Header: http.Header{"Retry-After": {"2"}}}, {Text: "hi"}},
			want:  "hi", wantFirst: 2,
			sleeps: func(d []time.Duration) bool { return cmp.Equal(d, []time.Duration{2 * time.Second}) },
		},
		{
			name:  "500 then success",
			first: []brokertest.Reply{{Status: 500}, {Text: "hi"}},
			want:  "hi", wantFirst: 2,
			sleeps: func(d []time.Duration) bool {
				return len(d) == 1 && d[0] >= broker.DefaultBaseBackoff/2 && d[0] <= broker.DefaultBaseBackoff
			},
		},
		{
			name:  "529 overloaded then success",
			first: []brokertest.Reply{{Status: 529}, {Status: 529}, {Text: "hi"}},
			want:  "hi", wantFirst: 3,
			sleeps: func(d []time.Duration) bool { return len(d) == 2 },
		},
		{
			name:    "timeout is retried",
			first:   []brokertest.Reply{{Delay: 10 * time.Second}, {Text: "hi"}},
			timeout: 50 * time.Millisecond,
			want:    "hi", wantFirst: 2,
			sleeps: func(d []time.Duration) bool { return len(d) == 1 },
		},
		{
			name:  "401 is not retried but falls back",
			first: []brokertest.Reply{{Status: 401}},
			want:  "done", wantFirst: 1, wantOther: 1,
			sleeps: func(d []time.Duration) bool { return len(d) == 0 },
		},
		{
			name:  "retries exhausted fall back",
			first: []brokertest.Reply{{Status: 503}, {Status: 503}, {Status: 503}},
			want:  "done", wantFirst: 3, wantOther: 1,
			sleeps: func(d []time.Duration) bool { return len(d) == 2 },
		},
		{
			name:  "Retry-After over a minute falls back at once",
			first: []brokertest.Reply{{Status: 429, Header: http.Header{"Retry-After": {"120"}}}},
			want:  "done", wantFirst: 1, wantOther: 1,
			sleeps: func(d []time.Duration) bool { return len(d) == 0 },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := brokertest.NewServer(t, "anthropic", brokertest.Sequence(tt.first...))
			o := brokertest.NewServer(t, "openai", nil)
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 2 * time.Second
			}
			first := anthropic.New(provider.Config{BaseURL: a.BaseURL(), Model: "claude-t", APIKey: "k", Timeout: timeout})
			var s sleeps
			chain := broker.NewChain([]provider.Provider{first, newOpenAI(o, "k")}, broker.Options{Sleep: s.sleep})
			got, err := chain.Complete(context.Background(), hello, nil)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if got.Message.Text != tt.want {
				t.Errorf("answer %q, want %q", got.Message.Text, tt.want)
			}
			if n := len(a.Requests()); n != tt.wantFirst {
				t.Errorf("first provider got %d requests, want %d", n, tt.wantFirst)
			}
			if n := len(o.Requests()); n != tt.wantOther {
				t.Errorf("second provider got %d requests, want %d", n, tt.wantOther)
			}
			if !tt.sleeps(s.got()) {
				t.Errorf("sleeps %v", s.got())
			}
		})
	}
}

func TestAllProvidersFail(t *testing.T) {
	t.Parallel()
	a := brokertest.NewServer(t, "anthropic", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Status: 500, Text: "internal trouble"}
	})
	o := brokertest.NewServer(t, "openai", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Status: 404, Text: "The model `gpt-t` does not exist"}
	})
	var s sleeps
	chain := broker.NewChain([]provider.Provider{newAnthropic(a, "k"), newOpenAI(o, "k")}, broker.Options{Sleep: s.sleep})
	_, err := chain.Complete(context.Background(), hello, nil)
	var ce *broker.ChainError
	if !errors.As(err, &ce) || len(ce.Failures) != 2 {
		t.Fatalf("err = %v, want a ChainError over 2 providers", err)
	}
	want := "broker: every provider failed: anthropic:claude-t (3 attempts): status 500: api_error: internal trouble; " +
		"openai:gpt-t (1 attempt): status 404: invalid_request_error: The model `gpt-t` does not exist"
	if err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", err, want)
	}
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Status != 404 {
		t.Errorf("error does not wrap the last provider's: %v", pe)
	}
	if len(s.got()) != 2 {
		t.Errorf("sleeps %v, want 2", s.got())
	}
}

// TestKeyNeverLeaks runs servers that echo the key back in their error
// bodies and checks that neither the error nor the logs hold it.
func TestKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	const (
		anthropicKey = "sk-ant-api03-LEAKME0123456789abcdefghij"
		openaiKey    = "opaque.token.LEAKME"
	)
	echo := func(status int) func(brokertest.Recorded) brokertest.Reply {
		return func(r brokertest.Recorded) brokertest.Reply {
			return brokertest.Reply{Status: status, Text: "bad credentials: x-api-key=" + r.Header.Get("X-Api-Key") +
				" authorization=" + r.Header.Get("Authorization") + " raw " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")}
		}
	}
	a := brokertest.NewServer(t, "anthropic", echo(503))
	o := brokertest.NewServer(t, "openai", echo(401))
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var s sleeps
	chain := broker.NewChain([]provider.Provider{newAnthropic(a, anthropicKey), newOpenAI(o, openaiKey)}, broker.Options{Sleep: s.sleep, Logger: logger})
	_, err := chain.Complete(context.Background(), hello, nil)
	if err == nil {
		t.Fatal("want an error")
	}
	for _, text := range []string{err.Error(), logs.String()} {
		if strings.Contains(text, "LEAKME") {
			t.Errorf("key leaked:\n%s", text)
		}
		if !strings.Contains(text, "bad credentials") {
			t.Errorf("provider message lost:\n%s", text)
		}
	}
	if strings.Contains(logs.String(), "hello") {
		t.Errorf("logs hold the prompt:\n%s", logs.String())
	}
}

func TestDeadline(t *testing.T) {
	t.Parallel()
	a := brokertest.NewServer(t, "anthropic", brokertest.Sequence(brokertest.Reply{Status: 429, Header: http.Header{"Retry-After": {"30"}}}))
	o := brokertest.NewServer(t, "openai", nil)
	var s sleeps
	chain := broker.NewChain([]provider.Provider{newAnthropic(a, "k"), newOpenAI(o, "k")}, broker.Options{Sleep: s.sleep})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := chain.Complete(ctx, hello, nil)
	if err != nil || got.Message.Text != "done" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if len(s.got()) != 0 {
		t.Errorf("slept %v past the deadline", s.got())
	}
}

func TestCancelledContextStops(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	first := &fake{name: "first", fn: func(int, func(string)) (contracts.Completion, error) {
		cancel()
		return contracts.Completion{}, retryable(503)
	}}
	second := &fake{name: "second", fn: func(int, func(string)) (contracts.Completion, error) { return answer("late") }}
	var s sleeps
	_, err := broker.NewChain([]provider.Provider{first, second}, broker.Options{Sleep: s.sleep}).Complete(ctx, hello, nil)
	if err == nil || second.calls.Load() != 0 || first.calls.Load() != 1 {
		t.Errorf("err %v, calls %d/%d: want an error after one call", err, first.calls.Load(), second.calls.Load())
	}
}

func TestSleepInterrupted(t *testing.T) {
	t.Parallel()
	p := &fake{name: "p", fn: func(int, func(string)) (contracts.Completion, error) { return contracts.Completion{}, retryable(503) }}
	ctx, cancel := context.WithCancel(context.Background())
	sleep := func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
	_, err := broker.NewChain([]provider.Provider{p}, broker.Options{Sleep: sleep}).Complete(ctx, hello, nil)
	if !errors.Is(err, context.Canceled) || p.calls.Load() != 1 {
		t.Errorf("err = %v after %d calls, want context.Canceled after 1", err, p.calls.Load())
	}
}

func TestStreamInterruptedIsNotRetried(t *testing.T) {
	t.Parallel()
	first := &fake{name: "first", fn: func(_ int, onText func(string)) (contracts.Completion, error) {
		onText("Once upon")
		return contracts.Completion{}, &provider.Error{Provider: "first", Malformed: true, Retryable: true, Message: "stream ended before message_stop"}
	}}
	second := &fake{name: "second", fn: func(int, func(string)) (contracts.Completion, error) { return answer("other") }}
	var s sleeps
	var got strings.Builder
	_, err := broker.NewChain([]provider.Provider{first, second}, broker.Options{Sleep: s.sleep}).Complete(context.Background(), hello, func(d string) { got.WriteString(d) })
	if !errors.Is(err, broker.ErrStreamInterrupted) {
		t.Errorf("err = %v, want ErrStreamInterrupted", err)
	}
	var pe *provider.Error
	if !errors.As(err, &pe) || !pe.Malformed {
		t.Errorf("err does not wrap the provider's: %v", err)
	}
	if first.calls.Load() != 1 || second.calls.Load() != 0 || got.String() != "Once upon" {
		t.Errorf("calls %d/%d, streamed %q", first.calls.Load(), second.calls.Load(), got.String())
	}

	// The same through a real adapter: a stream cut after its first words.
	a := brokertest.NewServer(t, "anthropic", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Raw: "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Once\"}}\n\n"}
	})
	var streaming provider.Provider = anthropic.New(provider.Config{BaseURL: a.BaseURL(), Model: "c", Stream: true})
	_, err = broker.NewChain([]provider.Provider{streaming}, broker.Options{Sleep: s.sleep}).Complete(context.Background(), hello, func(string) {})
	if !errors.Is(err, broker.ErrStreamInterrupted) || len(a.Requests()) != 1 {
		t.Errorf("err = %v after %d requests", err, len(a.Requests()))
	}

	// Without text delivered, a cut stream is retried.
	b := brokertest.NewServer(t, "openai", brokertest.Sequence(brokertest.Reply{Raw: "data: {\"choices\":[]}\n\n"}, brokertest.Reply{Text: "whole"}))
	streaming = openai.New(provider.Config{BaseURL: b.BaseURL(), Model: "g", Stream: true})
	var text strings.Builder
	comp, err := broker.NewChain([]provider.Provider{streaming}, broker.Options{Sleep: s.sleep}).Complete(context.Background(), hello, func(d string) { text.WriteString(d) })
	if err != nil || comp.Message.Text != "whole" || text.String() != "whole" {
		t.Errorf("got %q (streamed %q), %v", comp.Message.Text, text.String(), err)
	}
}

func TestBackoffGrowsToCap(t *testing.T) {
	t.Parallel()
	p := &fake{name: "p", fn: func(int, func(string)) (contracts.Completion, error) { return contracts.Completion{}, retryable(503) }}
	var s sleeps
	opts := broker.Options{MaxAttempts: 5, BaseBackoff: 100 * time.Millisecond, MaxBackoff: 300 * time.Millisecond, Sleep: s.sleep}
	_, err := broker.NewChain([]provider.Provider{p}, opts).Complete(context.Background(), hello, nil)
	if err == nil || p.calls.Load() != 5 {
		t.Fatalf("err %v after %d calls, want an error after 5", err, p.calls.Load())
	}
	caps := []time.Duration{100, 200, 300, 300}
	got := s.got()
	if len(got) != len(caps) {
		t.Fatalf("sleeps %v, want %d", got, len(caps))
	}
	for i, c := range caps {
		c *= time.Millisecond
		if got[i] < c/2 || got[i] > c {
			t.Errorf("sleep %d = %v, want within [%v, %v]", i, got[i], c/2, c)
		}
	}
}

func TestPlainErrorsFallBack(t *testing.T) {
	t.Parallel()
	first := &fake{name: "first", fn: func(int, func(string)) (contracts.Completion, error) {
		return contracts.Completion{}, errors.New("odd failure")
	}}
	second := &fake{name: "second", fn: func(int, func(string)) (contracts.Completion, error) { return answer("ok") }}
	chain := broker.NewChain([]provider.Provider{first, second}, broker.Options{Sleep: (&sleeps{}).sleep})
	got, err := chain.Complete(context.Background(), hello, nil)
	if err != nil || got.Message.Text != "ok" || first.calls.Load() != 1 {
		t.Errorf("got %q, %v after %d calls", got.Message.Text, err, first.calls.Load())
	}
	if chain.Name() != "chain(first,second)" {
		t.Errorf("Name() = %q", chain.Name())
	}
}

func TestNoProvider(t *testing.T) {
	t.Parallel()
	if _, err := broker.NewChain(nil, broker.Options{}).Complete(context.Background(), hello, nil); !errors.Is(err, broker.ErrNoProvider) {
		t.Errorf("err = %v, want ErrNoProvider", err)
	}
}
