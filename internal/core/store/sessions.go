package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Session is one browser login.
type Session struct {
	ID       string // hex SHA-256 of the cookie's value
	CSRF     string
	Created  time.Time
	LastSeen time.Time
	Agent    string // the browser's User-Agent at login, capped at 200 bytes by the store
}

// ErrNoSession: no session has that id, or it was idle too long.
var ErrNoSession = errors.New("store: no such session")

var (
	errSessionID     = errors.New("session id is not 64 lowercase hex digits")
	errSessionExists = errors.New("a session with that id exists")
)

// maxSessions bounds the sessions kept: CreateSession deletes the ones
// seen longest ago beyond it. A login the owner forgot on another
// browser goes first.
const maxSessions = 64

// maxAgentBytes is how much of a browser's User-Agent a session keeps.
const maxAgentBytes = 200

// checkSessionID accepts the hex SHA-256 of a cookie's value: 64
// lowercase hex digits. Anything else (the cookie's value itself, say)
// is refused, so that the store never holds it; the table's CHECK says
// the same.
func checkSessionID(id string) error {
	if len(id) != 64 {
		return errSessionID
	}
	for i := range len(id) {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return errSessionID
		}
	}
	return nil
}

// capAgent cuts a User-Agent to maxAgentBytes, at a character boundary.
func capAgent(a string) string {
	if len(a) <= maxAgentBytes {
		return a
	}
	n := maxAgentBytes
	for n > 0 && !utf8.RuneStart(a[n]) {
		n--
	}
	return a[:n]
}

// CreateSession stores a new login. Its ID must be 64 lowercase hex
// digits and not in use, its CSRF not empty and Created set; a zero
// LastSeen is Created. In the same transaction it deletes the sessions
// seen longest ago beyond maxSessions, never the new one.
func (s *Store) CreateSession(ctx context.Context, sess Session) error {
	if err := checkSessionID(sess.ID); err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	if sess.CSRF == "" {
		return fmt.Errorf("store: create session: %w: csrf", errEmptyArgument)
	}
	if sess.Created.IsZero() {
		return fmt.Errorf("store: create session: %w: created", errEmptyArgument)
	}
	if sess.LastSeen.IsZero() {
		sess.LastSeen = sess.Created
	}
	if sess.LastSeen.Before(sess.Created) {
		return fmt.Errorf("store: create session: last seen %v is before created %v", sess.LastSeen, sess.Created)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, `INSERT INTO web_sessions (id, csrf, created_at, last_seen, agent)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		sess.ID, sess.CSRF, nanos(sess.Created), nanos(sess.LastSeen), capAgent(sess.Agent))
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	if n != 1 {
		return fmt.Errorf("store: create session: %w", errSessionExists)
	}
	// Keep the new session and the maxSessions-1 others seen last; of
	// those seen at the same time, the ones created (then stored) later.
	if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE id IN (
		SELECT id FROM web_sessions WHERE id != ?
		ORDER BY last_seen DESC, created_at DESC, rowid DESC LIMIT -1 OFFSET ?)`,
		sess.ID, maxSessions-1); err != nil {
		return fmt.Errorf("store: create session: cap: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	return nil
}

// Session returns the session id, unless it was last seen before
// idleAfter: then it is deleted and, as for an unknown id, the error is
// ErrNoSession. A session last seen exactly at idleAfter is alive.
func (s *Store) Session(ctx context.Context, id string, idleAfter time.Time) (Session, error) {
	if err := checkSessionID(id); err != nil {
		return Session{}, fmt.Errorf("store: session: %w", err)
	}
	if idleAfter.IsZero() {
		return Session{}, fmt.Errorf("store: session: %w: idle after", errEmptyArgument)
	}
	sess := Session{ID: id}
	var created, seen int64
	err := s.db.QueryRowContext(ctx, `SELECT csrf, created_at, last_seen, agent FROM web_sessions WHERE id = ?`, id).
		Scan(&sess.CSRF, &created, &seen, &sess.Agent)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("store: session: %w", ErrNoSession)
	}
	if err != nil {
		return Session{}, fmt.Errorf("store: session: %w", err)
	}
	sess.Created, sess.LastSeen = time.Unix(0, created).UTC(), time.Unix(0, seen).UTC()
	if seen < nanos(idleAfter) {
		// Guarded by last_seen: a request that touched it since stays in.
		if _, err := s.db.ExecContext(ctx, `DELETE FROM web_sessions WHERE id = ? AND last_seen < ?`, id, nanos(idleAfter)); err != nil {
			return Session{}, fmt.Errorf("store: session: delete idle: %w", err)
		}
		return Session{}, fmt.Errorf("store: session: idle since %v: %w", sess.LastSeen, ErrNoSession)
	}
	return sess, nil
}

// TouchSession moves the session's LastSeen to at, if at is later.
func (s *Store) TouchSession(ctx context.Context, id string, at time.Time) error {
	if err := checkSessionID(id); err != nil {
		return fmt.Errorf("store: touch session: %w", err)
	}
	if at.IsZero() {
		return fmt.Errorf("store: touch session: %w: time", errEmptyArgument)
	}
	// SQLite counts a row the WHERE matched as changed, even when MAX
	// leaves it as it was: 0 rows means no such session.
	res, err := s.db.ExecContext(ctx, `UPDATE web_sessions SET last_seen = MAX(last_seen, ?) WHERE id = ?`, nanos(at), id)
	if err != nil {
		return fmt.Errorf("store: touch session: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: touch session: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("store: touch session: %w", ErrNoSession)
	}
	return nil
}

// DeleteSession ends one session (a logout); deleting one that does not
// exist is no error.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if err := checkSessionID(id); err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM web_sessions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}

// RevokeSessions ends every session and returns how many there were.
func (s *Store) RevokeSessions(ctx context.Context) (int, error) {
	return s.deleteSessions(ctx, "revoke", `DELETE FROM web_sessions`)
}

// ExpireSessions deletes the sessions last seen before idleAfter and
// returns how many.
func (s *Store) ExpireSessions(ctx context.Context, idleAfter time.Time) (int, error) {
	if idleAfter.IsZero() {
		return 0, fmt.Errorf("store: expire sessions: %w: idle after", errEmptyArgument)
	}
	return s.deleteSessions(ctx, "expire", `DELETE FROM web_sessions WHERE last_seen < ?`, nanos(idleAfter))
}

func (s *Store) deleteSessions(ctx context.Context, verb, query string, args ...any) (int, error) {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("store: %s sessions: %w", verb, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: %s sessions: %w", verb, err)
	}
	return int(n), nil
}

// Sessions lists every session, the one seen last first, for the owner
// to review. CSRF is left empty: the listing is not a way to read it.
func (s *Store) Sessions(ctx context.Context) ([]Session, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, created_at, last_seen, agent FROM web_sessions
		ORDER BY last_seen DESC, created_at DESC, rowid DESC`)
	if err != nil {
		return nil, fmt.Errorf("store: list sessions: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var sess Session
		var created, seen int64
		if err := rows.Scan(&sess.ID, &created, &seen, &sess.Agent); err != nil {
			return nil, fmt.Errorf("store: list sessions: %w", err)
		}
		sess.Created, sess.LastSeen = time.Unix(0, created).UTC(), time.Unix(0, seen).UTC()
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list sessions: %w", err)
	}
	return out, nil
}
