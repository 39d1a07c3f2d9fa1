package starlarktool

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

const wordCountTest = `def test_two_words():
    assert.eq(run("hello world"), "2")

def test_empty():
    assert.eq(run(""), "0")
    assert.ne(run("a"), "0")
    assert.true(len(DESCRIPTION) > 0)
    assert.contains(PARAMS_SCHEMA["required"], "text")
    assert.fails(lambda: run(None), "has no .split field")
`

// fakeGet answers like a weather API and records what it was asked, if got
// is not nil.
func fakeGet(got *[]string) func(ctx context.Context, url string) (int, string, error) {
	return func(ctx context.Context, url string) (int, string, error) {
		if got != nil {
			*got = append(*got, url)
		}
		return 200, `{"current": {"temperature_2m": 21.5}}`, nil
	}
}

func TestRunTests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		code, test string
		host       Host
		lim        Limits
		passed     bool
		results    map[string]string // test name -> "" if ok, else a substring of its failure
		errWant    string            // substring of TestReport.Error, "" for none
		outputWant string
	}{
		{name: "passing suite", code: wordCount, test: wordCountTest, passed: true,
			results: map[string]string{"test_empty": "", "test_two_words": ""}},
		{name: "a failing assert does not stop the others", code: wordCount, test: `
def test_a_wrong():
    assert.eq(run("a b"), "3")

def test_b_right():
    assert.eq(run("a b"), "2")

def test_c_message():
    assert.eq(1, 2, "with a message")
`, results: map[string]string{
			"test_a_wrong":   "tool_test.star:3:14: in test_a_wrong\nError in assert.eq: \"2\" != \"3\"",
			"test_b_right":   "",
			"test_c_message": "with a message: 1 != 2",
		}},
		{name: "failure in the tool shows both files", code: strings.Replace(wordCount, "return str(len(text.split()))", "return helper(text)\n\ndef helper(text):\n    return str(1 // len(text))", 1),
			test: "def test_empty():\n    run(\"\")\n", results: map[string]string{
				"test_empty": "Traceback (most recent call last):\n  tool_test.star:2:8: in test_empty\n  tool.star:6:18: in run\n  tool.star:9:18: in helper\nError: floored division by zero",
			}},
		{name: "assert.fails", code: wordCount, test: `
def test_fails_without_error():
    assert.fails(lambda: run("x"), "boom")

def test_fails_other_error():
    assert.fails(lambda: run(1), "boom")

def test_true():
    assert.true(run("") == "1")

def test_contains():
    assert.contains(["a"], "b")
`, results: map[string]string{
			"test_fails_without_error": `lambda() succeeded; expected an error containing "boom"`,
			"test_fails_other_error":   `does not contain "boom"`,
			"test_true":                "got False, which is not true",
			"test_contains":            `["a"] does not contain "b"`,
		}},
		{name: "steps", code: wordCount, lim: Limits{Steps: 100_000}, test: `
def test_a_spin():
    for i in range(1 << 62):
        pass

def test_b_still_runs():
    assert.eq(run("x"), "1")

def test_c_fails_does_not_swallow_the_limit():
    assert.fails(lambda: [0 for i in range(1 << 62)], "steps")
`, results: map[string]string{
			"test_a_spin":       "test_a_spin used more than 100000 steps",
			"test_b_still_runs": "",
			"test_c_fails_does_not_swallow_the_limit": "used more than 100000 steps",
		}},
		{name: "timeout", code: wordCount, lim: Limits{Steps: 1 << 62, Timeout: 200 * time.Millisecond}, test: `
def test_a_spin():
    for i in range(1 << 62):
        pass

def test_b_never_runs():
    pass
`, results: map[string]string{
			"test_a_spin":       "the test run timed out after 200ms (the limit for the whole run) during test_a_spin",
			"test_b_never_runs": "not run: the test run timed out",
		}, errWant: "timed out after 200ms"},
		{name: "recursion", code: wordCount + "\ndef even(n):\n    return True if n == 0 else odd(n - 1)\n\ndef odd(n):\n    return False if n == 0 else even(n - 1)\n",
			test: "def test_even():\n    assert.true(even(4))\n", results: map[string]string{"test_even": "function even called recursively"}},
		{name: "http not declared", code: strings.Replace(wordCount, "text.split()", `http.get("https://example.com").body.split()`, 1),
			host: Host{HTTPGet: fakeGet(nil)}, test: "def test_x():\n    run(\"x\")\n",
			results: map[string]string{"test_x": `Error: http is not granted to this tool; declare CAPABILITIES = {"http": ["host"]}`}},
		{name: "http declared, not granted", code: weather + "\ndef online():\n    return bool(http)\n",
			test:    "def test_x():\n    run(1, 2)\n\ndef test_parse():\n    assert.eq(parse('{\"current\": {\"temperature_2m\": 3}}'), \"3 °C\")\n\ndef test_falsy():\n    assert.true(not online())\n",
			results: map[string]string{"test_x": "http is not granted in this run", "test_parse": "", "test_falsy": ""}},
		{name: "http granted", code: weather + "\ndef fetch(url):\n    return http.get(url)\n", host: Host{HTTPGet: fakeGet(nil)}, passed: true, test: `
def test_weather():
    assert.eq(run(52.5, 13.4), "21.5 °C")

def test_undeclared_host():
    assert.fails(lambda: fetch("https://evil.example.com/"), "not declared")

def test_port():
    assert.fails(lambda: fetch("https://api.open-meteo.com:8443/"), "ports are not allowed")

def test_scheme():
    assert.fails(lambda: fetch("file:///etc/passwd"), "not an http or https URL")
`, results: map[string]string{"test_weather": "", "test_undeclared_host": "", "test_port": "", "test_scheme": ""}},
		{name: "the test does not see http", code: weather, host: Host{HTTPGet: fakeGet(nil)}, test: "def test_x():\n    http.get(\"https://api.open-meteo.com/\")\n",
			errWant: "loading the test failed:\ntool_test.star:2:5: undefined: http"},
		{name: "print captured", code: strings.Replace(wordCount, "    return", "    print(\"counting\", text)\n    return", 1),
			test: "def test_x():\n    print(\"in the test\")\n    run(\"a b\")\n", passed: true,
			results: map[string]string{"test_x": ""}, outputWant: "in the test\ncounting a b\n"},
		{name: "print capped", code: wordCount, test: "def test_x():\n    for i in range(2000):\n        print(\"0123456789\")\n", passed: true,
			results: map[string]string{"test_x": ""}, outputWant: "[output truncated: 22000 bytes in all; showing the first 16384]"},
		{name: "tool refused statically", code: wordCount + "print(1)\n", test: wordCountTest, errWant: "the tool does not pass its static checks:\nline 7:1: top-level code"},
		{name: "test refused statically", code: wordCount, test: "def check():\n    pass\n", errWant: "the test does not pass its static checks"},
		{name: "test names an undefined global", code: wordCount, test: "def test_x():\n    assert.eq(count(\"a\"), 1)\n", errWant: "loading the test failed:\ntool_test.star:2:15: undefined: count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := RunTests(context.Background(), []byte(tt.code), []byte(tt.test), tt.host, tt.lim)
			if rep.Passed != tt.passed {
				t.Errorf("Passed = %v, want %v\n%s", rep.Passed, tt.passed, rep)
			}
			if tt.errWant == "" && rep.Error != "" || !strings.Contains(rep.Error, tt.errWant) {
				t.Errorf("Error = %q, want it to contain %q", rep.Error, tt.errWant)
			}
			if tt.results == nil { // nothing was to run
				if len(rep.Tests) > 0 {
					t.Errorf("tests ran:\n%s", rep)
				}
				return
			}
			if len(rep.Tests) != len(tt.results) {
				t.Fatalf("ran %d tests, want %d:\n%s", len(rep.Tests), len(tt.results), rep)
			}
			for i, r := range rep.Tests {
				if i > 0 && rep.Tests[i-1].Name >= r.Name {
					t.Errorf("tests not in name order: %s after %s", r.Name, rep.Tests[i-1].Name)
				}
				want, ok := tt.results[r.Name]
				switch {
				case !ok:
					t.Errorf("unexpected test %s", r.Name)
				case want == "" && !r.OK:
					t.Errorf("%s failed: %s", r.Name, r.Message)
				case want != "" && (r.OK || !strings.Contains(r.Message, want)):
					t.Errorf("%s: failure %q, want it to contain %q", r.Name, r.Message, want)
				}
			}
			if !strings.Contains(rep.Output, tt.outputWant) {
				t.Errorf("Output = %q, want it to contain %q", rep.Output, tt.outputWant)
			}
			if len(rep.Output) > MaxOutput+100 {
				t.Errorf("Output is %d bytes, over the cap", len(rep.Output))
			}
		})
	}
}

func TestRunTestsCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep := RunTests(ctx, []byte(wordCount), []byte(wordCountTest), Host{}, Limits{})
	if rep.Passed || !strings.Contains(rep.Error, "cancelled") {
		t.Errorf("report after cancellation: %+v", rep)
	}
}

func TestTestReportString(t *testing.T) {
	t.Parallel()
	rep := TestReport{
		Tests:    []TestResult{{Name: "test_a", OK: true}, {Name: "test_b", Message: "line one\nline two"}},
		Output:   "hi\n",
		Duration: 1500 * time.Microsecond,
	}
	want := "FAIL: 1 of 2 tests passed in 2ms\n--- FAIL: test_b\n    line one\n    line two\noutput:\n    hi"
	if got := rep.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
}

func TestRunTestsHTTPGetsTheDeclaredURL(t *testing.T) {
	t.Parallel()
	var asked []string
	rep := RunTests(context.Background(), []byte(weather), []byte("def test_x():\n    run(1.5, -2)\n"), Host{HTTPGet: fakeGet(&asked)}, Limits{})
	if !rep.Passed {
		t.Fatalf("report:\n%s", rep)
	}
	want := "https://api.open-meteo.com/v1/forecast?latitude=1.5&longitude=-2&current=temperature_2m"
	if len(asked) != 1 || asked[0] != want {
		t.Errorf("HTTPGet asked for %q, want [%q]", asked, want)
	}
}

func TestRunTestsHTTPError(t *testing.T) {
	t.Parallel()
	get := func(context.Context, string) (int, string, error) {
		return 0, "", errors.New("dial tcp: connection refused")
	}
	rep := RunTests(context.Background(), []byte(weather), []byte("def test_x():\n    run(1, 2)\n"), Host{HTTPGet: get}, Limits{})
	if rep.Passed || len(rep.Tests) != 1 || !strings.Contains(rep.Tests[0].Message, "Error in http.get: dial tcp: connection refused") {
		t.Errorf("report:\n%s", rep)
	}
}
