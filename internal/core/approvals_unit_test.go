package core_test

// Fast tests of core's approvals: the real worker loop runs in-process
// (coretest), the store is a real SQLite file, and the clock is the one of
// a testing/synctest bubble, passed in as core.Options.Now.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// unitTTL is how long a request waits for the owner in these tests.
const unitTTL = 10 * time.Minute

// unit is a core whose workers run in-process, with the fake tools of
// coretest: echo (FREE), launch (RISKY, its runs recorded), the live
// self-coded tools' stand-ins and propose_tool.
type unit struct {
	core  *core.Core
	opts  core.Options
	store *store.Store
	path  string // of the store, for a restart (crash)
	model *coretest.Model
	sp    *coretest.Spawner
	risky *coretest.Risky
	tools *selfcode.Dir
}

// bubble runs f in a synctest bubble, in parallel with other tests.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Parallel()
	synctest.Test(t, f)
}

// newUnit builds a unit; it runs inside the bubble, so the store, the
// workers and the clock are the bubble's.
func newUnit(t *testing.T, tune func(*core.Options)) *unit {
	t.Helper()
	tools, err := selfcode.Open(filepath.Join(t.TempDir(), "tools"), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	path := coretest.StorePath(t)
	u := &unit{store: coretest.Reopen(t, path), path: path, model: &coretest.Model{}, risky: coretest.NewRisky("launch"), tools: tools}
	u.sp = &coretest.Spawner{Build: coretest.Builder(coretest.Echo("echo"), u.risky.Tools, coretest.SelfTools, coretest.Propose)}
	u.opts = core.Options{
		Store: u.store, Model: u.model, Spawner: u.sp, Tools: tools, ApprovalTTL: unitTTL,
		Logger: slog.New(slog.DiscardHandler),
		Now:    time.Now, // inside the bubble: synctest's clock
		Describe: func(_ context.Context, call contracts.ToolCall) []string {
			return []string{"Checked by the daemon: " + call.Name}
		},
	}
	if tune != nil {
		tune(&u.opts)
	}
	u.restart(t)
	return u
}

// crash replaces the core with a new one over a new handle on the same
// store and tools, as a daemon's after a crash: what the old handle held
// (turns, leases) is free to take over.
func (u *unit) crash(t *testing.T) {
	t.Helper()
	u.store = coretest.Reopen(t, u.path)
	u.opts.Store = u.store
	u.restart(t)
}

// restart replaces the core with a new one over the same store and
// tools, as a restarted daemon's.
func (u *unit) restart(t *testing.T) {
	t.Helper()
	c, err := core.New(u.opts)
	if err != nil {
		t.Fatal(err)
	}
	u.core = c
}

// park runs a turn of chat whose model asks for echo, the RISKY launch with
// args and echo again, and returns its outcome: parked at launch.
func (u *unit) park(t *testing.T, chat, args string) core.Outcome {
	t.Helper()
	u.model.Script(coretest.Reply("On it.",
		coretest.Call("c0", "echo", `{"text":"before"}`),
		coretest.Call("c1", "launch", args),
		coretest.Call("c2", "echo", `{"text":"after"}`)))
	out, err := u.core.Send(context.Background(), chat, "launch it", core.Events{})
	if err != nil || out.Stopped != contracts.StopApproval || len(out.Approvals) != 1 {
		t.Fatalf("park: %+v, %v", out, err)
	}
	return out
}

func (u *unit) approval(t *testing.T, id string) store.Approval {
	t.Helper()
	a, err := u.store.Approval(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// auditKinds lists the kinds of chat's audit trail, oldest first, with the
// tool after a colon.
func (u *unit) auditKinds(t *testing.T, chat string) []string {
	t.Helper()
	rows, err := u.store.Audit(context.Background(), store.AuditQuery{Chat: chat})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(rows) - 1; i >= 0; i-- {
		out = append(out, rows[i].Kind+":"+rows[i].Tool)
	}
	return out
}

// modelArgs are launch's arguments as the model sends them; canonArgs as the
// owner approves them (filtered to the schema, canonical).
const (
	modelArgs = `{ "target": "notes/todo.txt", "extra": 1, "content": "buy milk\u202e" }`
	canonArgs = "{\"content\":\"buy milk\u202e\",\"target\":\"notes/todo.txt\"}"
)

// TestParkThenApprove: a RISKY call parks the turn with the daemon's
// rendering of the exact call; approving runs that call once, with exactly
// the approved arguments, and the turn goes on with every call answered.
func TestParkThenApprove(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ctx := context.Background()
		start := time.Now()
		u := newUnit(t, nil)
		out := u.park(t, "c", modelArgs)

		v := out.Approvals[0]
		if v.Kind != store.KindToolCall || v.Tool != "launch" || v.State != store.ApprovalPending ||
			!v.CreatedAt.Equal(start) || !v.ExpiresAt.Equal(start.Add(unitTTL)) {
			t.Errorf("request %+v", v)
		}
		// The daemon's rendering: the canonical arguments escaped, its own
		// facts, the model's words labeled; nothing filtered out shows.
		for _, want := range []string{"Tool: launch\n", `buy milk\u202e`, "notes/todo.txt",
			"Checked by the daemon: launch", "The model's words (not shelldon's): On it."} {
			if !strings.Contains(v.Summary, want) {
				t.Errorf("the request lacks %q:\n%s", want, v.Summary)
			}
		}
		if strings.Contains(v.Summary, "\u202e") || strings.Contains(v.Summary, "extra") {
			t.Errorf("the request shows what it must not:\n%s", v.Summary)
		}
		if !strings.HasPrefix(out.Reply, "This needs your approval (request "+v.ID) || !strings.HasSuffix(out.Reply, v.Summary) {
			t.Errorf("reply %q", out.Reply)
		}
		if a := u.approval(t, v.ID); a.Args != canonArgs {
			t.Errorf("approved args %q, want %q", a.Args, canonArgs)
		}
		pending, err := u.core.Approvals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]core.ApprovalView{v}, pending); diff != "" {
			t.Errorf("Approvals (-parked +listed):\n%s", diff)
		}
		if info, _ := u.store.Turn(ctx, out.Turn); info.Status != contracts.StopApproval {
			t.Errorf("parked turn status %q", info.Status)
		}
		if runs := u.risky.Runs(); len(runs) != 0 {
			t.Fatalf("launch ran before the owner decided: %q", runs)
		}

		u.model.Script(coretest.Results)
		var events []string
		res, err := u.core.Decide(ctx, v.ID, true, "owner", core.Events{Tool: func(ev contracts.ToolEvent) {
			events = append(events, ev.Phase+":"+ev.Tool)
		}})
		if err != nil {
			t.Fatal(err)
		}
		// The FREE call before it ran at park time, the one after it was
		// dropped, and launch ran once with exactly the approved arguments.
		if want := "RESULTS: echo ok=true before | launch ok=true changed notes/todo.txt"; res.Reply != want {
			t.Errorf("resumed reply %q, want %q", res.Reply, want)
		}
		if diff := cmp.Diff([]string{canonArgs}, u.risky.Runs()); diff != "" {
			t.Errorf("launch's runs (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"start:launch", "end:launch"}, events); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		a := u.approval(t, v.ID)
		if a.State != store.ApprovalDone || a.Outcome != "executed ok" || a.DecidedBy != "owner" || a.ResumedTurn != res.Turn {
			t.Errorf("request after the run: %+v", a)
		}
		want := []string{"tool_call:echo", "approval_requested:launch", "approval_approved:launch", "tool_call:launch", "approval_executed:launch"}
		if diff := cmp.Diff(want, u.auditKinds(t, "c")); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}

		// The next turn's context holds the whole exchange, every call
		// answered.
		u.model.Script(coretest.Reply("you're welcome"))
		if _, err := u.core.Send(ctx, "c", "thanks", core.Events{}); err != nil {
			t.Fatal(err)
		}
		reqs := u.model.Requests()
		var calls, results []string
		for _, m := range reqs[len(reqs)-1].Messages {
			for _, c := range m.ToolCalls {
				calls = append(calls, c.ID)
			}
			for _, r := range m.ToolResults {
				results = append(results, r.CallID)
			}
		}
		if diff := cmp.Diff([]string{"c0", "c1"}, calls); diff != "" || !cmp.Equal(calls, results) {
			t.Errorf("the next turn's context: calls %v, results %v", calls, results)
		}
	})
}

// TestDenyNeverRuns: a denied call never runs; the model is told "denied by
// owner" and the turn goes on.
func TestDenyNeverRuns(t *testing.T) {
	bubble(t, func(t *testing.T) {
		u := newUnit(t, nil)
		id := u.park(t, "c", modelArgs).Approvals[0].ID
		u.model.Script(coretest.Results)
		out, err := u.core.Decide(context.Background(), id, false, "owner", core.Events{})
		if err != nil {
			t.Fatal(err)
		}
		if want := "RESULTS: echo ok=true before | launch ok=false " + contracts.DeniedByOwner; out.Reply != want {
			t.Errorf("reply %q, want %q", out.Reply, want)
		}
		if runs := u.risky.Runs(); len(runs) != 0 {
			t.Errorf("a denied call ran: %q", runs)
		}
		if a := u.approval(t, id); a.State != store.ApprovalDone || a.Outcome != store.ApprovalDenied {
			t.Errorf("request %+v", a)
		}
		want := []string{"tool_call:echo", "approval_requested:launch", "approval_denied:launch"}
		if diff := cmp.Diff(want, u.auditKinds(t, "c")); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
	})
}

// TestDecisionIsUsedOnce: of many simultaneous approvals one wins and the
// call runs once; every later decision, either way, is ErrAlreadyDecided;
// an unknown id is ErrUnknownApproval.
func TestDecisionIsUsedOnce(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ctx := context.Background()
		u := newUnit(t, nil)
		id := u.park(t, "c", modelArgs).Approvals[0].ID
		u.model.Script(coretest.Results)
		errs := make(chan error)
		const taps = 8
		for range taps {
			go func() {
				_, err := u.core.Decide(ctx, id, true, "owner", core.Events{})
				errs <- err
			}()
		}
		won := 0
		for range taps {
			switch err := <-errs; {
			case err == nil:
				won++
			case !errors.Is(err, core.ErrAlreadyDecided):
				t.Errorf("a losing decision: %v", err)
			}
		}
		if won != 1 {
			t.Errorf("%d decisions won", won)
		}
		for _, approve := range []bool{true, false} {
			if _, err := u.core.Decide(ctx, id, approve, "owner", core.Events{}); !errors.Is(err, core.ErrAlreadyDecided) {
				t.Errorf("decision again (approve %v): %v", approve, err)
			}
		}
		if _, err := u.core.Decide(ctx, "nosuchrequest0000000000000", true, "owner", core.Events{}); !errors.Is(err, core.ErrUnknownApproval) {
			t.Errorf("unknown request: %v", err)
		}
		if diff := cmp.Diff([]string{canonArgs}, u.risky.Runs()); diff != "" {
			t.Errorf("launch's runs (-want +got):\n%s", diff)
		}
		if u.model.Left() != 0 {
			t.Errorf("the resumed turn did not run")
		}
	})
}

// TestRequestExpires: a request can be decided until its TTL is over; at
// the TTL it is no longer listed or decidable, ExpireApprovals closes it
// (audit, history) and the call never runs.
func TestRequestExpires(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ctx := context.Background()
		u := newUnit(t, nil)
		id := u.park(t, "c", modelArgs).Approvals[0].ID

		time.Sleep(unitTTL - time.Second)
		if list, _ := u.core.Approvals(ctx); len(list) != 1 {
			t.Fatalf("a second before its expiry the request is not listed: %+v", list)
		}
		if n, err := u.core.ExpireApprovals(ctx); n != 0 || err != nil {
			t.Fatalf("ExpireApprovals a second early: %d, %v", n, err)
		}

		time.Sleep(time.Second)
		if list, _ := u.core.Approvals(ctx); len(list) != 0 {
			t.Errorf("an expired request is listed: %+v", list)
		}
		if _, err := u.core.Decide(ctx, id, true, "owner", core.Events{}); !errors.Is(err, core.ErrApprovalExpired) {
			t.Fatalf("decide at the expiry: %v", err)
		}
		if n, err := u.core.ExpireApprovals(ctx); n != 1 || err != nil {
			t.Fatalf("ExpireApprovals: %d, %v", n, err)
		}
		if n, _ := u.core.ExpireApprovals(ctx); n != 0 {
			t.Errorf("expired twice")
		}
		if a := u.approval(t, id); a.State != store.ApprovalExpired {
			t.Errorf("request %+v", a)
		}
		if _, err := u.core.Decide(ctx, id, true, "owner", core.Events{}); !errors.Is(err, core.ErrApprovalExpired) {
			t.Errorf("decide after ExpireApprovals: %v", err)
		}
		if runs := u.risky.Runs(); len(runs) != 0 {
			t.Errorf("an expired call ran: %q", runs)
		}
		if kinds := u.auditKinds(t, "c"); kinds[len(kinds)-1] != "approval_expired:launch" {
			t.Errorf("audit %v", kinds)
		}
		// The conversation was completed: the next turn sees the call
		// answered as not run, and shelldon's note.
		u.model.Script(coretest.Reply("ok"))
		if _, err := u.core.Send(ctx, "c", "and now?", core.Events{}); err != nil {
			t.Fatal(err)
		}
		reqs := u.model.Requests()
		var seen []string
		for _, m := range reqs[len(reqs)-1].Messages {
			for _, r := range m.ToolResults {
				seen = append(seen, r.CallID+" "+r.Content)
			}
			if m.Role == contracts.RoleAssistant && m.Text != "" || strings.HasPrefix(m.Text, "[shelldon: ") {
				seen = append(seen, m.Text)
			}
		}
		want := []string{"On it.", "c0 before", "c1 not run: the owner did not decide before the request expired",
			"[shelldon: the owner did not decide on request " + id + " (launch) before it expired; nothing was run.]"}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("the next turn's context (-want +got):\n%s", diff)
		}
	})
}

// TestRecoverAfterCrash: what a crash left between a decision and its end
// is finished at the next start: an approved call that never ran runs once,
// a call that was running is not retried (the model is told), a denial is
// carried out, and a pending request stays pending.
func TestRecoverAfterCrash(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ctx := context.Background()
		u := newUnit(t, nil)
		ids := map[string]string{}
		for _, chat := range []string{"approved", "running", "claimed", "denied", "pending"} {
			ids[chat] = u.park(t, chat, `{"target":"`+chat+`"}`).Approvals[0].ID
		}
		// The daemon committed these decisions, then died (the desk's
		// first step of Decide, then nothing); it had claimed one call
		// and recorded that it started, and claimed another that never
		// started.
		for chat, approve := range map[string]bool{"approved": true, "running": true, "claimed": true, "denied": false} {
			if _, err := u.store.Decide(ctx, ids[chat], approve, "owner", time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		for _, chat := range []string{"running", "claimed"} {
			if err := u.store.Claim(ctx, ids[chat], store.ApprovalApproved, store.ApprovalRunning, ""); err != nil {
				t.Fatal(err)
			}
		}
		if err := u.store.MarkStarted(ctx, ids["running"], time.Now().UnixNano()); err != nil {
			t.Fatal(err)
		}
		// While the daemon lives, its work is its own.
		if n, err := u.core.RecoverApprovals(ctx); n != 0 || err != nil {
			t.Fatalf("RecoverApprovals under a live holder: %d, %v", n, err)
		}

		u.crash(t)
		// No transport waits for the turns recovery carries on: each
		// outcome goes to OnRecovered, for the chat's channel.
		delivered := map[string]string{}
		u.core.OnRecovered(func(chat string, out core.Outcome) { delivered[chat] = out.Reply })
		u.model.Script(coretest.Results, coretest.Results, coretest.Results, coretest.Results)
		if n, err := u.core.RecoverApprovals(ctx); n != 4 || err != nil {
			t.Fatalf("RecoverApprovals: %d, %v", n, err)
		}
		if diff := cmp.Diff(map[string]string{
			"approved": "RESULTS: echo ok=true before | launch ok=true changed approved",
			"claimed":  "RESULTS: echo ok=true before | launch ok=true changed claimed",
			"running":  "RESULTS: echo ok=true before | launch ok=false " + core.MayHaveRun,
			"denied":   "RESULTS: echo ok=true before | launch ok=false " + contracts.DeniedByOwner,
		}, delivered); diff != "" {
			t.Errorf("the recovered turns' outcomes delivered (-want +got):\n%s", diff)
		}
		runs := u.risky.Runs()
		slices.Sort(runs)
		if diff := cmp.Diff([]string{`{"target":"approved"}`, `{"target":"claimed"}`}, runs); diff != "" {
			t.Errorf("launch's runs (-want +got):\n%s", diff)
		}
		for chat, want := range map[string][2]string{
			"approved": {store.ApprovalDone, "executed ok"},
			"claimed":  {store.ApprovalDone, "executed ok"},
			"running":  {store.ApprovalDone, core.MayHaveRun},
			"denied":   {store.ApprovalDone, store.ApprovalDenied},
			"pending":  {store.ApprovalPending, ""},
		} {
			if a := u.approval(t, ids[chat]); a.State != want[0] || a.Outcome != want[1] {
				t.Errorf("%s: %s %q, want %s %q", chat, a.State, a.Outcome, want[0], want[1])
			}
		}
		// What each resumed turn told the model of the parked call.
		told := map[string]bool{}
		for _, req := range u.model.Requests() {
			for _, r := range req.Messages[len(req.Messages)-1].ToolResults {
				if r.Name == "launch" {
					told[r.Content] = true
				}
			}
		}
		for _, want := range []string{"changed approved", "changed claimed", core.MayHaveRun, contracts.DeniedByOwner} {
			if !told[want] {
				t.Errorf("no resumed turn told the model %q: %v", want, told)
			}
		}
		// Recovering again finds nothing left to do.
		if n, err := u.core.RecoverApprovals(ctx); n != 0 || err != nil {
			t.Errorf("RecoverApprovals again: %d, %v", n, err)
		}
		if runs := u.risky.Runs(); len(runs) != 2 {
			t.Errorf("launch ran %d times", len(runs))
		}
	})
}

// TestDecisionWaitsForASlot: with the only worker slot taken by a turn, a
// decision is committed at once but waits for the slot to run the call,
// then runs it once.
func TestDecisionWaitsForASlot(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ctx := context.Background()
		u := newUnit(t, func(o *core.Options) { o.Workers = 1 })
		id := u.park(t, "a", modelArgs).Approvals[0].ID

		release := make(chan struct{})
		u.model.Script(func(context.Context, contracts.Request) (contracts.Completion, error) {
			<-release // a long turn holds the only slot
			return coretest.Completion("long turn done"), nil
		}, coretest.Results)
		longDone := make(chan error)
		go func() {
			_, err := u.core.Send(ctx, "b", "think long", core.Events{})
			longDone <- err
		}()
		synctest.Wait() // the long turn waits on its model call
		decided := make(chan error)
		go func() {
			_, err := u.core.Decide(ctx, id, true, "owner", core.Events{})
			decided <- err
		}()
		synctest.Wait() // the decision waits for the slot
		if a := u.approval(t, id); a.State != store.ApprovalApproved {
			t.Errorf("the decision is not committed while it waits: %s", a.State)
		}
		if runs := u.risky.Runs(); len(runs) != 0 {
			t.Fatalf("the call ran while the only slot was busy: %q", runs)
		}
		close(release)
		if err := <-longDone; err != nil {
			t.Fatal(err)
		}
		if err := <-decided; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{canonArgs}, u.risky.Runs()); diff != "" {
			t.Errorf("launch's runs (-want +got):\n%s", diff)
		}
	})
}

// TestGuardRefusalIsAudited: a RISKY call its guard refuses is not put to
// the owner; it leaves an audit row naming the guard and the reason, an
// end event for the transport, and a line in the turn's reply.
func TestGuardRefusalIsAudited(t *testing.T) {
	bubble(t, func(t *testing.T) {
		u := newUnit(t, nil)
		u.model.Script(
			coretest.Reply("", coretest.Call("c1", "launch", `{"target":"`+coretest.RiskyForbidden+`"}`)),
			coretest.Reply("It was refused."))
		var events []contracts.ToolEvent
		out, err := u.core.Send(context.Background(), "g", "launch it", core.Events{Tool: func(te contracts.ToolEvent) { events = append(events, te) }})
		if err != nil || len(out.Approvals) != 0 || out.Stopped != "" {
			t.Fatalf("outcome %+v, %v", out, err)
		}
		if !strings.Contains(out.Reply, "shelldon refused a launch call before asking you: refused by "+coretest.RiskyGuard+": that target is forbidden") {
			t.Errorf("reply %q", out.Reply)
		}
		if len(events) != 1 || events[0].Phase != contracts.PhaseEnd || events[0].Guard != coretest.RiskyGuard || events[0].OK {
			t.Errorf("events %+v", events)
		}
		rows, _ := u.store.Audit(context.Background(), store.AuditQuery{Chat: "g"})
		if len(rows) != 1 || rows[0].Kind != "tool_refused" || rows[0].Tool != "launch" ||
			!strings.Contains(rows[0].Args, coretest.RiskyForbidden) || !strings.Contains(rows[0].Summary, coretest.RiskyGuard) {
			t.Fatalf("audit %+v", rows)
		}
		if runs := u.risky.Runs(); len(runs) != 0 {
			t.Errorf("the refused call ran: %v", runs)
		}
	})
}

// TestExchangeInHistoryBeforeTheModel: when the owner's decision is carried
// out, the exchange (the owner's message, the call, its result or the
// denial) is in the chat's history, once, before the continuation asks the
// model, so a daemon killed during the continuation loses none of it; the
// finished turn does not add it again.
func TestExchangeInHistoryBeforeTheModel(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(fmt.Sprint("approve=", approve), func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				ctx := context.Background()
				u := newUnit(t, nil)
				id := u.park(t, "c", modelArgs).Approvals[0].ID
				want := contracts.DeniedByOwner
				if approve {
					want = "changed notes/todo.txt"
				}
				count := func(h []contracts.Message) (user, results int) {
					for _, m := range h {
						if m.Role == contracts.RoleUser && m.Text == "launch it" {
							user++
						}
						for _, r := range m.ToolResults {
							if r.CallID == "c1" && r.Content == want {
								results++
							}
						}
					}
					return
				}
				var seen [2]int
				u.model.Script(func(ctx context.Context, req contracts.Request) (contracts.Completion, error) {
					// What a restarted daemon would find now, mid-continuation.
					other := coretest.Reopen(t, u.path)
					h, err := other.History(ctx, "c", 100000)
					if err != nil {
						return contracts.Completion{}, err
					}
					seen[0], seen[1] = count(h)
					a, _ := other.Approval(ctx, id)
					if a.State != store.ApprovalDone {
						t.Errorf("the request is %s while the continuation asks the model", a.State)
					}
					return coretest.Completion("done"), nil
				})
				if _, err := u.core.Decide(ctx, id, approve, "owner", core.Events{}); err != nil {
					t.Fatal(err)
				}
				if seen != [2]int{1, 1} {
					t.Errorf("before the model was asked, the history held the owner's message %d times and the result %d times", seen[0], seen[1])
				}
				h, _ := u.store.History(ctx, "c", 100000)
				if user, results := count(h); user != 1 || results != 1 {
					t.Errorf("after the turn: the owner's message %d times, the result %d times", user, results)
				}
			})
		})
	}
}

// TestContinuationParksAgain: a continuation that parks at a second RISKY
// call keeps the first exchange in its own turn; deciding the second
// records only what follows, so every message is in the history once.
func TestContinuationParksAgain(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ctx := context.Background()
		u := newUnit(t, nil)
		first := u.park(t, "c", `{"target":"one"}`).Approvals[0].ID
		u.model.Script(coretest.Reply("And another.", coretest.Call("c9", "launch", `{"target":"two"}`)))
		out, err := u.core.Decide(ctx, first, true, "owner", core.Events{})
		if err != nil || len(out.Approvals) != 1 {
			t.Fatalf("the continuation did not park again: %+v %v", out, err)
		}
		u.model.Script(coretest.Results)
		if _, err := u.core.Decide(ctx, out.Approvals[0].ID, true, "owner", core.Events{}); err != nil {
			t.Fatal(err)
		}
		h, err := u.store.History(ctx, "c", 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, m := range h {
			if m.Role == contracts.RoleUser {
				seen["user:"+m.Text]++
			}
			for _, c := range m.ToolCalls {
				seen["call:"+c.ID]++
			}
			for _, r := range m.ToolResults {
				seen["result:"+r.CallID]++
			}
		}
		for _, key := range []string{"user:launch it", "call:c1", "result:c1", "call:c9", "result:c9"} {
			if seen[key] != 1 {
				t.Errorf("%s is in the history %d times: %v", key, seen[key], seen)
			}
		}
		if diff := cmp.Diff([]string{`{"target":"one"}`, `{"target":"two"}`}, u.risky.Runs()); diff != "" {
			t.Errorf("launch's runs (-want +got):\n%s", diff)
		}
	})
}
