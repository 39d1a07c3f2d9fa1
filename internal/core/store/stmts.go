package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// hot names one of the queries a turn runs. Parsing SQL (sqlite3_prepare
// in modernc.org/sqlite's transpiled C) is about half the CPU of a small
// query, so these are prepared once per connection and reused: Open
// prepares each into a *sql.Stmt, which database/sql prepares again on
// any other connection of the pool the first time it runs there (and
// finalizes with a connection it closes: an idle one after
// connMaxIdleTime, or one a caller discarded), and the driver keeps each
// statement compiled between runs. The set is this fixed table of
// constant texts, so the cache is bounded by construction: at most
// numHot statements on each of maxOpenConns connections. A query built
// from input is never one of them.
type hot int

const (
	hotHistoryTurns hot = iota
	hotHistoryMessages
	hotRunningTurn
	hotInsertMessage
	hotFinishTurn
	hotCloseApproval
	hotBeginTurn
	hotKeyedAttempts
	hotKeyedPrevious
	hotKeyedInterrupt
	hotKeyedFiled
	hotBeginKeyedTurn
	hotSelfWeight
	hotModelUsage
	hotRecordUsage
	hotFactsMatch
	hotFactsLatest
	hotAppendAudit
	hotExpireDue
	numHot
)

// turnColumns are the columns a TurnInfo is read from.
const turnColumns = `id, chat, input, status, reply, error, input_tokens, output_tokens,
	provider, model, tool_calls, messages, started_at, ended_at`

// hotSQL is the text of each hot query.
var hotSQL = [numHot]string{
	hotHistoryTurns:    `SELECT id, chars, messages FROM turns WHERE chat = ? AND messages > 0 ORDER BY id DESC`,
	hotHistoryMessages: `SELECT turn, body FROM messages WHERE chat = ? AND turn BETWEEN ? AND ? ORDER BY turn, seq`,
	hotRunningTurn:     `SELECT chat, status, messages FROM turns WHERE id = ?`,
	hotInsertMessage:   `INSERT INTO messages (chat, turn, seq, role, body, chars) VALUES (?, ?, ?, ?, ?, ?)`,
	hotFinishTurn: `UPDATE turns SET status = ?, ended_at = ?, reply = ?, error = ?,
		input_tokens = ?, output_tokens = ?, provider = ?, model = ?, tool_calls = ?, messages = messages + ?, chars = chars + ?
		WHERE id = ? AND status = ?`,
	hotCloseApproval: `UPDATE approvals SET state = ?, outcome = ?, resumed_turn = ? WHERE id = ? AND state = ? AND lease_owner = ?`,
	hotBeginTurn:     `INSERT INTO turns (chat, input, status, started_at, owner, pid, origin, weight) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
	// "request_key != ''" (true of any key: BeginKeyedTurnAs refuses an
	// empty one) lets SQLite use the partial index turns_key rather than
	// read every turn of the chat.
	hotKeyedAttempts: `SELECT COUNT(*) FROM turns WHERE chat = ? AND request_key = ? AND request_key != ''`,
	hotKeyedPrevious: `SELECT ` + turnColumns + `, owner, pid
		FROM turns WHERE chat = ? AND request_key = ? AND request_key != '' ORDER BY id DESC LIMIT 1`,
	hotKeyedInterrupt: `UPDATE turns SET status = ?, error = ?, ended_at = ? WHERE id = ? AND status = ?`,
	hotKeyedFiled:     `SELECT COUNT(*) FROM approvals WHERE turn = ?`,
	hotBeginKeyedTurn: `INSERT INTO turns (chat, input, status, started_at, owner, pid, request_key, origin, weight) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	// The owner's origin is written into the text, not bound, so that
	// SQLite can use the partial index turns_self (WHERE origin !=
	// 'owner'); with a parameter it reads every turn ever begun.
	hotSelfWeight: `SELECT COALESCE(SUM(weight), 0) FROM turns WHERE origin != '` + OriginOwner + `' AND started_at >= ?`,
	// The whole UTC days of the range from usage_daily, its ends from
	// usage (Ledger.ModelUsage binds them).
	hotModelUsage: `SELECT model, SUM(calls), SUM(input_tokens), SUM(output_tokens) FROM (
		SELECT model, calls, input_tokens, output_tokens FROM usage_daily WHERE day >= ? AND day < ?
		UNION ALL
		SELECT model, 1, input_tokens, output_tokens FROM usage WHERE at >= ? AND at < ?
		UNION ALL
		SELECT model, 1, input_tokens, output_tokens FROM usage WHERE at >= ? AND at < ?
	) GROUP BY model HAVING SUM(calls) > 0 ORDER BY model`,
	hotRecordUsage: `INSERT INTO usage (at, chat, turn, origin, provider, model, input_tokens, output_tokens)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
	// The ranked ids first (ORDER BY rank is FTS5's own fast path), then
	// their rows; equal ranks, newer first.
	hotFactsMatch: `SELECT ` + factColumns + `
		FROM (SELECT rowid, rank FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rank LIMIT ?) m
		JOIN facts f ON f.id = m.rowid
		ORDER BY m.rank, f.id DESC`,
	hotFactsLatest: `SELECT ` + factColumns + ` FROM facts f ORDER BY f.id DESC LIMIT ?`,
	hotAppendAudit: `INSERT INTO audit (at, chat, turn, kind, tool, args, summary, ok, duration_ns)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	// Asked by the daemon every few seconds (ExpirePending), which almost
	// always finds nothing due.
	hotExpireDue: `SELECT EXISTS (SELECT 1 FROM approvals WHERE state = 'pending' AND expires_at <= ?)`,
}

// prepareHot prepares every hot query, after the migrations (a statement
// is compiled against the schema). It runs in Open, before the Store is
// shared: a statement prepared later from inside a transaction would
// need a second connection while the transaction holds one.
func (s *Store) prepareHot(ctx context.Context) error {
	for q, text := range hotSQL {
		st, err := s.db.PrepareContext(ctx, text)
		if err != nil {
			_ = s.closeHot()
			return fmt.Errorf("prepare hot query %d: %w", q, err)
		}
		s.hot[q] = st
	}
	return nil
}

// closeHot closes the hot statements (on every connection they were
// prepared on).
func (s *Store) closeHot() error {
	var errs []error
	for _, st := range s.hot {
		if st != nil { // a closed statement stays: a late call gets an error, not a panic
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// stmt returns hot query q's statement; within tx when tx is not nil, where
// it reuses the statement prepared on tx's connection (or prepares it
// there once, for the next transaction on that connection too).
// database/sql closes tx's handle on it when tx ends, not the statement.
func (s *Store) stmt(ctx context.Context, tx *sql.Tx, q hot) *sql.Stmt {
	if tx != nil {
		return tx.StmtContext(ctx, s.hot[q])
	}
	return s.hot[q]
}
