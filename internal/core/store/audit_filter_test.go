package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// filterTrail writes 90 entries, oldest first, of three kinds (one rare),
// every seventh failed, in two chats; it returns them newest first.
func filterTrail(t *testing.T, s *Store) []AuditEntry {
	t.Helper()
	var all []AuditEntry
	for i := range 90 {
		kind := KindToolCall
		switch {
		case i%30 == 5:
			kind = "approval_expired"
		case i%3 == 1:
			kind = "approval_requested"
		}
		e := AuditEntry{At: t0.Add(time.Duration(i) * time.Second), Chat: []string{"web", "tg:1"}[i%2], Turn: int64(i/10 + 1),
			Kind: kind, Tool: "run_shell", Summary: "s", OK: i%7 != 3}
		id, err := s.AppendAudit(t.Context(), e)
		if err != nil {
			t.Fatal(err)
		}
		e.ID = id
		all = append(all, e)
	}
	slices.Reverse(all)
	return all
}

// TestAuditFilters: kind and outcome select exactly their entries, alone,
// together and with the other filters, and a walk of pages by Before
// visits each match once, newest first.
func TestAuditFilters(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	all := filterTrail(t, s)
	match := func(keep func(AuditEntry) bool) []AuditEntry {
		var out []AuditEntry
		for _, e := range all {
			if keep(e) {
				out = append(out, e)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		q    AuditQuery
		want []AuditEntry
	}{
		{"kind", AuditQuery{Kind: "approval_requested"}, match(func(e AuditEntry) bool { return e.Kind == "approval_requested" })},
		{"rare kind", AuditQuery{Kind: "approval_expired"}, match(func(e AuditEntry) bool { return e.Kind == "approval_expired" })},
		{"kind never written", AuditQuery{Kind: "tool_strike"}, nil},
		{"ok", AuditQuery{Outcome: OutcomeOK}, match(func(e AuditEntry) bool { return e.OK })},
		{"failed", AuditQuery{Outcome: OutcomeFailed}, match(func(e AuditEntry) bool { return !e.OK })},
		{"kind and failed", AuditQuery{Kind: KindToolCall, Outcome: OutcomeFailed}, match(func(e AuditEntry) bool { return e.Kind == KindToolCall && !e.OK })},
		{"kind and ok", AuditQuery{Kind: "approval_requested", Outcome: OutcomeOK}, match(func(e AuditEntry) bool { return e.Kind == "approval_requested" && e.OK })},
		{"chat, kind, failed", AuditQuery{Chat: "web", Kind: KindToolCall, Outcome: OutcomeFailed},
			match(func(e AuditEntry) bool { return e.Chat == "web" && e.Kind == KindToolCall && !e.OK })},
		{"turn and kind", AuditQuery{Turn: 3, Kind: "approval_requested"}, match(func(e AuditEntry) bool { return e.Turn == 3 && e.Kind == "approval_requested" })},
		{"tool and failed", AuditQuery{Tool: "run_shell", Outcome: OutcomeFailed}, match(func(e AuditEntry) bool { return !e.OK })},
		{"other tool and failed", AuditQuery{Tool: "get_time", Outcome: OutcomeFailed}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Every match in one read, then in pages of 4 by Before.
			q := tc.q
			q.Limit = MaxAuditLimit
			got, err := s.Audit(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Audit(%+v) (-want +got):\n%s", q, diff)
			}
			var paged []AuditEntry
			q.Limit = 4
			for range 100 {
				page, err := s.Audit(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				paged = append(paged, page...)
				if len(page) < q.Limit {
					break
				}
				q.Before = page[len(page)-1].ID
			}
			if diff := cmp.Diff(tc.want, paged); diff != "" {
				t.Errorf("pages of %+v (-want +got):\n%s", tc.q, diff)
			}
		})
	}
}

// TestAuditFilterRejects: a kind that is not a plain lowercase name and
// an outcome other than ok or failed are refused before any SQL runs.
func TestAuditFilterRejects(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for _, q := range []AuditQuery{
		{Kind: "Tool_Call"}, {Kind: "tool call"}, {Kind: "tool_call'--"}, {Kind: "kind:x"}, {Kind: strings.Repeat("k", 65)},
		{Kind: "tool\x00call"}, {Kind: "tool_call\u202e"}, {Kind: "ｔool"}, {Kind: "tool_call\n"},
		{Outcome: "OK"}, {Outcome: "true"}, {Outcome: "1"}, {Outcome: "failure"}, {Outcome: " ok"},
	} {
		if got, err := s.Audit(t.Context(), q); !errors.Is(err, ErrBadAuditQuery) || got != nil {
			t.Errorf("Audit(%+v) = %v, %v; want ErrBadAuditQuery", q, got, err)
		}
	}
	for _, k := range append(AuditKinds(), "a", "x.y-z_9", strings.Repeat("k", 64)) {
		if !ValidAuditKind(k) {
			t.Errorf("ValidAuditKind(%q) = false", k)
		}
	}
}

// TestAuditQueryPlans: every filter pages by an index, never by sorting
// and never by a scan of the whole trail, however rare its value (an
// entry that is OK is most of the trail: the walk back from the newest
// finds a page at once). EXPLAIN QUERY PLAN of the store's own SQL.
func TestAuditQueryPlans(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for _, tc := range []struct {
		q    AuditQuery
		want string // in the plan
	}{
		{AuditQuery{}, "SCAN audit"},
		{AuditQuery{Before: 9}, "INTEGER PRIMARY KEY (rowid<?)"},
		{AuditQuery{Kind: KindToolCall}, "USING INDEX audit_kind (kind=?)"},
		{AuditQuery{Kind: KindToolCall, Before: 9}, "INDEX audit_kind (kind=? AND id<?)"},
		{AuditQuery{Kind: KindToolCall, Outcome: OutcomeFailed, Before: 9}, "INDEX audit_kind (kind=? AND id<?)"},
		{AuditQuery{Kind: KindToolCall, Outcome: OutcomeOK}, "USING INDEX audit_kind (kind=?)"},
		{AuditQuery{Outcome: OutcomeFailed}, "USING INDEX audit_failed"},
		{AuditQuery{Outcome: OutcomeFailed, Before: 9}, "USING INDEX audit_failed (id<?)"},
		{AuditQuery{Outcome: OutcomeOK, Before: 9}, "INTEGER PRIMARY KEY (rowid<?)"},
		{AuditQuery{Chat: "web", Kind: KindToolCall}, "USING INDEX audit_"},
		{AuditQuery{Chat: "web", Outcome: OutcomeFailed}, "USING INDEX audit_"},
		{AuditQuery{Turn: 3, Outcome: OutcomeFailed, Before: 9}, "USING INDEX audit_"},
	} {
		query, args, err := auditSQL(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		all := strings.Join(plan, "; ")
		t.Logf("%+v: %s", tc.q, all)
		// A bare SCAN walks the table (only the unfiltered trail may:
		// LIMIT stops it at the newest); a TEMP B-TREE sorts every match.
		walks := slices.Contains(plan, "SCAN audit") && tc.want != "SCAN audit"
		if !strings.Contains(all, tc.want) || walks || strings.Contains(all, "TEMP B-TREE") {
			t.Errorf("%+v: plan %q, want %q and no sort", tc.q, all, tc.want)
		}
	}
}

// auditKindLiteral is how the code that writes the audit names a kind:
// a string literal starting with one of the trail's subjects.
var auditKindLiteral = regexp.MustCompile(`"((?:tool|approval|skill|schedule|memory|config)_[a-z_]+)"`)

// notAuditKinds are literals of that shape that are not kinds (the JSON
// of a stored message, body.go).
var notAuditKinds = []string{"tool_calls", "tool_results"}

// TestAuditKindsAreWritten: AuditKinds names every kind the code in
// internal/core and internal/app writes, and only those, so the web
// page's filter offers each (one source of names: the writers keep
// their constants, this catalogue is checked against them).
func TestAuditKindsAreWritten(t *testing.T) {
	t.Parallel()
	written := map[string]bool{}
	for _, dir := range []string{"..", filepath.Join("..", "..", "app")} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
				path == filepath.Join("..", "store", "audit.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range auditKindLiteral.FindAllStringSubmatch(string(b), -1) {
				if !slices.Contains(notAuditKinds, m[1]) {
					written[m[1]] = true
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// core.go writes this one by its name here, store.KindToolCall.
	written[KindToolCall] = true
	if len(written) < 20 {
		t.Fatalf("found only %d kinds in the code: the scan is broken", len(written))
	}
	kinds := AuditKinds()
	for k := range written {
		if !slices.Contains(kinds, k) {
			t.Errorf("the code writes audit kind %q, which AuditKinds does not list", k)
		}
	}
	seen := map[string]bool{}
	for _, k := range kinds {
		if !written[k] {
			t.Errorf("AuditKinds lists %q, which no code writes", k)
		}
		if seen[k] {
			t.Errorf("AuditKinds lists %q twice", k)
		}
		seen[k] = true
	}
}
