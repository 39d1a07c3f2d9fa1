package core_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/core/store"
)

func keyedCore(t *testing.T, st *store.Store, m *coretest.Model) *core.Core {
	t.Helper()
	sp := &coretest.Spawner{Build: coretest.Builder(coretest.Echo("echo"), coretest.NewRisky("launch").Tools)}
	c, err := core.New(core.Options{Store: st, Model: m, Spawner: sp, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSendOnceRunsAMessageOnce: a keyed message that comes again (a
// Telegram update redelivered, an API client's retry) gets its turn's
// outcome without a second run, a parked turn's request included.
func TestSendOnceRunsAMessageOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := &coretest.Model{}
	m.Script(coretest.Reply("hello there"), coretest.Reply("", coretest.Call("l1", "launch", `{"target":"moon"}`)))
	c := keyedCore(t, coretest.Store(t), m)

	first, err := c.SendOnce(ctx, "c", "u1", "hi", core.Events{})
	if err != nil || first.Reply != "hello there" || first.Again != "" {
		t.Fatalf("first SendOnce = %+v, %v", first, err)
	}
	again, err := c.SendOnce(ctx, "c", "u1", "hi", core.Events{})
	if err != nil || again.Again != core.Replayed || again.Reply != "hello there" || again.Turn != first.Turn {
		t.Errorf("SendOnce again = %+v, %v; want the first outcome, replayed", again, err)
	}
	parked, err := c.SendOnce(ctx, "c", "u2", "launch it", core.Events{})
	if err != nil || len(parked.Approvals) != 1 {
		t.Fatalf("parking SendOnce = %+v, %v", parked, err)
	}
	replay, err := c.SendOnce(ctx, "c", "u2", "launch it", core.Events{})
	if err != nil || replay.Again != core.Replayed || replay.Stopped != contracts.StopApproval ||
		len(replay.Approvals) != 1 || replay.Approvals[0].ID != parked.Approvals[0].ID {
		t.Errorf("a parked message again = %+v, %v; want its pending request", replay, err)
	}
	if n := len(m.Requests()); n != 2 {
		t.Errorf("the model was asked %d times, want 2 (no rerun)", n)
	}
	if _, err := c.SendOnce(ctx, "c", "", "hi", core.Events{}); !errors.Is(err, core.ErrBadInput) {
		t.Errorf("an empty key = %v, want ErrBadInput", err)
	}
}

// TestSendOnceAfterACrash: a turn a crash cut short before it did
// anything runs again after the restart, up to core.MaxAttempts; one that
// had filed a request for the owner is not run again, and the request is
// in the outcome.
func TestSendOnceAfterACrash(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := coretest.StorePath(t)
	at := time.Now()
	// The crashed daemon: one message's turn had begun; another's had
	// filed a request; a third's had been cut short twice already.
	crashed := coretest.Reopen(t, path)
	if _, err := crashed.BeginKeyedTurn(ctx, "c", "u1", "hi", at, core.MaxAttempts); err != nil {
		t.Fatal(err)
	}
	filing, err := crashed.BeginKeyedTurn(ctx, "c", "u2", "launch it", at, core.MaxAttempts)
	if err != nil {
		t.Fatal(err)
	}
	req := store.Approval{ID: store.NewApprovalID(), Kind: core.KindToolCall, Chat: "c", Turn: filing.Turn, Tool: "launch",
		Args: `{"target":"moon"}`, ArgsHash: "h", Summary: "launch moon", CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	if err := crashed.CreateApproval(ctx, req); err != nil {
		t.Fatal(err)
	}
	for range core.MaxAttempts - 1 {
		if _, err := coretest.Reopen(t, path).BeginKeyedTurn(ctx, "c", "u3", "boom", at, core.MaxAttempts); err != nil {
			t.Fatal(err)
		}
	}
	poisoned := coretest.Reopen(t, path)
	if _, err := poisoned.BeginKeyedTurn(ctx, "c", "u3", "boom", at, core.MaxAttempts); err != nil {
		t.Fatal(err)
	}

	m := &coretest.Model{}
	m.Script(coretest.Reply("hello after all"))
	c := keyedCore(t, coretest.Reopen(t, path), m)
	out, err := c.SendOnce(ctx, "c", "u1", "hi", core.Events{})
	if err != nil || out.Again != core.Rerun || out.Reply != "hello after all" {
		t.Errorf("the cut-short message = %+v, %v; want it run again", out, err)
	}
	if out, err := c.SendOnce(ctx, "c", "u1", "hi", core.Events{}); err != nil || out.Again != core.Replayed || out.Reply != "hello after all" {
		t.Errorf("the rerun message once more = %+v, %v; want it replayed", out, err)
	}
	out, err = c.SendOnce(ctx, "c", "u2", "launch it", core.Events{})
	if err != nil || out.Again != core.CutShort || len(out.Approvals) != 1 || out.Approvals[0].ID != req.ID || !strings.Contains(out.Reply, "send the message again") {
		t.Errorf("the message that had filed a request = %+v, %v; want it not run, its request shown", out, err)
	}
	out, err = c.SendOnce(ctx, "c", "u3", "boom", core.Events{})
	if err != nil || out.Again != core.GaveUp || !strings.Contains(out.Reply, "3 times") {
		t.Errorf("the message cut short %d times = %+v, %v; want it given up", core.MaxAttempts, out, err)
	}
	if n := len(m.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want 1 (only the first message ran again)", n)
	}
	hist, err := coretest.Reopen(t, path).History(ctx, "c", 100000)
	if err != nil || len(hist) != 2 || hist[0].Text != "hi" {
		t.Errorf("history = %+v, %v; want the rerun message once, with its reply", hist, err)
	}
}

// TestSendOnceWhileItRuns: the same message sent while its turn runs is
// refused with ErrRunning, not run beside it.
func TestSendOnceWhileItRuns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	release := make(chan struct{})
	started := make(chan struct{})
	m := &coretest.Model{}
	m.Script(func(ctx context.Context, _ contracts.Request) (contracts.Completion, error) {
		close(started)
		<-release
		return coretest.Completion("slow"), nil
	})
	c := keyedCore(t, coretest.Store(t), m)
	done := make(chan error, 1)
	go func() {
		_, err := c.SendOnce(ctx, "c", "u1", "hi", core.Events{})
		done <- err
	}()
	<-started
	if _, err := c.SendOnce(ctx, "c", "u1", "hi", core.Events{}); !errors.Is(err, core.ErrRunning) {
		t.Errorf("SendOnce while it runs = %v, want ErrRunning", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
