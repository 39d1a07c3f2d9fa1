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

// Caps of the SSE reader.
const (
	MaxSSELine  = 1 << 20 // one line, without its terminator
	MaxSSEEvent = 4 << 20 // the data of one event
)

// ErrSSETooLong is returned by SSEReader.Next for a line or an event over its cap.
var ErrSSETooLong = errors.New("sse: line or event too long")

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
	sc      *bufio.Scanner
	started bool
	typ     string
	id      string
	data    strings.Builder
	hasData bool
}

// NewSSEReader returns a reader of the events in r.
func NewSSEReader(r io.Reader) *SSEReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxSSELine+2)
	sc.Split(splitSSELines)
	return &SSEReader{sc: sc}
}

// Next returns the next event, io.EOF at the end of the stream, ErrSSETooLong
// past a cap, or the error of the underlying reader.
func (r *SSEReader) Next() (Event, error) {
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if !r.started {
			r.started = true
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(line) > MaxSSELine {
			return Event{}, ErrSSETooLong
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
				return Event{}, ErrSSETooLong
			}
			r.data.Write(value)
		case "id":
			if !bytes.ContainsRune(value, 0) {
				r.id = string(value)
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, ErrSSETooLong
		}
		return Event{}, err
	}
	if ev, ok := r.dispatch(); ok {
		return ev, nil
	}
	return Event{}, io.EOF
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
