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
	Kind string   `json:"kind,omitempty"` // the method; default MethodHTTPGet
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
	var run int64 // the worker's run call
	readCall := func() CallRequest {
		f, err := conn.Recv()
		var req CallRequest
		if err != nil || f.Type != wire.TypeCall || f.Method != MethodRun || f.Decode(&req) != nil {
			fmt.Fprintln(os.Stderr, "fake child: no call:", err)
			os.Exit(9)
		}
		run = f.Seq
		return req
	}
	forever := func() { time.Sleep(time.Hour) }
	switch mode {
	case "script": // an honest child: the host calls of its arguments
		req := readCall()
		var args scriptArgs
		json.Unmarshal(req.Args, &args)
		if args.Kind == "" {
			args.Kind = MethodHTTPGet
		}
		var got []scriptAnswer
		for i, u := range args.URLs {
			seq := int64(100 + i) // the child numbers its calls as it likes
			if err := conn.SendCall(seq, args.Kind, HTTPGet{URL: u}); err != nil {
				return 3
			}
			f, err := conn.Recv()
			var a HTTPResponse
			if err != nil || f.Type != wire.TypeReply || f.Seq != seq || (f.Error == "" && f.Decode(&a) != nil) {
				return 4
			}
			got = append(got, scriptAnswer{Status: a.Status, Size: len(a.Body), Body: string(a.Body[:min(64, len(a.Body))]), Error: f.Error})
		}
		out, _ := json.Marshal(got)
		conn.SendReply(run, CallResult{Result: string(out)})
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
		for seq := int64(1); ; seq++ {
			if err := conn.SendCall(seq, MethodHTTPGet, HTTPGet{URL: "https://api.example.com/" + big}); err != nil {
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
	case "stray": // a reply to a call the worker never made
		readCall()
		conn.SendReply(run+1, CallResult{Result: "stray"})
		forever()
	case "forge": // a result, then more frames and garbage
		readCall()
		conn.SendReply(run, CallResult{Result: "forged"})
		conn.SendCall(1, MethodHTTPGet, HTTPGet{URL: "https://api.example.com/after"})
		os.Stdout.Write(bytes.Repeat([]byte{0xff}, 1<<20))
		forever()
	default:
		fmt.Fprintln(os.Stderr, "fake child: unknown mode", mode)
		return 2
	}
	return 0
}
