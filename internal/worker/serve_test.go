package worker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/wire"
)

type askIn struct {
	Name string `json:"name"`
}

// TestServeCallsTheDaemon: a turn served over the frame pipe makes its model
// calls and its tools' requests as calls of the daemon's table, and a
// refusal in the reply is the tool's error for the model.
func TestServeCallsTheDaemon(t *testing.T) {
	t.Parallel()
	toWorkerR, toWorkerW := io.Pipe()
	toDaemonR, toDaemonW := io.Pipe()
	t.Cleanup(func() { toWorkerW.Close(); toDaemonR.Close() })
	daemon := wire.NewConn(toDaemonR, toWorkerW, 0)
	done := make(chan error, 1)
	build := func(job contracts.Job, d Daemon) (*Registry, func(), error) {
		reg := NewRegistry()
		ask, err := NewTool("ask", "asks the daemon for a skill", contracts.TierFree, func(ctx context.Context, in askIn) (string, error) {
			return d.Skill(ctx, contracts.SkillRequest{Name: in.Name})
		})
		if err != nil {
			return nil, nil, err
		}
		return reg, func() {}, reg.Add(ask)
	}
	go func() {
		err := Serve(context.Background(), wire.NewConn(toWorkerR, toDaemonW, 0), build, nil, slog.New(slog.DiscardHandler))
		toDaemonW.Close()
		done <- err
	}()

	var mu sync.Mutex
	var results []string // the tool results the model saw
	step := 0
	table := wire.Handlers{
		wire.MethodComplete: wire.Handle(func(ctx context.Context, req contracts.Request) (contracts.Completion, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range req.Messages {
				for _, r := range m.ToolResults {
					results = append(results, r.Content)
				}
			}
			step++
			switch step {
			case 1:
				return contracts.Completion{Message: contracts.Message{Role: contracts.RoleAssistant, ToolCalls: []contracts.ToolCall{
					{ID: "1", Name: "ask", Arguments: `{"name":"known"}`}, {ID: "2", Name: "ask", Arguments: `{"name":"unknown"}`}}}}, nil
			default:
				return contracts.Completion{Message: contracts.Message{Role: contracts.RoleAssistant, Text: "all done"}}, nil
			}
		}),
		wire.MethodSkill: wire.Handle(func(ctx context.Context, req contracts.SkillRequest) (string, error) {
			if req.Name != "known" {
				return "", errors.New("no skill " + req.Name)
			}
			return "the skill's text", nil
		}),
	}
	deadline := time.Now().Add(20 * time.Second)
	if err := daemon.Send(wire.TypeJob, contracts.Job{Chat: "c", Turn: 1, Input: "go", Deadline: deadline,
		Limits: contracts.Limits{Budget: 20 * time.Second}}); err != nil {
		t.Fatal(err)
	}
	var res contracts.Result
	for {
		f, err := daemon.Recv()
		if err != nil {
			t.Fatalf("read from the worker: %v", err)
		}
		if f.Type == wire.TypeCall {
			table.Serve(context.Background(), daemon, f)
			continue
		}
		if f.Type == wire.TypeResult {
			if err := f.Decode(&res); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res.Reply != "all done" || res.ToolCalls != 2 {
		t.Errorf("result %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 || !strings.Contains(results[0], "the skill's text") || !strings.Contains(results[1], "no skill unknown") {
		t.Errorf("tool results %q", results)
	}
}

// TestServeDaemonGone: the daemon closing the pipe while a model call waits
// ends the turn (the call fails at once, the model being a minute away).
func TestServeDaemonGone(t *testing.T) {
	t.Parallel()
	toWorkerR, toWorkerW := io.Pipe()
	toDaemonR, toDaemonW := io.Pipe()
	t.Cleanup(func() { toDaemonR.Close() })
	daemon := wire.NewConn(toDaemonR, toWorkerW, 0)
	done := make(chan error, 1)
	build := func(contracts.Job, Daemon) (*Registry, func(), error) { return NewRegistry(), func() {}, nil }
	go func() {
		done <- Serve(context.Background(), wire.NewConn(toWorkerR, toDaemonW, 0), build, nil, slog.New(slog.DiscardHandler))
	}()
	if err := daemon.Send(wire.TypeJob, contracts.Job{Input: "go", Deadline: time.Now().Add(time.Minute),
		Limits: contracts.Limits{Budget: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	f, err := daemon.Recv()
	if err != nil || f.Type != wire.TypeCall || f.Method != wire.MethodComplete {
		t.Fatalf("want the model call, got %+v %v", f, err)
	}
	go io.Copy(io.Discard, toDaemonR) // what the worker still sends after the daemon hung up
	toWorkerW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
