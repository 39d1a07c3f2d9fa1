package store

import (
	"context"
	"fmt"
	"time"
)

// AddStrike records a failed call of a self-coded tool version and returns
// how many strikes that version now has.
func (s *Store) AddStrike(ctx context.Context, tool string, version int, reason string, at time.Time) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: strike %s v%d: %w", tool, version, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO strikes (tool, version, at, reason) VALUES (?, ?, ?, ?)`,
		tool, version, nanos(at), reason); err != nil {
		return 0, fmt.Errorf("store: strike %s v%d: %w", tool, version, err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM strikes WHERE tool = ? AND version = ?`, tool, version).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: strike %s v%d: %w", tool, version, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: strike %s v%d: %w", tool, version, err)
	}
	return n, nil
}

// Strikes returns how many strikes a tool version has.
func (s *Store) Strikes(ctx context.Context, tool string, version int) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM strikes WHERE tool = ? AND version = ?`, tool, version).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: strikes of %s v%d: %w", tool, version, err)
	}
	return n, nil
}

// ClearStrikes forgets a version's strikes (the owner restored it).
func (s *Store) ClearStrikes(ctx context.Context, tool string, version int) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM strikes WHERE tool = ? AND version = ?`, tool, version); err != nil {
		return fmt.Errorf("store: clear strikes of %s v%d: %w", tool, version, err)
	}
	return nil
}
