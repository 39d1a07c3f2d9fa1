package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
)

const childEnv = "SHELLDON_STORE_TEST_CHILD_DB"

// writeTurns writes n finished turns and n audit entries to chat.
func writeTurns(ctx context.Context, s *Store, chat string, n int) error {
	for i := range n {
		id, err := s.BeginTurn(ctx, chat, "hi", t0)
		if err != nil {
			return err
		}
		if _, err := s.AppendAudit(ctx, AuditEntry{At: t0, Chat: chat, Turn: id, Kind: KindToolCall}); err != nil {
			return err
		}
		end := TurnEnd{Status: StatusOK, At: t0, Messages: []contracts.Message{
			{Role: contracts.RoleUser, Text: fmt.Sprint(i)}, {Role: contracts.RoleAssistant, Text: "ok"}}}
		if err := s.FinishTurn(ctx, id, end); err != nil {
			return err
		}
	}
	return nil
}

// TestChildProcess is the other process of TestTwoProcesses.
func TestChildProcess(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("only run as a child of TestTwoProcesses")
	}
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := writeTurns(t.Context(), s, "child", 100); err != nil {
		t.Fatal(err)
	}
}

// A daemon and a terminal chat: two processes open one fresh file and write
// at once.
func TestTwoProcesses(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "two.db")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), path)
	if err != nil {
		_ = cmd.Wait()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	werr := writeTurns(t.Context(), s, "parent", 100)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.Bytes())
	}
	if werr != nil {
		t.Fatal(werr)
	}
	for _, chat := range []string{"parent", "child"} {
		h, err := s.History(t.Context(), chat, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 200 {
			t.Errorf("chat %s: %d messages, want 200", chat, len(h))
		}
	}
}
