package starlarktool

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	starmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"

	"github.com/shelldon/shelldon/internal/starlarkjson"
)

// TestReport is the outcome of a tool's test run, for the model and the
// owner.
type TestReport struct {
	Passed   bool         // every test ran and passed, and there was at least one
	Tests    []TestResult // in name order, including those not run
	Output   string       // print output of the tool and the tests, capped at MaxOutput bytes
	Duration time.Duration
	Error    string // what stopped the run as a whole: static checks, loading, the time limit
}

// TestResult is one test_* function's outcome.
type TestResult struct {
	Name    string
	OK      bool
	Message string // why it failed: the message and the backtrace in the tool and test
}

// String renders the report for the model.
func (r TestReport) String() string {
	var b strings.Builder
	passed := 0
	for _, t := range r.Tests {
		if t.OK {
			passed++
		}
	}
	verdict := "FAIL"
	if r.Passed {
		verdict = "PASS"
	}
	fmt.Fprintf(&b, "%s: %d of %d tests passed in %v\n", verdict, passed, len(r.Tests), r.Duration.Round(time.Millisecond))
	if r.Error != "" {
		fmt.Fprintf(&b, "error: %s\n", r.Error)
	}
	for _, t := range r.Tests {
		if !t.OK {
			fmt.Fprintf(&b, "--- FAIL: %s\n%s\n", t.Name, indent(t.Message))
		}
	}
	if r.Output != "" {
		fmt.Fprintf(&b, "output:\n%s\n", indent(r.Output))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ")
}

// RunTests runs a tool's test: it checks code as Inspect does and test as
// CheckTest does, loads the tool, then loads the test with the tool's
// globals, assert, json and math predeclared, then calls each top-level
// test_* function in name order, each on a fresh thread with lim.Steps.
// lim.Timeout bounds the whole run. A failing test does not stop the
// others. Memory is not bounded: run RunTests in a child under RLIMIT_DATA.
func RunTests(ctx context.Context, code, test []byte, host Host, lim Limits) TestReport {
	start := time.Now()
	lim = lim.withDefaults(DefaultTestSteps, DefaultTestTimeout)
	out := &capture{max: MaxOutput}
	rep := runTests(ctx, code, test, host, lim, out)
	rep.Output = out.String()
	rep.Duration = time.Since(start)
	rep.Passed = rep.Error == "" && len(rep.Tests) > 0
	for _, t := range rep.Tests {
		rep.Passed = rep.Passed && t.OK
	}
	return rep
}

func runTests(ctx context.Context, code, test []byte, host Host, lim Limits, out *capture) TestReport {
	var rep TestReport
	t, err := inspect(code)
	if err != nil {
		rep.Error = "the tool does not pass its static checks:\n" + err.Error()
		return rep
	}
	if err := CheckTest(test); err != nil {
		rep.Error = "the test does not pass its static checks:\n" + err.Error()
		return rep
	}
	s := newSession(ctx, lim, out.print)
	defer s.close()
	limitMsg := func(err error, what string) string {
		switch {
		case errors.Is(err, ErrSteps):
			return fmt.Sprintf("%s used more than %d steps", what, lim.Steps)
		case errors.Is(err, ErrTimeout):
			return fmt.Sprintf("the test run timed out after %v (the limit for the whole run) during %s", lim.Timeout, what)
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return "the test run was cancelled: " + err.Error()
		}
		return ""
	}

	var toolGlobals starlark.StringDict
	err = s.do("load tool", func(th *starlark.Thread) error {
		g, err := starlark.ExecFileOptions(fileOptions(), th, toolFile, code, toolEnv(host, t.hosts))
		toolGlobals = g
		return err
	})
	if err != nil {
		if msg := limitMsg(err, "loading the tool"); msg != "" {
			rep.Error = msg
		} else {
			rep.Error = "loading the tool failed:\n" + explain(err, toolFile)
		}
		return rep
	}

	env := starlark.StringDict{"json": starlarkjson.Module(maxJSONNest), "math": starmath.Module}
	for k, v := range toolGlobals {
		env[k] = v
	}
	env["assert"] = assertModule() // even if the tool defines an assert
	var testGlobals starlark.StringDict
	err = s.do("load test", func(th *starlark.Thread) error {
		g, err := starlark.ExecFileOptions(fileOptions(), th, testFile, test, env)
		testGlobals = g
		return err
	})
	if err != nil {
		if msg := limitMsg(err, "loading the test"); msg != "" {
			rep.Error = msg
		} else {
			rep.Error = "loading the test failed:\n" + explain(err, toolFile, testFile)
		}
		return rep
	}

	var names []string
	for name, v := range testGlobals {
		if _, ok := v.(*starlark.Function); ok && strings.HasPrefix(name, "test_") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if rep.Error != "" {
			rep.Tests = append(rep.Tests, TestResult{Name: name, Message: "not run: " + rep.Error})
			continue
		}
		fn := testGlobals[name]
		err := s.do(name, func(th *starlark.Thread) error {
			_, err := starlark.Call(th, fn, nil, nil)
			return err
		})
		res := TestResult{Name: name, OK: err == nil}
		if msg := limitMsg(err, name); msg != "" {
			res.Message = msg
			if !errors.Is(err, ErrSteps) {
				rep.Error = msg // no time is left for the other tests
			}
		} else if err != nil {
			res.Message = explain(err, toolFile, testFile)
		}
		rep.Tests = append(rep.Tests, res)
	}
	return rep
}

// capture keeps the first max bytes of print output; a thread left running
// past its deadline may still print, hence the lock.
type capture struct {
	mu    sync.Mutex
	b     strings.Builder
	total int
	max   int
	full  bool
}

func (c *capture) print(_ *starlark.Thread, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	line := msg + "\n"
	c.total += len(line)
	if c.full {
		return
	}
	if room := c.max - c.b.Len(); len(line) > room {
		for room > 0 && !utf8.RuneStart(line[room]) {
			room--
		}
		line = line[:room]
		c.full = true
	}
	c.b.WriteString(line)
}

func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.b.String()
	if c.full {
		s += fmt.Sprintf("\n[output truncated: %d bytes in all; showing the first %d]", c.total, len(s))
	}
	return s
}
