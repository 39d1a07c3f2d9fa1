package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
)

// TestIsTerminal: only a terminal is one. /dev/null is a character device
// too, and was taken for a terminal, so `init` and `config set-secret`
// with input from /dev/null tried to prompt.
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "input"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	closed, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	var nilFile *os.File
	for name, r := range map[string]io.Reader{
		"/dev/null": devNull, "pipe": pr, "file": file, "closed": closed, "nil file": nilFile,
		"not a file": strings.NewReader("x"),
	} {
		if IsTerminal(r) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if !IsTerminal(tty) {
		t.Error("a pty is not taken for a terminal")
	}
}

// scriptedChat answers every message with one outcome and records the
// conversation each message went to.
type scriptedChat struct {
	out core.Outcome
	err error

	mu    sync.Mutex
	chats []string
}

func (s *scriptedChat) Send(_ context.Context, chat, _ string, _ core.Events) (core.Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats = append(s.chats, chat)
	return s.out, s.err
}

// TestOnceIsItsOwnConversation: a one-shot message without a chat name
// starts a new conversation each time, never the interactive chat's; a
// name given is used; the interactive chat keeps its own.
func TestOnceIsItsOwnConversation(t *testing.T) {
	t.Parallel()
	chat := &scriptedChat{out: core.Outcome{Reply: "ok"}}
	now := func() time.Time { return time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC) }
	term := &Terminal{Chat: chat, Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Now: now}
	term.Once(context.Background(), "one")
	term.Once(context.Background(), "two")
	named := &Terminal{Chat: chat, ChatName: "work", Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	named.Once(context.Background(), "three")
	interactive := &Terminal{Chat: chat, In: strings.NewReader("four\n"), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	if err := interactive.Run(context.Background()); err != nil {
		t.Fatal(err)
	}

	c := chat.chats
	if len(c) != 4 {
		t.Fatalf("chats = %q", c)
	}
	for _, name := range c[:2] {
		if !strings.HasPrefix(name, "once-20260102-150405-") || len(name) != len("once-20260102-150405-")+8 {
			t.Errorf("one-shot conversation %q, want once-<time>-<8 hex digits>", name)
		}
	}
	if c[0] == c[1] {
		t.Errorf("two one-shot messages share the conversation %q", c[0])
	}
	if c[2] != "work" || c[3] != DefaultChat {
		t.Errorf("named one-shot went to %q, the interactive chat to %q", c[2], c[3])
	}
}

// TestOnceStatusAndStreams: only an answer reaches stdout; a failed turn
// (the provider's failure is a reply that says so, with Stopped "error")
// or a message that starts no turn goes to stderr, with a status a script
// can tell apart.
func TestOnceStatusAndStreams(t *testing.T) {
	t.Parallel()
	parked := core.ApprovalView{ID: "req1", Tool: "write_file", Summary: "Tool: write_file"}
	cases := []struct {
		name               string
		out                core.Outcome
		err                error
		code               int
		wantOut, wantErr   string
		emptyOut, emptyErr bool
	}{
		{name: "answered", out: core.Outcome{Reply: "It is noon."}, code: ExitAnswered, wantOut: "It is noon.\n", emptyErr: true},
		{name: "provider failed",
			out:  core.Outcome{Reply: "I could not get an answer from the model: provider openai: 401 bad key", Stopped: contracts.StopError},
			code: ExitFailed, wantErr: "error: I could not get an answer from the model: provider openai: 401", emptyOut: true},
		{name: "failed inside shelldon",
			out:  core.Outcome{Reply: "Sorry, this turn failed inside shelldon: spawn worker: no", Stopped: contracts.StopError},
			err:  fmt.Errorf("core: turn 3: spawn worker: no"),
			code: ExitFailed, wantErr: "error: Sorry, this turn failed inside shelldon: spawn worker: no", emptyOut: true},
		{name: "no turn", err: fmt.Errorf("core: load history: disk on fire"),
			code: ExitFailed, wantErr: "error: core: load history: disk on fire", emptyOut: true},
		{name: "bad input", err: fmt.Errorf("%w: the message is empty", core.ErrBadInput),
			code: ExitBadInput, wantErr: "the message is empty", emptyOut: true},
		{name: "stopped short", out: core.Outcome{Reply: "I ran out of time.", Stopped: contracts.StopDeadline},
			code: ExitStopped, wantOut: "I ran out of time.\n", emptyErr: true},
		{name: "waits for approval", out: core.Outcome{Reply: "Request req1 waits.", Stopped: contracts.StopApproval, Approvals: []core.ApprovalView{parked}},
			code: ExitApproval, wantOut: "Request req1 waits.\n", wantErr: "shelldon approvals approve req1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errw bytes.Buffer
			term := &Terminal{Chat: &scriptedChat{out: tc.out, err: tc.err}, Out: &out, Err: &errw}
			code, _ := term.Once(context.Background(), "hi")
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if tc.wantOut != "" && out.String() != tc.wantOut {
				t.Errorf("stdout = %q, want %q", out.String(), tc.wantOut)
			}
			if tc.emptyOut && out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", out.String())
			}
			if tc.wantErr != "" && !strings.Contains(errw.String(), tc.wantErr) {
				t.Errorf("stderr = %q, want %q", errw.String(), tc.wantErr)
			}
			if tc.emptyErr && errw.Len() != 0 {
				t.Errorf("stderr = %q, want nothing", errw.String())
			}
		})
	}
}
