package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/contracts"
)

// Fact is one remembered fact: its text, where it was said (the chat and
// turn of the remember call) and when it was stored and last edited.
type Fact struct {
	ID        int64     `json:"id"`
	Text      string    `json:"text"`
	Chat      string    `json:"chat"`
	Turn      int64     `json:"turn"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// The audit kinds of memory. Their rows name a fact by its id and the
// hash of its text (FactHash), never by the text: a forgotten fact leaves
// no words behind in the audit.
const (
	KindMemoryStored    = "memory_stored"
	KindMemoryEdited    = "memory_edited"
	KindMemoryForgotten = "memory_forgotten"
)

// ErrMemoryFull: the memory holds as many facts as it may.
var ErrMemoryFull = errors.New("store: the memory is full")

// FactHash is what the audit keeps of a fact's text: its SHA-256, in hex.
func FactHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// Bounds of a full-text query: the text searched is cut to
// MaxQueryBytes, and at most MaxQueryTerms distinct words of it are
// looked for.
const (
	MaxQueryBytes = 4 << 10
	MaxQueryTerms = 64
)

// FactQuery selects facts. With Query, the facts that hold any of its
// words, best match first (bm25); without, every fact, newest first,
// from Before (an id; 0 means from the newest).
type FactQuery struct {
	Query  string
	Limit  int // default DefaultFactLimit, at most MaxFactLimit
	Before int64
}

// Bounds of FactQuery.Limit.
const (
	DefaultFactLimit = 50
	MaxFactLimit     = 1000
)

const factColumns = `f.id, f.text, f.chat, f.turn, f.created_at, f.updated_at`

// Remember stores text as a fact said in chat's turn at at, and audits it
// (KindMemoryStored, with its id and hash) in the same transaction. A
// fact of the same text already remembered is returned instead, as it
// is, with stored false. With max > 0 the memory holds at most max
// facts: ErrMemoryFull when it is full.
func (s *Store) Remember(ctx context.Context, chat string, turn int64, text string, at time.Time, max int) (f Fact, stored bool, err error) {
	if text == "" {
		return Fact{}, false, fmt.Errorf("store: remember: %w: text", errEmptyArgument)
	}
	hash := FactHash(text)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Fact{}, false, fmt.Errorf("store: remember: %w", err)
	}
	defer tx.Rollback()
	same, err := scanFacts(tx.QueryContext(ctx, `SELECT `+factColumns+` FROM facts f WHERE f.hash = ? AND f.text = ? ORDER BY f.id LIMIT 1`, hash, text))
	if err != nil {
		return Fact{}, false, fmt.Errorf("store: remember: %w", err)
	}
	if len(same) > 0 {
		return same[0], false, nil
	}
	if max > 0 {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM facts`).Scan(&n); err != nil {
			return Fact{}, false, fmt.Errorf("store: remember: %w", err)
		}
		if n >= max {
			return Fact{}, false, fmt.Errorf("%w: it holds %d facts, the most it may", ErrMemoryFull, n)
		}
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO facts (text, hash, chat, turn, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		text, hash, chat, turn, nanos(at), nanos(at))
	if err != nil {
		return Fact{}, false, fmt.Errorf("store: remember: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return Fact{}, false, fmt.Errorf("store: remember: %w", err)
	}
	if err := s.auditFact(ctx, tx, AuditEntry{At: at, Chat: chat, Turn: turn, Kind: KindMemoryStored, Tool: contracts.ToolRemember,
		Args: factArgs(id, hash, ""), Summary: fmt.Sprintf("fact #%d stored", id), OK: true}); err != nil {
		return Fact{}, false, fmt.Errorf("store: remember: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Fact{}, false, fmt.Errorf("store: remember: %w", err)
	}
	at = fromNanos(sql.NullInt64{Int64: nanos(at), Valid: true})
	return Fact{ID: id, Text: text, Chat: chat, Turn: turn, CreatedAt: at, UpdatedAt: at}, true, nil
}

// Fact returns one fact; ErrNotFound when there is none of that id.
func (s *Store) Fact(ctx context.Context, id int64) (Fact, error) {
	fs, err := scanFacts(s.db.QueryContext(ctx, `SELECT `+factColumns+` FROM facts f WHERE f.id = ?`, id))
	if err != nil {
		return Fact{}, fmt.Errorf("store: fact %d: %w", id, err)
	}
	if len(fs) == 0 {
		return Fact{}, fmt.Errorf("store: fact %d: %w", id, ErrNotFound)
	}
	return fs[0], nil
}

// Facts returns the facts q selects. A query with no word in it selects
// nothing.
func (s *Store) Facts(ctx context.Context, q FactQuery) ([]Fact, error) {
	limit := q.Limit
	switch {
	case limit <= 0:
		limit = DefaultFactLimit
	case limit > MaxFactLimit:
		limit = MaxFactLimit
	}
	var (
		fs  []Fact
		err error
	)
	switch {
	case q.Query != "":
		match := MatchQuery(q.Query)
		if match == "" {
			return nil, nil
		}
		fs, err = scanFacts(s.stmt(ctx, nil, hotFactsMatch).QueryContext(ctx, match, limit))
	case q.Before > 0:
		fs, err = scanFacts(s.db.QueryContext(ctx, `SELECT `+factColumns+` FROM facts f WHERE f.id < ? ORDER BY f.id DESC LIMIT ?`, q.Before, limit))
	default:
		fs, err = scanFacts(s.stmt(ctx, nil, hotFactsLatest).QueryContext(ctx, limit))
	}
	if err != nil {
		return nil, fmt.Errorf("store: facts: %w", err)
	}
	return fs, nil
}

// CountFacts returns how many facts the memory holds.
func (s *Store) CountFacts(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM facts`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count facts: %w", err)
	}
	return n, nil
}

// EditFact replaces the text of fact id (the owner's edit, by names who:
// "cli", "http") and audits it (KindMemoryEdited, with the old and new
// hashes) in the same transaction. The old text is gone from the row and
// the index, as for ForgetFact.
func (s *Store) EditFact(ctx context.Context, id int64, text string, at time.Time, by string) (Fact, error) {
	if text == "" {
		return Fact{}, fmt.Errorf("store: edit fact %d: %w: text", id, errEmptyArgument)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Fact{}, fmt.Errorf("store: edit fact %d: %w", id, err)
	}
	defer tx.Rollback()
	old, err := scanFacts(tx.QueryContext(ctx, `SELECT `+factColumns+` FROM facts f WHERE f.id = ?`, id))
	if err != nil {
		return Fact{}, fmt.Errorf("store: edit fact %d: %w", id, err)
	}
	if len(old) == 0 {
		return Fact{}, fmt.Errorf("store: edit fact %d: %w", id, ErrNotFound)
	}
	hash := FactHash(text)
	if _, err := tx.ExecContext(ctx, `UPDATE facts SET text = ?, hash = ?, updated_at = ? WHERE id = ?`, text, hash, nanos(at), id); err != nil {
		return Fact{}, fmt.Errorf("store: edit fact %d: %w", id, err)
	}
	if err := s.auditFact(ctx, tx, AuditEntry{At: at, Kind: KindMemoryEdited,
		Args: factArgs(id, hash, FactHash(old[0].Text)), Summary: fmt.Sprintf("fact #%d edited by %s", id, by), OK: true}); err != nil {
		return Fact{}, fmt.Errorf("store: edit fact %d: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return Fact{}, fmt.Errorf("store: edit fact %d: %w", id, err)
	}
	f := old[0]
	f.Text, f.UpdatedAt = text, fromNanos(sql.NullInt64{Int64: nanos(at), Valid: true})
	s.purgeLog(ctx)
	return f, nil
}

// ForgetFact deletes fact id (the owner's forget, by names who) and
// audits it (KindMemoryForgotten, with its id and hash) in the same
// transaction, and returns the fact as it was. Its row and its entries in
// the full-text index are deleted, and the bytes they held overwritten
// (secure-delete, see the migration); the write-ahead log that held its
// pages is then emptied when no reader holds it (purgeLog).
func (s *Store) ForgetFact(ctx context.Context, id int64, at time.Time, by string) (Fact, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Fact{}, fmt.Errorf("store: forget fact %d: %w", id, err)
	}
	defer tx.Rollback()
	old, err := scanFacts(tx.QueryContext(ctx, `SELECT `+factColumns+` FROM facts f WHERE f.id = ?`, id))
	if err != nil {
		return Fact{}, fmt.Errorf("store: forget fact %d: %w", id, err)
	}
	if len(old) == 0 {
		return Fact{}, fmt.Errorf("store: forget fact %d: %w", id, ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM facts WHERE id = ?`, id); err != nil {
		return Fact{}, fmt.Errorf("store: forget fact %d: %w", id, err)
	}
	if err := s.auditFact(ctx, tx, AuditEntry{At: at, Kind: KindMemoryForgotten,
		Args: factArgs(id, FactHash(old[0].Text), ""), Summary: fmt.Sprintf("fact #%d forgotten by %s", id, by), OK: true}); err != nil {
		return Fact{}, fmt.Errorf("store: forget fact %d: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return Fact{}, fmt.Errorf("store: forget fact %d: %w", id, err)
	}
	s.purgeLog(ctx)
	return old[0], nil
}

// purgeLog checkpoints the write-ahead log into the database and
// truncates it, so the frames that held a forgotten or edited fact's
// pages are gone from the disk too. It never waits: when another
// connection still reads an older snapshot the log is left as it is (its
// frames are overwritten as the log is reused), which is not an error.
func (s *Store) purgeLog(ctx context.Context) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = 0`); err != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn })
		return
	}
	var busy, frames, done int
	_ = conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &done)
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA busy_timeout = %d`, busyTimeoutMillis)); err != nil {
		// A connection that kept the wrong timeout is not put back.
		conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}

// scanFacts reads the rows of a query of factColumns.
func scanFacts(rows *sql.Rows, err error) ([]Fact, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Fact
	for rows.Next() {
		var (
			f                Fact
			created, updated sql.NullInt64
		)
		if err := rows.Scan(&f.ID, &f.Text, &f.Chat, &f.Turn, &created, &updated); err != nil {
			return nil, err
		}
		f.CreatedAt, f.UpdatedAt = fromNanos(created), fromNanos(updated)
		out = append(out, f)
	}
	return out, rows.Err()
}

// factArgs are the audit arguments of a memory row: the fact's id and
// the hash of its text (and of the text it replaced).
func factArgs(id int64, hash, was string) string {
	v := struct {
		Fact   int64  `json:"fact"`
		SHA256 string `json:"sha256"`
		Was    string `json:"was_sha256,omitempty"`
	}{id, hash, was}
	b, _ := json.Marshal(v)
	return string(b)
}

// auditFact appends a memory row to the audit log inside tx, so that a
// fact is never stored, changed or forgotten without its row.
func (s *Store) auditFact(ctx context.Context, tx *sql.Tx, e AuditEntry) error {
	_, err := s.stmt(ctx, tx, hotAppendAudit).ExecContext(ctx,
		nanos(e.At), e.Chat, e.Turn, e.Kind, e.Tool, e.Args, e.Summary, e.OK, int64(e.Duration))
	return err
}

// MatchQuery turns text a model or a person wrote into an FTS5 query that
// can only look for words: the text (its first MaxQueryBytes) is split
// into runs of letters, digits and marks, each run becomes a quoted
// string (a double quote in it doubled, though a run holds none), and
// the first MaxQueryTerms distinct ones are joined with OR. No FTS5
// syntax in the text (AND, OR, NOT, NEAR, *, ^, column filters, quotes,
// parentheses) survives as syntax. "" when the text holds no word.
func MatchQuery(text string) string {
	if len(text) > MaxQueryBytes {
		text = text[:MaxQueryBytes]
		for !utf8.ValidString(text) {
			text = text[:len(text)-1]
		}
	}
	seen := map[string]bool{}
	var terms []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	}) {
		if !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			continue // marks alone: the tokenizer would leave nothing of it
		}
		key := strings.ToLower(w)
		if seen[key] {
			continue
		}
		seen[key] = true
		terms = append(terms, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
		if len(terms) == MaxQueryTerms {
			break
		}
	}
	return strings.Join(terms, " OR ")
}
