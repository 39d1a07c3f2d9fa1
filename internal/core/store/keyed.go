package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrKeyBusy: the turn of a message with this key is running now, in this
// process or another live one.
var ErrKeyBusy = errors.New("store: the turn of this message is running")

// KeyedStart is what BeginKeyedTurn did for a message's key.
type KeyedStart struct {
	// Turn is the turn begun now; 0 when the key's earlier turn stands.
	Turn int64
	// Previous is the key's latest earlier turn, nil for none.
	Previous *TurnInfo
	// Attempts is how many turns the key had begun before this call.
	Attempts int
	// Filed is how many requests (approval requests, proposals) Previous
	// filed for the owner.
	Filed int
}

// Rerun reports whether Previous was cut short by a crash and is run
// again now.
func (k KeyedStart) Rerun() bool { return k.Turn != 0 && k.Previous != nil }

// BeginKeyedTurn begins the turn of a message that carries a key, once: in
// one transaction it looks up the latest turn the key began in chat and
//
//   - begins one when there is none;
//   - returns ErrKeyBusy when that turn is running in a live process;
//   - begins one again when a crash cut that turn short (it is
//     interrupted, or running in a process that is gone, which it marks
//     interrupted) before it filed anything for the owner, unless the key
//     has begun maxAttempts turns already;
//   - otherwise begins nothing: that turn stands (Turn 0, Previous set).
//
// A turn cut short before it filed anything has changed nothing (FREE
// tools only read; a RISKY call files a request and parks), so running it
// again is safe; one that filed a request is not run again, or the owner
// would be asked twice.
func (s *Store) BeginKeyedTurn(ctx context.Context, chat, key, input string, at time.Time, maxAttempts int) (KeyedStart, error) {
	return s.BeginKeyedTurnAs(ctx, chat, key, input, at, maxAttempts, Origin{})
}

// BeginKeyedTurnAs is BeginKeyedTurn for a turn of origin o, whose Admit
// is asked only when a turn would begin.
func (s *Store) BeginKeyedTurnAs(ctx context.Context, chat, key, input string, at time.Time, maxAttempts int, o Origin) (KeyedStart, error) {
	if chat == "" || key == "" {
		return KeyedStart{}, fmt.Errorf("store: begin keyed turn: %w: chat or key", errEmptyArgument)
	}
	if at.IsZero() {
		return KeyedStart{}, fmt.Errorf("store: begin keyed turn: %w: time", errEmptyArgument)
	}
	fail := func(err error) (KeyedStart, error) {
		return KeyedStart{}, fmt.Errorf("store: begin the turn of message %q in %q: %w", key, chat, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = tx.Rollback() }()
	var k KeyedStart
	if err := s.stmt(ctx, tx, hotKeyedAttempts).QueryRowContext(ctx, chat, key).Scan(&k.Attempts); err != nil {
		return fail(err)
	}
	if k.Attempts > 0 {
		var (
			prev       TurnInfo
			start, end sql.NullInt64
			owner      string
			pid        int
		)
		err := s.stmt(ctx, tx, hotKeyedPrevious).QueryRowContext(ctx, chat, key).Scan(
			&prev.ID, &prev.Chat, &prev.Input, &prev.Status, &prev.Reply, &prev.Error, &prev.Usage.InputTokens, &prev.Usage.OutputTokens,
			&prev.Provider, &prev.Model, &prev.ToolCalls, &prev.Messages, &start, &end, &owner, &pid)
		if err != nil {
			return fail(err)
		}
		prev.StartedAt, prev.EndedAt = fromNanos(start), fromNanos(end)
		if prev.Status == StatusRunning {
			if owner == s.owner || (pid != s.pid && processAlive(pid)) {
				return KeyedStart{}, fmt.Errorf("store: message %q in %q (turn %d): %w", key, chat, prev.ID, ErrKeyBusy)
			}
			if _, err := s.stmt(ctx, tx, hotKeyedInterrupt).ExecContext(ctx,
				StatusError, Interrupted, nanos(at), prev.ID, StatusRunning); err != nil {
				return fail(err)
			}
			prev.Status, prev.Error, prev.EndedAt = StatusError, Interrupted, at.UTC()
		}
		if err := s.stmt(ctx, tx, hotKeyedFiled).QueryRowContext(ctx, prev.ID).Scan(&k.Filed); err != nil {
			return fail(err)
		}
		k.Previous = &prev
		interrupted := prev.Status == StatusError && prev.Error == Interrupted
		if !interrupted || k.Filed > 0 || k.Attempts >= maxAttempts {
			return k, tx.Commit()
		}
	}
	if err := o.admit(ctx, s, tx); err != nil {
		return fail(err)
	}
	res, err := s.stmt(ctx, tx, hotBeginKeyedTurn).ExecContext(ctx,
		chat, input, StatusRunning, nanos(at), s.owner, s.pid, key, o.kind(), o.Weight)
	if err != nil {
		return fail(err)
	}
	if k.Turn, err = res.LastInsertId(); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return k, nil
}
