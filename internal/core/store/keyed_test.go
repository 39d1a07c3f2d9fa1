package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

// TestBeginKeyedTurn: a message's key begins its turn once; a second
// delivery gets the turn that stands, and only a turn a crash cut short
// before it filed anything runs again, a bounded number of times.
func TestBeginKeyedTurn(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db")
	crashed := openAt(t, path)

	// A message that ran to its end.
	k, err := crashed.BeginKeyedTurn(ctx, "c", "done", "hi", t0, 3)
	if err != nil || k.Turn == 0 || k.Previous != nil || k.Attempts != 0 || k.Rerun() {
		t.Fatalf("first BeginKeyedTurn = %+v, %v; want a new turn", k, err)
	}
	if err := crashed.FinishTurn(ctx, k.Turn, TurnEnd{Status: StatusOK, Reply: "hello", Messages: []contracts.Message{user("hi"), assistant("hello")}, At: t0}); err != nil {
		t.Fatal(err)
	}
	finished := k.Turn
	// While it runs, the same key is busy, in this process.
	running, err := crashed.BeginKeyedTurn(ctx, "c", "running", "hi", t0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crashed.BeginKeyedTurn(ctx, "c", "running", "hi", t0, 3); !errors.Is(err, ErrKeyBusy) {
		t.Errorf("BeginKeyedTurn of a running key = %v, want ErrKeyBusy", err)
	}
	// Cut short by the crash: one that filed nothing, one that filed a
	// request for the owner.
	filing, err := crashed.BeginKeyedTurn(ctx, "c", "filed", "write it", t0, 3)
	if err != nil {
		t.Fatal(err)
	}
	req := Approval{ID: NewApprovalID(), Chat: "c", Turn: filing.Turn, Tool: "write_file", ArgsHash: "h", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	if err := crashed.CreateApproval(ctx, req); err != nil {
		t.Fatal(err)
	}
	// A key whose turns keep being cut short.
	for range 3 {
		if _, err := crashed.db.Exec(`INSERT INTO turns (chat, input, status, started_at, error, request_key) VALUES ('c', 'boom', 'error', 1, 'interrupted', 'poison')`); err != nil {
			t.Fatal(err)
		}
	}
	// A turn of another live process (our parent), and the same key in
	// another chat.
	if _, err := crashed.db.Exec(`INSERT INTO turns (chat, input, status, started_at, owner, pid, request_key) VALUES ('c', 'x', 'running', 1, 'other', ?, 'elsewhere')`, os.Getppid()); err != nil {
		t.Fatal(err)
	}
	if err := crashed.Close(); err != nil {
		t.Fatal(err)
	}

	s := openAt(t, path)
	at := t0.Add(time.Minute)
	// No RecoverRunning: BeginKeyedTurn itself sees that the holder is gone.
	again, err := s.BeginKeyedTurn(ctx, "c", "running", "hi", at, 3)
	if err != nil || again.Turn == 0 || !again.Rerun() || again.Attempts != 1 || again.Previous.ID != running.Turn {
		t.Errorf("BeginKeyedTurn after a crash = %+v, %v; want a rerun of turn %d", again, err, running.Turn)
	}
	if info, err := s.Turn(ctx, running.Turn); err != nil || info.Status != StatusError || info.Error != Interrupted {
		t.Errorf("the cut-short turn = %+v, %v; want it marked interrupted", info, err)
	}
	tests := []struct {
		name, chat, key string
		wantTurn        bool
		wantPrev        int64
		wantFiled       int
		wantErr         error
	}{
		{name: "finished stands", chat: "c", key: "done", wantPrev: finished},
		{name: "filed a request: not run again", chat: "c", key: "filed", wantPrev: filing.Turn, wantFiled: 1},
		{name: "cut short too often", chat: "c", key: "poison"},
		{name: "running in a live process", chat: "c", key: "elsewhere", wantErr: ErrKeyBusy},
		{name: "a key is per chat", chat: "d", key: "done", wantTurn: true},
	}
	for _, tt := range tests {
		k, err := s.BeginKeyedTurn(ctx, tt.chat, tt.key, "hi", at, 3)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if (k.Turn != 0) != tt.wantTurn || k.Filed != tt.wantFiled || (tt.wantPrev != 0 && (k.Previous == nil || k.Previous.ID != tt.wantPrev)) {
			t.Errorf("%s: %+v (previous %+v); want turn begun %v, previous %d, filed %d", tt.name, k, k.Previous, tt.wantTurn, tt.wantPrev, tt.wantFiled)
		}
	}
	if k, _ := s.BeginKeyedTurn(ctx, "c", "done", "hi", at, 3); k.Previous == nil || k.Previous.Reply != "hello" {
		t.Errorf("the finished turn's outcome = %+v", k.Previous)
	}
	if _, err := s.BeginKeyedTurn(ctx, "c", "", "hi", at, 3); err == nil {
		t.Error("an empty key was accepted")
	}
}
