package core_test

// Fast tests of core's promotions and strikes, on the harness of
// approvals_unit_test.go: proposals come through the worker's daemon call,
// and the tools directory is a real selfcode.Dir in t.TempDir().

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/selfcode"
)

const countStarTest = "def test_counts():\n    assert.eq(run(\"a b\"), \"2\")\n"

// propose runs a turn whose model proposes the tool name with code (through
// the worker's propose_tool and the daemon call), and returns the request.
func (u *unit) propose(t *testing.T, name, code string) core.ApprovalView {
	t.Helper()
	args, _ := json.Marshal(coretest.ProposeArgs{Name: name, Code: code, Test: countStarTest, Description: "Count the words in a text."})
	u.model.Script(coretest.Reply("", coretest.Call("p", contracts.ToolProposeTool, string(args))), coretest.Results)
	out, err := u.core.Send(context.Background(), "c", "make me "+name, core.Events{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Approvals) != 1 || !strings.HasPrefix(out.Reply, "RESULTS: propose_tool ok=true proposed "+name) {
		t.Fatalf("propose %s: %+v", name, out)
	}
	// The turn's outcome shows the request as the store holds it.
	if got := out.Approvals[0].State; got != store.ApprovalPending {
		t.Errorf("the proposal in the turn's outcome is %q, want %q", got, store.ApprovalPending)
	}
	return out.Approvals[0]
}

// offered is the names of the tools the model was offered in its latest call.
func (u *unit) offered() []string {
	reqs := u.model.Requests()
	return coretest.Offered(reqs[len(reqs)-1])
}

// TestPromotionApproved: a proposal is staged and put before the owner
// with the whole code and its hash, in the proposing turn's outcome;
// approved, it is live and the next turn's worker gets it.
func TestPromotionApproved(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ctx := context.Background()
		u := newUnit(t, nil)
		v := u.propose(t, "word_count", countStar)
		hash := selfcode.Hash(selfcode.Starlark, countStar, countStarTest)
		if v.Kind != core.KindPromotion || v.Tool != "word_count" {
			t.Errorf("request %+v", v)
		}
		for _, want := range []string{"New tool: word_count (version 1, starlark)", "Content hash: " + hash,
			"Gate: " + coretest.Gate, "def run(text):", "test_counts"} {
			if !strings.Contains(v.Summary, want) {
				t.Errorf("the request lacks %q:\n%s", want, v.Summary)
			}
		}
		if list, _ := u.core.Approvals(ctx); len(list) != 1 || list[0].ID != v.ID || list[0].State != store.ApprovalPending {
			t.Errorf("Approvals: %+v", list)
		}
		if _, err := u.tools.Load(selfcode.StateStaged, "word_count"); err != nil {
			t.Fatalf("not staged: %v", err)
		}
		if slices.Contains(u.offered(), "word_count") {
			t.Error("a staged tool was offered")
		}

		out, err := u.core.Decide(ctx, v.ID, true, "owner", core.Events{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.Reply, "word_count (version 1) is live") {
			t.Errorf("reply %q", out.Reply)
		}
		live, err := u.tools.Load(selfcode.StateLive, "word_count")
		if err != nil || live.Hash != hash || live.ApprovedBy != "owner" {
			t.Fatalf("live: %+v, %v", live.Manifest, err)
		}
		if a := u.approval(t, v.ID); a.State != store.ApprovalDone || a.Outcome != "promoted v1" {
			t.Errorf("request %+v", a)
		}
		want := []string{"tool_proposed:word_count", "tool_call:propose_tool", "approval_approved:word_count", "tool_promoted:word_count"}
		if diff := cmp.Diff(want, u.auditKinds(t, "c")); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}

		u.model.Script(coretest.Reply("", coretest.Call("w", "word_count", `{"text":"one two"}`)), coretest.Results)
		out, err = u.core.Send(ctx, "c", "count", core.Events{})
		if err != nil || out.Reply != "RESULTS: word_count ok=true one two" {
			t.Fatalf("calling the new tool: %q, %v", out.Reply, err)
		}
		jobs := u.sp.Jobs()
		if st := jobs[len(jobs)-1].SelfTools; len(st) != 1 || st[0].Name != "word_count" || st[0].Hash != hash {
			t.Errorf("the next turn's self-coded tools: %+v", st)
		}
	})
}

// TestPromotionDenied: a denied proposal is discarded.
func TestPromotionDenied(t *testing.T) {
	bubble(t, func(t *testing.T) {
		u := newUnit(t, nil)
		v := u.propose(t, "word_count", countStar)
		out, err := u.core.Decide(context.Background(), v.ID, false, "owner", core.Events{})
		if err != nil || out.Reply != "The tool word_count was discarded." {
			t.Fatalf("deny: %q, %v", out.Reply, err)
		}
		for _, state := range []string{selfcode.StateStaged, selfcode.StateLive} {
			if _, err := u.tools.Load(state, "word_count"); !errors.Is(err, selfcode.ErrNotFound) {
				t.Errorf("%s after the denial: %v", state, err)
			}
		}
		if a := u.approval(t, v.ID); a.State != store.ApprovalDone || a.Outcome != "discarded" {
			t.Errorf("request %+v", a)
		}
		if kinds := u.auditKinds(t, "c"); kinds[len(kinds)-1] != "tool_denied:word_count" {
			t.Errorf("audit %v", kinds)
		}
	})
}

// TestPromotionOfChangedCodeIsRefused: the owner approves the code shown;
// if the staged code changed since (proposed again, or edited on disk),
// nothing is promoted.
func TestPromotionOfChangedCodeIsRefused(t *testing.T) {
	t.Parallel()
	other := strings.Replace(countStar, "len(text.split())", "len(text.split()) + 1", 1)
	for name, change := range map[string]func(t *testing.T, u *unit){
		"proposed again": func(t *testing.T, u *unit) { u.propose(t, "word_count", other) },
		"edited on disk": func(t *testing.T, u *unit) {
			path := filepath.Join(u.tools.VersionDir(selfcode.StateStaged, "word_count"), "tool.star")
			if err := os.WriteFile(path, []byte(other), 0o600); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				u := newUnit(t, nil)
				v := u.propose(t, "word_count", countStar)
				change(t, u)
				_, err := u.core.Decide(context.Background(), v.ID, true, "owner", core.Events{})
				if !errors.Is(err, selfcode.ErrMismatch) {
					t.Fatalf("approving changed code: %v", err)
				}
				if _, err := u.tools.Load(selfcode.StateLive, "word_count"); !errors.Is(err, selfcode.ErrNotFound) {
					t.Errorf("something went live: %v", err)
				}
				if a := u.approval(t, v.ID); a.State != store.ApprovalDone || !strings.HasPrefix(a.Outcome, "not promoted: ") {
					t.Errorf("request %+v", a)
				}
			})
		})
	}
}

// TestPromotionExpires: a proposal the owner never decides is discarded at
// its expiry.
func TestPromotionExpires(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ctx := context.Background()
		u := newUnit(t, nil)
		v := u.propose(t, "word_count", countStar)
		time.Sleep(unitTTL)
		if n, err := u.core.ExpireApprovals(ctx); n != 1 || err != nil {
			t.Fatalf("ExpireApprovals: %d, %v", n, err)
		}
		if _, err := u.tools.Load(selfcode.StateStaged, "word_count"); !errors.Is(err, selfcode.ErrNotFound) {
			t.Errorf("an expired proposal is still staged: %v", err)
		}
		if _, err := u.core.Decide(ctx, v.ID, true, "owner", core.Events{}); !errors.Is(err, core.ErrApprovalExpired) {
			t.Errorf("decide after the expiry: %v", err)
		}
	})
}

// TestStrikesQuarantine: each failed call of a self-coded tool is a strike
// (a successful one is not); at Options.Strikes the version is
// quarantined, the owner is told in that turn's reply, and the tool is no
// longer offered; restoring it clears its strikes.
func TestStrikesQuarantine(t *testing.T) {
	bubble(t, func(t *testing.T) {
		ctx := context.Background()
		u := newUnit(t, func(o *core.Options) { o.Strikes = 2 })
		m, err := u.tools.Stage("flaky", selfcode.Starlark, countStar, countStarTest, selfcode.Meta{Description: "Fails at times."}, "passed")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := u.tools.Promote("flaky", m.Hash, "owner"); err != nil {
			t.Fatal(err)
		}
		strikes := func() int {
			n, err := u.store.Strikes(ctx, "flaky", 1)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		turn := func(calls ...contracts.ToolCall) string {
			u.model.Script(coretest.Reply("", calls...), coretest.Results)
			out, err := u.core.Send(ctx, "c", "use flaky", core.Events{})
			if err != nil {
				t.Fatal(err)
			}
			return out.Reply
		}
		failed := "flaky ok=false error: flaky v1: " + coretest.ErrOnDemand.Error()

		reply := turn(coretest.Call("f1", "flaky", `{"text":"fine"}`), coretest.Call("f2", "flaky", `{"fail":true}`))
		if want := "RESULTS: flaky ok=true fine | " + failed; reply != want {
			t.Errorf("first turn: %q, want %q", reply, want)
		}
		if n := strikes(); n != 1 {
			t.Errorf("%d strikes after one failure", n)
		}
		list, _ := u.core.Tools(ctx)
		if i := slices.IndexFunc(list, func(v core.ToolView) bool { return v.Name == "flaky" }); i < 0 || list[i].Strikes != 1 || list[i].State != selfcode.StateLive {
			t.Errorf("core.Tools: %+v", list)
		}

		reply = turn(coretest.Call("f3", "flaky", `{"fail":true}`))
		note := "Note from shelldon: the tool flaky (version 1) failed 2 times and was quarantined; `shelldon tools restore flaky` brings it back."
		if want := "RESULTS: " + failed + "\n\n" + note; reply != want {
			t.Errorf("second turn: %q, want %q", reply, want)
		}
		if _, err := u.tools.Load(selfcode.StateQuarantined, "flaky"); err != nil {
			t.Errorf("not quarantined: %v", err)
		}
		want := []string{"tool_call:flaky", "tool_call:flaky", "tool_strike:flaky", "tool_call:flaky", "tool_strike:flaky", "tool_quarantined:flaky"}
		if diff := cmp.Diff(want, u.auditKinds(t, "c")); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}

		u.model.Script(coretest.Reply("without it"))
		if _, err := u.core.Send(ctx, "c", "again", core.Events{}); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(u.offered(), "flaky") {
			t.Errorf("a quarantined tool was offered: %v", u.offered())
		}

		if _, err := u.core.ToolAction(ctx, "restore", "flaky", "owner"); err != nil {
			t.Fatal(err)
		}
		if n := strikes(); n != 0 {
			t.Errorf("%d strikes after the restore", n)
		}
		u.model.Script(coretest.Reply("with it"))
		if _, err := u.core.Send(ctx, "c", "and now", core.Events{}); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(u.offered(), "flaky") {
			t.Errorf("a restored tool is not offered: %v", u.offered())
		}
	})
}
