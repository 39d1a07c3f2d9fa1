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
	"github.com/shelldon/shelldon/internal/inert"
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
	if code, _ := term.Once(context.Background(), "hi"); code != ExitAnswered {
		t.Fatalf("exit %d", code)
	}
	if out.String() != "echo: hi\n" {
		t.Errorf("stdout = %q, want only the reply", out.String())
	}
	if !strings.Contains(errw.String(), "get_time") {
		t.Errorf("stderr = %q, want the tool call", errw.String())
	}
}

// hostileChat sends a made-up tool name full of escape sequences, streams
// hostile text and parks a request whose tool name is hostile too.
type hostileChat struct{}

const fakeCard = "\x1b[2J\x1b[H\x1b]0;shelldon\x07  ✓ get_time (1ms) ok\r\x1b[1A\u202e"

func (hostileChat) Send(_ context.Context, _, _ string, ev core.Events) (core.Outcome, error) {
	ev.Tool(contracts.ToolEvent{Phase: contracts.PhaseStart, Tool: fakeCard, Arguments: "{\"x\":\"\x1b[8m\"}"})
	ev.Tool(contracts.ToolEvent{Phase: contracts.PhaseEnd, Tool: fakeCard, Summary: "unknown tool \u009b2J\xff\xfe"})
	ev.Text("Sure\x1b[2K\rhidden\b\b\u2066x\u2069\u200b")
	a := core.ApprovalView{ID: "req1", Tool: "run\x1b[8m_shell", Summary: "Tool: run_shell\n  command: rm -rf ~"}
	return core.Outcome{Reply: "Sure\x1b[2K\rhidden\b\b\u2066x\u2069\u200b", Approvals: []core.ApprovalView{a}}, nil
}

// TestHostileTurnIsInert: a turn's tool lines, streamed text, card and
// prompt reach the terminal with every control, bidi and zero-width
// character escaped, and the card whole.
func TestHostileTurnIsInert(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	decider := deciderFunc(func() (core.Outcome, error) { return core.Outcome{Reply: "done"}, nil })
	term := &Terminal{Chat: hostileChat{}, Decider: decider, In: strings.NewReader("go\nn\n"), Out: &out, Err: &out,
		Interrupts: make(chan os.Signal)}
	if err := term.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if bad := inert.Raw(s, false); bad != "" {
		t.Fatalf("raw %s on the terminal:\n%q", bad, s)
	}
	for _, want := range []string{
		`⚙ "\x1b[2J\x1b[H\x1b]0;shelldon\x07  ✓ get_time (1ms) ok\r\x1b[1A…" {"x":"\x1b[8m"}`,
		`✗ "\x1b[2J`, `unknown tool \u009b2J\xff\xfe`,
		`Sure\x1b[2K\rhidden\x08\x08\u2066x\u2069\u200b`,
		"Tool: run_shell\n  command: rm -rf ~",
		`Approve request req1 ("run\x1b[8m_shell")? [y/N]`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("terminal lacks %q:\n%s", want, s)
		}
	}
}

type deciderFunc func() (core.Outcome, error)

func (f deciderFunc) Decide(context.Context, string, bool, string, core.Events) (core.Outcome, error) {
	return f()
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
