package builtin

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/starlarkjson"
)

func TestEval(t *testing.T) {
	t.Parallel()
	reg, _ := newRegistry(t, time.Now(), time.UTC)
	runCases(t, reg, "eval", []toolCase{
		{args: `{"code":"1 + 2 * 3"}`, want: "7"},
		{args: `{"code":"7 / 2"}`, want: "3.5"},
		{args: `{"code":"1 << 100"}`, want: "1267650600228229401496703205376"},
		{args: `{"code":"  \"-\".join(sorted([\"b\", \"a\"]))\n"}`, want: "a-b"},
		{args: `{"code":"'ab' * 3"}`, want: "ababab"},
		{args: `{"code":"[x * x for x in range(5) if x % 2 == 0]"}`, want: "[0, 4, 16]"},
		{args: `{"code":"{w: len(w) for w in 'a bb'.split()}"}`, want: `{"a": 1, "bb": 2}`},
		{args: `{"code":"(lambda n: n * 9 / 5 + 32)(20)"}`, want: "68.0"},
		{args: `{"code":"math.floor(math.sqrt(17))"}`, want: "4"},
		{args: `{"code":"json.decode('{\"a\": [1, 2]}')[\"a\"][1]"}`, want: "2"},
		{args: `{"code":"json.encode({'k': [1, None]})"}`, want: `{"k":[1,null]}`},
		{args: `{"code":"json.decode('\"[[[[\"')"}`, want: "[[[["},
		{args: `{"code":"print('hi')"}`, want: "None"},
		{args: `{"code":"len('x' * 20000)"}`, want: "20000"},
		{args: `{"code":"'é' * 10000"}`, want: strings.Repeat("é", 8192) + "\n[truncated: result is 20000 bytes; showing the first 16384]"},

		{args: `{"code":"len([1 for x in range(10000000) if False])"}`, wantErr: "eval: too many steps (the limit is 1000000)"},
		{args: `{"code":"(lambda f: f(f))(lambda f: f(f))"}`, wantErr: "called recursively"},
		{args: `{"code":"x = 1"}`, wantErr: "eval: code must be ONE expression; statements (assignments, def, if, for, load) are not allowed"},
		{args: `{"code":"def f(): return 1"}`, wantErr: "statements (assignments, def, if, for, load) are not allowed"},
		{args: `{"code":"for x in []: pass"}`, wantErr: "statements"},
		{args: `{"code":"1\n2"}`, wantErr: "eval: code must be ONE expression; combine the parts"},
		{args: `{"code":"load('x.star', 'f')"}`, wantErr: "eval: load is not available"},
		{args: `{"code":"load('x.star')"}`, wantErr: "eval: load is not available"},
		{args: `{"code":"load"}`, wantErr: "eval: load is not available"},
		{args: `{"code":"[x for x in range(3) while True]"}`, wantErr: "eval: syntax error"},
		{args: `{"code":"open('/etc/passwd')"}`, wantErr: "eval: code:1:1: undefined: open"},
		{args: `{"code":"1 + 'a'"}`, wantErr: "eval: code:1:3: unknown binary op: int + string"},
		{args: `{"code":"fail('boom')"}`, wantErr: "fail: boom"},
		{args: `{"code":"json.decode('[' * 100000)"}`, wantErr: "json.decode: nesting deeper than 1000"},
		{args: `{"code":"` + strings.Repeat("1+", 9000) + `1"}`, wantErr: "eval: code is 18001 bytes; the limit is 16384"},
		{args: `{}`, wantErr: "invalid arguments"},
	})
}

func TestEvalTimeout(t *testing.T) {
	t.Parallel()
	lim := defaultEvalLimits
	lim.Steps = 1 << 62
	lim.Timeout = 50 * time.Millisecond
	_, err := evalExpr(context.Background(), lim, "len([1 for x in range(1000000000) if False])")
	if err == nil || err.Error() != "eval: timed out after 50ms" {
		t.Fatalf("eval = %v; want a timeout", err)
	}
}

func TestEvalCancelled(t *testing.T) {
	t.Parallel()
	lim := defaultEvalLimits
	lim.Steps = 1 << 62
	lim.Timeout = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err := evalExpr(ctx, lim, "len([1 for x in range(1000000000) if False])")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("eval = %v; want context.Canceled", err)
	}
}

func TestNesting(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{
		``: 0, `1`: 0, `[1]`: 1, `{"a":[{}]}`: 3, `"[[["`: 0, `["\"[["]`: 1, `[[]][]`: 2,
	} {
		if got := starlarkjson.Nesting(s); got != want {
			t.Errorf("starlarkjson.Nesting(%q) = %d, want %d", s, got, want)
		}
	}
}

// loadCall matches what the regexp ^load\b it replaced matched.
func TestLoadCallIsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`^load\b`)
	for _, code := range []string{
		"load", "load(", "load('x')", "load x", "load.x", "load-1", "load\n", "loadé",
		"loader", "load_x", "load9", "loadX", "Load(", " load(", "", "loa", "x = load",
	} {
		if got, want := loadCall(code), re.MatchString(code); got != want {
			t.Errorf("loadCall(%q) = %v, the regexp says %v", code, got, want)
		}
	}
}
