package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/contracts"
)

// Turn statuses. A turn is StatusRunning from BeginTurn until FinishTurn (or
// RecoverRunning) sets one of the others.
const (
	StatusRunning   = "running"
	StatusOK        = "ok"
	StatusToolLimit = contracts.StopToolLimit
	StatusDeadline  = contracts.StopDeadline
	StatusCancelled = contracts.StopCancelled
	StatusError     = contracts.StopError
	StatusApproval  = contracts.StopApproval // parked for an owner decision; continued in a later turn
)

// Interrupted is the Error of a turn that RecoverRunning ended.
const Interrupted = "interrupted"

// finalStatus reports whether status ends a turn. A switch rather than a
// map literal, which would be init work for every process of the binary
// (package lazy).
func finalStatus(status string) bool {
	switch status {
	case StatusOK, StatusToolLimit, StatusDeadline, StatusCancelled, StatusError, StatusApproval:
		return true
	}
	return false
}

// TurnEnd is how a turn ended, for FinishTurn.
type TurnEnd struct {
	Status    string // StatusOK, StatusToolLimit, StatusDeadline, StatusCancelled or StatusError
	Reply     string
	Error     string
	Messages  []contracts.Message // the turn's new messages, starting with the user's
	Usage     contracts.Usage
	Provider  string
	Model     string
	ToolCalls int
	At        time.Time
	// Close, when set, closes a running approval request with this turn
	// in the same transaction (the continuation of a decided request).
	Close *ApprovalClose
}

// ApprovalClose closes a running approval request: running -> done, with
// its outcome and the turn that recorded its exchange.
type ApprovalClose struct {
	ID      string
	Outcome string
}

// TurnInfo is one stored turn.
type TurnInfo struct {
	ID        int64
	Chat      string
	Input     string
	Status    string
	Reply     string
	Error     string
	Usage     contracts.Usage
	Provider  string
	Model     string
	ToolCalls int
	Messages  int // messages appended to the chat's history
	StartedAt time.Time
	EndedAt   time.Time // zero while running
}

// BeginTurn records a new running turn of chat, the owner's, and returns
// its id (BeginTurnAs for another origin).
func (s *Store) BeginTurn(ctx context.Context, chat, input string, at time.Time) (int64, error) {
	return s.BeginTurnAs(ctx, chat, input, at, Origin{})
}

// FinishTurn ends a running turn and appends its messages to the chat's
// history, in one transaction: either both happen or neither. Messages the
// turn already recorded (RecordExchange) are the first of end.Messages and
// are not appended again. A turn is finished once; a second call returns
// ErrTurnFinished, an unknown turn ErrNotFound.
func (s *Store) FinishTurn(ctx context.Context, turn int64, end TurnEnd) error {
	if !finalStatus(end.Status) {
		return fmt.Errorf("store: finish turn %d: invalid status %q", turn, end.Status)
	}
	if end.At.IsZero() {
		return fmt.Errorf("store: finish turn %d: %w: time", turn, errEmptyArgument)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: finish turn %d: %w", turn, err)
	}
	defer func() { _ = tx.Rollback() }()
	chat, recorded, err := s.runningTurn(ctx, tx, turn)
	if err != nil {
		return fmt.Errorf("store: finish turn %d: %w", turn, err)
	}
	added := end.Messages[min(recorded, len(end.Messages)):]
	total, err := s.appendMessages(ctx, tx, chat, turn, recorded, added)
	if err != nil {
		return fmt.Errorf("store: finish turn %d: %w", turn, err)
	}
	_, err = s.stmt(ctx, tx, hotFinishTurn).ExecContext(ctx,
		end.Status, nanos(end.At), end.Reply, end.Error,
		end.Usage.InputTokens, end.Usage.OutputTokens, end.Provider, end.Model, end.ToolCalls,
		len(added), total, turn, StatusRunning)
	if err != nil {
		return fmt.Errorf("store: finish turn %d: %w", turn, err)
	}
	if end.Close != nil {
		if _, err := s.closeApproval(ctx, tx, *end.Close, turn); err != nil {
			return fmt.Errorf("store: finish turn %d: %w", turn, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: finish turn %d: %w", turn, err)
	}
	return nil
}

// RecordExchange records, before a resumed turn goes on, the decided
// exchange (the parked messages and the decided call's result) as the
// turn's first messages, and closes the request c, in one transaction: the
// exchange reaches the history exactly once, whatever happens to the turn
// after. The request must still be running under this handle's lease
// (ErrState otherwise, and nothing is recorded); the turn must have
// recorded nothing yet.
func (s *Store) RecordExchange(ctx context.Context, turn int64, msgs []contracts.Message, c ApprovalClose) error {
	if len(msgs) == 0 {
		return fmt.Errorf("store: record the exchange of turn %d: no messages", turn)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: record the exchange of turn %d: %w", turn, err)
	}
	defer func() { _ = tx.Rollback() }()
	chat, recorded, err := s.runningTurn(ctx, tx, turn)
	if err != nil {
		return fmt.Errorf("store: record the exchange of turn %d: %w", turn, err)
	}
	if recorded != 0 {
		return fmt.Errorf("store: record the exchange of turn %d: it was recorded already", turn)
	}
	if n, err := s.closeApproval(ctx, tx, c, turn); err != nil {
		return fmt.Errorf("store: record the exchange of turn %d: %w", turn, err)
	} else if n != 1 {
		return fmt.Errorf("store: record the exchange of turn %d: request %s: %w", turn, c.ID, ErrState)
	}
	total, err := s.appendMessages(ctx, tx, chat, turn, 0, msgs)
	if err != nil {
		return fmt.Errorf("store: record the exchange of turn %d: %w", turn, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE turns SET messages = ?, chars = ? WHERE id = ?`, len(msgs), total, turn); err != nil {
		return fmt.Errorf("store: record the exchange of turn %d: %w", turn, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: record the exchange of turn %d: %w", turn, err)
	}
	return nil
}

// runningTurn reads a running turn's chat and how many messages it has
// recorded: ErrNotFound for an unknown turn, ErrTurnFinished for one that
// is not running.
func (s *Store) runningTurn(ctx context.Context, tx *sql.Tx, turn int64) (chat string, recorded int, err error) {
	var status string
	err = s.stmt(ctx, tx, hotRunningTurn).QueryRowContext(ctx, turn).Scan(&chat, &status, &recorded)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", 0, ErrNotFound
	case err != nil:
		return "", 0, err
	case status != StatusRunning:
		return "", 0, fmt.Errorf("(%s): %w", status, ErrTurnFinished)
	}
	return chat, recorded, nil
}

// appendMessages inserts msgs as messages from seq on of turn, and returns
// their size for the history budget. A turn's first message is the user's,
// or, for a continuation that parked again, the model's: never a tool
// result, which would be an orphan.
func (s *Store) appendMessages(ctx context.Context, tx *sql.Tx, chat string, turn int64, seq int, msgs []contracts.Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	if seq == 0 && msgs[0].Role != contracts.RoleUser && msgs[0].Role != contracts.RoleAssistant {
		return 0, fmt.Errorf("first message has role %q, want %q or %q", msgs[0].Role, contracts.RoleUser, contracts.RoleAssistant)
	}
	stmt := s.stmt(ctx, tx, hotInsertMessage)
	total := 0
	for i, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			return 0, fmt.Errorf("message %d: %w", seq+i, err)
		}
		n := chars(m)
		if _, err := stmt.ExecContext(ctx, chat, turn, seq+i, string(m.Role), b, n); err != nil {
			return 0, fmt.Errorf("message %d: %w", seq+i, err)
		}
		total += n
	}
	return total, nil
}

// closeApproval moves request c from running to done with its outcome and
// turn, if this handle holds its lease, and returns how many rows changed
// (0: it was not running, or another process took it over).
func (s *Store) closeApproval(ctx context.Context, tx *sql.Tx, c ApprovalClose, turn int64) (int64, error) {
	res, err := s.stmt(ctx, tx, hotCloseApproval).ExecContext(ctx,
		ApprovalDone, c.Outcome, turn, c.ID, ApprovalRunning, s.owner)
	if err != nil {
		return 0, fmt.Errorf("close request %s: %w", c.ID, err)
	}
	return res.RowsAffected()
}

// Turn returns one turn, or ErrNotFound.
func (s *Store) Turn(ctx context.Context, turn int64) (TurnInfo, error) {
	var (
		t          TurnInfo
		start, end sql.NullInt64
	)
	err := s.db.QueryRowContext(ctx, `SELECT `+turnColumns+` FROM turns WHERE id = ?`, turn).Scan(
		&t.ID, &t.Chat, &t.Input, &t.Status, &t.Reply, &t.Error, &t.Usage.InputTokens, &t.Usage.OutputTokens,
		&t.Provider, &t.Model, &t.ToolCalls, &t.Messages, &start, &end)
	if errors.Is(err, sql.ErrNoRows) {
		return TurnInfo{}, fmt.Errorf("store: turn %d: %w", turn, ErrNotFound)
	}
	if err != nil {
		return TurnInfo{}, fmt.Errorf("store: turn %d: %w", turn, err)
	}
	t.StartedAt, t.EndedAt = fromNanos(start), fromNanos(end)
	return t, nil
}

// Usage sums the tokens of the turns that ended at or after since.
func (s *Store) Usage(ctx context.Context, since time.Time) (contracts.Usage, error) {
	var u contracts.Usage
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0)
		FROM turns WHERE ended_at >= ?`, nanos(since)).Scan(&u.InputTokens, &u.OutputTokens)
	if err != nil {
		return contracts.Usage{}, fmt.Errorf("store: usage: %w", err)
	}
	return u, nil
}

// RecoverRunning ends, as StatusError with Error Interrupted, the turns a
// crashed process left running, and returns how many it ended. A turn that
// another live process is running (a terminal chat beside the daemon) is left
// alone; so are the turns this Store began. Call it at startup.
func (s *Store) RecoverRunning(ctx context.Context, at time.Time) (int, error) {
	type running struct {
		id    int64
		owner string
		pid   int
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, owner, pid FROM turns WHERE status = ?`, StatusRunning)
	if err != nil {
		return 0, fmt.Errorf("store: recover running turns: %w", err)
	}
	var stale []int64
	for rows.Next() {
		var r running
		if err := rows.Scan(&r.id, &r.owner, &r.pid); err != nil {
			_ = rows.Close()
			return 0, fmt.Errorf("store: recover running turns: %w", err)
		}
		if r.owner == s.owner {
			continue
		}
		// Our own pid with another owner is a previous run of this process
		// id (or a second handle in this process, which only tests make).
		if r.pid != s.pid && processAlive(r.pid) {
			continue
		}
		stale = append(stale, r.id)
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("store: recover running turns: %w", err)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: recover running turns: %w", err)
	}
	if len(stale) == 0 {
		return 0, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: recover running turns: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	n := 0
	for _, id := range stale {
		res, err := tx.ExecContext(ctx, `UPDATE turns SET status = ?, error = ?, ended_at = ? WHERE id = ? AND status = ?`,
			StatusError, Interrupted, nanos(at), id, StatusRunning)
		if err != nil {
			return 0, fmt.Errorf("store: recover turn %d: %w", id, err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("store: recover turn %d: %w", id, err)
		}
		n += int(k)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: recover running turns: %w", err)
	}
	return n, nil
}

// chars is the size of a message for the history budget: the runes of its
// text, tool arguments and tool results.
func chars(m contracts.Message) int {
	n := utf8.RuneCountInString(m.Text)
	for _, c := range m.ToolCalls {
		n += utf8.RuneCountInString(c.Arguments)
	}
	for _, r := range m.ToolResults {
		n += utf8.RuneCountInString(r.Content)
	}
	return n
}
