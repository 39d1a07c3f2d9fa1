package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

// Approval states. Every transition is one UPDATE guarded by the state it
// leaves, which must change exactly one row: a decision is used once.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalRunning  = "running"
	ApprovalDone     = "done"
	ApprovalExpired  = "expired"
)

// Errors of the approval state machine.
var (
	ErrDecided = errors.New("approval already decided")
	ErrExpired = errors.New("approval expired")
	ErrState   = errors.New("approval is not in the expected state")
)

// Approval is one request for the owner's decision.
type Approval struct {
	ID          string
	Kind        string
	Chat        string
	Turn        int64
	Tool        string
	Args        string
	ArgsHash    string
	Summary     string
	Pending     contracts.Pending
	State       string
	CreatedAt   time.Time
	ExpiresAt   time.Time
	DecidedAt   time.Time
	DecidedBy   string
	Outcome     string
	ResumedTurn int64
	// The lease: who decided or carries out the request (see LeaseHeld).
	LeaseOwner string
	LeasePID   int
	LeaseStart int64
	Started    bool // the decided call started (MarkStarted)
}

// NewApprovalID returns an unguessable request id: 128 random bits in
// lowercase base32 (26 characters, fits Telegram's 64-byte callback data).
func NewApprovalID() string {
	var b [16]byte
	rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// CreateApproval parks a pending request.
func (s *Store) CreateApproval(ctx context.Context, a Approval) error {
	if a.ID == "" || a.Chat == "" || a.Tool == "" || a.ArgsHash == "" || a.CreatedAt.IsZero() || !a.ExpiresAt.After(a.CreatedAt) {
		return fmt.Errorf("store: create approval: incomplete request")
	}
	if a.Kind == "" {
		a.Kind = KindToolCall
	}
	pending, err := json.Marshal(a.Pending)
	if err != nil {
		return fmt.Errorf("store: create approval: %w", err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO approvals
		(id, kind, chat, turn, tool, args, args_hash, summary, pending, state, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
		a.ID, a.Kind, a.Chat, a.Turn, a.Tool, a.Args, a.ArgsHash, a.Summary, string(pending),
		nanos(a.CreatedAt), nanos(a.ExpiresAt))
	if err != nil {
		return fmt.Errorf("store: create approval: %w", err)
	}
	return nil
}

const approvalCols = `id, kind, chat, turn, tool, args, args_hash, summary, pending, state,
	created_at, expires_at, decided_at, decided_by, outcome, resumed_turn, lease_owner, lease_pid, lease_start, started_at`

func scanApproval(row interface{ Scan(...any) error }) (Approval, error) {
	var a Approval
	var pending string
	var created, expires int64
	var decided sql.NullInt64
	var started int64
	err := row.Scan(&a.ID, &a.Kind, &a.Chat, &a.Turn, &a.Tool, &a.Args, &a.ArgsHash, &a.Summary, &pending, &a.State,
		&created, &expires, &decided, &a.DecidedBy, &a.Outcome, &a.ResumedTurn, &a.LeaseOwner, &a.LeasePID, &a.LeaseStart, &started)
	a.Started = started != 0
	if err != nil {
		return a, err
	}
	a.CreatedAt = fromNanos(sql.NullInt64{Int64: created, Valid: true})
	a.ExpiresAt = fromNanos(sql.NullInt64{Int64: expires, Valid: true})
	a.DecidedAt = fromNanos(decided)
	if err := json.Unmarshal([]byte(pending), &a.Pending); err != nil {
		return a, fmt.Errorf("pending call of %s: %w", a.ID, err)
	}
	return a, nil
}

// Approval returns one request by id.
func (s *Store) Approval(ctx context.Context, id string) (Approval, error) {
	a, err := scanApproval(s.db.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("store: approval %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return a, fmt.Errorf("store: approval %q: %w", id, err)
	}
	return a, nil
}

// Approvals lists requests in the given states (all when none), oldest first.
func (s *Store) Approvals(ctx context.Context, states ...string) ([]Approval, error) {
	q := `SELECT ` + approvalCols + ` FROM approvals`
	args := make([]any, len(states))
	if len(states) > 0 {
		q += ` WHERE state IN (?` + strings.Repeat(`, ?`, len(states)-1) + `)`
		for i, st := range states {
			args[i] = st
		}
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list approvals: %w", err)
	}
	defer rows.Close()
	var out []Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list approvals: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// ClosedApprovals returns the n requests no longer pending that closed
// most recently, by their decision or, for one that expired, its expiry:
// newest first. SQLite keeps only n rows while it sorts.
func (s *Store) ClosedApprovals(ctx context.Context, n int) ([]Approval, error) {
	if n <= 0 {
		return nil, fmt.Errorf("store: closed approvals: %w: n", errEmptyArgument)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE state != ?
		ORDER BY COALESCE(decided_at, expires_at) DESC, id DESC LIMIT ?`, ApprovalPending, n)
	if err != nil {
		return nil, fmt.Errorf("store: closed approvals: %w", err)
	}
	defer rows.Close()
	var out []Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("store: closed approvals: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Decide records the owner's decision on a pending request: pending ->
// approved or denied, in one update that must change exactly one row, and
// makes this store handle the holder of its lease until it is carried out.
// A request that is unknown (ErrNotFound), already decided (ErrDecided) or
// past its expiry (ErrExpired) is refused and nothing changes.
func (s *Store) Decide(ctx context.Context, id string, approve bool, by string, at time.Time) (Approval, error) {
	return s.DecideAudited(ctx, id, approve, by, at, nil)
}

// DecideAudited is Decide that also appends e to the audit trail in the
// same transaction: a decision is never recorded without its audit row,
// whenever the process dies.
func (s *Store) DecideAudited(ctx context.Context, id string, approve bool, by string, at time.Time, e *AuditEntry) (Approval, error) {
	state := ApprovalDenied
	if approve {
		state = ApprovalApproved
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Approval{}, fmt.Errorf("store: decide %q: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, `UPDATE approvals SET state = ?, decided_at = ?, decided_by = ?,
		lease_owner = ?, lease_pid = ?, lease_start = ?
		WHERE id = ? AND state = 'pending' AND expires_at > ?`, state, nanos(at), by, s.owner, s.pid, selfStart(), id, nanos(at))
	if err != nil {
		return Approval{}, fmt.Errorf("store: decide %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Approval{}, fmt.Errorf("store: decide %q: %w", id, err)
	}
	if n == 1 && e != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit (at, chat, turn, kind, tool, args, summary, ok, duration_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			nanos(e.At), e.Chat, e.Turn, e.Kind, e.Tool, e.Args, e.Summary, e.OK, int64(e.Duration)); err != nil {
			return Approval{}, fmt.Errorf("store: decide %q: audit: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return Approval{}, fmt.Errorf("store: decide %q: %w", id, err)
	}
	a, gerr := s.Approval(ctx, id)
	if gerr != nil {
		return a, gerr
	}
	if n == 1 {
		return a, nil
	}
	switch {
	case a.State == ApprovalPending || a.State == ApprovalExpired:
		return a, fmt.Errorf("store: decide %q: %w", id, ErrExpired)
	default:
		return a, fmt.Errorf("store: decide %q (%s): %w", id, a.State, ErrDecided)
	}
}

// Transition moves a request from one state to the next, recording the
// outcome (when not empty) and the turn that resumed it (when not 0). It
// fails with ErrState unless exactly one row was in state from.
func (s *Store) Transition(ctx context.Context, id, from, to, outcome string, resumedTurn int64) error {
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET state = ?,
		outcome = CASE WHEN ? = '' THEN outcome ELSE ? END,
		resumed_turn = CASE WHEN ? = 0 THEN resumed_turn ELSE ? END
		WHERE id = ? AND state = ?`, to, outcome, outcome, resumedTurn, resumedTurn, id, from)
	if err != nil {
		return fmt.Errorf("store: approval %q %s -> %s: %w", id, from, to, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: approval %q %s -> %s: %w", id, from, to, err)
	}
	if n != 1 {
		return fmt.Errorf("store: approval %q %s -> %s: %w", id, from, to, ErrState)
	}
	return nil
}

// ExpirePending closes every pending request past its expiry and returns
// them. The daemon calls it every few seconds and it almost always finds
// nothing due: a read says so first, without taking the write lock. A
// request that falls due just after that read is closed by the next call.
func (s *Store) ExpirePending(ctx context.Context, at time.Time) ([]Approval, error) {
	var due bool
	if err := s.stmt(ctx, nil, hotExpireDue).QueryRowContext(ctx, nanos(at)).Scan(&due); err != nil {
		return nil, fmt.Errorf("store: expire approvals: %w", err)
	}
	if !due {
		return nil, nil
	}
	var out []Approval
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: expire approvals: %w", err)
	}
	defer tx.Rollback()
	err = func() error {
		rows, err := tx.QueryContext(ctx, `SELECT `+approvalCols+` FROM approvals
			WHERE state = 'pending' AND expires_at <= ? ORDER BY created_at`, nanos(at))
		if err != nil {
			return err
		}
		for rows.Next() {
			a, err := scanApproval(rows)
			if err != nil {
				rows.Close()
				return err
			}
			out = append(out, a)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE approvals SET state = 'expired', outcome = 'expired'
			WHERE state = 'pending' AND expires_at <= ?`, nanos(at))
		return err
	}()
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return nil, fmt.Errorf("store: expire approvals: %w", err)
	}
	return out, nil
}
