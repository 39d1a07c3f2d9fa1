package coretest_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/worker"
)

// TestWorkerEndsLikeAProcess: Kill, Wait (closing its stdin) and the end of
// Spawn's context each end a worker; none leaves a goroutine behind (the
// bubble waits for all of them).
func TestWorkerEndsLikeAProcess(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sp := &coretest.Spawner{Build: coretest.Builder(coretest.Echo("echo"))}
		p, err := sp.Spawn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p.Kill()
		if _, err := p.Conn().Recv(); err == nil {
			t.Error("a killed worker's stdout is open")
		}

		p, _ = sp.Spawn(context.Background())
		if err := p.Wait(); err == nil || !strings.Contains(err.Error(), "read job") {
			t.Errorf("a worker whose stdin closed before the job: %v", err)
		}

		ctx, cancel := context.WithCancel(context.Background())
		p, _ = sp.Spawn(ctx)
		cancel()
		if _, err := p.Conn().Recv(); err == nil {
			t.Error("the worker outlived its context")
		}
		p.Kill()
	})
}

// TestWorkerCrashFailsTheTurn: a worker that dies without a result (a
// panic here, a crash for a process) fails the turn, and the owner's
// message is kept.
func TestWorkerCrashFailsTheTurn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := coretest.Store(t)
		sp := &coretest.Spawner{Build: func(contracts.Job, worker.Daemon) (*worker.Registry, func(), error) {
			panic("boom")
		}}
		c, err := core.New(core.Options{Store: st, Model: &coretest.Model{}, Spawner: sp, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Send(context.Background(), "c", "hello", core.Events{})
		if err == nil || !strings.Contains(err.Error(), "coretest: the worker panicked: boom") {
			t.Fatalf("Send: %v", err)
		}
		if out.Stopped != contracts.StopError || !strings.Contains(out.Reply, "failed inside shelldon") {
			t.Errorf("outcome %+v", out)
		}
		if hist, _ := st.History(context.Background(), "c", 1000); len(hist) != 2 || hist[0].Text != "hello" {
			t.Errorf("history %+v", hist)
		}
	})
}

// TestTurnRunsTheRealLoop: a turn through the harness is the real worker
// loop: the tools the builder made are offered, run, reported as events
// (audited by core), and their results go back to the model; the model's
// text streams to the transport.
func TestTurnRunsTheRealLoop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := coretest.Store(t)
		sp := &coretest.Spawner{Build: coretest.Builder(coretest.Echo("echo"), coretest.NewRisky("launch").Tools)}
		m := &coretest.Model{}
		m.Script(coretest.Reply("Looking.", coretest.Call("e", "echo", `{"text":"hi"}`)), coretest.Results)
		c, err := core.New(core.Options{Store: st, Model: m, Spawner: sp, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		var events []string
		var streamed strings.Builder
		out, err := c.Send(context.Background(), "c", "say hi", core.Events{
			Text: func(d string) { streamed.WriteString(d) },
			Tool: func(ev contracts.ToolEvent) { events = append(events, ev.Phase+":"+ev.Tool) },
		})
		if err != nil || out.Reply != "RESULTS: echo ok=true hi" || out.ToolCalls != 1 {
			t.Fatalf("outcome %+v, %v", out, err)
		}
		if diff := cmp.Diff([]string{"start:echo", "end:echo"}, events); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if streamed.String() != "Looking.RESULTS: echo ok=true hi" {
			t.Errorf("streamed %q", streamed.String())
		}
		reqs := m.Requests()
		if diff := cmp.Diff([]string{"echo", "launch"}, coretest.Offered(reqs[0])); diff != "" {
			t.Errorf("offered (-want +got):\n%s", diff)
		}
		if !strings.Contains(reqs[0].System, "You are shelldon") {
			t.Errorf("the worker's system prompt was not built: %q", reqs[0].System)
		}
		if jobs := sp.Jobs(); len(jobs) != 1 || jobs[0].Input != "say hi" {
			t.Errorf("jobs %+v", jobs)
		}
		// A call the script has no step for is an error for the turn.
		out, err = c.Send(context.Background(), "c", "again", core.Events{})
		if err != nil || out.Stopped != contracts.StopError || !strings.Contains(out.Reply, "no step for call 3") {
			t.Errorf("beyond the script: %+v, %v", out, err)
		}
	})
}

// TestBuilderRefusesDuplicates: a Builder whose tools share a name fails
// the worker's build, as the real registry does.
func TestBuilderRefusesDuplicates(t *testing.T) {
	t.Parallel()
	_, _, err := coretest.Builder(coretest.Echo("echo"), coretest.Echo("echo"))(contracts.Job{}, nil)
	if err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("build: %v", err)
	}
}
