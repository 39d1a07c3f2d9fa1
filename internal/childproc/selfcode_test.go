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

func recvResult(t *testing.T, c *wire.Conn) selftools.CallResult {
	t.Helper()
	f, err := c.Recv()
	var res selftools.CallResult
	if err != nil || f.Type != selftools.FrameResult || f.Decode(&res) != nil {
		t.Fatalf("want the result frame, got %+v, %v", f, err)
	}
	return res
}

// TestToolCallRelaysHTTP: the toolcall child has no http of its own; each
// http.get is a host call to the worker, whose answer is what the tool sees.
func TestToolCallRelaysHTTP(t *testing.T) {
	t.Parallel()
	c, done := toolCallChild(t)
	st := liveStarlark(t, fetchTool, "api.example.com")
	if err := c.Send(selftools.FrameCall, selftools.CallRequest{Tool: st, Args: json.RawMessage(`{"url": "https://api.example.com/x"}`)}); err != nil {
		t.Fatal(err)
	}
	f, err := c.Recv()
	var hc selftools.HostCall
	if err != nil || f.Type != selftools.FrameHost || f.Decode(&hc) != nil {
		t.Fatalf("want a host call, got %+v, %v", f, err)
	}
	if hc.Kind != selftools.HostHTTPGet || hc.URL != "https://api.example.com/x" {
		t.Fatalf("host call %+v", hc)
	}
	c.Send(selftools.FrameAnswer, selftools.HostAnswer{Status: 200, Body: []byte("from the worker")})
	if res := recvResult(t, c); res.Error != "" || res.Result != "200 from the worker" {
		t.Fatalf("result %+v", res)
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
		c.Send(selftools.FrameCall, selftools.CallRequest{Tool: liveStarlark(t, fetchTool, "api.example.com"), Args: json.RawMessage(`{"url": "https://api.example.com/x"}`)})
		if f, err := c.Recv(); err != nil || f.Type != selftools.FrameHost {
			t.Fatalf("%+v %v", f, err)
		}
		c.Send(selftools.FrameAnswer, selftools.HostAnswer{Error: "http: no, says the worker"})
		if res := recvResult(t, c); !strings.Contains(res.Error, "no, says the worker") {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("not granted", func(t *testing.T) {
		t.Parallel()
		c, _ := toolCallChild(t)
		c.Send(selftools.FrameCall, selftools.CallRequest{Tool: liveStarlark(t, fetchTool), Args: json.RawMessage(`{"url": "https://api.example.com/x"}`)})
		if res := recvResult(t, c); !strings.Contains(res.Error, "not granted") {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("wrong answer", func(t *testing.T) {
		t.Parallel()
		c, _ := toolCallChild(t)
		c.Send(selftools.FrameCall, selftools.CallRequest{Tool: liveStarlark(t, fetchTool, "api.example.com"), Args: json.RawMessage(`{"url": "https://api.example.com/x"}`)})
		c.Recv()
		c.Send(selftools.FrameCall, "nonsense")
		if res := recvResult(t, c); !strings.Contains(res.Error, "did not answer") {
			t.Fatalf("result %+v", res)
		}
	})
	t.Run("no call", func(t *testing.T) {
		t.Parallel()
		c, done := toolCallChild(t)
		c.Send(selftools.FrameAnswer, selftools.HostAnswer{})
		if err := <-done; err == nil {
			t.Fatal("a child without a call request ran")
		}
	})
}
