// Package wire frames the messages between the daemon and its child processes
// (the per-turn worker, and later the sandbox helper): a 4-byte big-endian
// length followed by that many bytes of JSON. The length is checked against a
// cap before anything is allocated, so a broken or hostile peer cannot make
// the reader allocate more than the cap.
package wire

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/shelldon/shelldon/internal/contracts"
)

// MaxFrame is the default cap on one frame's body.
const MaxFrame = 16 << 20

// ErrTooLarge is returned for a frame whose declared length exceeds the cap.
var ErrTooLarge = errors.New("wire: frame too large")

// Frame types exchanged between the daemon and a worker.
const (
	TypeJob        = "job"        // daemon → worker: contracts.Job
	TypeComplete   = "complete"   // worker → daemon: contracts.Request
	TypeCompletion = "completion" // daemon → worker: contracts.Completion, or Error
	TypeEvent      = "event"      // worker → daemon: contracts.ToolEvent
	TypeResult     = "result"     // worker → daemon: contracts.Result, or Error
	TypeCancel     = "cancel"     // daemon → worker: end the turn now with what it has
	TypePropose    = "propose"    // worker → daemon: ProposeMsg, a tool whose gate passed
	TypeProposed   = "proposed"   // daemon → worker: ProposedMsg, or Error
	TypeConfigure  = "configure"  // worker → daemon: ConfigureMsg, an approved update_config
	TypeConfigured = "configured" // daemon → worker: ConfiguredMsg
	TypeSkill      = "skill"      // worker → daemon: SkillMsg
	TypeSkillDone  = "skill_done" // daemon → worker: SkillDoneMsg
)

// Frame is one message. Body holds the JSON of the type's payload; Error is
// set instead when the sender reports a failure.
type Frame struct {
	Type  string          `json:"type"`
	Body  json.RawMessage `json:"body,omitempty"`
	Error string          `json:"error,omitempty"`
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
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("wire: encode %s frame: %w", typ, err)
	}
	return c.write(Frame{Type: typ, Body: body})
}

// SendError writes one frame of type typ that reports a failure.
func (c *Conn) SendError(typ string, msg string) error {
	return c.write(Frame{Type: typ, Error: msg})
}

func (c *Conn) write(f Frame) error {
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("wire: encode frame: %w", err)
	}
	if len(data) > c.max {
		return fmt.Errorf("%w: %d bytes, cap %d", ErrTooLarge, len(data), c.max)
	}
	buf := make([]byte, 4+len(data))
	binary.BigEndian.PutUint32(buf, uint32(len(data)))
	copy(buf[4:], data)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(buf); err != nil {
		return fmt.Errorf("wire: write %s frame: %w", f.Type, err)
	}
	return nil
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
	var f Frame
	if err := json.Unmarshal(data, &f); err != nil {
		return Frame{}, fmt.Errorf("wire: malformed frame: %w", err)
	}
	if f.Type == "" {
		return Frame{}, errors.New("wire: frame without a type")
	}
	return f, nil
}

// CompleteMsg is the body of a TypeComplete frame: a model call the worker
// asks the daemon to make. Seq pairs it with its CompletionMsg.
type CompleteMsg struct {
	Seq     int64             `json:"seq"`
	Request contracts.Request `json:"request"`
}

// CompletionMsg is the body of a TypeCompletion frame. Error is set, and
// Completion empty, when the model could not be reached.
type CompletionMsg struct {
	Seq        int64                `json:"seq"`
	Completion contracts.Completion `json:"completion"`
	Error      string               `json:"error,omitempty"`
}

// ProposeMsg is the body of a TypePropose frame.
type ProposeMsg struct {
	Seq      int64              `json:"seq"`
	Proposal contracts.Proposal `json:"proposal"`
}

// ProposedMsg is the body of a TypeProposed frame.
type ProposedMsg struct {
	Seq      int64              `json:"seq"`
	Proposed contracts.Proposed `json:"proposed"`
	Error    string             `json:"error,omitempty"`
}

// ConfigureMsg is the body of a TypeConfigure frame.
type ConfigureMsg struct {
	Seq     int64           `json:"seq"`
	Changes json.RawMessage `json:"changes"`
}

// ConfiguredMsg is the body of a TypeConfigured frame.
type ConfiguredMsg struct {
	Seq   int64    `json:"seq"`
	Diff  []string `json:"diff,omitempty"`
	Error string   `json:"error,omitempty"`
}

// SkillMsg is the body of a TypeSkill frame.
type SkillMsg struct {
	Seq     int64                  `json:"seq"`
	Request contracts.SkillRequest `json:"request"`
}

// SkillDoneMsg is the body of a TypeSkillDone frame.
type SkillDoneMsg struct {
	Seq    int64  `json:"seq"`
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}
