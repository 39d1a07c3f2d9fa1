package wire

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

type echoReq struct {
	Text string `json:"text"`
}

type echoResp struct {
	Text string `json:"text"`
	N    int    `json:"n"`
}

// pipes is a caller's Conn and a server's Conn joined by in-memory pipes.
type pipes struct {
	caller, server *Conn
	toServer       *io.PipeWriter // the caller's end, to close
	toCaller       *io.PipeWriter // the server's end, to close or write raw bytes to
}

func newPipes(t *testing.T, max int) pipes {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	t.Cleanup(func() { cw.Close(); sw.Close(); cr.Close(); sr.Close() })
	return pipes{caller: NewConn(cr, cw, max), server: NewConn(sr, sw, max), toServer: cw, toCaller: sw}
}

// testTable is the server's table of the tests: echo answers, fail refuses,
// big answers more than a frame may hold, silent never replies.
func testTable() Handlers {
	return Handlers{
		"echo": Handle(func(ctx context.Context, req echoReq) (echoResp, error) {
			return echoResp{Text: req.Text, N: len(req.Text)}, nil
		}),
		"fail": Handle(func(ctx context.Context, req echoReq) (echoResp, error) {
			return echoResp{}, errors.New("no: " + req.Text)
		}),
		"big": Handle(func(ctx context.Context, req echoReq) (string, error) {
			return strings.Repeat("x", 4096), nil
		}),
		"silent": Handle(func(ctx context.Context, req echoReq) (echoResp, error) {
			return echoResp{}, ErrNoReply
		}),
	}
}

// TestCallThroughTheTable: each call gets the reply of its method from the
// handler table, or an error reply; the server keeps serving after one.
func TestCallThroughTheTable(t *testing.T) {
	t.Parallel()
	p := newPipes(t, 1024)
	go func() {
		table := testTable()
		for {
			f, err := p.server.Recv()
			if err != nil {
				return
			}
			table.Serve(context.Background(), p.server, f)
		}
	}()
	client := NewClient(p.caller)
	go client.Read(nil)

	for _, tc := range []struct {
		name, method string
		req          any
		want         echoResp
		remote       string // the error reply, if one is wanted
	}{
		{name: "answer", method: "echo", req: echoReq{Text: "héllo"}, want: echoResp{Text: "héllo", N: 6}},
		{name: "error reply", method: "fail", req: echoReq{Text: "why"}, remote: "no: why"},
		{name: "unknown method", method: "exec", req: echoReq{}, remote: `unknown method "exec"`},
		{name: "bad body", method: "echo", req: []int{1, 2}, remote: "echo: a malformed request"},
		{name: "reply over the cap", method: "big", req: echoReq{}, remote: "big: the answer is larger than a frame may be"},
		{name: "after all that", method: "echo", req: echoReq{Text: "still"}, want: echoResp{Text: "still", N: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got echoResp
			err := client.Call(context.Background(), tc.method, tc.req, &got)
			var re *RemoteError
			switch {
			case tc.remote == "" && err != nil:
				t.Fatalf("Call: %v", err)
			case tc.remote == "" && got != tc.want:
				t.Fatalf("got %+v, want %+v", got, tc.want)
			case tc.remote != "" && (!errors.As(err, &re) || !strings.Contains(re.Error(), tc.remote)):
				t.Fatalf("err = %v, want a RemoteError containing %q", err, tc.remote)
			}
		})
	}
}

// TestCallEnds: a call that cannot be answered ends, and says why.
func TestCallEnds(t *testing.T) {
	t.Parallel()
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		p := newPipes(t, 1024)
		go drain(p.server)
		client := NewClient(p.caller)
		go client.Read(nil)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- client.Call(ctx, "echo", echoReq{}, nil) }()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("no reply", func(t *testing.T) {
		t.Parallel()
		p := newPipes(t, 1024)
		go serveAll(p.server)
		client := NewClient(p.caller)
		go client.Read(nil)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if err := client.Call(ctx, "silent", echoReq{}, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the deadline", err)
		}
	})
	t.Run("pipe closed with calls pending", func(t *testing.T) {
		t.Parallel()
		p := newPipes(t, 1024)
		got := make(chan Frame, 3)
		go func() {
			for range 3 {
				f, err := p.server.Recv()
				if err != nil {
					return
				}
				got <- f
			}
			p.toCaller.Close() // three calls read, none answered
		}()
		client := NewClient(p.caller)
		read := make(chan error, 1)
		go func() { read <- client.Read(nil) }()
		errs := make(chan error, 3)
		for range 3 {
			go func() { errs <- client.Call(context.Background(), "echo", echoReq{}, nil) }()
		}
		for range 3 {
			if err := <-errs; !errors.Is(err, ErrClosed) {
				t.Errorf("pending call: %v, want ErrClosed", err)
			}
		}
		if err := <-read; !errors.Is(err, io.EOF) {
			t.Errorf("Read: %v, want io.EOF", err)
		}
		if err := client.Call(context.Background(), "echo", echoReq{}, nil); !errors.Is(err, ErrClosed) {
			t.Errorf("a call after the end: %v, want ErrClosed", err)
		}
	})
	t.Run("oversized frame", func(t *testing.T) {
		t.Parallel()
		p := newPipes(t, 1024)
		go func() {
			p.server.Recv()
			// A reply declared at 2 GiB: refused from its header.
			p.toCaller.Write([]byte{0x7f, 0xff, 0xff, 0xff})
		}()
		client := NewClient(p.caller)
		read := make(chan error, 1)
		go func() { read <- client.Read(nil) }()
		if err := client.Call(context.Background(), "echo", echoReq{}, nil); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "too large") {
			t.Errorf("call: %v, want ErrClosed for a frame too large", err)
		}
		if err := <-read; !errors.Is(err, ErrTooLarge) {
			t.Errorf("Read: %v, want ErrTooLarge", err)
		}
	})
	t.Run("request over the cap", func(t *testing.T) {
		t.Parallel()
		p := newPipes(t, 64)
		client := NewClient(p.caller)
		if err := client.Call(context.Background(), "echo", echoReq{Text: strings.Repeat("x", 100)}, nil); !errors.Is(err, ErrTooLarge) {
			t.Errorf("err = %v, want ErrTooLarge", err)
		}
	})
	t.Run("another frame", func(t *testing.T) {
		t.Parallel()
		p := newPipes(t, 1024)
		go func() {
			p.server.Recv()
			p.server.Send(TypeJob, echoReq{})
		}()
		client := NewClient(p.caller)
		go client.Read(nil) // with no other: any frame but a reply ends it
		if err := client.Call(context.Background(), "echo", echoReq{}, nil); !errors.Is(err, ErrClosed) {
			t.Errorf("err = %v, want ErrClosed", err)
		}
	})
}

// TestRepliesRouted: replies reach their own calls whatever their order; a
// reply for no call, or a second reply to one, is dropped; frames that are
// no reply go to other.
func TestRepliesRouted(t *testing.T) {
	t.Parallel()
	p := newPipes(t, 1024)
	go func() {
		var calls []Frame
		for range 3 {
			f, err := p.server.Recv()
			if err != nil {
				return
			}
			calls = append(calls, f)
		}
		p.server.SendReply(999, echoResp{Text: "for nobody"})
		p.server.Send(TypeCancel, nil)
		for i := len(calls) - 1; i >= 0; i-- { // the last first
			var req echoReq
			calls[i].Decode(&req)
			p.server.SendReply(calls[i].Seq, echoResp{Text: req.Text})
			p.server.SendReply(calls[i].Seq, echoResp{Text: "again"})
		}
	}()
	client := NewClient(p.caller)
	others := make(chan string, 10)
	go client.Read(func(f Frame) error {
		others <- f.Type
		return nil
	})
	type result struct {
		want string
		got  echoResp
		err  error
	}
	results := make(chan result, 3)
	for _, text := range []string{"one", "two", "three"} {
		go func() {
			var got echoResp
			err := client.Call(context.Background(), "echo", echoReq{Text: text}, &got)
			results <- result{text, got, err}
		}()
	}
	for range 3 {
		r := <-results
		if r.err != nil || r.got.Text != r.want {
			t.Errorf("call %q: %+v, %v", r.want, r.got, r.err)
		}
	}
	if typ := <-others; typ != TypeCancel {
		t.Errorf("other frame %q, want %q", typ, TypeCancel)
	}
}

// TestServeRefusesWhatIsNoCall: Serve answers only a call, and a handler's
// body is decoded strictly as its type.
func TestServeRefusesWhatIsNoCall(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		f    Frame
		want string
	}{
		{"a reply", Frame{Type: TypeReply, Seq: 3}, `a "reply" frame is not a call`},
		{"no body", Frame{Type: TypeCall, Seq: 3, Method: "echo"}, "echo: a malformed request"},
		{"trailing bytes", Frame{Type: TypeCall, Seq: 3, Method: "echo", Body: json.RawMessage(`{"text":"a"}x`)}, "echo: a malformed request"},
		{"long method", Frame{Type: TypeCall, Seq: 3, Method: strings.Repeat("m", 1000)}, `unknown method "mmmm`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPipes(t, 1024)
			go testTable().Serve(context.Background(), p.server, tc.f)
			f, err := p.caller.Recv()
			if err != nil || f.Type != TypeReply || f.Seq != 3 || !strings.Contains(f.Error, tc.want) || len(f.Error) > 200 {
				t.Fatalf("reply %+v, %v; want an error reply containing %q", f, err, tc.want)
			}
		})
	}
}

func drain(c *Conn) {
	for {
		if _, err := c.Recv(); err != nil {
			return
		}
	}
}

func serveAll(c *Conn) {
	table := testTable()
	for {
		f, err := c.Recv()
		if err != nil {
			return
		}
		table.Serve(context.Background(), c, f)
	}
}

// FuzzServe: whatever call frame arrives, Serve answers it with one reply of
// its number (an error reply for anything the table cannot take), or with
// none when the handler says so.
func FuzzServe(f *testing.F) {
	f.Add("echo", []byte(`{"text":"a"}`))
	f.Add("fail", []byte(`{"text":"`+strings.Repeat("long ", 400)+`"}`))
	f.Add("silent", []byte(`{}`))
	f.Add("", []byte(`null`))
	f.Add("echo", []byte{0xff})
	f.Fuzz(func(t *testing.T, method string, body []byte) {
		var buf strings.Builder
		conn := NewConn(strings.NewReader(""), &buf, 1024)
		if err := testTable().Serve(context.Background(), conn, Frame{Type: TypeCall, Seq: 5, Method: method, Body: body}); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		if buf.Len() == 0 && method == "silent" {
			return
		}
		rep, err := ReadFrame(strings.NewReader(buf.String()), 1024)
		if err != nil || rep.Type != TypeReply || rep.Seq != 5 {
			t.Fatalf("reply %+v, %v", rep, err)
		}
	})
}
