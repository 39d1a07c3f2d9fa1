package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAudit(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	var all []AuditEntry // oldest first
	for i := range 60 {
		e := AuditEntry{
			At: t0.Add(time.Duration(i) * time.Second), Chat: fmt.Sprint("chat", i%3), Turn: int64(i%4 + 1),
			Kind: KindToolCall, Tool: "read_file", Args: fmt.Sprintf(`{"path":"f%d"}`, i), Summary: "read",
			OK: i%2 == 0, Duration: time.Duration(i) * time.Millisecond,
		}
		id, err := s.AppendAudit(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		e.ID = id
		all = append(all, e)
	}
	newest := func(keep func(AuditEntry) bool, n int) []AuditEntry {
		var out []AuditEntry
		for i := len(all) - 1; i >= 0 && len(out) < n; i-- {
			if keep(all[i]) {
				out = append(out, all[i])
			}
		}
		return out
	}
	every := func(AuditEntry) bool { return true }
	for _, tc := range []struct {
		name string
		q    AuditQuery
		want []AuditEntry
	}{
		{"default limit", AuditQuery{}, newest(every, DefaultAuditLimit)},
		{"limit", AuditQuery{Limit: 3}, newest(every, 3)},
		{"limit above max", AuditQuery{Limit: 1 << 30}, newest(every, 60)},
		{"chat", AuditQuery{Chat: "chat1", Limit: 100}, newest(func(e AuditEntry) bool { return e.Chat == "chat1" }, 100)},
		{"turn", AuditQuery{Turn: 2, Limit: 5}, newest(func(e AuditEntry) bool { return e.Turn == 2 }, 5)},
		{"chat and turn", AuditQuery{Chat: "chat0", Turn: 1}, newest(func(e AuditEntry) bool { return e.Chat == "chat0" && e.Turn == 1 }, 50)},
		{"no match", AuditQuery{Chat: "nobody"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.Audit(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Audit(%+v) (-want +got):\n%s", tc.q, diff)
			}
		})
	}
}

func TestAuditRejects(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for name, e := range map[string]AuditEntry{
		"no kind": {At: t0},
		"no time": {Kind: KindToolCall},
	} {
		if _, err := s.AppendAudit(t.Context(), e); err == nil {
			t.Errorf("%s: AppendAudit succeeded", name)
		}
	}
}
