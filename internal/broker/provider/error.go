package provider

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/lazy"
)

// MaxMessage is how many bytes of a provider's own error message an *Error
// keeps.
const MaxMessage = 300

// Error is a classified provider failure.
//
// Status is the HTTP status; for an error reported inside a 200 reply it is
// the status that error stands for (for example 529 for Anthropic's
// overloaded_error), or 0 when unknown. Retryable says a later attempt may
// succeed (rate limits, overload, 5xx, network errors, timeouts, malformed
// replies); RetryAfter is the wait the provider asked for, if any. Message is
// the provider's own explanation, redacted and trimmed.
type Error struct {
	Provider   string
	Status     int
	Retryable  bool
	RetryAfter time.Duration
	Malformed  bool
	OverCap    bool // the reply went over one of its Caps; Message says which
	Message    string

	cause error // context.Canceled, context.DeadlineExceeded or ErrReplyTooLarge, never anything that may hold a secret
}

// Error describes the failure. It redacts again, in case a caller filled
// Message by hand.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Provider != "" {
		b.WriteString(e.Provider)
		b.WriteString(": ")
	}
	if e.OverCap {
		e.overCapMessage(&b)
		return b.String()
	}
	switch {
	case e.cause == context.DeadlineExceeded && e.Message != "":
		// The message says what never came, and from where.
		b.WriteString(Redact(e.Message))
		return b.String()
	case e.Malformed:
		b.WriteString("malformed reply")
	case e.Status != 0:
		fmt.Fprintf(&b, "status %d", e.Status)
	default:
		b.WriteString("request failed")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(Redact(e.Message))
	}
	return b.String()
}

// Unwrap returns context.Canceled or context.DeadlineExceeded when the
// failure came from one, and ErrReplyTooLarge for an OverCap error, so
// errors.Is works on it.
func (e *Error) Unwrap() error { return e.cause }

// NewError builds an *Error whose message is redacted (the secrets and every
// key-shaped token) and trimmed to MaxMessage bytes.
func NewError(provider string, status int, retryable bool, message string, secrets ...string) *Error {
	return &Error{Provider: provider, Status: status, Retryable: retryable, Message: Clean(message, secrets...)}
}

// MalformedError builds the *Error for a reply that could not be understood.
// It is retryable: a second attempt usually gets a whole reply.
func MalformedError(provider, message string, secrets ...string) *Error {
	e := NewError(provider, 0, true, message, secrets...)
	e.Malformed = true
	return e
}

// Clean redacts s, makes it inert and one line, and trims it to MaxMessage
// bytes. What a provider (or whatever answers at its address) says is
// hostile text: terminal escape sequences are dropped whole, every other
// control, bidirectional, zero-width or invisible character and invalid
// byte is escaped as package inert shows it (so the owner sees something
// was there), and whitespace runs become one space. Redaction comes after
// the escape sequences are gone (none can split a secret) and before the
// trim (which can then never leave part of a secret behind); the trim never
// cuts an escape in two. Clean of a cleaned message is the same message.
func Clean(s string, secrets ...string) string {
	s = Redact(ansiSequence().ReplaceAllString(s, ""), secrets...)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxMessage && inert.Text(s) == s {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		piece := inert.Text(s[i : i+size])
		if b.Len()+len(piece) > MaxMessage {
			return b.String() + "…"
		}
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

// ansiSequence matches a terminal escape sequence: CSI (ESC [ ... final,
// or the one-byte C1 CSI), a terminated OSC (ESC ] ... BEL or ST) and the
// other escapes (ESC, intermediates, final). Built on first use, as are the
// package's other tables: a package-level regexp or map is init work, run
// (and its pages faulted in) by every process of the binary, the idle
// daemon included (package lazy).
func ansiSequence() *regexp.Regexp {
	return ansiSequenceRe.Get(func() *regexp.Regexp {
		return regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -/]*[0-~]|\x{9b}[0-?]*[ -/]*[@-~]`)
	})
}

var ansiSequenceRe lazy.Value[*regexp.Regexp]

// RetryableStatus reports whether an HTTP status is worth another attempt:
// 408, 409, 425, 429 and every 5xx (including Anthropic's 529 overloaded).
func RetryableStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	}
	return status >= 500
}

// StatusError builds the *Error for a non-2xx reply from its status, headers
// and (capped) body.
func StatusError(provider string, resp *http.Response, body []byte, secrets ...string) *Error {
	msg, code := ErrorBodyText(body)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	retryable := RetryableStatus(resp.StatusCode)
	if code == "insufficient_quota" || code == "billing_error" {
		retryable = false // a 429 that waiting does not fix
	}
	e := NewError(provider, resp.StatusCode, retryable, msg, secrets...)
	e.RetryAfter = ParseRetryAfter(resp.Header, time.Now())
	return e
}

// ParseRetryAfter reads the wait a reply asks for: OpenAI's retry-after-ms,
// else Retry-After in seconds or as an HTTP date. It returns 0 when there is
// none or it is in the past.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || s > 1e6 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
