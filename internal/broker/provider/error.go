package provider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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

// Clean redacts s, collapses its whitespace and trims it to MaxMessage bytes.
// Redaction comes first, so trimming can never leave a partial secret behind.
func Clean(s string, secrets ...string) string {
	s = strings.Join(strings.Fields(Redact(s, secrets...)), " ")
	if len(s) <= MaxMessage {
		return s
	}
	cut := MaxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

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

// ErrorBodyText extracts a readable message from an error body in any of the
// common shapes ({"error":{"type","message","code"}}, {"error":"..."},
// {"message":"..."}, {"detail":"..."}), falling back to the body itself. code
// is the error's code or type, if it has one.
func ErrorBodyText(body []byte) (msg, code string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return strings.TrimSpace(string(body)), ""
	}
	if len(v.Error) > 0 && string(v.Error) != "null" {
		var obj struct {
			Type    string          `json:"type"`
			Message string          `json:"message"`
			Code    json.RawMessage `json:"code"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &s) == nil:
			return s, ""
		case json.Unmarshal(v.Error, &obj) == nil:
			code := obj.Type
			var c string
			if json.Unmarshal(obj.Code, &c) == nil && c != "" {
				code = c
			}
			switch {
			case obj.Message == "":
				return code, code
			case obj.Type != "":
				return obj.Type + ": " + obj.Message, code
			}
			return obj.Message, code
		}
	}
	if v.Message != "" {
		return v.Message, ""
	}
	if len(v.Detail) > 0 {
		var s string
		if json.Unmarshal(v.Detail, &s) == nil {
			return s, ""
		}
		return string(v.Detail), ""
	}
	return strings.TrimSpace(string(body)), ""
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
