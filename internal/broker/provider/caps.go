package provider

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/contracts"
)

// Default caps of one reply (Caps), chosen so that the daemon holds at most
// a few MiB per model call in flight: agent.workers (at most 16) calls at
// their caps fit in the daemon's memory. A model's legitimate reply is far
// below them: max_tokens bounds it, and 4096 tokens are some 16 KiB.
const (
	DefaultMaxText   = 1 << 20  // bytes of text in one reply
	DefaultMaxArgs   = 1 << 20  // bytes of tool calls (arguments, names, ids) in one reply
	DefaultMaxCalls  = 64       // tool calls in one reply; a turn runs at most 50
	DefaultMaxStream = 64 << 20 // bytes of a streamed reply as sent, framing included
)

// Caps bound what one reply may hold, streamed or plain. A reply over any of
// them fails with an *Error that is OverCap: the adapter stops reading at
// the cap, before buffering more, and the chain neither retries nor falls
// back. Zero fields mean the defaults.
type Caps struct {
	Text   int // bytes of text (and refusal)
	Args   int // bytes of tool calls: arguments, names and ids, all calls together
	Calls  int // tool calls
	Stream int // bytes of a streamed reply as it came, SSE framing included: bounds the time a hostile stream of nothing takes
}

// WithDefaults returns c with the zero fields set to their defaults.
func (c Caps) WithDefaults() Caps {
	if c.Text <= 0 {
		c.Text = DefaultMaxText
	}
	if c.Args <= 0 {
		c.Args = DefaultMaxArgs
	}
	if c.Calls <= 0 {
		c.Calls = DefaultMaxCalls
	}
	if c.Stream <= 0 {
		c.Stream = DefaultMaxStream
	}
	return c
}

// MaxToolName caps the name of one tool call; a server that streams a name
// in pieces cannot grow it past this.
const MaxToolName = 256

// ErrReplyTooLarge is what an OverCap *Error unwraps to.
var ErrReplyTooLarge = errors.New("the model's reply is too large")

// OverCapError builds the *Error for a reply over a cap; what says which,
// in words for the owner ("the model's reply exceeded 1 MiB of text"). It
// is not retryable: a model that rambled past a cap once will likely again.
func OverCapError(what string) *Error {
	e := NewError("", 0, false, what)
	e.OverCap = true
	e.cause = ErrReplyTooLarge
	return e
}

// ReplyOverCap reports whether the reply went over one of its caps. Core
// asks it through an interface, without importing the broker.
func (e *Error) ReplyOverCap() bool { return e.OverCap }

// Size writes a byte count the way the caps are set: "1 MiB", "256 KiB",
// else in bytes.
func Size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// WireSize is the bytes s takes as a JSON string on its way to the worker
// and in the history (encoding/json, without HTML escaping), quotes
// excluded: what the text and argument caps count, so a reply of control
// characters, each six bytes once escaped, cannot grow past its cap on the
// wire.
func WireSize(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// Tally counts what a reply has brought so far against its Caps. An adapter
// asks it before it buffers a piece, so nothing past a cap is kept.
type Tally struct {
	caps              Caps
	text, args, calls int
}

// NewTally returns an empty tally against caps (defaults applied).
func NewTally(caps Caps) *Tally { return &Tally{caps: caps.WithDefaults()} }

// Caps returns the caps the tally counts against.
func (t *Tally) Caps() Caps { return t.caps }

// Text counts n more bytes of text (WireSize).
func (t *Tally) Text(n int) error {
	t.text += n
	if t.text > t.caps.Text {
		return OverCapError(fmt.Sprintf("the model's reply exceeded %s of text", Size(t.caps.Text)))
	}
	return nil
}

// Args counts n more bytes of tool calls (WireSize of the arguments).
func (t *Tally) Args(n int) error {
	t.args += n
	if t.args > t.caps.Args {
		return OverCapError(fmt.Sprintf("the model's reply exceeded %s of tool-call arguments", Size(t.caps.Args)))
	}
	return nil
}

// Call counts one more tool call.
func (t *Tally) Call() error {
	t.calls++
	if t.calls > t.caps.Calls {
		return OverCapError(fmt.Sprintf("the model's reply exceeded %d tool calls", t.caps.Calls))
	}
	return nil
}

// Name checks the length n of a tool call's name (with any piece added).
func (t *Tally) Name(n int) error {
	if n > MaxToolName {
		return OverCapError(fmt.Sprintf("a tool call's name in the model's reply exceeded %d bytes", MaxToolName))
	}
	return nil
}

// CheckCompletion checks a whole (plain) reply against caps.
func CheckCompletion(comp contracts.Completion, caps Caps) error {
	t := NewTally(caps)
	if err := t.Text(WireSize(comp.Message.Text)); err != nil {
		return err
	}
	for _, c := range comp.Message.ToolCalls {
		if err := t.Call(); err != nil {
			return err
		}
		if err := t.Name(len(c.Name)); err != nil {
			return err
		}
		if err := t.Args(WireSize(c.Arguments) + len(c.Name) + len(c.ID)); err != nil {
			return err
		}
	}
	return nil
}

// overCapMessage is the message of an OverCap error, for Error().
func (e *Error) overCapMessage(b *strings.Builder) {
	b.WriteString(Redact(e.Message))
}
