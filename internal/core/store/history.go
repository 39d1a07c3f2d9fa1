package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/contracts"
)

// History returns the conversation of chat to send the model with the next
// turn, oldest first: the most recent whole finished turns whose messages fit
// in budgetChars (counted as runes of text, tool arguments and tool results).
//
// If the newest turn alone exceeds the budget, only its user message and its
// last assistant text (without tool calls) are returned, cut to fit. Within a
// turn, a tool call without its result and a result without its call are
// dropped, so the history never holds an orphan either way (a cancelled turn
// can end between the two). A budget of zero or less returns nothing.
func (s *Store) History(ctx context.Context, chat string, budgetChars int) ([]contracts.Message, error) {
	if budgetChars <= 0 {
		return nil, nil
	}
	rows, err := s.stmt(ctx, nil, hotHistoryTurns).QueryContext(ctx, chat)
	if err != nil {
		return nil, fmt.Errorf("store: history of %q: %w", chat, err)
	}
	var (
		picked    = map[int64]int{} // turn → its messages
		total     int
		oversized bool
	)
	for rows.Next() {
		var (
			id       int64
			n, count int
		)
		if err := rows.Scan(&id, &n, &count); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("store: history of %q: %w", chat, err)
		}
		if total+n > budgetChars {
			if len(picked) == 0 {
				oversized = true
				picked[id] = count
			}
			break
		}
		total += n
		picked[id] = count
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("store: history of %q: %w", chat, err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: history of %q: %w", chat, err)
	}
	if len(picked) == 0 {
		return nil, nil
	}
	turns, err := s.history.turns(chat, picked, func(missing map[int64]int, lo, hi int64) (map[int64][]contracts.Message, error) {
		return s.messages(ctx, chat, lo, hi, missing)
	})
	if err != nil {
		return nil, fmt.Errorf("store: history of %q: %w", chat, err)
	}
	if oversized && len(turns) > 0 {
		return trimTurn(turns[0], budgetChars), nil
	}
	n := 0
	for _, t := range turns {
		n += len(t)
	}
	out := make([]contracts.Message, 0, n)
	for _, t := range turns {
		out = append(out, repair(t)...)
	}
	return out, nil
}

// messages loads the messages of the picked turns of chat between lo and hi,
// by turn. A turn that finished after History chose its turns is left out
// even when its id lies in the range.
func (s *Store) messages(ctx context.Context, chat string, lo, hi int64, picked map[int64]int) (map[int64][]contracts.Message, error) {
	rows, err := s.stmt(ctx, nil, hotHistoryMessages).QueryContext(ctx, chat, lo, hi)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var (
		out  = map[int64][]contracts.Message{}
		body sql.RawBytes // one buffer for every row: decodeMessage copies what it keeps
	)
	for rows.Next() {
		var turn int64
		if err := rows.Scan(&turn, &body); err != nil {
			return nil, err
		}
		if _, ok := picked[turn]; !ok {
			continue
		}
		m, err := decodeMessage(body)
		if err != nil {
			return nil, fmt.Errorf("turn %d: decode message: %w", turn, err)
		}
		out[turn] = append(out[turn], m)
	}
	return out, rows.Err()
}

// historyChats is how many chats' histories a Store keeps decoded.
const historyChats = 4

// historyCache keeps, for the chats of the latest History calls, the
// decoded messages of the turns each call picked, so that the next call
// reads only the turns' ids and sizes, and the messages of the turns it has
// not seen (at steady state, the one turn since). It is exact: a turn's
// messages are only ever appended (RecordExchange, then FinishTurn), in the
// transaction that adds their number to the turn's messages column, so a
// turn held with the number the database still gives holds all of them.
// What it holds is bounded by the budget of those calls, per chat.
type historyCache struct {
	mu    sync.Mutex
	chats map[string]map[int64]heldTurn
	order []string // least recently used first
}

// heldTurn is a turn's messages and how many the database said it had.
type heldTurn struct {
	count int
	msgs  []contracts.Message
}

// turns returns the messages of the picked turns of chat (turn → its
// messages column), oldest first, those it does not hold read by load
// (the turns missing, and the lowest and highest of them), and holds them
// for the next call in place of what it held for chat.
func (c *historyCache) turns(chat string, picked map[int64]int,
	load func(missing map[int64]int, lo, hi int64) (map[int64][]contracts.Message, error)) ([][]contracts.Message, error) {
	c.mu.Lock()
	held := c.chats[chat]
	c.mu.Unlock()
	got := make(map[int64][]contracts.Message, len(picked))
	missing := map[int64]int{}
	var lo, hi int64
	for id, count := range picked {
		if h, ok := held[id]; ok && h.count == count {
			got[id] = h.msgs
			continue
		}
		missing[id] = count
		if lo == 0 || id < lo {
			lo = id
		}
		hi = max(hi, id)
	}
	if len(missing) > 0 {
		loaded, err := load(missing, lo, hi)
		if err != nil {
			return nil, err
		}
		for id, msgs := range loaded {
			got[id] = msgs
		}
	}
	ids := make([]int64, 0, len(got))
	next := make(map[int64]heldTurn, len(got))
	for id, msgs := range got {
		ids = append(ids, id)
		if len(msgs) == picked[id] {
			next[id] = heldTurn{count: picked[id], msgs: msgs}
		}
	}
	slices.Sort(ids)
	out := make([][]contracts.Message, len(ids))
	for i, id := range ids {
		out[i] = slices.Clip(got[id])
	}
	c.hold(chat, next)
	return out, nil
}

// forget drops all that c holds.
func (c *historyCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chats, c.order = nil, nil
}

// hold keeps turns as chat's, dropping the chat used least recently when
// more than historyChats are held.
func (c *historyCache) hold(chat string, turns map[int64]heldTurn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.chats == nil {
		c.chats = map[string]map[int64]heldTurn{}
	}
	c.chats[chat] = turns
	c.order = append(slices.DeleteFunc(c.order, func(ch string) bool { return ch == chat }), chat)
	for len(c.order) > historyChats {
		delete(c.chats, c.order[0])
		c.order = c.order[1:]
	}
}

// trimTurn reduces an oversized turn to its user message and its last
// assistant text, cut so that together they fit in budget.
func trimTurn(msgs []contracts.Message, budget int) []contracts.Message {
	if len(msgs) == 0 {
		return nil
	}
	user := contracts.Message{Role: contracts.RoleUser, Text: msgs[0].Text}
	var reply *contracts.Message
	for i := len(msgs) - 1; i > 0; i-- {
		if msgs[i].Role == contracts.RoleAssistant && msgs[i].Text != "" {
			reply = &contracts.Message{Role: contracts.RoleAssistant, Text: msgs[i].Text}
			break
		}
	}
	if reply == nil {
		user.Text = cut(user.Text, budget)
		return []contracts.Message{user}
	}
	u, a := utf8.RuneCountInString(user.Text), utf8.RuneCountInString(reply.Text)
	if u+a > budget {
		half := budget / 2
		switch {
		case u <= half:
			a = budget - u
		case a <= budget-half:
			u = budget - a
		default:
			u, a = half, budget-half
		}
		user.Text, reply.Text = cut(user.Text, u), cut(reply.Text, a)
	}
	return []contracts.Message{user, *reply}
}

// cut shortens s to at most n runes, marking the cut with an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	i, k := 0, 0
	for i = range s {
		if k == n-1 {
			break
		}
		k++
	}
	return s[:i] + "…"
}

// repair drops, within one turn, the tool calls that have no result and the
// results that answer no call of the assistant message right before them.
// A well-formed turn is returned unchanged.
func repair(msgs []contracts.Message) []contracts.Message {
	if !slices.ContainsFunc(msgs, func(m contracts.Message) bool { return m.Role == contracts.RoleTool || len(m.ToolCalls) > 0 }) {
		return msgs // no calls, no results: nothing to repair (most turns)
	}
	out := make([]contracts.Message, 0, len(msgs))
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch {
		case m.Role == contracts.RoleTool:
			continue // a result with no assistant message before it
		case m.Role != contracts.RoleAssistant || len(m.ToolCalls) == 0:
			out = append(out, m)
			continue
		}
		j := i + 1
		var results []contracts.ToolResult
		for j < len(msgs) && msgs[j].Role == contracts.RoleTool {
			results = append(results, msgs[j].ToolResults...)
			j++
		}
		have := map[string]int{}
		for _, r := range results {
			have[r.CallID]++
		}
		var calls []contracts.ToolCall
		answered := map[string]int{}
		for _, c := range m.ToolCalls {
			if have[c.ID] > 0 {
				have[c.ID]--
				answered[c.ID]++
				calls = append(calls, c)
			}
		}
		var kept []contracts.ToolResult
		for _, r := range results {
			if answered[r.CallID] > 0 {
				answered[r.CallID]--
				kept = append(kept, r)
			}
		}
		if len(calls) == len(m.ToolCalls) && len(kept) == len(results) {
			out = append(out, msgs[i:j]...) // well-formed: as stored
		} else {
			m.ToolCalls = calls
			if m.Text != "" || len(calls) > 0 {
				out = append(out, m)
			}
			if len(kept) > 0 {
				out = append(out, contracts.Message{Role: contracts.RoleTool, ToolResults: kept})
			}
		}
		i = j - 1
	}
	return out
}
