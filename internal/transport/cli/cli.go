// Package cli is the terminal transport: an interactive chat with line
// editing and history, tool calls shown as they happen, and Ctrl-C that
// cancels the running turn rather than the program; and a one-shot mode for
// scripts. It reaches the agent only through the core's Send. Everything
// the model, a tool or a request carries is shown through package inert.
package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/peterh/liner"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

// Chatter runs a turn.
type Chatter interface {
	Send(ctx context.Context, chat, text string, ev core.Events) (core.Outcome, error)
}

// Decider decides an approval request and runs the rest of its turn.
type Decider interface {
	Decide(ctx context.Context, id string, approve bool, by string, ev core.Events) (core.Outcome, error)
}

// Terminal is a chat in a terminal.
type Terminal struct {
	Chat    Chatter
	Decider Decider // nil: requests are only shown, to decide elsewhere
	// ChatName is the conversation. "" is DefaultChat for the interactive
	// chat (Run), and a new conversation for each one-shot message (Once),
	// so a script shares no history with the owner's chat or another run.
	ChatName    string
	In          io.Reader
	Out         io.Writer // replies and, when interactive, tool calls
	Err         io.Writer // tool calls in one-shot mode, and errors
	HistoryFile string    // line history; "" keeps none
	// Interrupts delivers Ctrl-C; nil means os.Interrupt via signal.Notify.
	Interrupts <-chan os.Signal
	// Now names a one-shot conversation; nil is time.Now.
	Now func() time.Time
	// Inbox, when set, is shown (its unread items) as the interactive
	// chat starts (inbox.go).
	Inbox Inboxer
}

// DefaultChat is the conversation of the interactive chat.
const DefaultChat = "terminal"

// Exit statuses of a one-shot message (Once), for scripts. 2 is also the
// command line's own: bad usage or a bad config.
const (
	ExitAnswered = 0 // the model answered; the reply is on Out
	ExitFailed   = 1 // the turn failed (the provider, or inside shelldon); the reason is on Err, nothing on Out
	ExitBadInput = 2 // the message cannot start a turn (empty, too long)
	ExitStopped  = 3 // the turn stopped short (tool ceiling, time budget, Ctrl-C); Out has what it had
	ExitApproval = 4 // the turn waits for the owner's decision on a request; Out has the request, Err how to decide
)

// Once sends one message and returns the exit status (Exit*) with the
// turn's outcome. The reply goes to Out; tool calls and errors go to Err,
// so that Out holds only the reply, for scripts: a turn that failed writes
// nothing on Out.
func (t *Terminal) Once(ctx context.Context, text string) (int, core.Outcome) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	show := &display{w: t.Err}
	chat := t.ChatName
	if chat == "" {
		chat = t.onceChat()
	}
	out, err := t.Chat.Send(ctx, chat, text, core.Events{Tool: show.tool})
	code := onceStatus(out, err)
	switch {
	case code == ExitFailed || code == ExitBadInput:
		// The reply of a failed turn says why; an error before any turn
		// has only itself.
		msg := out.Reply
		if msg == "" && err != nil {
			msg = err.Error()
		}
		fmt.Fprintf(t.Err, "error: %s\n", inert.Text(msg))
	case out.Reply != "":
		fmt.Fprintln(t.Out, inert.Text(out.Reply))
	}
	for _, a := range out.Approvals {
		id := inert.Name(a.ID)
		fmt.Fprintf(t.Err, "Decide with: shelldon approvals approve %s   (or deny %s)\n", id, id)
	}
	return code, out
}

// onceStatus is the exit status of a one-shot message.
func onceStatus(out core.Outcome, err error) int {
	switch {
	case errors.Is(err, core.ErrBadInput):
		return ExitBadInput
	case err != nil || out.Stopped == contracts.StopError:
		return ExitFailed
	case out.Stopped == contracts.StopApproval:
		return ExitApproval
	case out.Stopped != "":
		return ExitStopped
	}
	return ExitAnswered
}

// onceChat names a new conversation: "once-", the time in UTC and 32
// random bits, e.g. once-20260102-150405-9f3a61c2.
func (t *Terminal) onceChat() string {
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	var b [4]byte
	rand.Read(b[:])
	return "once-" + now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

func (t *Terminal) name() string {
	if t.ChatName == "" {
		return DefaultChat
	}
	return t.ChatName
}

// Run is the interactive chat. It returns at end of input (Ctrl-D) or /quit.
func (t *Terminal) Run(ctx context.Context) error {
	ints := t.Interrupts
	if ints == nil {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt)
		defer signal.Stop(ch)
		ints = ch
	}
	read, closeInput := t.input()
	defer closeInput()
	fmt.Fprintln(t.Out, "shelldon — type a message; /help for commands, Ctrl-C cancels a turn, Ctrl-D quits.")
	t.showInbox(ctx)
	for {
		line, err := read("you> ")
		if errors.Is(err, liner.ErrPromptAborted) {
			continue // Ctrl-C at the prompt clears the line
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				fmt.Fprintln(t.Out)
				return nil
			}
			return fmt.Errorf("read input: %w", err)
		}
		line = strings.TrimSpace(line)
		switch line {
		case "":
			continue
		case "/quit", "/exit":
			return nil
		case "/help":
			fmt.Fprintln(t.Out, "Commands: /help, /quit. Anything else is a message to shelldon.\nCtrl-C cancels the running turn; Ctrl-D quits.")
			continue
		}
		out := t.turn(ctx, ints, func(ctx context.Context, ev core.Events) (core.Outcome, error) {
			return t.Chat.Send(ctx, t.name(), line, ev)
		})
		// Each request is shown (in the reply, rendered by shelldon) and
		// asked about right here; a decision may lead to another request.
		for len(out.Approvals) > 0 && t.Decider != nil {
			a := out.Approvals[0]
			if !strings.Contains(out.Reply, a.Summary) {
				// A proposed tool: show the owner everything before asking.
				fmt.Fprintf(t.Out, "\n%s\n\n", inert.Text(a.Summary))
			}
			approve, decided := t.ask(ctx, ints, read, fmt.Sprintf("Approve request %s (%s)? [y/N] ", inert.Name(a.ID), inert.Name(a.Tool)))
			if !decided {
				id := inert.Name(a.ID)
				fmt.Fprintf(t.Err, "\nNothing was decided: request %s is still waiting.\nDecide with: shelldon approvals approve %s   (or deny %s)\n", id, id, id)
				return fmt.Errorf("%w: request %s", ErrUndecided, id)
			}
			out = t.turn(ctx, ints, func(ctx context.Context, ev core.Events) (core.Outcome, error) {
				return t.Decider.Decide(ctx, a.ID, approve, "terminal", ev)
			})
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// ErrUndecided is what Run returns when the owner left an approval prompt
// without answering it: the request is still waiting.
var ErrUndecided = errors.New("nothing was decided; the request is still waiting")

// ask asks the owner about a request. Only an answer read in full decides
// (yes or y approves; anything else, an empty line too, denies, as [y/N]
// says); Ctrl-C, the end of the input, an input that cannot be read or the
// end of ctx decide nothing (decided false), and the request stays waiting.
func (t *Terminal) ask(ctx context.Context, ints <-chan os.Signal, read func(string) (string, error), prompt string) (approve, decided bool) {
	type line struct {
		text string
		err  error
	}
	got := make(chan line, 1)
	go func() {
		s, err := read(prompt)
		got <- line{s, err}
	}()
	select {
	case l := <-got:
		if l.err != nil { // Ctrl-C (liner.ErrPromptAborted), EOF, a read error
			return false, false
		}
		answer := strings.TrimSpace(l.text)
		return strings.EqualFold(answer, "y") || strings.EqualFold(answer, "yes"), true
	case <-ints: // Ctrl-C when the input is not a terminal (liner is not reading)
		return false, false
	case <-ctx.Done():
		return false, false
	}
}

// turn runs one turn (a message, or a decision), cancelling it on an
// interrupt, and shows it as it happens.
func (t *Terminal) turn(ctx context.Context, ints <-chan os.Signal, run func(context.Context, core.Events) (core.Outcome, error)) core.Outcome {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		select {
		case <-ints:
			fmt.Fprintln(t.Out, "\n^C — cancelling this turn…")
			cancel()
		case <-done:
		}
	}()
	show := &display{w: t.Out, stream: true}
	out, err := run(tctx, core.Events{Text: show.text, Tool: show.tool})
	close(done)
	show.finish(out.Reply)
	if err != nil && out.Reply == "" {
		fmt.Fprintf(t.Err, "error: %s\n", inert.Text(err.Error()))
	}
	return out
}

// input returns a line reader: liner with history on a terminal, a plain
// scanner otherwise.
func (t *Terminal) input() (func(prompt string) (string, error), func()) {
	if f, ok := t.In.(*os.File); ok && f == os.Stdin && liner.TerminalSupported() && IsTerminal(f) {
		ln := liner.NewLiner()
		ln.SetCtrlCAborts(true)
		if t.HistoryFile != "" {
			if h, err := os.Open(t.HistoryFile); err == nil {
				ln.ReadHistory(h)
				h.Close()
			}
		}
		read := func(prompt string) (string, error) {
			s, err := ln.Prompt(prompt)
			if err == nil && strings.TrimSpace(s) != "" {
				ln.AppendHistory(s)
			}
			return s, err
		}
		return read, func() {
			if t.HistoryFile != "" {
				if h, err := os.OpenFile(t.HistoryFile, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err == nil {
					ln.WriteHistory(h)
					h.Close()
				}
			}
			ln.Close()
		}
	}
	sc := bufio.NewScanner(t.In)
	sc.Buffer(make([]byte, 64<<10), core.MaxInput+1)
	return func(prompt string) (string, error) {
		fmt.Fprint(t.Out, prompt)
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return "", err
			}
			return "", io.EOF
		}
		return sc.Text(), nil
	}, func() {}
}

// IsTerminal reports whether r is a terminal: an *os.File whose
// descriptor has terminal attributes. /dev/null, a pipe, a file or a
// closed descriptor is not one (a character device need not be a
// terminal), so a command whose input is redirected reads it as lines.
func IsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	// Through the raw connection, not Fd, which would put the descriptor
	// in blocking mode.
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	term := false
	if err := rc.Control(func(fd uintptr) { term = isTerminal(fd) }); err != nil {
		return false
	}
	return term
}

// display prints a turn as it happens: streamed text and tool calls.
type display struct {
	mu       sync.Mutex
	w        io.Writer
	stream   bool
	streamed strings.Builder // text streamed since the last tool call
	midLine  bool
}

func (d *display) text(delta string) {
	if !d.stream {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.streamed.Len() == 0 {
		fmt.Fprint(d.w, "shelldon> ")
	}
	d.streamed.WriteString(delta)
	fmt.Fprint(d.w, inert.Text(delta))
	d.midLine = !strings.HasSuffix(delta, "\n")
}

func (d *display) tool(ev contracts.ToolEvent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.midLine {
		fmt.Fprintln(d.w)
		d.midLine = false
	}
	d.streamed.Reset()
	switch ev.Phase {
	case contracts.PhaseStart:
		fmt.Fprintf(d.w, "  ⚙ %s %s\n", inert.Name(ev.Tool), preview(ev.Arguments, 120))
	case contracts.PhaseEnd:
		mark := "✓"
		if !ev.OK {
			mark = "✗"
		}
		fmt.Fprintf(d.w, "  %s %s (%s) %s\n", mark, inert.Name(ev.Tool), shortDuration(ev.Duration), preview(ev.Summary, 100))
	}
}

// finish prints the reply unless it was already streamed word for word.
func (d *display) finish(reply string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.midLine {
		fmt.Fprintln(d.w)
	}
	if reply == "" || strings.TrimSpace(d.streamed.String()) == strings.TrimSpace(reply) {
		return
	}
	fmt.Fprintf(d.w, "shelldon> %s\n", inert.Text(reply))
}

func shortDuration(d time.Duration) string {
	if d < time.Millisecond {
		return "<1ms"
	}
	return d.Round(time.Millisecond).String()
}

// preview is a value on one line of at most max characters: runs of white
// space made one space, everything else as inert.Short shows it.
func preview(s string, max int) string {
	return inert.Short(strings.Join(strings.Fields(s), " "), max)
}
