package web

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// pipeListener hands out the server ends of net.Pipes; the test keeps the
// client ends.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (p *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

func (p *pipeListener) Close() error {
	select {
	case <-p.done:
		return net.ErrClosed
	default:
		close(p.done)
		return nil
	}
}

func (p *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// dial queues a connection and returns its client end.
func (p *pipeListener) dial() net.Conn {
	server, client := net.Pipe()
	go func() { p.conns <- server }()
	return client
}

// closed reports whether the server end of client was closed.
func closed(client net.Conn) bool {
	client.SetReadDeadline(time.Now().Add(time.Millisecond))
	_, err := client.Read(make([]byte, 1))
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe)
}

// owner puts c in the state of serving a request that passed auth.
func owner(l *Listener, c net.Conn) {
	l.ConnState(c, http.StateActive)
	r, _ := http.NewRequestWithContext(withConn(context.Background(), c), "GET", "/api/chat", nil)
	servingOwner(r)
}

// TestListenerClosesTheOldestNotServingTheOwner: when full, a new
// connection closes the oldest that is new, idle, or serving a request
// without the token; never one serving the owner.
func TestListenerClosesTheOldestNotServingTheOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPipeListener()
		l := NewListener(p, 4, nil)
		defer l.Close()
		accept := func() (net.Conn, net.Conn) {
			t.Helper()
			client := p.dial()
			c, err := l.Accept()
			if err != nil {
				t.Fatal(err)
			}
			return client, c
		}
		ownerClient, ownerConn := accept()
		idleClient, idleConn := accept()
		anonClient, anonConn := accept()
		newClient, _ := accept()
		owner(l, ownerConn)
		l.ConnState(idleConn, http.StateIdle)
		l.ConnState(anonConn, http.StateActive) // a /healthz, say: no token

		for i, want := range []net.Conn{idleClient, anonClient, newClient} {
			accept()
			if !closed(want) {
				t.Fatalf("accept %d did not close the oldest connection not serving the owner", i+5)
			}
		}
		if closed(ownerClient) {
			t.Fatal("the owner's connection was closed")
		}
		if open, evicted := l.Stats(); open != 4 || evicted != 3 {
			t.Errorf("stats: %d open, %d evicted", open, evicted)
		}

		// Once the owner's request ends, the connection is idle like any.
		l.ConnState(ownerConn, http.StateIdle)
		accept()
		if !closed(ownerClient) {
			t.Error("an idle connection of the owner's was kept over the cap")
		}
	})
}

// TestListenerWaitsWhileEveryConnectionServesTheOwner: a full listener
// whose connections all serve the owner accepts the next once one closes,
// and a waiting Accept ends when the listener closes.
func TestListenerWaitsWhileEveryConnectionServesTheOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPipeListener()
		l := NewListener(p, 2, nil)
		var conns []net.Conn
		for range 2 {
			p.dial()
			c, err := l.Accept()
			if err != nil {
				t.Fatal(err)
			}
			owner(l, c)
			conns = append(conns, c)
		}
		type result struct {
			c   net.Conn
			err error
		}
		got := make(chan result, 1)
		accept := func() {
			go func() {
				c, err := l.Accept()
				got <- result{c, err}
			}()
		}
		p.dial()
		accept()
		synctest.Wait()
		select {
		case r := <-got:
			t.Fatalf("accepted over the cap: %v", r)
		default:
		}
		conns[0].Close()
		conns[0].Close() // twice frees one place
		synctest.Wait()
		r := <-got
		if r.err != nil {
			t.Fatal(r.err)
		}
		owner(l, r.c)
		if open, _ := l.Stats(); open != 2 {
			t.Fatalf("%d open, want 2", open)
		}

		client := p.dial()
		accept()
		synctest.Wait()
		l.Close()
		if r := <-got; !errors.Is(r.err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v", r.err)
		}
		if !closed(client) {
			t.Error("the connection that waited was left open")
		}
	})
}

func TestMaxConnsFor(t *testing.T) {
	t.Parallel()
	for nofile, want := range map[uint64]int{0: 8, 10: 8, 64: 32, 512: 256, 1024: 256, 1 << 20: 256} {
		if got := MaxConnsFor(nofile); got != want {
			t.Errorf("MaxConnsFor(%d) = %d, want %d", nofile, got, want)
		}
	}
}

// TestServerServesTheOwnerPastIdleClients: a real server capped at 8
// connections, 200 clients connected that send nothing: the owner's
// request is still answered, and the server held at most 8 at once.
func TestServerServesTheOwnerPastIdleClients(t *testing.T) {
	t.Parallel()
	s, err := New(Options{Chat: &fakeCore{}, Approvals: &fakeCore{}, Audit: &fakeCore{}, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, l := NewHTTPServer(ln, s, 8, nil)
	go srv.Serve(l)
	defer srv.Close()
	for range 200 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/approvals", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: HeaderTimeout / 2}).Do(req)
	if err != nil {
		t.Fatalf("the owner was not served: %v", err)
	}
	resp.Body.Close()
	open, evicted := l.Stats()
	if resp.StatusCode != 200 || open > 8 || evicted < 200-8 {
		t.Fatalf("status %d, %d open, %d evicted", resp.StatusCode, open, evicted)
	}
}

// TestResponsesArmTheirOwnWriteDeadline: a JSON response is written even
// when the deadline the server armed at the request has passed (a turn
// that ran longer than WriteTimeout), because writeJSON arms it anew; a
// write without it fails. A stream opts out the same way, per write.
func TestResponsesArmTheirOwnWriteDeadline(t *testing.T) {
	t.Parallel()
	expired := func(w http.ResponseWriter) {
		if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(-time.Second)); err != nil {
			t.Error(err)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		expired(w)
		writeJSON(w, 200, map[string]string{"ok": "yes"})
	})
	mux.HandleFunc("/bare", func(w http.ResponseWriter, r *http.Request) {
		expired(w)
		w.Write([]byte("never"))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, l := NewHTTPServer(ln, mux, 8, nil)
	go srv.Serve(l)
	defer srv.Close()
	resp, err := http.Get("http://" + ln.Addr().String() + "/json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "{\"ok\":\"yes\"}\n" {
		t.Fatalf("json: %d %q", resp.StatusCode, body)
	}
	if resp, err := http.Get("http://" + ln.Addr().String() + "/bare"); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("a write past its deadline went out: %d %q", resp.StatusCode, body)
	}
}
