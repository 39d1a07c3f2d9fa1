package builtin

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	starmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/starlarkjson"
	"github.com/shelldon/shelldon/internal/worker"
)

//go:embed eval.md
var evalDescription string

// evalLimits bound one eval call.
type evalLimits struct {
	Steps     uint64        // Starlark execution steps
	Timeout   time.Duration // wall clock
	MaxCode   int           // bytes of source
	MaxResult int           // bytes of result shown
	MaxNest   int           // bracket nesting accepted by json.decode
}

var defaultEvalLimits = evalLimits{
	Steps:     1_000_000,
	Timeout:   2 * time.Second,
	MaxCode:   16 << 10,
	MaxResult: 16 << 10,
	MaxNest:   1000,
}

type evalArgs struct {
	Code string `json:"code" jsonschema:"one Starlark (Python-like) expression, for example sum([x * x for x in range(10)])"`
}

func evalTool(lim evalLimits, run func(ctx context.Context, code string) (string, error)) (*worker.Tool, error) {
	if run == nil {
		run = func(ctx context.Context, code string) (string, error) { return evalExpr(ctx, lim, code) }
	}
	return worker.NewBuiltin(contracts.ToolEval, evalDescription,
		func(ctx context.Context, in evalArgs) (string, error) {
			return run(ctx, in.Code)
		})
}

// Eval evaluates code, one Starlark expression, within eval's step, time and
// size limits. The worker's eval child mode calls it under a memory limit.
func Eval(ctx context.Context, code string) (string, error) {
	return evalExpr(ctx, defaultEvalLimits, code)
}

// errLoad refuses load, in whatever form it was written.
var errLoad = errors.New("eval: load is not available; eval is hermetic and sees only the built-ins plus math and json")

// loadCall spots a load that does not even parse, like load("x"): the
// parser takes load for a keyword. It is what the regexp ^load\b matches:
// load at the start, not followed by a letter, digit or _. Spelled out
// rather than a package-level regexp, which would be init work for every
// process of the binary, the idle daemon included (package lazy).
func loadCall(code string) bool {
	rest, ok := strings.CutPrefix(code, "load")
	if !ok || rest == "" {
		return ok
	}
	c := rest[0]
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_')
}

// evalOptions allow set() and nothing else beyond the core language: no
// while loops, no recursion, no top-level statements.
var evalOptions = syntax.FileOptions{Set: true}

// evalExpr evaluates code, one Starlark expression, hermetically: no load,
// no print, only the universe plus the math and json modules.
func evalExpr(ctx context.Context, lim evalLimits, code string) (string, error) {
	if len(code) > lim.MaxCode {
		return "", fmt.Errorf("eval: code is %d bytes; the limit is %d", len(code), lim.MaxCode)
	}
	code = strings.TrimSpace(code)
	if loadCall(code) {
		return "", errLoad
	}
	opts := evalOptions
	expr, err := opts.ParseExpr("code", code, 0)
	if err != nil {
		return "", parseError(&opts, code, err)
	}
	if usesLoad(expr) {
		return "", errLoad
	}

	thread := &starlark.Thread{Name: "eval", Print: func(*starlark.Thread, string) {}}
	thread.SetMaxExecutionSteps(lim.Steps)
	env := starlark.StringDict{"math": starmath.Module, "json": starlarkjson.Module(lim.MaxNest)}

	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("internal error: %v", p)}
			}
		}()
		v, err := starlark.EvalExprOptions(&opts, thread, expr, env)
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{text: render(v)}
	}()

	// A built-in that runs long (sorted of a huge list) only sees the
	// cancellation when it returns; the call answers at the deadline anyway
	// and leaves the goroutine to finish.
	timer := time.NewTimer(lim.Timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return "", evalError(thread, lim, r.err)
		}
		return capResult(r.text, lim.MaxResult), nil
	case <-timer.C:
		thread.Cancel("timeout")
		return "", fmt.Errorf("eval: timed out after %v", lim.Timeout)
	case <-ctx.Done():
		thread.Cancel("cancelled")
		return "", fmt.Errorf("eval: %w", ctx.Err())
	}
}

// parseError explains why code is not one expression.
func parseError(opts *syntax.FileOptions, code string, err error) error {
	f, ferr := opts.Parse("code", code, 0)
	if ferr != nil {
		return fmt.Errorf("eval: syntax error: %v", err)
	}
	for _, s := range f.Stmts {
		if _, ok := s.(*syntax.LoadStmt); ok {
			return errLoad
		}
	}
	if len(f.Stmts) > 1 {
		if _, ok := f.Stmts[0].(*syntax.ExprStmt); ok {
			return errors.New("eval: code must be ONE expression; combine the parts into one (a list, a tuple or a comprehension)")
		}
	}
	return errors.New("eval: code must be ONE expression; statements (assignments, def, if, for, load) are not allowed; use a comprehension, a conditional expression (a if c else b) or a lambda instead")
}

// usesLoad reports whether expr names load, which is no built-in here;
// saying so beats "undefined: load".
func usesLoad(expr syntax.Expr) bool {
	found := false
	syntax.Walk(expr, func(n syntax.Node) bool {
		if id, ok := n.(*syntax.Ident); ok && id.Name == "load" {
			found = true
		}
		return !found
	})
	return found
}

// evalError turns a Starlark failure into a message for the model.
func evalError(thread *starlark.Thread, lim evalLimits, err error) error {
	if thread.ExecutionSteps() >= lim.Steps && strings.Contains(err.Error(), "too many steps") {
		return fmt.Errorf("eval: too many steps (the limit is %d); compute less, or in fewer steps", lim.Steps)
	}
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		// The innermost position in the code is enough; a full
		// backtrace of a one-line expression is noise.
		for i := len(ee.CallStack) - 1; i >= 0; i-- {
			if pos := ee.CallStack[i].Pos; pos.Filename() == "code" {
				return fmt.Errorf("eval: %s: %s", pos, ee.Msg)
			}
		}
		return fmt.Errorf("eval: %s", ee.Msg)
	}
	return fmt.Errorf("eval: %v", err)
}

// render shows a string as its text and any other value as its Starlark
// representation.
func render(v starlark.Value) string {
	if s, ok := v.(starlark.String); ok {
		return string(s)
	}
	return v.String()
}

// capResult cuts s to max bytes at a rune boundary, with a note.
func capResult(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[truncated: result is %d bytes; showing the first %d]", len(s), cut)
}
