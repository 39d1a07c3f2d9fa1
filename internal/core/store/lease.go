package store

import (
	"context"
	"fmt"
	"os"

	"github.com/shelldon/shelldon/internal/lazy"
)

// selfStart is this process's start time as processStart reads it, once.
// A zero-value lazy.Value rather than a package-level sync.OnceValue, whose
// call is init work for every process of the binary (package lazy).
func selfStart() int64 {
	return selfStartTime.Get(func() int64 {
		st, _ := processStart(os.Getpid())
		return st
	})
}

var selfStartTime lazy.Value[int64]

// LeaseHeld reports whether the holder of a's lease is alive: this store
// handle, or another live process (the same process id and, where the
// system tells it, the same start time). A request without a lease, or
// whose holder is gone, is free for recovery to take over.
func (s *Store) LeaseHeld(a Approval) bool {
	switch {
	case a.LeaseOwner == "":
		return false
	case a.LeaseOwner == s.owner:
		return true
	case a.LeasePID <= 0, a.LeasePID == s.pid:
		// Our own pid with another handle is an earlier run of this
		// process id (or a second handle in this process, which only
		// tests make).
		return false
	case !processAlive(a.LeasePID):
		return false
	}
	if a.LeaseStart != 0 {
		if st, ok := processStart(a.LeasePID); ok && st != a.LeaseStart {
			return false // the pid was reused
		}
	}
	return true
}

// Claim moves request id from one state to the next, as Transition does
// (recording outcome when it is not empty), and makes this store handle
// the holder of its lease.
func (s *Store) Claim(ctx context.Context, id, from, to, outcome string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET state = ?, lease_owner = ?, lease_pid = ?, lease_start = ?,
		outcome = CASE WHEN ? = '' THEN outcome ELSE ? END
		WHERE id = ? AND state = ?`, to, s.owner, s.pid, selfStart(), outcome, outcome, id, from)
	if err != nil {
		return fmt.Errorf("store: claim approval %q %s -> %s: %w", id, from, to, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: claim approval %q %s -> %s: %w", id, from, to, err)
	}
	if n != 1 {
		return fmt.Errorf("store: claim approval %q %s -> %s: %w", id, from, to, ErrState)
	}
	return nil
}

// MarkStarted records, before it runs, that the decided call of running
// request id starts: from then on, if its holder dies, it may have run. It
// succeeds once, and only for the holder of the lease (ErrState
// otherwise), so a call whose start was not recorded never runs.
func (s *Store) MarkStarted(ctx context.Context, id string, at int64) error {
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET started_at = ?
		WHERE id = ? AND state = ? AND started_at = 0 AND lease_owner = ?`, at, id, ApprovalRunning, s.owner)
	if err != nil {
		return fmt.Errorf("store: mark approval %q started: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: mark approval %q started: %w", id, err)
	} else if n != 1 {
		return fmt.Errorf("store: mark approval %q started: %w", id, ErrState)
	}
	return nil
}

// CloseHeld closes running request id (running -> done, with its outcome
// and turn) if this handle holds its lease: a holder that lost it to a
// recovery never overwrites what the new holder does. ErrState otherwise.
func (s *Store) CloseHeld(ctx context.Context, id, outcome string, turn int64) error {
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET state = ?, outcome = ?, resumed_turn = ?
		WHERE id = ? AND state = ? AND lease_owner = ?`, ApprovalDone, outcome, turn, id, ApprovalRunning, s.owner)
	if err != nil {
		return fmt.Errorf("store: close approval %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: close approval %q: %w", id, err)
	} else if n != 1 {
		return fmt.Errorf("store: close approval %q: %w", id, ErrState)
	}
	return nil
}
