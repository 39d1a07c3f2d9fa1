package provider

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Caps of the SSE reader. A model's events are a few hundred bytes; these
// leave room for a server that sends a long reply in one event, and bound
// what one stream holds in the reader (its line buffer, the event, and the
// event's copy as the adapter decodes it) to about 1 MiB.
const (
	MaxSSELine  = 256 << 10 // one line, without its terminator
	MaxSSEEvent = 256 << 10 // the data of one event
)

// Event is one server-sent event.
type Event struct {
	Type string // the "event:" field; empty means the default "message"
	Data string // the "data:" lines joined by "\n"
	ID   string
}

// SSEReader reads server-sent events (the text/event-stream format) from a
// stream: lines end in LF, CRLF or CR; lines starting with ":" are comments;
// an event's several "data:" lines are joined with "\n"; a blank line ends an
// event. An event still pending when the stream ends is returned too, since
// some servers omit the final blank line.
type SSEReader struct {
	count   *countingReader
	sc      *bufio.Scanner
	started bool
	typ     string
	id      string
	data    strings.Builder
	hasData bool
}

// NewSSEReader returns a reader of the events in r, which reads at most
// max bytes of it (no cap when max <= 0).
func NewSSEReader(r io.Reader, max int) *SSEReader {
	cr := &countingReader{r: r, max: int64(max)}
	sc := bufio.NewScanner(cr)
	sc.Buffer(make([]byte, 0, 4096), MaxSSELine+2)
	sc.Split(splitSSELines)
	return &SSEReader{count: cr, sc: sc}
}

// Next returns the next event, io.EOF at the end of the stream, an OverCap
// *Error past a cap (a line, an event, the stream), or the error of the
// underlying reader.
func (r *SSEReader) Next() (Event, error) {
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if !r.started {
			r.started = true
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(line) > MaxSSELine {
			return Event{}, errLongLine()
		}
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found {
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			r.typ = string(value)
		case "data":
			if r.hasData {
				r.data.WriteByte('\n')
			}
			r.hasData = true
			if r.data.Len()+len(value) > MaxSSEEvent {
				return Event{}, OverCapError(fmt.Sprintf("an event of the model's reply exceeded %s", Size(MaxSSEEvent)))
			}
			r.data.Write(value)
		case "id":
			if !bytes.ContainsRune(value, 0) {
				r.id = string(value)
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		switch {
		case errors.Is(err, bufio.ErrTooLong):
			return Event{}, errLongLine()
		case errors.Is(err, errStreamCap):
			return Event{}, OverCapError(fmt.Sprintf("the model's reply exceeded %s as streamed", Size(int(r.count.max))))
		}
		return Event{}, err
	}
	if ev, ok := r.dispatch(); ok {
		return ev, nil
	}
	return Event{}, io.EOF
}

func errLongLine() *Error {
	return OverCapError(fmt.Sprintf("a line of the model's reply exceeded %s", Size(MaxSSELine)))
}

var errStreamCap = errors.New("sse: stream over its cap")

// countingReader fails once more than max bytes were read (max <= 0: never).
type countingReader struct {
	r   io.Reader
	n   int64
	max int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.max > 0 && c.n >= c.max {
		// One byte more than the cap tells a stream that ends exactly
		// at it from one that goes on.
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, errStreamCap
		}
		return 0, err
	}
	if c.max > 0 && int64(len(p)) > c.max-c.n {
		p = p[:c.max-c.n]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// dispatch returns the pending event, if it has data, and starts a new one.
func (r *SSEReader) dispatch() (Event, bool) {
	ev := Event{Type: r.typ, Data: r.data.String(), ID: r.id}
	ok := r.hasData
	r.typ, r.hasData = "", false
	r.data.Reset()
	return ev, ok
}

// splitSSELines is a bufio.SplitFunc for lines ending in LF, CRLF or CR.
func splitSSELines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0:
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	}
	return 0, nil, nil // a CR at the end of the buffer: wait for a possible LF
}

// String describes the event, for test failures.
func (e Event) String() string { return fmt.Sprintf("event %q id %q data %q", e.Type, e.ID, e.Data) }

// StreamedReply reports whether a reply to a streaming request really is an
// event stream. Some OpenAI-compatible servers ignore "stream": true and
// answer with one JSON body; the adapters then decode it as a plain reply.
// A reply without a Content-Type is taken to be the stream that was asked for.
func StreamedReply(h http.Header) bool {
	ct := strings.ToLower(strings.TrimSpace(h.Get("Content-Type")))
	return ct == "" || strings.HasPrefix(ct, "text/event-stream")
}
