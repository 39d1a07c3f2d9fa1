package selftools

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/testbin"
	"github.com/shelldon/shelldon/internal/wire"
)

// fakeEnv names the hostile child mode the test binary plays when the
// sandbox starts it in place of the toolcall child.
const fakeEnv = "SELFTOOLS_FAKE_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeChild(mode))
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// scriptArgs are the arguments of a call to the "script" child: the host
// calls it makes, one after another.
type scriptArgs struct {
	URLs []string `json:"urls"`
	Kind string   `json:"kind,omitempty"` // default HostHTTPGet
}

// scriptAnswer is what the "script" child reports of one answer.
type scriptAnswer struct {
	Status int    `json:"status"`
	Size   int    `json:"size"`
	Body   string `json:"body"` // its first 64 bytes
	Error  string `json:"error"`
}

// fakeChild plays a toolcall child, honest or hostile, on fds 0 and 1.
func fakeChild(mode string) int {
	conn := wire.NewConn(os.Stdin, os.Stdout, MaxWorkerFrame)
	readCall := func() CallRequest {
		f, err := conn.Recv()
		var req CallRequest
		if err != nil || f.Type != FrameCall || f.Decode(&req) != nil {
			fmt.Fprintln(os.Stderr, "fake child: no call:", err)
			os.Exit(9)
		}
		return req
	}
	forever := func() { time.Sleep(time.Hour) }
	switch mode {
	case "script": // an honest child: the host calls of its arguments
		req := readCall()
		var args scriptArgs
		json.Unmarshal(req.Args, &args)
		if args.Kind == "" {
			args.Kind = HostHTTPGet
		}
		var got []scriptAnswer
		for _, u := range args.URLs {
			if err := conn.Send(FrameHost, HostCall{Kind: args.Kind, URL: u}); err != nil {
				return 3
			}
			f, err := conn.Recv()
			var a HostAnswer
			if err != nil || f.Type != FrameAnswer || f.Decode(&a) != nil {
				return 4
			}
			got = append(got, scriptAnswer{Status: a.Status, Size: len(a.Body), Body: string(a.Body[:min(64, len(a.Body))]), Error: a.Error})
		}
		out, _ := json.Marshal(got)
		conn.Send(FrameResult, CallResult{Result: string(out)})
	case "garbage": // a flood of bytes that are no frame
		readCall()
		junk := bytes.Repeat([]byte{0xff}, 64<<10)
		for range 4096 { // 256 MiB
			if _, err := os.Stdout.Write(junk); err != nil {
				return 0
			}
		}
	case "huge": // a frame declared at 2 GiB
		readCall()
		os.Stdout.Write([]byte{0x7f, 0xff, 0xff, 0xff})
		junk := bytes.Repeat([]byte{'x'}, 64<<10)
		for {
			if _, err := os.Stdout.Write(junk); err != nil {
				return 0
			}
		}
	case "malformed": // a frame of the right size that is no JSON
		readCall()
		body := []byte("this is not JSON at all")
		os.Stdout.Write(binary.BigEndian.AppendUint32(nil, uint32(len(body))))
		os.Stdout.Write(body)
		forever()
	case "badtype": // a frame the worker never asked for
		readCall()
		conn.Send("job", map[string]string{"evil": "yes"})
		forever()
	case "flood": // host calls as big as a frame may be, never reading an answer
		readCall()
		big := strings.Repeat("a", MaxChildFrame-200)
		for {
			if err := conn.Send(FrameHost, HostCall{Kind: HostHTTPGet, URL: "https://api.example.com/" + big}); err != nil {
				return 0
			}
		}
	case "silent": // reads the call and never answers
		readCall()
		forever()
	case "deaf": // never reads its request
		forever()
	case "exit": // ends at once, no answer
		return 3
	case "forge": // a result, then more frames and garbage
		readCall()
		conn.Send(FrameResult, CallResult{Result: "forged"})
		conn.Send(FrameHost, HostCall{Kind: HostHTTPGet, URL: "https://api.example.com/after"})
		os.Stdout.Write(bytes.Repeat([]byte{0xff}, 1<<20))
		forever()
	default:
		fmt.Fprintln(os.Stderr, "fake child: unknown mode", mode)
		return 2
	}
	return 0
}
