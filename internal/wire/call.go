package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// ErrClosed fails a call whose reply can no longer come: the stream it was
// to come on ended (or broke) first.
var ErrClosed = errors.New("wire: the stream closed")

// RemoteError is the error of a reply: the call reached the other side, which
// refused or failed it. Its text is the other side's.
type RemoteError struct {
	Method  string
	Message string
}

func (e *RemoteError) Error() string { return e.Message }

// Client makes calls over a Conn: each gets the next sequence number and
// waits for the reply with that number, which its Read loop delivers. It is
// safe for concurrent use; Read must run for any call to be answered.
type Client struct {
	conn    *Conn
	mu      sync.Mutex
	seq     int64
	pending map[int64]chan Frame
	closed  error // set once the stream has ended; fails every later call
}

// NewClient returns a Client calling over conn.
func NewClient(conn *Conn) *Client {
	return &Client{conn: conn, pending: map[int64]chan Frame{}}
}

// Call calls method with req (marshaled to JSON) and decodes the reply's
// body into resp (nil: the body is dropped). The reply's error is a
// *RemoteError; ctx ending first is ctx's error, and the stream ending first
// is ErrClosed. A reply that comes after its call gave up is dropped.
func (c *Client) Call(ctx context.Context, method string, req, resp any) error {
	c.mu.Lock()
	if c.closed != nil {
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, c.closed)
	}
	c.seq++
	seq := c.seq
	ch := make(chan Frame, 1)
	c.pending[seq] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, seq)
		c.mu.Unlock()
	}()
	if err := c.conn.write(Frame{Type: TypeCall, Seq: seq, Method: method}, req); err != nil {
		return err
	}
	var f Frame
	select {
	case <-ctx.Done():
		return ctx.Err()
	case got, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.closed
			c.mu.Unlock()
			return fmt.Errorf("%s: %w", method, err)
		}
		f = got
	}
	if f.Error != "" {
		return &RemoteError{Method: method, Message: f.Error}
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(f.Body, resp); err != nil {
		return fmt.Errorf("wire: decode the reply to %s: %w", method, err)
	}
	return nil
}

// Read reads the Conn until it fails: it delivers each reply to the call
// waiting for it (a reply no call waits for is dropped) and hands any other
// frame to other, whose error stops the reading (with other nil, any other
// frame does). Every call still waiting then fails with ErrClosed, as does
// every later one. Read returns why it stopped: the read's error (io.EOF for
// a clean end), or other's.
func (c *Client) Read(other func(Frame) error) error {
	for {
		f, err := c.conn.Recv()
		if err == nil && f.Type != TypeReply {
			if other == nil {
				err = fmt.Errorf("wire: unexpected %q frame", f.Type)
			} else {
				err = other(f)
			}
		}
		if err != nil {
			c.close(err)
			return err
		}
		if f.Type == TypeReply {
			c.deliver(f)
		}
	}
}

// deliver hands the reply f to the call waiting for it, if any.
func (c *Client) deliver(f Frame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.pending[f.Seq]; ok {
		delete(c.pending, f.Seq) // a second reply with the same number finds no call
		ch <- f                  // buffered, and this is the only send
	}
}

// close fails every call waiting and every later one.
func (c *Client) close(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed != nil {
		return
	}
	c.closed = fmt.Errorf("%w (%v)", ErrClosed, cause)
	for seq, ch := range c.pending {
		close(ch)
		delete(c.pending, seq)
	}
}

// ErrNoReply is what a Handler returns to send no reply at all: the caller
// learns the outcome some other way (the daemon's cancel frame, say).
var ErrNoReply = errors.New("wire: no reply")

// Handler serves one method: it gets the call's body and returns the reply's
// (marshaled to JSON), or an error that is the reply's error.
type Handler func(ctx context.Context, body json.RawMessage) (any, error)

// Handle makes a Handler of a typed function: the call's body is decoded
// into a Req (a body that does not decode is an error reply, and f is not
// called) and f's Resp is the reply's body.
func Handle[Req, Resp any](f func(ctx context.Context, req Req) (Resp, error)) Handler {
	return func(ctx context.Context, body json.RawMessage) (any, error) {
		var req Req
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, malformed{err}
		}
		resp, err := f(ctx, req)
		if err != nil {
			return nil, err
		}
		return resp, nil
	}
}

// Handlers is the serving side's table of methods.
type Handlers map[string]Handler

// Serve answers the call f with the handler of its method and sends the
// reply on conn: the handler's answer, or its error. A method the table
// lacks, a body that does not decode, and an answer or error larger than
// conn's cap, are error replies too. Serve's own error is only the reply's
// failing to go out.
func (h Handlers) Serve(ctx context.Context, conn *Conn, f Frame) error {
	resp, err := h.answer(ctx, f)
	switch {
	case errors.Is(err, ErrNoReply):
		return nil
	case err != nil:
		err = conn.SendReplyError(f.Seq, err.Error())
		if errors.Is(err, ErrTooLarge) {
			err = conn.SendReplyError(f.Seq, fmt.Sprintf("%s: the error is larger than a frame may be (%d bytes)", trimName(f.Method), conn.max))
		}
		return err
	}
	err = conn.SendReply(f.Seq, resp)
	if errors.Is(err, ErrTooLarge) {
		err = conn.SendReplyError(f.Seq, fmt.Sprintf("%s: the answer is larger than a frame may be (%d bytes)", trimName(f.Method), conn.max))
	}
	return err
}

func (h Handlers) answer(ctx context.Context, f Frame) (any, error) {
	if f.Type != TypeCall {
		return nil, fmt.Errorf("a %q frame is not a call", trimName(f.Type))
	}
	handle, ok := h[f.Method]
	if !ok {
		return nil, fmt.Errorf("unknown method %q", trimName(f.Method))
	}
	resp, err := handle(ctx, f.Body)
	if m, ok := err.(malformed); ok {
		return nil, fmt.Errorf("%s: a malformed request: %v", f.Method, m.err)
	}
	return resp, err
}

// malformed is Handle's error for a body that does not decode.
type malformed struct{ err error }

func (m malformed) Error() string { return "a malformed request: " + m.err.Error() }

// trimName caps a name the peer chose, for an error message.
func trimName(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
