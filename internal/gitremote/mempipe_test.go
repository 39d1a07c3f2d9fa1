package gitremote

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// memPipe is a buffered in-memory connection whose waits are on channels
// and timers, so that testing/synctest sees them as durable and moves its
// clock (net.Pipe is unbuffered: two SSH ends both writing their version
// first would block each other; loopback TCP waits are not durable).
func memPipe() (net.Conn, net.Conn) {
	a, b := newMemHalf(), newMemHalf()
	return &memConn{in: a, out: b}, &memConn{in: b, out: a}
}

// memHalf is one direction: bytes written and not yet read.
type memHalf struct {
	mu       sync.Mutex
	buf      []byte
	closed   bool
	ready    chan struct{} // a token when buf or closed changed
	deadline time.Time     // the reader's
	changed  chan struct{} // closed when deadline changes
}

func newMemHalf() *memHalf {
	return &memHalf{ready: make(chan struct{}, 1), changed: make(chan struct{})}
}

func (h *memHalf) signal() {
	select {
	case h.ready <- struct{}{}:
	default:
	}
}

type memConn struct{ in, out *memHalf }

func (c *memConn) Read(p []byte) (int, error) {
	for {
		h := c.in
		h.mu.Lock()
		if len(h.buf) > 0 {
			n := copy(p, h.buf)
			h.buf = h.buf[n:]
			h.mu.Unlock()
			return n, nil
		}
		if h.closed {
			h.mu.Unlock()
			return 0, io.EOF
		}
		deadline, changed := h.deadline, h.changed
		h.mu.Unlock()
		var expired <-chan time.Time
		timer := time.NewTimer(time.Hour)
		if !deadline.IsZero() {
			timer.Reset(time.Until(deadline))
			expired = timer.C
		}
		select {
		case <-h.ready:
		case <-changed:
		case <-expired:
			return 0, os.ErrDeadlineExceeded
		}
		timer.Stop()
	}
}

func (c *memConn) Write(p []byte) (int, error) {
	h := c.out
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return 0, net.ErrClosed
	}
	h.buf = append(h.buf, p...)
	h.signal()
	return len(p), nil
}

func (c *memConn) Close() error {
	for _, h := range []*memHalf{c.in, c.out} {
		h.mu.Lock()
		h.closed = true
		h.signal()
		h.mu.Unlock()
	}
	return nil
}

func (c *memConn) SetReadDeadline(t time.Time) error {
	h := c.in
	h.mu.Lock()
	defer h.mu.Unlock()
	h.deadline = t
	close(h.changed)
	h.changed = make(chan struct{})
	return nil
}

// Writes never block: their deadline does not matter.
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }
func (c *memConn) SetDeadline(t time.Time) error    { return c.SetReadDeadline(t) }
func (c *memConn) LocalAddr() net.Addr              { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr             { return memAddr{} }

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }
