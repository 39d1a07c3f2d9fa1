package worker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
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
// refusal in the reply is the tool's error for the model. Its result carries
// the worker's profile: a mark for each step, in order.
func TestServeCallsTheDaemon(t *testing.T) {
	t.Parallel()
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
					{ID: "1", Name: "ask", Arguments: `{"name":"known"}`}, {ID: "2", Name: "ask", Arguments: `{"name":"unknown"}`},
					{ID: "3", Name: "nope", Arguments: `{}`}}}}, nil
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
	res := serveOne(t, build, table)
	if res.Reply != "all done" || res.ToolCalls != 3 {
		t.Errorf("result %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 3 || !strings.Contains(results[0], "the skill's text") || !strings.Contains(results[1], "no skill unknown") {
		t.Errorf("tool results %q", results)
	}
	var steps []string
	for i, m := range res.Profile {
		steps = append(steps, m.Step)
		if i > 0 && m.Micros < res.Profile[i-1].Micros {
			t.Errorf("mark %q at %d µs, before the mark before it (%d µs)", m.Step, m.Micros, res.Profile[i-1].Micros)
		}
	}
	want := []string{StepJobDecoded, StepToolsBuilt, StepPromptBuilt, "request 1 sent", "answer 1 received",
		"tool ask ran", "tool ask ran", "tool ? ran", "request 2 sent", "answer 2 received", StepResultReady}
	if !slices.Equal(steps, want) {
		t.Errorf("profile %q,\nwant    %q", steps, want)
	}
}

// serveOne serves one turn with the tools build makes, answering the
// worker's calls with table, and returns its result.
func serveOne(t *testing.T, build Builder, table wire.Handlers) contracts.Result {
	t.Helper()
	toWorkerR, toWorkerW := io.Pipe()
	toDaemonR, toDaemonW := io.Pipe()
	t.Cleanup(func() { toWorkerW.Close(); toDaemonR.Close() })
	daemon := wire.NewConn(toDaemonR, toWorkerW, 0)
	done := make(chan error, 1)
	go func() {
		err := Serve(context.Background(), wire.NewConn(toWorkerR, toDaemonW, 0), build, nil, slog.New(slog.DiscardHandler))
		toDaemonW.Close()
		done <- err
	}()
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
	return res
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

// TestProfileBounded: a turn of many steps keeps its first marks and its
// last, MaxMarks in all.
func TestProfileBounded(t *testing.T) {
	t.Parallel()
	p := newProfile(time.Now())
	for range 3 * MaxMarks {
		p.mark("tool get_time ran")
	}
	marks := p.done(StepResultReady)
	if len(marks) != MaxMarks || marks[len(marks)-1].Step != StepResultReady {
		t.Errorf("%d marks, the last %+v; want %d, the last %q", len(marks), marks[len(marks)-1], MaxMarks, StepResultReady)
	}
	var none *profile
	none.mark("x")
	if got := none.done(StepResultReady); got != nil {
		t.Errorf("a nil profile marked %v", got)
	}
}
