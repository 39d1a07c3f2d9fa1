package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// sessionID is the id of the session whose cookie holds value, as the web
// layer computes it.
func sessionID(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:])
}

// sessionAt is a session of cookie value created and last seen at t.
func sessionAt(value string, t time.Time) Session {
	return Session{ID: sessionID(value), CSRF: "csrf-" + value, Created: t, LastSeen: t, Agent: "Mozilla/5.0"}
}

var sessionEpoch = time.Unix(1_800_000_000, 0)

// A session is stored, read, touched (never back in time) and deleted.
func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	// Not in UTC: the store reads times back in UTC, the same instants.
	created := sessionEpoch.In(time.FixedZone("CEST", 2*3600)).Add(123 * time.Nanosecond)
	want := Session{ID: sessionID("cookie-1"), CSRF: "tok", Created: created, LastSeen: created, Agent: "Firefox"}
	if err := s.CreateSession(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Session(ctx, want.ID, created.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Session (-want +got):\n%s", diff)
	}
	if got.Created.Location() != time.UTC {
		t.Errorf("Created in %v, want UTC", got.Created.Location())
	}

	later := created.Add(time.Minute)
	if err := s.TouchSession(ctx, want.ID, later); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchSession(ctx, want.ID, created.Add(time.Second)); err != nil { // earlier: no change
		t.Fatal(err)
	}
	got, err = s.Session(ctx, want.ID, later)
	if err != nil || !got.LastSeen.Equal(later) || !got.Created.Equal(created) {
		t.Fatalf("after touch: %+v, %v; want LastSeen %v", got, err, later)
	}

	if err := s.TouchSession(ctx, sessionID("unknown"), later); !errors.Is(err, ErrNoSession) {
		t.Errorf("TouchSession(unknown) = %v, want ErrNoSession", err)
	}
	if err := s.DeleteSession(ctx, want.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, want.ID, created); !errors.Is(err, ErrNoSession) {
		t.Errorf("Session after delete = %v, want ErrNoSession", err)
	}
	if err := s.DeleteSession(ctx, want.ID); err != nil {
		t.Errorf("deleting a deleted session: %v", err)
	}
}

// A zero LastSeen is Created; an over-long User-Agent is cut to 200 bytes
// at a character boundary.
func TestCreateSessionDefaults(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	agent := strings.Repeat("é", 150) // 300 bytes
	if err := s.CreateSession(ctx, Session{ID: sessionID("c"), CSRF: "x", Created: sessionEpoch, Agent: agent}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Session(ctx, sessionID("c"), sessionEpoch)
	if err != nil {
		t.Fatal(err)
	}
	if !got.LastSeen.Equal(sessionEpoch) {
		t.Errorf("LastSeen = %v, want Created %v", got.LastSeen, sessionEpoch)
	}
	if got.Agent != agent[:maxAgentBytes] || !utf8.ValidString(got.Agent) {
		t.Errorf("Agent is %d bytes (valid UTF-8: %v), want the first %d", len(got.Agent), utf8.ValidString(got.Agent), maxAgentBytes)
	}
	odd := "a" + strings.Repeat("é", 150) // the 200th byte starts a character
	if c := capAgent(odd); len(c) != maxAgentBytes-1 || !utf8.ValidString(c) {
		t.Errorf("capAgent of %d bytes = %d bytes, valid %v", len(odd), len(c), utf8.ValidString(c))
	}
}

// A session last seen exactly at idleAfter is alive; 1ns later it is
// expired, and Session deletes it.
func TestSessionIdleBoundary(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	sess := sessionAt("idle", sessionEpoch)
	if err := s.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, sess.ID, sess.LastSeen); err != nil {
		t.Fatalf("Session last seen exactly at idleAfter: %v", err)
	}
	if _, err := s.Session(ctx, sess.ID, sess.LastSeen.Add(time.Nanosecond)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("Session idle 1ns too long = %v, want ErrNoSession", err)
	}
	// Gone, whatever the next caller's idle limit.
	if _, err := s.Session(ctx, sess.ID, sessionEpoch.Add(-time.Hour)); !errors.Is(err, ErrNoSession) {
		t.Errorf("idle session still readable: %v", err)
	}
	if all, err := s.Sessions(ctx); err != nil || len(all) != 0 {
		t.Errorf("Sessions after idle expiry = %+v, %v", all, err)
	}
}

func TestRevokeSessions(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	for i := range 3 {
		if err := s.CreateSession(ctx, sessionAt(fmt.Sprint(i), sessionEpoch)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.RevokeSessions(ctx); err != nil || n != 3 {
		t.Fatalf("RevokeSessions = %d, %v; want 3", n, err)
	}
	if n, err := s.RevokeSessions(ctx); err != nil || n != 0 {
		t.Errorf("RevokeSessions again = %d, %v; want 0", n, err)
	}
	if _, err := s.Session(ctx, sessionID("0"), sessionEpoch); !errors.Is(err, ErrNoSession) {
		t.Errorf("revoked session readable: %v", err)
	}
}

// ExpireSessions deletes the sessions last seen before idleAfter, not at
// it, and Sessions lists the rest, seen last first, without their CSRF.
func TestExpireSessions(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	for i := range 5 {
		if err := s.CreateSession(ctx, sessionAt(fmt.Sprint(i), sessionEpoch.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.ExpireSessions(ctx, sessionEpoch.Add(2*time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("ExpireSessions = %d, %v; want 2", n, err)
	}
	got, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []Session
	for _, i := range []int{4, 3, 2} {
		sess := sessionAt(fmt.Sprint(i), sessionEpoch.Add(time.Duration(i)*time.Minute).UTC())
		sess.CSRF = ""
		want = append(want, sess)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sessions after expiry (-want +got):\n%s", diff)
	}
}

// Beyond maxSessions, CreateSession deletes the session seen longest ago,
// and never the one it creates.
func TestSessionCap(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	at := func(i int) time.Time { return sessionEpoch.Add(time.Duration(i) * time.Second) }
	for i := range maxSessions {
		// Created in reverse of last seen: the cap goes by last seen.
		sess := sessionAt(fmt.Sprint(i), at(-i))
		sess.LastSeen = at(i)
		if err := s.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
	}
	if all, _ := s.Sessions(ctx); len(all) != maxSessions {
		t.Fatalf("%d sessions, want %d", len(all), maxSessions)
	}
	if err := s.CreateSession(ctx, sessionAt("new", at(maxSessions))); err != nil {
		t.Fatal(err)
	}
	all, err := s.Sessions(ctx)
	if err != nil || len(all) != maxSessions {
		t.Fatalf("after one more: %d sessions, %v; want %d", len(all), err, maxSessions)
	}
	if _, err := s.Session(ctx, sessionID("0"), at(-maxSessions)); !errors.Is(err, ErrNoSession) {
		t.Errorf("the session seen longest ago survived the cap: %v", err)
	}
	for _, v := range []string{"1", "new"} {
		if _, err := s.Session(ctx, sessionID(v), at(-maxSessions)); err != nil {
			t.Errorf("session %s: %v", v, err)
		}
	}
	// A new session seen before all the others is kept; the oldest other goes.
	if err := s.CreateSession(ctx, sessionAt("stale", at(-1000))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, sessionID("stale"), at(-maxSessions*100)); err != nil {
		t.Errorf("the new session was capped away: %v", err)
	}
	if _, err := s.Session(ctx, sessionID("1"), at(-maxSessions)); !errors.Is(err, ErrNoSession) {
		t.Errorf("session 1, now the oldest other, survived the cap: %v", err)
	}
	if all, _ := s.Sessions(ctx); len(all) != maxSessions {
		t.Errorf("%d sessions, want %d", len(all), maxSessions)
	}
}

// Bad input is refused with an error that names the call, and nothing is
// stored.
func TestSessionBadInput(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	taken := sessionAt("taken", sessionEpoch)
	if err := s.CreateSession(ctx, taken); err != nil {
		t.Fatal(err)
	}
	good := sessionAt("good", sessionEpoch)
	with := func(f func(*Session)) Session { sess := good; f(&sess); return sess }
	for _, tc := range []struct {
		name string
		sess Session
		is   error // the error wrapped, when one is
	}{
		{"empty id", with(func(x *Session) { x.ID = "" }), errSessionID},
		{"63 digits", with(func(x *Session) { x.ID = x.ID[:63] }), errSessionID},
		{"65 digits", with(func(x *Session) { x.ID += "0" }), errSessionID},
		{"uppercase hex", with(func(x *Session) { x.ID = strings.ToUpper(x.ID) }), errSessionID},
		{"not hex", with(func(x *Session) { x.ID = "g" + x.ID[1:] }), errSessionID},
		{"the cookie's value", with(func(x *Session) { x.ID = "good" }), errSessionID},
		{"64 bytes, not hex", with(func(x *Session) { x.ID = strings.Repeat("é", 32) }), errSessionID},
		{"empty csrf", with(func(x *Session) { x.CSRF = "" }), errEmptyArgument},
		{"no created", with(func(x *Session) { x.Created = time.Time{} }), errEmptyArgument},
		{"seen before created", with(func(x *Session) { x.LastSeen = x.Created.Add(-1) }), nil},
		{"duplicate id", with(func(x *Session) { x.ID = taken.ID }), errSessionExists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.CreateSession(ctx, tc.sess)
			if err == nil {
				t.Fatal("CreateSession accepted it")
			}
			if !strings.HasPrefix(err.Error(), "store: create session: ") {
				t.Errorf("error %q does not name the call", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v, want %v", err, tc.is)
			}
		})
	}
	// The duplicate left the first as it was.
	if got, err := s.Session(ctx, taken.ID, sessionEpoch); err != nil || got.CSRF != taken.CSRF {
		t.Errorf("the taken session = %+v, %v", got, err)
	}
	if all, err := s.Sessions(ctx); err != nil || len(all) != 1 {
		t.Errorf("after bad input: %d sessions, %v; want 1", len(all), err)
	}
	// The other calls refuse a malformed id too (a caller passing the
	// cookie's value instead of its hash finds out at once).
	bad := strings.ToUpper(good.ID)
	if _, err := s.Session(ctx, bad, sessionEpoch); !errors.Is(err, errSessionID) {
		t.Errorf("Session(uppercase) = %v", err)
	}
	if err := s.TouchSession(ctx, bad, sessionEpoch); !errors.Is(err, errSessionID) {
		t.Errorf("TouchSession(uppercase) = %v", err)
	}
	if err := s.DeleteSession(ctx, bad); !errors.Is(err, errSessionID) {
		t.Errorf("DeleteSession(uppercase) = %v", err)
	}
	if _, err := s.Session(ctx, taken.ID, time.Time{}); !errors.Is(err, errEmptyArgument) {
		t.Errorf("Session(zero idleAfter) = %v", err)
	}
	if _, err := s.ExpireSessions(ctx, time.Time{}); !errors.Is(err, errEmptyArgument) {
		t.Errorf("ExpireSessions(zero) = %v", err)
	}
}

// The table holds only 64-hex ids, never a cookie's value: the store
// checks, and the schema's CHECK refuses what gets past it.
func TestSessionTableHoldsOnlyHashes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	values := []string{"v1", "a-longer-cookie-value", strings.Repeat("A", 64), strings.Repeat("g", 64)}
	hashes := map[string]bool{}
	for _, v := range values {
		if err := s.CreateSession(ctx, Session{ID: v, CSRF: "x", Created: sessionEpoch}); !errors.Is(err, errSessionID) {
			t.Errorf("CreateSession with the cookie value %q as id = %v", v, err)
		}
		if err := s.CreateSession(ctx, Session{ID: sessionID(v), CSRF: "token", Created: sessionEpoch, Agent: "Firefox"}); err != nil {
			t.Fatal(err)
		}
		hashes[sessionID(v)] = true
	}
	for _, bad := range []string{"v1", strings.Repeat("A", 64), strings.Repeat("f", 63), strings.Repeat("f", 65)} {
		if _, err := s.db.ExecContext(ctx, `INSERT INTO web_sessions (id, csrf, created_at, last_seen) VALUES (?, 'x', 1, 1)`, bad); err == nil {
			t.Errorf("the schema accepted id %q", bad)
		}
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO web_sessions (id, csrf, created_at, last_seen) VALUES (?, '', 1, 1)`, sessionID("no csrf")); err == nil {
		t.Error("the schema accepted an empty csrf")
	}

	rows, err := s.db.QueryContext(ctx, `SELECT id, csrf, agent FROM web_sessions`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, csrf, agent string
		if err := rows.Scan(&id, &csrf, &agent); err != nil {
			t.Fatal(err)
		}
		n++
		if checkSessionID(id) != nil || !hashes[id] {
			t.Errorf("stored id %q is not the hash of a cookie value", id)
		}
		for _, v := range values {
			for _, col := range []string{id, csrf, agent} {
				if strings.Contains(col, v) {
					t.Errorf("a stored column %q holds the cookie value %q", col, v)
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(values) {
		t.Errorf("%d rows, want %d", n, len(values))
	}
}

// Sessions survive closing and opening the database again.
func TestSessionsSurviveReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shelldon.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	want := sessionAt("persist", sessionEpoch.Add(42*time.Nanosecond).UTC())
	want.LastSeen = want.LastSeen.Add(time.Hour)
	if err := s.CreateSession(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	got, err := s.Session(t.Context(), want.ID, want.LastSeen)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after reopen (-want +got):\n%s", diff)
	}
}
