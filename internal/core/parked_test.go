package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/core/store"
)

// shown is what a transport shows of chat, read as Parked's doc says
// (Conversation first): each owner's message with how many times it is in
// the history and in the parked turns.
func shown(t *testing.T, c *core.Core, chat string) (history, parked map[string]int, turns []core.ParkedTurn) {
	t.Helper()
	ctx := context.Background()
	msgs, err := c.Conversation(ctx, chat, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	turns, err = c.Parked(ctx, chat)
	if err != nil {
		t.Fatal(err)
	}
	history, parked = map[string]int{}, map[string]int{}
	for _, m := range msgs {
		if m.Role == contracts.RoleUser {
			history[m.Text]++
		}
	}
	for _, p := range turns {
		for _, m := range p.Messages {
			if m.Role == contracts.RoleUser {
				parked[m.Text]++
			}
		}
	}
	return history, parked, turns
}

// TestParkedTurnsAreShownOnce: while a turn waits for the owner, its
// messages are the request's, not the history's, and Parked returns them
// (the owner's first); once the decision is carried out (approved, denied,
// parked again or expired) they are in the history and Parked no longer
// has them: the owner's message is in exactly one of the two at every
// step. Another chat's parked turn is not listed.
func TestParkedTurnsAreShownOnce(t *testing.T) {
	type step func(t *testing.T, u *unit, id string)
	decide := func(approve bool) step {
		return func(t *testing.T, u *unit, id string) {
			u.model.Script(coretest.Results)
			if _, err := u.core.Decide(context.Background(), id, approve, "owner", core.Events{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name  string
		then  step
		again bool // the continuation parks again
		gone  bool // the other chat's request is closed too (it expired)
	}{
		{"approved", decide(true), false, false},
		{"denied", decide(false), false, false},
		{"parked again", func(t *testing.T, u *unit, id string) {
			u.model.Script(coretest.Reply("And another.", coretest.Call("c9", "launch", `{"target":"two"}`)))
			out, err := u.core.Decide(context.Background(), id, true, "owner", core.Events{})
			if err != nil || len(out.Approvals) != 1 {
				t.Fatalf("the continuation did not park again: %+v %v", out, err)
			}
		}, true, false},
		{"expired", func(t *testing.T, u *unit, _ string) {
			time.Sleep(unitTTL)
			if n, err := u.core.ExpireApprovals(context.Background()); n != 2 || err != nil {
				t.Fatalf("ExpireApprovals: %d, %v; want both chats' requests", n, err)
			}
		}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				u := newUnit(t, nil)
				// Another chat's parked turn is never listed for "c".
				u.model.Script(coretest.Reply("", coretest.Call("x1", "launch", `{"target":"elsewhere"}`)))
				if out, err := u.core.Send(context.Background(), "other", "not this chat", core.Events{}); err != nil || len(out.Approvals) != 1 {
					t.Fatalf("park in another chat: %+v %v", out, err)
				}
				out := u.park(t, "c", modelArgs)
				id := out.Approvals[0].ID

				history, parked, turns := shown(t, u.core, "c")
				if history["launch it"] != 0 || parked["launch it"] != 1 || len(turns) != 1 {
					t.Fatalf("parked: the owner's message %d times in the history, %d in the parked turns %+v", history["launch it"], parked["launch it"], turns)
				}
				p := turns[0]
				if p.Request != id || p.State != store.ApprovalPending || p.Turn != out.Turn {
					t.Errorf("parked turn %+v; want request %s, pending, turn %d", p, id, out.Turn)
				}
				var roles []contracts.Role
				for _, m := range p.Messages {
					roles = append(roles, m.Role)
				}
				if len(roles) == 0 || roles[0] != contracts.RoleUser || p.Messages[0].Text != "launch it" {
					t.Errorf("the parked messages do not start with the owner's: %v %+v", roles, p.Messages)
				}

				tc.then(t, u, id)

				history, parked, turns = shown(t, u.core, "c")
				if history["launch it"] != 1 || parked["launch it"] != 0 {
					t.Errorf("after the decision: the owner's message %d times in the history, %d in the parked turns", history["launch it"], parked["launch it"])
				}
				var requests []string
				for _, p := range turns {
					requests = append(requests, p.Request)
					if p.Request == id {
						t.Errorf("the decided request %s is still listed as parked: %+v", id, p)
					}
				}
				if tc.again != (len(turns) == 1) {
					t.Errorf("parked turns after the decision: %v (parked again: %v)", requests, tc.again)
				}
				if tc.again && len(turns) == 1 && (len(turns[0].Messages) == 0 || turns[0].Messages[0].Role != contracts.RoleAssistant) {
					t.Errorf("the second park's messages: %+v; want the model's, from after the recorded exchange", turns[0].Messages)
				}
				if got, _ := u.core.Parked(context.Background(), "nobody"); len(got) != 0 {
					t.Errorf("Parked of a chat with none: %+v", got)
				}
				other, err := u.core.Parked(context.Background(), "other")
				switch {
				case err != nil:
					t.Errorf("Parked(other): %v", err)
				case tc.gone && len(other) != 0:
					t.Errorf("Parked(other) after its request expired: %+v", other)
				case !tc.gone && (len(other) != 1 || other[0].Messages[0].Text != "not this chat"):
					t.Errorf("Parked(other) = %+v", other)
				}
			})
		})
	}
}
