package core

import (
	"context"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
)

// ParkedTurn is a turn parked on a RISKY call whose messages the chat's
// history does not hold yet: its request keeps them until the owner's
// decision is carried out.
type ParkedTurn struct {
	Request string `json:"request"` // the request it waits on
	// State is the request's: pending until the owner decides, then
	// approved, denied or running while the decision is carried out.
	State string `json:"state"`
	Turn  int64  `json:"turn"` // the turn that parked
	// Messages are the parked messages, oldest first: the owner's message
	// first for a new turn, none of the owner's for a continuation that
	// parked again (its exchange is in the history already).
	Messages []contracts.Message `json:"messages"`
}

// Parked returns the turns of chat parked on a RISKY call whose messages
// are not in its history yet, oldest first: what a transport shows of a
// turn that waits for the owner, beside Conversation. It is for showing
// only; the model's history is Conversation's, and when a parked turn's
// messages reach it does not change (exactly once, when the decision is
// carried out).
//
// A request's messages are committed to the history in the transaction
// that closes it (approvals.Exchange.Record, or the turn's end), and a
// request never reopens: so when Parked is read after Conversation, no
// message is in both. (Between an expiry and the turn that records it,
// a moment, the messages are in neither.)
func (r *Reader) Parked(ctx context.Context, chat string) ([]ParkedTurn, error) {
	list, err := r.st.Approvals(ctx, store.ApprovalPending, store.ApprovalApproved, store.ApprovalDenied, store.ApprovalRunning)
	if err != nil {
		return nil, err
	}
	var out []ParkedTurn
	for _, a := range list {
		if a.Kind != KindToolCall || a.Chat != chat {
			continue
		}
		out = append(out, ParkedTurn{Request: a.ID, State: a.State, Turn: a.Turn, Messages: a.Pending.Messages})
	}
	return out, nil
}
