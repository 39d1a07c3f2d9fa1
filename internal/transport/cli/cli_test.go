package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
)

// fakeChat answers each message; a message "slow" blocks until its turn is
// cancelled, as a long model call would.
type fakeChat struct {
	mu       sync.Mutex
	got      []string
	started  chan struct{}
	canceled bool
}

func (f *fakeChat) Send(ctx context.Context, chat, text string, ev core.Events) (core.Outcome, error) {
	f.mu.Lock()
	f.got = append(f.got, text)
	f.mu.Unlock()
	if text == "slow" {
		close(f.started)
		<-ctx.Done()
		f.mu.Lock()
		f.canceled = true
		f.mu.Unlock()
		return core.Outcome{Reply: "Turn cancelled.", Stopped: contracts.StopCancelled}, nil
	}
	if ev.Tool != nil {
		ev.Tool(contracts.ToolEvent{Phase: contracts.PhaseStart, Tool: "get_time", Arguments: "{}"})
		ev.Tool(contracts.ToolEvent{Phase: contracts.PhaseEnd, Tool: "get_time", OK: true, Summary: "12:00", Duration: 3 * time.Millisecond})
	}
	if ev.Text != nil {
		ev.Text("echo: ")
		ev.Text(text)
	}
	return core.Outcome{Reply: "echo: " + text}, nil
}

// gatedReader hands out its lines only when allowed, so the test can press
// Ctrl-C while a turn runs.
type gatedReader struct {
	lines chan string
	buf   []byte
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if len(g.buf) == 0 {
		line, ok := <-g.lines
		if !ok {
			return 0, io.EOF
		}
		g.buf = []byte(line)
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

func TestCtrlCCancelsTheTurnNotTheProgram(t *testing.T) {
	t.Parallel()
	chat := &fakeChat{started: make(chan struct{})}
	in := &gatedReader{lines: make(chan string, 4)}
	ints := make(chan os.Signal, 1)
	var out syncBuffer
	term := &Terminal{Chat: chat, In: in, Out: &out, Err: &out, Interrupts: ints}
	done := make(chan error, 1)
	go func() { done <- term.Run(context.Background()) }()

	in.lines <- "slow\n"
	<-chat.started
	ints <- os.Interrupt // Ctrl-C during the turn
	in.lines <- "after\n"
	close(in.lines)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the chat did not go on after Ctrl-C")
	}
	if !chat.canceled {
		t.Error("the turn was not cancelled")
	}
	if len(chat.got) != 2 || chat.got[1] != "after" {
		t.Errorf("messages = %q; the program should take the next message", chat.got)
	}
	s := out.String()
	for _, want := range []string{"cancelling this turn", "Turn cancelled.", "echo: after", "⚙ get_time", "✓ get_time"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Count(s, "echo: after") != 1 {
		t.Errorf("a streamed reply was printed twice:\n%s", s)
	}
}

func TestOnceSeparatesReplyAndToolCalls(t *testing.T) {
	t.Parallel()
	var out, errw bytes.Buffer
	term := &Terminal{Chat: &fakeChat{}, Out: &out, Err: &errw}
	if _, err := term.Once(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	if out.String() != "echo: hi\n" {
		t.Errorf("stdout = %q, want only the reply", out.String())
	}
	if !strings.Contains(errw.String(), "get_time") {
		t.Errorf("stderr = %q, want the tool call", errw.String())
	}
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ in, want string }{
		"plain":           {"hello\n\tworld", "hello\n\tworld"},
		"clear screen":    {"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		"set title":       {"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		"carriage return": {"ok\rFAKE", `ok\x0dFAKE`},
		"C1 CSI":          {"\u009b31m", `\x9b31m`},
		"bidi override":   {"abc\u202edcba", `abc\u202edcba`},
		"bidi isolate":    {"\u2066x\u2069", `\u2066x\u2069`},
		"backspace":       {"secret\b\b\b\b\b\b", `secret\x08\x08\x08\x08\x08\x08`},
		"unicode stays":   {"ünïcødé 日本 🐢", "ünïcødé 日本 🐢"},
		"delete":          {"a\x7fb", `a\x7fb`},
	}
	for name, tc := range cases {
		if got := Sanitize(tc.in); got != tc.want {
			t.Errorf("%s: Sanitize(%q) = %q, want %q", name, tc.in, got, tc.want)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
