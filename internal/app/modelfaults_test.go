package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/broker"
	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/broker/openai"
	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/worker"
)

// These tests run turns through the real pieces a model call crosses: the
// worker's loop (in-process, over pipes, as coretest runs it), core, the
// broker's chain and the OpenAI adapter, against loopback servers.

// turnCore is a core whose model is a chain of one OpenAI-format provider
// named "local" at baseURL, whose workers have the tools of sets.
func turnCore(t *testing.T, baseURL string, limits contracts.Limits, sets ...coretest.Tools) (*core.Core, *store.Store) {
	t.Helper()
	st := coretest.Store(t)
	chain := broker.NewChain([]provider.Provider{openai.New(provider.Config{Name: "local", BaseURL: baseURL, Model: "m"})},
		broker.Options{MaxAttempts: 1})
	c, err := core.New(core.Options{Store: st, Model: chain, Spawner: &coretest.Spawner{Build: coretest.Builder(sets...)},
		Limits: limits, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

// silentProvider accepts connections on loopback and never answers; it
// returns its address.
func silentProvider(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go io.Copy(io.Discard, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// TestSilentProviderIsNamedToTheOwner: a provider that accepts the
// connection and never answers is named in the turn's reply, with its host
// and what never came, not reported only as a turn that ran out of time;
// the history keeps the owner's message and shelldon's note, no words of
// the model's.
func TestSilentProviderIsNamedToTheOwner(t *testing.T) {
	t.Parallel()
	addr := silentProvider(t)
	c, st := turnCore(t, "http://"+addr+"/v1", contracts.Limits{Budget: 3 * time.Second, Reserve: 500 * time.Millisecond})
	out, err := c.Send(context.Background(), "c", "hello?", core.Events{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reply: %s", out.Reply)
	for _, want := range []string{"local (1 attempt): sent no answer within ", "(" + addr + ", waiting for the response headers)"} {
		if !strings.Contains(out.Reply, want) {
			t.Errorf("reply %q lacks %q", out.Reply, want)
		}
	}
	hist, err := st.History(context.Background(), "c", 10_000)
	if err != nil {
		t.Fatal(err)
	}
	want := []contracts.Message{
		{Role: contracts.RoleUser, Text: "hello?"},
		{Role: contracts.RoleUser, Text: "[shelldon: this request stopped on an error before it was answered.]"},
	}
	if diff := cmp.Diff(want, hist); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
}

// TestCancelledTurnInTheNextRequest: after a turn the owner cancelled
// while the model thought, the next turn's request holds the owner's
// message and shelldon's note that it was cancelled, and no "Turn
// cancelled." in the model's mouth; the owner was told.
func TestCancelledTurnInTheNextRequest(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 1)
	srv := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		if len(r.Request.Messages) > 0 && r.Request.Messages[len(r.Request.Messages)-1].Text == "long question" {
			asked <- struct{}{}
			return brokertest.Reply{Delay: time.Hour} // cut short when the client leaves
		}
		return brokertest.Reply{Text: "done"}
	})
	c, _ := turnCore(t, srv.BaseURL(), contracts.Limits{Budget: 20 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-asked; cancel() }()
	out, err := c.Send(ctx, "c", "long question", core.Events{})
	if err != nil || out.Stopped != contracts.StopCancelled || !strings.Contains(out.Reply, "Turn cancelled.") {
		t.Fatalf("cancelled turn: %+v, %v", out, err)
	}
	if out, err := c.Send(context.Background(), "c", "next", core.Events{}); err != nil || out.Reply != "done" {
		t.Fatalf("next turn: %+v, %v", out, err)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Request.Messages
	want := []contracts.Message{
		{Role: contracts.RoleUser, Text: "long question"},
		{Role: contracts.RoleUser, Text: "[shelldon: the owner cancelled this request before it was answered.]"},
		{Role: contracts.RoleUser, Text: "next"},
	}
	if diff := cmp.Diff(want, last); diff != "" {
		t.Errorf("the next turn's messages (-want +got):\n%s", diff)
	}
}

// TestToolErrorOnTheWire: a tool's failure reaches the model, through the
// worker, core, the chain and the OpenAI adapter, as one "error: <message>".
func TestToolErrorOnTheWire(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", brokertest.Sequence(
		brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "c1", Name: "failing", Arguments: `{}`}}},
		brokertest.Reply{Text: "sorry"},
	))
	failing := func(contracts.Job, worker.Daemon) []*worker.Tool {
		tool, err := worker.NewTool("failing", "Fails.", contracts.TierFree, func(context.Context, struct{}) (string, error) {
			return "", errors.New("disk on fire")
		})
		if err != nil {
			t.Fatal(err)
		}
		return []*worker.Tool{tool}
	}
	c, _ := turnCore(t, srv.BaseURL(), contracts.Limits{Budget: 20 * time.Second}, failing)
	if out, err := c.Send(context.Background(), "c", "try", core.Events{}); err != nil || out.Reply != "sorry" {
		t.Fatalf("turn: %+v, %v", out, err)
	}
	reqs := srv.Requests()
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
		t.Fatal(err)
	}
	var tool []string
	for _, m := range body.Messages {
		if m.Role == "tool" {
			tool = append(tool, m.Content)
		}
	}
	if diff := cmp.Diff([]string{"error: disk on fire"}, tool); diff != "" {
		t.Errorf("tool messages the model read (-want +got):\n%s", diff)
	}
}
