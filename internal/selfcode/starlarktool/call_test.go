package starlarktool

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// echo shows the Starlark type and value of its argument.
const echo = `DESCRIPTION = "Show the argument."
PARAMS_SCHEMA = {"type": "object", "properties": {"v": {}}, "required": ["v"]}

def run(v):
    return type(v) + " " + repr(v)
`

func TestCallArgs(t *testing.T) {
	t.Parallel()
	tests := []struct{ args, want string }{
		{`{"v": "héllo"}`, `string "héllo"`},
		{`{"v": 42}`, `int 42`},
		{`{"v": -7}`, `int -7`},
		{`{"v": 123456789012345678901234567890}`, `int 123456789012345678901234567890`},
		{`{"v": 1.5}`, `float 1.5`},
		{`{"v": 1.0}`, `float 1.0`},
		{`{"v": 1e3}`, `float 1000.0`},
		{`{"v": true}`, `bool True`},
		{`{"v": null}`, `NoneType None`},
		{`{"v": []}`, `list []`},
		{`{"v": {"b": [1, 2.5, null, false, {"c": "d"}], "a": {}}}`, `dict {"a": {}, "b": [1, 2.5, None, False, {"c": "d"}]}`},
		{`  {"v": "spaces around"}  `, `string "spaces around"`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			t.Parallel()
			got, err := Call(context.Background(), []byte(echo), []byte(tt.args), Host{}, Limits{})
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCallRefusesArgs(t *testing.T) {
	t.Parallel()
	tests := []struct{ code, args, want string }{
		{wordCount, `{}`, "the arguments do not match PARAMS_SCHEMA"},
		{wordCount, ``, "the arguments do not match PARAMS_SCHEMA"},
		{wordCount, `{"text": 3}`, "the arguments do not match PARAMS_SCHEMA"},
		{wordCount, `{"text": "a", "lang": "en"}`, `unknown argument "lang"; run's parameters are text`},
		{wordCount, `["a"]`, "the arguments must be a JSON object"},
		{wordCount, `{"text": "a"} {}`, "the arguments are not valid JSON"},
		{echo, `{"v": 1e999}`, "the arguments are not valid JSON"},
		{usdToINR, `{"amount": -1}`, "the arguments do not match PARAMS_SCHEMA"},
		{wordCount + "print(1)\n", `{"text": "a"}`, "the tool does not pass its static checks:\nline 7:1"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			t.Parallel()
			_, err := Call(context.Background(), []byte(tt.code), []byte(tt.args), Host{}, Limits{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Call error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// kinds returns a value of the kind asked for.
const kinds = `DESCRIPTION = "Return a value of some kind."
PARAMS_SCHEMA = {"type": "object", "properties": {"kind": {"type": "string"}, "n": {"type": "integer"}}, "required": ["kind"]}

def run(kind, n = 0):
    if kind == "string":
        return "plain text, not JSON"
    if kind == "int":
        return 42
    if kind == "float":
        return 2.5
    if kind == "dict":
        return {"b": [1, True, None], "a": "x"}
    if kind == "tuple":
        return (1, "two")
    if kind == "none":
        return None
    if kind == "function":
        return run
    if kind == "long":
        return "é" * n
    if kind == "steps":
        for i in range(1 << 62):
            pass
    if kind == "error":
        return helper(n)
    if kind == "deep":
        x = []
        for i in range(2000):
            x = [x]
        return x
    if kind == "cycle":
        x = []
        x.append(x)
        return {"x": x}
    if kind == "print":
        print("not shown")
        return "done"
    fail("unknown kind", kind)

def helper(n):
    return {"a": 1}[n]
`

func TestCall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, args string
		lim        Limits
		want       string // the result, or a substring of the error
		wantErr    error  // a sentinel the error wraps
		isErr      bool
	}{
		{name: "string as is", args: `{"kind": "string"}`, want: "plain text, not JSON"},
		{name: "int as JSON", args: `{"kind": "int"}`, want: "42"},
		{name: "float as JSON", args: `{"kind": "float"}`, want: "2.5"},
		{name: "dict as JSON", args: `{"kind": "dict"}`, want: `{"a":"x","b":[1,true,null]}`},
		{name: "tuple as JSON", args: `{"kind": "tuple"}`, want: `[1,"two"]`},
		{name: "None as JSON", args: `{"kind": "none"}`, want: "null"},
		{name: "print discarded", args: `{"kind": "print"}`, want: "done"},
		{name: "truncated", args: `{"kind": "long", "n": 100}`, lim: Limits{MaxResult: 51},
			want: strings.Repeat("é", 25) + "\n[truncated: 200 bytes in all; showing the first 50]"},
		{name: "not truncated at the limit", args: `{"kind": "long", "n": 100}`, lim: Limits{MaxResult: 200}, want: strings.Repeat("é", 100)},
		{name: "function", args: `{"kind": "function"}`, isErr: true, want: "run returned a function, which cannot be converted to JSON"},
		{name: "steps", args: `{"kind": "steps"}`, lim: Limits{Steps: 10_000}, isErr: true, wantErr: ErrSteps, want: "the tool used more than 10000 steps"},
		{name: "default steps", args: `{"kind": "steps"}`, isErr: true, wantErr: ErrSteps, want: "the tool used more than 1000000 steps"},
		{name: "timeout", args: `{"kind": "steps"}`, lim: Limits{Steps: 1 << 62, Timeout: 100 * time.Millisecond}, isErr: true, wantErr: ErrTimeout, want: "the tool timed out after 100ms"},
		{name: "too deep", args: `{"kind": "deep"}`, isErr: true, want: "run returned a value nested deeper than 1000 levels"},
		{name: "containing itself", args: `{"kind": "cycle"}`, isErr: true, want: "or containing itself"},
		{name: "runtime error", args: `{"kind": "error", "n": 7}`, isErr: true,
			want: "Traceback (most recent call last):\n  tool.star:25:22: in run\n  tool.star:41:20: in helper\nError: key 7 not in dict"},
		{name: "fail", args: `{"kind": "nope"}`, isErr: true,
			want: "Traceback (most recent call last):\n  tool.star:38:9: in run\nError in fail: fail: unknown kind nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Call(context.Background(), []byte(kinds), []byte(tt.args), Host{}, tt.lim)
			switch {
			case !tt.isErr && err != nil:
				t.Fatalf("Call: %v", err)
			case !tt.isErr && got != tt.want:
				t.Errorf("got %q, want %q", got, tt.want)
			case tt.isErr && err == nil:
				t.Fatalf("Call returned %q, want an error", got)
			case tt.isErr && !strings.Contains(err.Error(), tt.want):
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Errorf("error %v does not wrap %v", err, tt.wantErr)
			}
		})
	}
}

func TestCallHTTP(t *testing.T) {
	t.Parallel()
	args := []byte(`{"lat": 1, "lon": 2}`)
	got, err := Call(context.Background(), []byte(weather), args, Host{HTTPGet: fakeGet(nil)}, Limits{})
	if err != nil || got != "21.5 °C" {
		t.Errorf("granted: got %q, %v", got, err)
	}
	_, err = Call(context.Background(), []byte(weather), args, Host{}, Limits{})
	if err == nil || !strings.Contains(err.Error(), "Error: http is not granted in this run") {
		t.Errorf("not granted: %v", err)
	}
}

func TestCallCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Call(ctx, []byte(kinds), []byte(`{"kind": "string"}`), Host{}, Limits{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
