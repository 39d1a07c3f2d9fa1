// Package wire frames the messages between shelldon's processes (the daemon
// and a turn's worker, the worker and a self-coded tool's child): a 4-byte
// big-endian length followed by that many bytes of JSON. The length is
// checked against a cap before anything is allocated, so a broken or hostile
// peer cannot make the reader allocate more than the cap.
//
// A request one side makes of the other is a call: a TypeCall frame carries a
// sequence number, a method name and the request's body; the TypeReply frame
// with the same sequence number carries the answer's body or an error. The
// calling side's Client keeps the calls waiting for a reply; the serving
// side's Handlers table answers each method, and a method it lacks or a body
// that does not decode is an error reply. Every request, of the worker to the
// daemon (Method*) and of a self-coded tool's child to the worker, is such a
// call; the frames that are no request (TypeJob, TypeEvent, TypeResult,
// TypeCancel) keep their own types.
package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// MaxFrame is the default cap on one frame's body.
const MaxFrame = 16 << 20

// ErrTooLarge is returned for a frame whose declared length exceeds the cap.
var ErrTooLarge = errors.New("wire: frame too large")

// Frame types.
const (
	TypeCall  = "call"  // either way: a request, Seq and Method set, Body the method's request
	TypeReply = "reply" // the answer to the call with the same Seq: Body the method's answer, or Error
	// Between the daemon and a worker.
	TypeJob    = "job"    // daemon → worker: contracts.Job
	TypeEvent  = "event"  // worker → daemon: contracts.ToolEvent
	TypeResult = "result" // worker → daemon: contracts.Result, or Error
	TypeCancel = "cancel" // daemon → worker: end the turn now with what it has
)

// Methods a worker calls on the daemon, with the bodies of the call and of
// its reply.
const (
	MethodComplete  = "complete"   // a model call: contracts.Request → contracts.Completion
	MethodPropose   = "propose"    // a tool whose gate passed: contracts.Proposal → contracts.Proposed
	MethodConfigure = "configure"  // an approved update_config: its changes (JSON) → the diff ([]string)
	MethodSkill     = "skill"      // a skills operation: contracts.SkillRequest → its text (string)
	MethodSchedule  = "schedule"   // an approved schedule call: contracts.ScheduleRequest → its text (string)
	MethodMemory    = "memory"     // remember or recall: contracts.MemoryRequest → its text (string)
	MethodFindTools = "find_tools" // find_tools: contracts.FindTools → the matches ([]contracts.SelfTool)
	// MethodGitFetch is the network half of an approved git fetch or pull,
	// carried out by the daemon: contracts.GitFetch → contracts.GitFetched.
	MethodGitFetch = "git_fetch"
	// MethodGitPush is an approved git push, carried out by the daemon with
	// the commits the approval is bound to: contracts.GitPush →
	// contracts.GitPushed.
	MethodGitPush = "git_push"
	// MethodStart is asked before the owner's approved call runs: its call
	// id → true once the daemon has recorded that it starts. Write-ahead:
	// a call whose start was not recorded never runs.
	MethodStart = "start"
	// MethodRecord is asked by a resumed turn before it asks the model
	// again: the turn's messages so far (the parked ones and the decided
	// call's result) → true once the daemon has recorded them with the
	// request's closing.
	MethodRecord = "record"
)

// Frame is one message. Body holds the JSON of the type's payload; Error is
// set instead when the sender reports a failure. Seq and Method are set on a
// call, Seq on its reply.
type Frame struct {
	Type   string          `json:"type"`
	Seq    int64           `json:"seq,omitempty"`
	Method string          `json:"method,omitempty"`
	Body   json.RawMessage `json:"body,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// Decode unmarshals the frame's body into v.
func (f Frame) Decode(v any) error {
	if err := json.Unmarshal(f.Body, v); err != nil {
		return fmt.Errorf("wire: decode %s frame: %w", f.Type, err)
	}
	return nil
}

// Conn reads and writes frames over a pair of streams. Writes are safe for
// concurrent use; reads are not.
type Conn struct {
	r   *bufio.Reader
	w   io.Writer
	max int
	mu  sync.Mutex
}

// NewConn returns a Conn reading from r and writing to w, with frames capped
// at max bytes (MaxFrame when max <= 0).
func NewConn(r io.Reader, w io.Writer, max int) *Conn {
	if max <= 0 {
		max = MaxFrame
	}
	return &Conn{r: bufio.NewReader(r), w: w, max: max}
}

// Send writes one frame of type typ whose body is v marshaled to JSON.
func (c *Conn) Send(typ string, v any) error {
	return c.write(Frame{Type: typ}, v)
}

// SendError writes one frame of type typ that reports a failure.
func (c *Conn) SendError(typ string, msg string) error {
	return c.write(Frame{Type: typ, Error: msg}, noBody{})
}

// SendCall writes a call of method whose request is v marshaled to JSON.
// A Client numbers its calls itself; SendCall is for a caller that makes
// one call at a time and reads the replies itself.
func (c *Conn) SendCall(seq int64, method string, v any) error {
	return c.write(Frame{Type: TypeCall, Seq: seq, Method: method}, v)
}

// SendReply writes the reply to call seq whose body is v marshaled to JSON.
func (c *Conn) SendReply(seq int64, v any) error {
	return c.write(Frame{Type: TypeReply, Seq: seq}, v)
}

// SendReplyError writes the reply to call seq that reports a failure.
func (c *Conn) SendReplyError(seq int64, msg string) error {
	return c.write(Frame{Type: TypeReply, Seq: seq, Error: msg}, noBody{})
}

// noBody is the body of a frame that has none.
type noBody struct{}

// write sends f with v (unless noBody) marshaled as its body. The frame is
// built in one buffer, the length prefix first and the body encoded in
// place, so a large body (a model's reply) is held twice while it is sent
// (the encoder's buffer and the frame), not four times. HTML characters are
// not escaped: "<" stays one byte, not six.
func (c *Conn) write(f Frame, v any) error {
	var buf bytes.Buffer
	buf.Write([]byte{0, 0, 0, 0})
	buf.WriteString(`{"type":`)
	writeString(&buf, f.Type)
	if f.Seq != 0 {
		buf.WriteString(`,"seq":`)
		buf.WriteString(strconv.FormatInt(f.Seq, 10))
	}
	if f.Method != "" {
		buf.WriteString(`,"method":`)
		writeString(&buf, f.Method)
	}
	if f.Error != "" {
		buf.WriteString(`,"error":`)
		writeString(&buf, f.Error)
	}
	if _, none := v.(noBody); !none {
		buf.WriteString(`,"body":`)
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			what := f.Type + " frame"
			if f.Type == TypeCall {
				what = f.Method + " call"
			}
			return fmt.Errorf("wire: encode %s: %w", what, err)
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	buf.WriteByte('}')
	data := buf.Bytes()
	n := len(data) - 4
	if n > c.max {
		return fmt.Errorf("%w: %d bytes, cap %d", ErrTooLarge, n, c.max)
	}
	binary.BigEndian.PutUint32(data, uint32(n))
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(data); err != nil {
		return fmt.Errorf("wire: write %s frame: %w", f.Type, err)
	}
	return nil
}

// writeString writes s as a JSON string.
func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	buf.Truncate(buf.Len() - 1)
}

// Recv reads the next frame. It returns io.EOF when the peer closed the
// stream cleanly between frames.
func (c *Conn) Recv() (Frame, error) {
	return ReadFrame(c.r, c.max)
}

// ReadFrame reads one frame from r, refusing a declared length above max
// before allocating for it.
func ReadFrame(r io.Reader, max int) (Frame, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return Frame{}, fmt.Errorf("wire: truncated frame header: %w", err)
		}
		return Frame{}, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if uint64(n) > uint64(max) {
		return Frame{}, fmt.Errorf("%w: %d bytes, cap %d", ErrTooLarge, n, max)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return Frame{}, fmt.Errorf("wire: truncated frame body: %w", err)
	}
	f, ok := quickFrame(data)
	if !ok {
		if err := json.Unmarshal(data, &f); err != nil {
			return Frame{}, fmt.Errorf("wire: malformed frame: %w", err)
		}
	}
	if f.Type == "" {
		return Frame{}, errors.New("wire: frame without a type")
	}
	return f, nil
}

// quickFrame reads data as Conn.write writes a frame: the fields in their
// order, their strings without escapes, and the body last, taken as it
// is. It spares a frame's body the two passes of json.Unmarshal over it
// (a job, a model request or its answer is tens of kilobytes) before the
// one that decodes it: a body is checked when it is decoded (Decode, a
// Handler), which refuses one that is not JSON. ok is false for any other
// shape, which json.Unmarshal reads.
func quickFrame(data []byte) (f Frame, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"type":`))
	if !ok {
		return Frame{}, false
	}
	if f.Type, rest, ok = quickString(rest); !ok {
		return Frame{}, false
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"seq":`)); found {
		if f.Seq, rest, ok = quickInt(r); !ok {
			return Frame{}, false
		}
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"method":`)); found {
		if f.Method, rest, ok = quickString(r); !ok {
			return Frame{}, false
		}
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"error":`)); found {
		if f.Error, rest, ok = quickString(r); !ok {
			return Frame{}, false
		}
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"body":`)); found {
		if len(r) < 2 || r[len(r)-1] != '}' {
			return Frame{}, false
		}
		f.Body = r[: len(r)-1 : len(r)-1]
		return f, true
	}
	return f, len(rest) == 1 && rest[0] == '}'
}

// quickString reads a JSON string of printable ASCII without escapes at
// the start of b; ok is false for any other.
func quickString(b []byte) (s string, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return string(b[1:i]), b[i+1:], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", nil, false
		}
	}
	return "", nil, false
}

// quickInt reads a JSON integer of at most 18 digits (so it fits an
// int64) at the start of b; ok is false for any other number.
func quickInt(b []byte) (n int64, rest []byte, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	i := 0
	for i < len(b) && i <= 18 && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	if i == 0 || i > 18 || (b[0] == '0' && i > 1) || (i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E')) {
		return 0, nil, false
	}
	if neg {
		n = -n
	}
	return n, b[i:], true
}
