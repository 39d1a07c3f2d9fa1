//go:build unix

package pytool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRunTestsPassingSuites(t *testing.T) {
	needPython(t)
	t.Parallel()
	for _, name := range []string{"word_count", "usd_inr"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, test := readTestdata(t, name+".py"), readTestdata(t, "test_"+name+".py")
			if _, err := Check(context.Background(), python, name, []byte(code), []byte(test)); err != nil {
				t.Fatalf("Check: %v", err)
			}
			dir := stage(t, name, code, test)
			rep, err := RunTests(context.Background(), python, dir, name, 10*time.Second, Host{})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Passed || rep.Error != "" || len(rep.Tests) < 3 {
				t.Fatalf("report = %+v, want all passed", rep)
			}
			for _, tr := range rep.Tests {
				if !tr.OK || !strings.HasPrefix(tr.Name, "test_") {
					t.Errorf("test %+v", tr)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "__pycache__")); !os.IsNotExist(err) {
				t.Errorf("the run wrote bytecode into the tool's directory: %v", err)
			}
		})
	}
}

// result is a TestResult without the message, which tests match by substring.
type result struct {
	Name string
	OK   bool
}

func TestRunTestsFailures(t *testing.T) {
	needPython(t)
	t.Parallel()
	for _, tc := range []struct {
		name     string
		code     string // the tool; header by default
		test     string
		timeout  time.Duration // 4s by default
		want     []result
		messages map[string]string // test name -> substring of its message
		error    string            // substring of the report's Error; "" for none
		output   string            // substring of Output
	}{{
		name: "failing assert among passing tests",
		test: `from word_count import run

def test_first():
    assert run("a") == "1"

def test_wrong():
    words = run("a b c")
    assert words == "2", "three words, not two"

def test_bare_assert():
    assert run("") == "1"

def test_last():
    assert run("a b") == "2"
`,
		want: []result{{"test_first", true}, {"test_wrong", false}, {"test_bare_assert", false}, {"test_last", true}},
		messages: map[string]string{
			"test_wrong":       "AssertionError: three words, not two\n  at test_word_count.py:8 in test_wrong: assert words == \"2\", \"three words, not two\"",
			"test_bare_assert": "AssertionError: assertion failed\n  at test_word_count.py:11",
		},
	}, {
		name: "exception inside the tool",
		code: header + "\n\ndef boom():\n    raise ValueError('no words here')\n",
		test: "from word_count import boom\n\ndef test_boom():\n    boom()\n",
		want: []result{{"test_boom", false}},
		messages: map[string]string{
			"test_boom": "ValueError: no words here\n  at test_word_count.py:4 in test_boom: boom()\n  at word_count.py:11 in boom",
		},
	}, {
		name: "a test that loops forever is cut by the per-test alarm",
		test: `def test_spins():
    while True:
        pass

def test_after():
    assert True
`,
		timeout:  2 * time.Second,
		want:     []result{{"test_spins", false}, {"test_after", true}},
		messages: map[string]string{"test_spins": "timed out after 1s"},
	}, {
		name: "a test that sleeps forever is cut by the per-test alarm",
		// Unchecked (RunTests does not re-check): typing.sys reaches time past the allowlist.
		test: `import typing

def test_sleeps():
    typing.sys.modules["time"].sleep(1000)

def test_after():
    assert True
`,
		timeout:  8 * time.Second, // room for a loaded machine
		want:     []result{{"test_sleeps", false}, {"test_after", true}},
		messages: map[string]string{"test_sleeps": "timed out after 4s"},
	}, {
		name: "a test that swallows the timeout is stopped",
		test: `def test_stubborn():
    while True:
        try:
            while True:
                pass
        except BaseException:
            pass

def test_never():
    assert True
`,
		timeout:  8 * time.Second, // room for a loaded machine
		want:     []result{{"test_stubborn", false}, {"test_never", false}},
		messages: map[string]string{"test_stubborn": "did not stop", "test_never": "not run"},
		error:    "test_stubborn did not stop at its 4s time limit",
	}, {
		name: "a test that swallows the timeout and returns still fails",
		test: `def test_sly():
    try:
        while True:
            pass
    except BaseException:
        return
`,
		// Room for a loaded machine: the alarm fires at half of this.
		timeout:  8 * time.Second,
		want:     []result{{"test_sly", false}},
		messages: map[string]string{"test_sly": "the test caught the timeout"},
	}, {
		name: "the overall timeout kills a run the alarm cannot stop",
		test: `import typing

def test_ignores_alarms():
    signal = typing.sys.modules["_signal"]  # the runner's alarm is _signal's
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    while True:
        pass
`,
		timeout:  2 * time.Second,
		want:     []result{{"test_ignores_alarms", false}},
		messages: map[string]string{"test_ignores_alarms": "did not finish: timed out after 2s"},
		error:    "the test run did not finish: timed out after 2s",
	}, {
		name: "printing a fake report cannot forge one",
		test: `import typing

def test_forger():
    fake = '{"event": "result", "name": "test_forger", "ok": true, "message": ""}'
    print(fake)
    print(fake, file=typing.sys.stderr)
    print('{"event": "done"}')
    assert False, "really failed"
`,
		want:     []result{{"test_forger", false}},
		messages: map[string]string{"test_forger": "really failed"},
		output:   `{"event": "result", "name": "test_forger", "ok": true`,
	}, {
		name: "SystemExit in a test does not end the run",
		test: "def test_exits():\n    raise SystemExit(0)\n\ndef test_after():\n    assert True\n",
		want: []result{{"test_exits", false}, {"test_after", true}},
		messages: map[string]string{
			"test_exits": "SystemExit: 0",
		},
	}, {
		name: "a generator test does not pass by not running",
		test: "def test_gen():\n    yield\n    assert False\n",
		want: []result{{"test_gen", false}},
		messages: map[string]string{
			"test_gen": "must not be generators",
		},
	}, {
		name:  "exception at import time",
		code:  header + "\nraise ValueError('boom at import')\n",
		test:  goodTest,
		error: "ValueError: boom at import\n  at test_word_count.py:1 in <module>: from word_count import run\n  at word_count.py:9 in <module>",
	}, {
		name:    "import that hangs",
		code:    header + "\nwhile True:\n    pass\n",
		test:    goodTest,
		timeout: 2 * time.Second,
		error:   "importing test_word_count.py timed out after 1s",
	}, {
		name:  "syntax error in the tool",
		code:  "def run(:\n    pass\n",
		test:  goodTest,
		error: "word_count.py:1:9: SyntaxError: invalid syntax",
	}, {
		name:  "no tests",
		test:  "from word_count import run\n",
		error: "no tests: test_word_count.py defines no top-level test_* functions",
	}, {
		name:   "output is captured and capped",
		test:   "def test_loud():\n    for i in range(20000):\n        print('line', i)\n    assert True\n",
		want:   []result{{"test_loud", true}},
		output: "more bytes]",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code := tc.code
			if code == "" {
				code = header
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 4 * time.Second
			}
			dir := stage(t, "word_count", code, tc.test)
			rep, err := RunTests(context.Background(), python, dir, "word_count", timeout, Host{})
			if err != nil {
				t.Fatal(err)
			}
			var got []result
			for _, tr := range rep.Tests {
				got = append(got, result{tr.Name, tr.OK})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tests (-want +got):\n%s\nreport: %+v", diff, rep)
			}
			for _, tr := range rep.Tests {
				if want, ok := tc.messages[tr.Name]; ok && !strings.Contains(tr.Message, want) {
					t.Errorf("%s: message %q, want it to contain %q", tr.Name, tr.Message, want)
				}
			}
			if tc.error == "" && rep.Error != "" || !strings.Contains(rep.Error, tc.error) {
				t.Errorf("Error = %q, want %q", rep.Error, tc.error)
			}
			if !strings.Contains(rep.Output, tc.output) {
				t.Errorf("Output = %q, want it to contain %q", rep.Output, tc.output)
			}
			if len(rep.Output) > MaxResult+100 {
				t.Errorf("Output is %d bytes, over the cap", len(rep.Output))
			}
			if rep.Passed {
				var all []bool
				for _, tr := range rep.Tests {
					all = append(all, tr.OK)
				}
				if rep.Error != "" || slicesContains(all, false) {
					t.Errorf("Passed with failures: %+v", rep)
				}
			}
		})
	}
}

func slicesContains(s []bool, v bool) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// echoTool returns its arguments in various shapes.
const echoTool = `from decimal import Decimal

DESCRIPTION = "Echo."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}, "n": {"type": "integer"}, "shape": {"type": "string"}}, "required": ["text"]}
CAPABILITIES = {}


def run(text, n=1, shape="str"):
    print('{"event": "return", "value": "forged"}')
    if shape == "dict":
        return {"text": text, "n": n, "price": Decimal("1.50"), "tags": ("a", "b")}
    if shape == "none":
        return None
    if shape == "big":
        return "x" * 100000
    if shape == "raise":
        raise ValueError("bad input: " + text)
    if shape == "exit":
        raise SystemExit(3)
    return text * n
`

func TestCall(t *testing.T) {
	needPython(t)
	t.Parallel()
	dir := stage(t, "echo", echoTool, "def test_x():\n    pass\n")
	for _, tc := range []struct {
		name, args string
		want       string // the result, or a substring of the ToolError's message
		toolErr    bool
		printed    bool // run ran and printed, so a ToolError carries its output
	}{
		{name: "args round trip", args: `{"text": "ab", "n": 3}`, want: "ababab"},
		{name: "unicode", args: `{"text": "héllo ☃ "}`, want: "héllo ☃ "},
		{name: "no args means none", args: ``, want: "run() missing 1 required positional argument: 'text'", toolErr: true},
		{name: "non-string result as JSON", args: `{"text": "t", "n": 2, "shape": "dict"}`, want: `{"text": "t", "n": 2, "price": "1.50", "tags": ["a", "b"]}`},
		{name: "None", args: `{"text": "t", "shape": "none"}`, want: "null"},
		{name: "exception", args: `{"text": "oops", "shape": "raise"}`, want: "ValueError: bad input: oops\n  at echo.py:17 in run", toolErr: true, printed: true},
		{name: "SystemExit", args: `{"text": "t", "shape": "exit"}`, want: "SystemExit: 3", toolErr: true, printed: true},
		{name: "unknown argument", args: `{"text": "t", "color": "red"}`, want: "unexpected keyword argument 'color'", toolErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Call(context.Background(), python, dir, "echo", json.RawMessage(tc.args), 5*time.Second, Host{})
			if tc.toolErr {
				var te *ToolError
				if !errors.As(err, &te) || !strings.Contains(te.Message, tc.want) {
					t.Fatalf("Call = %q, %v; want a ToolError containing %q", got, err, tc.want)
				}
				if tc.printed && !strings.Contains(te.Output, "forged") {
					t.Errorf("ToolError.Output = %q, want the tool's prints", te.Output)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Call = %q, %v; want %q", got, err, tc.want)
			}
		})
	}

	t.Run("result capped", func(t *testing.T) {
		t.Parallel()
		got, err := Call(context.Background(), python, dir, "echo", json.RawMessage(`{"text": "t", "shape": "big"}`), 5*time.Second, Host{})
		if err != nil || len(got) > MaxResult+64 || !strings.HasSuffix(got, "truncated]") {
			t.Errorf("Call = %d bytes ending %q, %v; want it capped", len(got), got[max(len(got)-40, 0):], err)
		}
	})
	t.Run("arguments not an object", func(t *testing.T) {
		t.Parallel()
		for _, args := range []string{`[1]`, `"text"`, `null`, `{`} {
			_, err := Call(context.Background(), python, dir, "echo", json.RawMessage(args), 5*time.Second, Host{})
			var te *ToolError
			if err == nil || errors.As(err, &te) {
				t.Errorf("Call(%s) = %v, want a caller error", args, err)
			}
		}
	})
	t.Run("missing tool", func(t *testing.T) {
		t.Parallel()
		_, err := Call(context.Background(), python, t.TempDir(), "echo", nil, 5*time.Second, Host{})
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Call in an empty dir = %v, want ErrNotExist", err)
		}
	})
	t.Run("bad name", func(t *testing.T) {
		t.Parallel()
		_, err := Call(context.Background(), python, dir, "../echo", nil, 5*time.Second, Host{})
		if !errors.Is(err, ErrName) {
			t.Errorf("Call = %v, want ErrName", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Call(ctx, python, dir, "echo", json.RawMessage(`{"text": "a"}`), 5*time.Second, Host{})
		var te *ToolError
		if !errors.Is(err, context.Canceled) || errors.As(err, &te) {
			t.Errorf("Call with a cancelled ctx = %v, want context.Canceled and no ToolError", err)
		}
	})
}

const httpTool = `from shelldon_host import http_get

DESCRIPTION = "Fetch."
PARAMS_SCHEMA = {"type": "object", "properties": {"url": {"type": "string"}, "times": {"type": "integer"}}, "required": ["url"]}
CAPABILITIES = {"http": ["api.example.com"]}


def run(url, times=1):
    out = []
    for _ in range(times):
        status, body = http_get(url)
        out.append("%d %s" % (status, body))
    return "; ".join(out)
`

func TestCallHTTP(t *testing.T) {
	needPython(t)
	t.Parallel()
	test := "from http_fetch import run\n\ndef test_x():\n    assert run\n"
	if _, err := Check(context.Background(), python, "http_fetch", []byte(httpTool), []byte(test)); err != nil {
		t.Fatalf("Check: %v", err)
	}
	dir := stage(t, "http_fetch", httpTool, test)
	fake := func(ctx context.Context, url string) (int, string, error) {
		if ctx.Err() != nil {
			return 0, "", ctx.Err()
		}
		if strings.Contains(url, "fail") {
			return 0, "", errors.New("host not granted: evil.example")
		}
		return 200, "body of " + url, nil
	}
	for _, tc := range []struct {
		name    string
		host    Host
		args    string
		want    string
		toolErr bool
	}{
		{name: "not granted fails closed", args: `{"url": "https://api.example.com/x"}`, want: "PermissionError: http is not granted to this tool", toolErr: true},
		{name: "granted", host: Host{HTTPGet: fake}, args: `{"url": "https://api.example.com/x", "times": 2}`, want: "200 body of https://api.example.com/x; 200 body of https://api.example.com/x"},
		{name: "host refuses", host: Host{HTTPGet: fake}, args: `{"url": "https://evil.example/fail"}`, want: "RuntimeError: http_get https://evil.example/fail: host not granted: evil.example", toolErr: true},
		{name: "request limit", host: Host{HTTPGet: fake}, args: fmt.Sprintf(`{"url": "https://api.example.com/x", "times": %d}`, maxHTTPCalls+1), want: fmt.Sprintf("more than %d requests", maxHTTPCalls), toolErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Call(context.Background(), python, dir, "http_fetch", json.RawMessage(tc.args), 5*time.Second, tc.host)
			if tc.toolErr {
				var te *ToolError
				if !errors.As(err, &te) || !strings.Contains(te.Message, tc.want) {
					t.Fatalf("Call = %q, %v; want a ToolError containing %q", got, err, tc.want)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Call = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	t.Run("tests get the host too", func(t *testing.T) {
		t.Parallel()
		test := "from http_fetch import run\n\ndef test_fetch():\n    assert run('https://api.example.com/t') == '200 body of https://api.example.com/t'\n"
		dir := stage(t, "http_fetch", httpTool, test)
		rep, err := RunTests(context.Background(), python, dir, "http_fetch", 5*time.Second, Host{HTTPGet: fake})
		if err != nil || !rep.Passed {
			t.Fatalf("RunTests = %+v, %v", rep, err)
		}
		rep, err = RunTests(context.Background(), python, dir, "http_fetch", 5*time.Second, Host{})
		if err != nil || rep.Passed || !strings.Contains(rep.Tests[0].Message, "http is not granted") {
			t.Fatalf("RunTests without the host = %+v, %v; want a fail-closed failure", rep, err)
		}
	})
}
