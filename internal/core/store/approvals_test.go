package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

func park(t *testing.T, s *Store, now time.Time, ttl time.Duration) Approval {
	t.Helper()
	a := Approval{
		ID: NewApprovalID(), Chat: "c", Turn: 1, Tool: "run_shell", Args: `{"command":"ls"}`, ArgsHash: "h",
		Summary: "run_shell ls", CreatedAt: now, ExpiresAt: now.Add(ttl),
		Pending: contracts.Pending{Call: contracts.ToolCall{ID: "x", Name: "run_shell", Arguments: `{"command":"ls"}`},
			Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "list"}}},
	}
	if err := s.CreateApproval(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestApprovalIDs(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := NewApprovalID()
		if len(id) != 26 || seen[id] {
			t.Fatalf("id %q (len %d, repeated %v)", id, len(id), seen[id])
		}
		seen[id] = true
	}
}

func TestDecideOnce(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	a := park(t, s, now, time.Hour)
	got, err := s.Approval(ctx, a.ID)
	if err != nil || got.State != ApprovalPending || got.Pending.Call.Name != "run_shell" || !got.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("stored %+v, %v", got, err)
	}
	// Twenty taps at once, from several transports: exactly one decides.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Decide(ctx, a.ID, i%2 == 0, "test", now.Add(time.Minute)); err == nil {
				wins.Add(1)
			} else if !errors.Is(err, ErrDecided) {
				t.Errorf("losing decision: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d decisions won, want exactly 1", wins.Load())
	}
	got, _ = s.Approval(ctx, a.ID)
	if got.State != ApprovalApproved && got.State != ApprovalDenied {
		t.Fatalf("state %q", got.State)
	}
}

func TestDecideRefusals(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	if _, err := s.Decide(ctx, "nosuchid", true, "t", now); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	late := park(t, s, now, time.Minute)
	if _, err := s.Decide(ctx, late.ID, true, "t", now.Add(time.Minute)); !errors.Is(err, ErrExpired) {
		t.Errorf("decision at expiry: %v", err)
	}
	expired, err := s.ExpirePending(ctx, now.Add(2*time.Minute))
	if err != nil || len(expired) != 1 || expired[0].ID != late.ID {
		t.Fatalf("expired %+v, %v", expired, err)
	}
	if _, err := s.Decide(ctx, late.ID, true, "t", now); !errors.Is(err, ErrExpired) {
		t.Errorf("decision after expiry, with an old clock: %v", err)
	}
	again, _ := s.ExpirePending(ctx, now.Add(3*time.Minute))
	if len(again) != 0 {
		t.Errorf("expired twice: %+v", again)
	}
}

func TestApprovalTransitions(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	a := park(t, s, now, time.Hour)
	if err := s.Transition(ctx, a.ID, ApprovalApproved, ApprovalRunning, "", 0); !errors.Is(err, ErrState) {
		t.Fatalf("running before a decision: %v", err)
	}
	if _, err := s.Decide(ctx, a.ID, true, "api", now); err != nil {
		t.Fatal(err)
	}
	if err := s.Transition(ctx, a.ID, ApprovalApproved, ApprovalRunning, "", 0); err != nil {
		t.Fatal(err)
	}
	// A second claim, from a replay or a second worker, fails.
	if err := s.Transition(ctx, a.ID, ApprovalApproved, ApprovalRunning, "", 0); !errors.Is(err, ErrState) {
		t.Fatalf("second claim: %v", err)
	}
	if err := s.Transition(ctx, a.ID, ApprovalRunning, ApprovalDone, "executed ok", 7); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Approval(ctx, a.ID)
	if got.State != ApprovalDone || got.Outcome != "executed ok" || got.ResumedTurn != 7 || got.DecidedBy != "api" {
		t.Fatalf("final %+v", got)
	}
	list, _ := s.Approvals(ctx, ApprovalPending)
	if len(list) != 0 {
		t.Errorf("pending list %+v", list)
	}
	all, _ := s.Approvals(ctx)
	if len(all) != 1 {
		t.Errorf("all list %d", len(all))
	}
}

func TestApprovalsSurviveReopen(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/s.db"
	s := openAt(t, path)
	now := time.Now()
	a := park(t, s, now, time.Hour)
	s.Close()
	s2 := openAt(t, path)
	got, err := s2.Approval(context.Background(), a.ID)
	if err != nil || got.State != ApprovalPending {
		t.Fatalf("after reopen: %+v %v", got, err)
	}
	if _, err := s2.Decide(context.Background(), a.ID, true, "t", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
}

// TestLeases: a decision and a claim make the handle the holder of the
// request's lease; another handle sees it held while that process lives
// (here: the same handle), free once the holder is gone (a second handle
// of this process stands for a restarted one); only the holder marks the
// call started, once.
func TestLeases(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	first, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	now := time.Now()
	a := Approval{ID: NewApprovalID(), Chat: "c", Tool: "run_shell", ArgsHash: "h", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := first.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := first.Decide(ctx, a.ID, true, "owner", now)
	if err != nil || !first.LeaseHeld(got) || got.LeasePID != os.Getpid() {
		t.Fatalf("after Decide: %+v %v", got, err)
	}
	if err := first.MarkStarted(ctx, a.ID, 1); !errors.Is(err, ErrState) {
		t.Fatalf("marked started before it was claimed: %v", err)
	}
	if err := first.Claim(ctx, a.ID, ApprovalApproved, ApprovalRunning, ""); err != nil {
		t.Fatal(err)
	}
	second, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	got, _ = second.Approval(ctx, a.ID)
	if second.LeaseHeld(got) {
		t.Fatal("a second handle of this process (a restarted daemon) sees the lease held")
	}
	if err := second.MarkStarted(ctx, a.ID, 1); !errors.Is(err, ErrState) {
		t.Fatalf("a handle that does not hold the lease marked the call started: %v", err)
	}
	if err := first.MarkStarted(ctx, a.ID, 1); err != nil {
		t.Fatal(err)
	}
	if err := first.MarkStarted(ctx, a.ID, 2); !errors.Is(err, ErrState) {
		t.Fatalf("marked started twice: %v", err)
	}
	if got, _ = first.Approval(ctx, a.ID); !got.Started {
		t.Fatal("Started not read back")
	}
	// Another live process holds it; a dead or reused pid does not.
	got.LeaseOwner, got.LeasePID, got.LeaseStart = "other", os.Getppid(), 0
	if !second.LeaseHeld(got) {
		t.Error("a live holder (the parent process) was not seen")
	}
	if st, ok := processStart(os.Getppid()); ok {
		got.LeaseStart = st + 1
		if second.LeaseHeld(got) {
			t.Error("a reused pid (another start time) was taken for the holder")
		}
	}
	got.LeasePID = 1 << 30
	if second.LeaseHeld(got) {
		t.Error("a dead holder was seen alive")
	}
}

// TestDecisionAndItsAuditTogether: a decision is written with its audit
// row; a refused one writes neither. A holder that lost the lease to a
// recovery cannot close the request or record its exchange.
func TestDecisionAndItsAuditTogether(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	first, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	now := time.Now()
	a := Approval{ID: NewApprovalID(), Chat: "c", Tool: "run_shell", ArgsHash: "h", CreatedAt: now, ExpiresAt: now.Add(time.Hour),
		Pending: contracts.Pending{Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "go"}}}}
	if err := first.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	entry := &AuditEntry{At: now, Chat: "c", Kind: "approval_approved", Tool: "run_shell", Summary: "request " + a.ID}
	if _, err := first.DecideAudited(ctx, a.ID, true, "owner", now, entry); err != nil {
		t.Fatal(err)
	}
	if _, err := first.DecideAudited(ctx, a.ID, false, "again", now, &AuditEntry{At: now, Chat: "c", Kind: "approval_denied"}); !errors.Is(err, ErrDecided) {
		t.Fatalf("a second decision: %v", err)
	}
	rows, _ := first.Audit(ctx, AuditQuery{})
	if len(rows) != 1 || rows[0].Kind != "approval_approved" {
		t.Fatalf("audit %+v", rows)
	}
	if err := first.Claim(ctx, a.ID, ApprovalApproved, ApprovalRunning, ""); err != nil {
		t.Fatal(err)
	}
	// A restarted process takes the request over.
	second, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if err := second.Claim(ctx, a.ID, ApprovalRunning, ApprovalRunning, ""); err != nil {
		t.Fatal(err)
	}
	turn, _ := first.BeginTurn(ctx, "c", "go", now)
	if err := first.RecordExchange(ctx, turn, a.Pending.Messages, ApprovalClose{ID: a.ID, Outcome: "not run"}); !errors.Is(err, ErrState) {
		t.Fatalf("the old holder recorded the exchange: %v", err)
	}
	if err := first.CloseHeld(ctx, a.ID, "not run", turn); !errors.Is(err, ErrState) {
		t.Fatalf("the old holder closed the request: %v", err)
	}
	if err := second.CloseHeld(ctx, a.ID, "executed ok", turn); err != nil {
		t.Fatal(err)
	}
	if got, _ := second.Approval(ctx, a.ID); got.Outcome != "executed ok" {
		t.Fatalf("outcome %q", got.Outcome)
	}
}
