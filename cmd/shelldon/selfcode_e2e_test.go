package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

const wordCountStar = `DESCRIPTION = "Count the words in a text."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
CAPABILITIES = {}

def run(text):
    if text == "bad":
        fail("cannot count bad")
    return str(len(text.split()))
`

const wordCountStarTest = `def test_counts():
    assert.eq(run("a b c"), "3")

def test_empty():
    assert.eq(run(""), "0")
`

const wordCountPy = `DESCRIPTION = "Count the words in a text."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
CAPABILITIES = {}


def run(text):
    if text == "bad":
        raise ValueError("cannot count bad")
    return str(len(text.split()))
`

const wordCountPyTest = `from word_count import run


def test_counts():
    assert run("a b c") == "3"
`

// selfScript is a fake model that proposes a tool when asked to make one,
// calls it when asked to count, and echoes the tool results it gets.
func selfScript(language, code, test string) func(brokertest.Recorded) brokertest.Reply {
	return func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		if last.Role == contracts.RoleUser {
			if strings.HasPrefix(last.Text, "count ") {
				args, _ := json.Marshal(map[string]string{"text": strings.TrimPrefix(last.Text, "count ")})
				return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "c1", Name: "word_count", Arguments: string(args)}}}
			}
			args, _ := json.Marshal(map[string]string{"name": "word_count", "code": code, "test": test, "language": language})
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "p1", Name: "propose_tool", Arguments: string(args)}}}
		}
		var parts []string
		for _, tr := range last.ToolResults {
			parts = append(parts, fmt.Sprintf("%s ok=%v %s", tr.Name, tr.OK, tr.Content))
		}
		return brokertest.Reply{Text: "RESULTS: " + strings.Join(parts, " | ")}
	}
}

func toolState(t *testing.T, d *daemon, name string) (state string, version float64) {
	t.Helper()
	_, out := d.do(t, "GET", "/api/tools", d.token, nil)
	for _, raw := range out["tools"].([]any) {
		tv := raw.(map[string]any)
		if tv["name"] == name {
			v, _ := tv["version"].(float64)
			return fmt.Sprint(tv["state"]), v
		}
	}
	return "", 0
}

// TestSelfCodingRoundTrip: the model proposes a tool, the gate passes, the
// owner approves it over the API, the next turn calls it, and it survives
// a restart; a tool that keeps failing is quarantined.
func TestSelfCodingRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ language, code, test string }{
		{"starlark", wordCountStar, wordCountStarTest},
		{"python", wordCountPy, wordCountPyTest},
	} {
		t.Run(tc.language, func(t *testing.T) {
			t.Parallel()
			srv := brokertest.NewServer(t, "anthropic", selfScript(tc.language, tc.code, tc.test))
			h := home(t, "anthropic", srv.BaseURL(), "")
			d := startServe(t, h)

			status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"text": "make me a word counter"})
			reply := fmt.Sprint(out["reply"])
			if status != 200 || !strings.Contains(reply, "propose_tool ok=true") || !strings.Contains(reply, "PASSED") {
				t.Fatalf("propose: %d %s", status, reply)
			}
			// The turn's outcome carries the promotion, for every transport to
			// put before the owner at once.
			if list, _ := out["approvals"].([]any); len(list) != 1 || list[0].(map[string]any)["kind"] != "promotion" {
				t.Errorf("the turn's approvals = %v", out["approvals"])
			}
			_, list := d.do(t, "GET", "/api/approvals", d.token, nil)
			var id string
			for _, raw := range list["approvals"].([]any) {
				a := raw.(map[string]any)
				if a["kind"] == "promotion" && a["tool"] == "word_count" {
					id = fmt.Sprint(a["id"])
					summary := fmt.Sprint(a["summary"])
					for _, want := range []string{"New tool: word_count", "Content hash: ", "def run(text):", "test_counts", "Capabilities: none"} {
						if !strings.Contains(summary, want) {
							t.Errorf("the promotion card lacks %q:\n%s", want, summary)
						}
					}
				}
			}
			if id == "" {
				t.Fatalf("no promotion request: %v", list)
			}
			if state, _ := toolState(t, d, "word_count"); state != "staged" {
				t.Fatalf("before approval the tool is %q", state)
			}
			status, out = d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": true})
			if status != 200 || !strings.Contains(fmt.Sprint(out["reply"]), "is live") {
				t.Fatalf("approve: %d %v", status, out)
			}
			if state, v := toolState(t, d, "word_count"); state != "live" || v != 1 {
				t.Fatalf("after approval: %q v%v", state, v)
			}

			_, out = d.do(t, "POST", "/api/chat", d.token, map[string]string{"text": "count one two three four"})
			if reply := fmt.Sprint(out["reply"]); !strings.Contains(reply, "word_count ok=true 4") {
				t.Fatalf("calling the new tool: %s", reply)
			}

			d.stop(t)
			d = startServe(t, h)
			_, out = d.do(t, "POST", "/api/chat", d.token, map[string]string{"text": "count x y"})
			if reply := fmt.Sprint(out["reply"]); !strings.Contains(reply, "word_count ok=true 2") {
				t.Fatalf("after a restart: %s", reply)
			}

			// Three failed calls quarantine it, and the owner is told.
			for i := range 3 {
				_, out = d.do(t, "POST", "/api/chat", d.token, map[string]string{"text": "count bad"})
				reply := fmt.Sprint(out["reply"])
				if !strings.Contains(reply, "word_count ok=false") {
					t.Fatalf("failing call %d: %s", i, reply)
				}
				if i == 2 && !strings.Contains(reply, "quarantined") {
					t.Errorf("the owner was not told of the quarantine: %s", reply)
				}
			}
			if state, _ := toolState(t, d, "word_count"); state != "quarantined" {
				t.Fatalf("after three strikes: %q", state)
			}
			status, _ = d.do(t, "POST", "/api/tools/word_count/restore", d.token, nil)
			if state, _ := toolState(t, d, "word_count"); status != 200 || state != "live" {
				t.Fatalf("restore: %d %q", status, state)
			}
		})
	}
}

// TestGateFailuresGoBackToTheModel: a failing test, or code the static
// checks refuse, never reaches the owner; the model reads why.
func TestGateFailuresGoBackToTheModel(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, language, code, test, want string }{
		{"failing test", "starlark", wordCountStar, "def test_wrong():\n    assert.eq(run(\"a b\"), \"3\")\n", "FAIL"},
		{"load", "starlark", "load(\"x\", \"y\")\n" + wordCountStar, wordCountStarTest, "load"},
		{"python import os", "python", "import os\n" + wordCountPy, wordCountPyTest, "os"},
		{"python exec", "python", wordCountPy + "\n\ndef other():\n    exec('1')\n", wordCountPyTest, "exec"},
		{"python dunder", "python", wordCountPy + "\n\ndef other():\n    return ().__class__\n", wordCountPyTest, "__class__"},
		{"python code at import", "python", wordCountPy + "\nprint('hi')\n", wordCountPyTest, "top-level"},
		{"starlark endless test", "starlark", wordCountStar, "def test_forever():\n    for i in range(1000000000):\n        pass\n", "FAIL"},
		{"python endless test", "python", wordCountPy, "from word_count import run\n\n\ndef test_forever():\n    while True:\n        pass\n", "FAIL"},
		{"python memory bomb", "python", wordCountPy, "from word_count import run\n\n\ndef test_big():\n    x = bytearray(1 << 30)\n    assert len(x) > 0\n", "FAIL"},
		{"starlark memory bomb", "starlark", wordCountStar, "def test_big():\n    x = [\"y\" * 1000000 for i in range(2000)]\n    assert.eq(len(x), 2000)\n", "out of memory"},
		{"python hidden import", "python", "from math import sqrt\nＯＳ = 1\n" + wordCountPy, wordCountPyTest, "FAILED"},
		{"python reads the environment", "python", wordCountPy + "\n\ndef env():\n    import os\n    return os.environ\n", wordCountPyTest, "os"},
		{"python reaches the network", "python", "import urllib.request\n" + wordCountPy, wordCountPyTest, "urllib"},
		{"python forks", "python", "import subprocess\n" + wordCountPy, wordCountPyTest, "subprocess"},
		{"reserved name", "starlark", wordCountStar, wordCountStarTest, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := selfScript(tc.language, tc.code, tc.test)
			if tc.name == "reserved name" {
				script = func(r brokertest.Recorded) brokertest.Reply {
					last := r.Request.Messages[len(r.Request.Messages)-1]
					if last.Role == contracts.RoleUser {
						args, _ := json.Marshal(map[string]string{"name": "read_file", "code": tc.code, "test": tc.test})
						return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "p1", Name: "propose_tool", Arguments: string(args)}}}
					}
					return brokertest.Reply{Text: "RESULTS: " + last.ToolResults[0].Content + fmt.Sprintf(" ok=%v", last.ToolResults[0].OK)}
				}
				tc.want = "built-in"
			}
			srv := brokertest.NewServer(t, "openai", script)
			h := home(t, "openai", srv.BaseURL(), "")
			stdout, stderr, code := run(t, h, "", "chat", "-m", "make me a tool")
			if code != 0 || !strings.Contains(stdout, "ok=false") || !strings.Contains(stdout, tc.want) {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			if strings.Contains(stdout, "has been asked to approve") {
				t.Fatal("a failing tool reached the owner")
			}
		})
	}
}

// TestTwoProposalsAtOnce: two chats propose different tools at the same
// time; both are staged and both wait for the owner.
func TestTwoProposalsAtOnce(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		if last.Role == contracts.RoleUser {
			name := strings.TrimPrefix(last.Text, "make ")
			code := strings.Replace(wordCountStar, "Count the words", "Tool "+name, 1)
			args, _ := json.Marshal(map[string]string{"name": name, "code": code, "test": wordCountStarTest})
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "p", Name: "propose_tool", Arguments: string(args)}}}
		}
		return brokertest.Reply{Text: "RESULTS: " + last.ToolResults[0].Content}
	})
	h := home(t, "openai", srv.BaseURL(), "")
	d := startServe(t, h)
	done := make(chan string, 2)
	for _, name := range []string{"alpha_tool", "beta_tool"} {
		go func() {
			_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": name, "text": "make " + name})
			done <- fmt.Sprint(out["reply"])
		}()
	}
	for range 2 {
		if reply := <-done; !strings.Contains(reply, "has been asked to approve") {
			t.Fatalf("reply %s", reply)
		}
	}
	_, list := d.do(t, "GET", "/api/approvals", d.token, nil)
	promos := 0
	for _, raw := range list["approvals"].([]any) {
		if raw.(map[string]any)["kind"] == "promotion" {
			promos++
		}
	}
	if promos != 2 {
		t.Fatalf("%d promotion requests, want 2", promos)
	}
	for _, name := range []string{"alpha_tool", "beta_tool"} {
		if state, _ := toolState(t, d, name); state != "staged" {
			t.Errorf("%s is %q", name, state)
		}
	}
}

// TestProposedToolInTheTerminal: the terminal chat shows the whole proposed
// tool and asks inline; "y" promotes it.
func TestProposedToolInTheTerminal(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", selfScript("starlark", wordCountStar, wordCountStarTest))
	h := home(t, "openai", srv.BaseURL(), "")
	stdout, stderr, code := run(t, h, "make me a word counter\ny\ncount a b\n", "chat")
	if code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
	for _, want := range []string{"New tool: word_count", "def run(text):", "Approve request ", "is live", "word_count ok=true 2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, stdout)
		}
	}
}
