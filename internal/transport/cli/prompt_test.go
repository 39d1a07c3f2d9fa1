package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peterh/liner"

	"github.com/shelldon/shelldon/internal/core"
)

// parkingChat parks every message on request req1.
type parkingChat struct{}

func (parkingChat) Send(context.Context, string, string, core.Events) (core.Outcome, error) {
	a := core.ApprovalView{ID: "req1", Tool: "run_shell", Summary: "Tool: run_shell\n  command: rm -rf build"}
	return core.Outcome{Reply: a.Summary, Approvals: []core.ApprovalView{a}}, nil
}

// recordingDecider records each decision.
type recordingDecider struct {
	mu        sync.Mutex
	decisions []bool
}

func (d *recordingDecider) Decide(_ context.Context, _ string, approve bool, _ string, _ core.Events) (core.Outcome, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.decisions = append(d.decisions, approve)
	return core.Outcome{Reply: "decided"}, nil
}

func (d *recordingDecider) got() []bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]bool(nil), d.decisions...)
}

// TestUnansweredPromptDecidesNothing: at the approval prompt, the end of
// the input (a pipe that closes), Ctrl-C and the end of the chat's context
// leave the request waiting and say so, with an error for a non-zero exit;
// only an answer read in full decides.
func TestUnansweredPromptDecidesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// leave is how the owner leaves the prompt, once it is shown.
		leave func(w *io.PipeWriter, ints chan<- os.Signal, cancel func())
		want  []bool // the decisions made; nil: none
	}{
		{"end of input", func(w *io.PipeWriter, _ chan<- os.Signal, _ func()) { w.Close() }, nil},
		{"Ctrl-C", func(_ *io.PipeWriter, ints chan<- os.Signal, _ func()) { ints <- os.Interrupt }, nil},
		{"context ends", func(_ *io.PipeWriter, _ chan<- os.Signal, cancel func()) { cancel() }, nil},
		{"explicit no", func(w *io.PipeWriter, _ chan<- os.Signal, _ func()) { io.WriteString(w, "n\n"); w.Close() }, []bool{false}},
		{"explicit yes", func(w *io.PipeWriter, _ chan<- os.Signal, _ func()) { io.WriteString(w, "yes\n"); w.Close() }, []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, w := io.Pipe()
			defer r.Close()
			ints := make(chan os.Signal, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			prompted := make(chan struct{})
			out := &promptWatch{prompt: "[y/N] ", seen: prompted}
			var errw syncBuffer
			d := &recordingDecider{}
			term := &Terminal{Chat: parkingChat{}, Decider: d, In: r, Out: out, Err: &errw, Interrupts: ints}
			done := make(chan error, 1)
			go func() { done <- term.Run(ctx) }()
			io.WriteString(w, "clean up\n")
			select {
			case <-prompted:
			case <-time.After(10 * time.Second):
				t.Fatal("no approval prompt")
			}
			tt.leave(w, ints, cancel)
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the chat did not end")
			}
			got := d.got()
			if len(got) != len(tt.want) || len(got) > 0 && got[0] != tt.want[0] {
				t.Errorf("decisions %v, want %v", got, tt.want)
			}
			if tt.want != nil {
				return
			}
			if !errors.Is(err, ErrUndecided) {
				t.Errorf("Run = %v, want ErrUndecided (a non-zero exit)", err)
			}
			for _, want := range []string{"request req1 is still waiting", "shelldon approvals approve req1"} {
				if !strings.Contains(errw.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, errw.String())
				}
			}
		})
	}
}

// TestAbortedLinerPromptDecidesNothing: on a terminal, Ctrl-C at the prompt
// is liner's ErrPromptAborted, which decides nothing.
func TestAbortedLinerPromptDecidesNothing(t *testing.T) {
	t.Parallel()
	term := &Terminal{}
	for _, err := range []error{liner.ErrPromptAborted, io.EOF, errors.New("read /dev/stdin: input/output error")} {
		_, decided := term.ask(context.Background(), nil, func(string) (string, error) { return "y", err }, "? ")
		if decided {
			t.Errorf("a prompt that ended with %v decided", err)
		}
	}
	if approve, decided := term.ask(context.Background(), nil, func(string) (string, error) { return "", nil }, "? "); !decided || approve {
		t.Errorf("an empty answer: approve %v decided %v; [y/N] makes it a no", approve, decided)
	}
}

// promptWatch is an Out that closes seen once prompt was written.
type promptWatch struct {
	syncBuffer
	prompt string
	once   sync.Once
	seen   chan struct{}
}

func (p *promptWatch) Write(b []byte) (int, error) {
	n, err := p.syncBuffer.Write(b)
	if strings.Contains(p.syncBuffer.String(), p.prompt) {
		p.once.Do(func() { close(p.seen) })
	}
	return n, err
}
