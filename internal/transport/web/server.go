package web

import (
	"container/list"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// The limits of the daemon's HTTP server: what one client, or a crowd of
// them, can hold of a daemon that must stay small.
const (
	// HeaderTimeout is how long a client has to send a request's
	// headers, from the connection's accept (or, on a kept-alive
	// connection, from the request's first byte).
	HeaderTimeout = 10 * time.Second
	// ReadTimeout is how long a client has to send a whole request,
	// headers and body, from its first byte. A handler's run is not
	// counted: the server clears the read deadline once the body is read.
	ReadTimeout = 30 * time.Second
	// IdleTimeout closes a kept-alive connection with no request.
	IdleTimeout = 60 * time.Second
	// WriteTimeout is how long the writing of one response may take. It is
	// armed when the response is written (armWrite), not when the request
	// arrives, so an answer after a long turn still has all of it; the
	// server arms it at the request too, for handlers outside this package.
	// A stream re-arms it before each event and is never cut off as a
	// whole: it ends when its client is gone (the request's context is
	// done) or when one event cannot be written within WriteTimeout.
	WriteTimeout = 30 * time.Second
	// MaxHeaderBytes caps a request's line and headers.
	MaxHeaderBytes = 16 << 10
	// MaxConns caps the open connections whatever the descriptor limit.
	MaxConns = 256
)

// MaxConnsFor is the connection cap under an open-file limit of nofile:
// half of it, the other half left to the store, the workers and the
// providers; at least 8, at most MaxConns.
func MaxConnsFor(nofile uint64) int {
	return int(min(max(nofile/2, 8), MaxConns))
}

// NewHTTPServer returns the server of h over ln with the limits above and
// at most maxConns connections open (see Listener), and the listener to
// serve: srv.Serve(l). Its errors go to log at warn.
func NewHTTPServer(ln net.Listener, h http.Handler, maxConns int, log *slog.Logger) (*http.Server, *Listener) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := NewListener(ln, maxConns, log)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: HeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnState:         l.ConnState,
		ConnContext:       withConn,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return srv, l
}

// armWrite gives the writes that follow on w WriteTimeout to complete.
// Every JSON response arms it once, just before writing; a long-lived
// stream arms it before each event (or clears it with a zero deadline
// through http.NewResponseController) and is otherwise exempt. Where w
// cannot take a deadline (a test's recorder) nothing happens.
func armWrite(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(WriteTimeout))
}

// Listener caps the connections open at once. When it is full, a new
// connection closes the oldest one that is not serving one of the owner's
// requests: one with no complete request yet (StateNew, what an idle or a
// slow-header client holds), one kept alive between requests (StateIdle),
// or one serving a request that carried no valid token (a /healthz, a
// refusal, a body nobody will read); so a crowd of clients without the
// token never locks the owner out. When every connection serves the
// owner, Accept waits until one closes. It learns the states from the
// server's ConnState hook and the owner's requests from the API's auth
// (through the connection NewHTTPServer puts in each request's context).
type Listener struct {
	net.Listener
	max  int
	log  *slog.Logger
	now  func() time.Time
	done chan struct{} // closed by Close
	free chan struct{} // a connection closed

	mu      sync.Mutex
	open    list.List // *conn, oldest first
	evicted int64
	warned  time.Time
	closing sync.Once
}

// NewListener caps ln at maxConns (at least 1) open connections.
func NewListener(ln net.Listener, maxConns int, log *slog.Logger) *Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Listener{Listener: ln, max: max(maxConns, 1), log: log, now: time.Now,
		done: make(chan struct{}), free: make(chan struct{}, 1)}
}

// conn is an accepted connection and its last HTTP state.
type conn struct {
	net.Conn
	l     *Listener
	elem  *list.Element // nil once closed
	state http.ConnState
	owner bool // serving a request with the valid token
}

// Close closes the connection and frees its place, once.
func (c *conn) Close() error {
	c.l.release(c)
	return c.Conn.Close()
}

// Accept waits for a connection and a place for it.
func (l *Listener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		l.mu.Lock()
		if l.open.Len() < l.max {
			c := &conn{Conn: nc, l: l, state: http.StateNew}
			c.elem = l.open.PushBack(c)
			l.mu.Unlock()
			return c, nil
		}
		victim := l.idlestLocked()
		l.mu.Unlock()
		if victim != nil {
			victim.Close()
			continue
		}
		select {
		case <-l.free:
		case <-l.done:
			nc.Close()
			return nil, net.ErrClosed
		}
	}
}

// idlestLocked returns the oldest connection serving no request, counted
// as evicted, or nil.
func (l *Listener) idlestLocked() *conn {
	for e := l.open.Front(); e != nil; e = e.Next() {
		c := e.Value.(*conn)
		if !c.owner && c.state != http.StateHijacked {
			l.evicted++
			if now := l.now(); now.Sub(l.warned) >= time.Minute {
				l.warned = now
				l.log.Warn("http: connection limit reached; closing the oldest idle connections", "max", l.max, "evicted", l.evicted)
			}
			return c
		}
	}
	return nil
}

func (l *Listener) release(c *conn) {
	l.mu.Lock()
	if c.elem != nil {
		l.open.Remove(c.elem)
		c.elem = nil
		select {
		case l.free <- struct{}{}:
		default:
		}
	}
	l.mu.Unlock()
}

// ConnState is the server's hook (http.Server.ConnState): it records
// which connections serve a request.
func (l *Listener) ConnState(nc net.Conn, s http.ConnState) {
	c, ok := unwrapConn(nc).(*conn)
	if !ok || c.l != l {
		return
	}
	l.mu.Lock()
	c.state = s
	if s != http.StateActive {
		c.owner = false
	}
	l.mu.Unlock()
}

// connKey is the request context's key of its *conn.
type connKey struct{}

// withConn is the server's ConnContext hook.
func withConn(ctx context.Context, nc net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, unwrapConn(nc))
}

// unwrapConn is the Listener's connection under a TLS one (the daemon
// serves TLS over the Listener: TLSListener), or nc itself.
func unwrapConn(nc net.Conn) net.Conn {
	if t, ok := nc.(*tls.Conn); ok {
		return t.NetConn()
	}
	return nc
}

// TLSListener serves TLS with the certificate and key in the PEM files
// certFile and keyFile over ln (a Listener, whose connection cap counts
// the TLS connections), TLS 1.2 at least.
func TLSListener(ln net.Listener, certFile, keyFile string) (net.Listener, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("server.tls_cert, server.tls_key: %w", err)
	}
	return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}), nil
}

// servingOwner marks the connection of r as serving one of the owner's
// requests until the request ends: the Listener does not close it to make
// room.
func servingOwner(r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(*conn); ok {
		c.l.mu.Lock()
		c.owner = c.state == http.StateActive
		c.l.mu.Unlock()
	}
}

// Stats reports the connections open now and those closed to make room.
func (l *Listener) Stats() (open int, evicted int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open.Len(), l.evicted
}

// Close stops accepting; a waiting Accept returns net.ErrClosed. Open
// connections are the server's to close.
func (l *Listener) Close() error {
	l.closing.Do(func() { close(l.done) })
	return l.Listener.Close()
}
