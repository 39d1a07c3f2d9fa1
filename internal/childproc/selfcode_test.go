package childproc

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/wire"
	"github.com/shelldon/shelldon/internal/worker/selftools"
)

const fetchTool = `DESCRIPTION = "Fetch."
PARAMS_SCHEMA = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}
CAPABILITIES = {"http": ["api.example.com"]}

def run(url):
    r = http.get(url)
    return "%d %s" % (r.status, r.body)
`

// toolCallChild runs the toolcall mode on in-memory pipes; the test plays
// the worker on the returned Conn.
func toolCallChild(t *testing.T) (*wire.Conn, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serveToolCall(inR, outW)
		outW.Close()
		done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return wire.NewConn(outR, inW, 0), done
}

func liveStarlark(t *testing.T, code string, hosts ...string) contracts.SelfTool {
	t.Helper()
	dir := t.TempDir()
	test := "def test_x():\n    pass\n"
	for f, s := range map[string]string{"tool.star": code, "tool_test.star": test} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := contracts.SelfTool{Name: "fetch", Version: 1, Language: selfcode.Starlark, Hash: selfcode.Hash(selfcode.Starlark, code, test), Dir: dir}
	if len(hosts) > 0 {
		st.Capabilities = map[string][]string{"http": hosts}
	}
	return st
}

// runSeq numbers the test's run call.
const runSeq = 7

// run sends the run call of st with args.
func run(t *testing.T, c *wire.Conn, st contracts.SelfTool, args string) {
	t.Helper()
	if err := c.SendCall(runSeq, selftools.MethodRun, selftools.CallRequest{Tool: st, Args: json.RawMessage(args)}); err != nil {
		t.Fatal(err)
	}
}

// recvResult reads the reply to the run call: the result, or the tool's
// error.
func recvResult(t *testing.T, c *wire.Conn) (string, string) {
	t.Helper()
	f, err := c.Recv()
	var res selftools.CallResult
	if err != nil || f.Type != wire.TypeReply || f.Seq != runSeq || (f.Error == "" && f.Decode(&res) != nil) {
		t.Fatalf("want the reply to the run call, got %+v, %v", f, err)
	}
	return res.Result, f.Error
}

// recvHostCall reads a host call.
func recvHostCall(t *testing.T, c *wire.Conn) (wire.Frame, selftools.HTTPGet) {
	t.Helper()
	f, err := c.Recv()
	var req selftools.HTTPGet
	if err != nil || f.Type != wire.TypeCall || f.Decode(&req) != nil {
		t.Fatalf("want a host call, got %+v, %v", f, err)
	}
	return f, req
}

// TestToolCallRelaysHTTP: the toolcall child has no http of its own; each
// http.get is a host call to the worker, whose answer is what the tool sees.
func TestToolCallRelaysHTTP(t *testing.T) {
	t.Parallel()
	c, done := toolCallChild(t)
	run(t, c, liveStarlark(t, fetchTool, "api.example.com"), `{"url": "https://api.example.com/x"}`)
	f, req := recvHostCall(t, c)
	if f.Method != selftools.MethodHTTPGet || req.URL != "https://api.example.com/x" {
		t.Fatalf("host call %+v %+v", f, req)
	}
	// A reply to no call the child made is dropped; the one to its call counts.
	c.SendReply(f.Seq+1, selftools.HTTPResponse{Status: 500, Body: []byte("stray")})
	c.SendReply(f.Seq, selftools.HTTPResponse{Status: 200, Body: []byte("from the worker")})
	if res, errText := recvResult(t, c); errText != "" || res != "200 from the worker" {
		t.Fatalf("result %q, error %q", res, errText)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestToolCallRelayRefusals: the worker's refusal is the tool's error; a
// tool the request grants nothing never asks; an answer of the wrong kind
// breaks the relay.
func TestToolCallRelayRefusals(t *testing.T) {
	t.Parallel()
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		c, _ := toolCallChild(t)
		run(t, c, liveStarlark(t, fetchTool, "api.example.com"), `{"url": "https://api.example.com/x"}`)
		f, _ := recvHostCall(t, c)
		c.SendReplyError(f.Seq, "http: no, says the worker")
		if _, errText := recvResult(t, c); !strings.Contains(errText, "no, says the worker") {
			t.Fatalf("error %q", errText)
		}
	})
	t.Run("not granted", func(t *testing.T) {
		t.Parallel()
		c, _ := toolCallChild(t)
		run(t, c, liveStarlark(t, fetchTool), `{"url": "https://api.example.com/x"}`)
		if _, errText := recvResult(t, c); !strings.Contains(errText, "not granted") {
			t.Fatalf("error %q", errText)
		}
	})
	t.Run("wrong answer", func(t *testing.T) {
		t.Parallel()
		c, _ := toolCallChild(t)
		run(t, c, liveStarlark(t, fetchTool, "api.example.com"), `{"url": "https://api.example.com/x"}`)
		recvHostCall(t, c)
		c.SendCall(1, selftools.MethodRun, "nonsense")
		if _, errText := recvResult(t, c); !strings.Contains(errText, "did not answer") {
			t.Fatalf("error %q", errText)
		}
	})
	t.Run("no call", func(t *testing.T) {
		t.Parallel()
		c, done := toolCallChild(t)
		c.SendReply(1, selftools.HTTPResponse{})
		if err := <-done; err == nil {
			t.Fatal("a child without a call request ran")
		}
	})
}
