package starlarktool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
)

// Limits bound one call or one test run; a zero field takes its default.
type Limits struct {
	Steps     uint64        // Starlark steps per thread: 1,000,000 per call, 10,000,000 in a test run
	Timeout   time.Duration // wall clock: 5s per call, 10s for a whole test run
	MaxResult int           // bytes of a call's result: 16 KiB
}

// Defaults of Limits.
const (
	DefaultCallSteps   = 1_000_000
	DefaultCallTimeout = 5 * time.Second
	DefaultTestSteps   = 10_000_000
	DefaultTestTimeout = 10 * time.Second
	DefaultMaxResult   = 16 << 10
)

// MaxOutput is how many bytes of print output RunTests keeps.
const MaxOutput = 16 << 10

func (l Limits) withDefaults(steps uint64, timeout time.Duration) Limits {
	if l.Steps == 0 {
		l.Steps = steps
	}
	if l.Timeout <= 0 {
		l.Timeout = timeout
	}
	if l.MaxResult <= 0 {
		l.MaxResult = DefaultMaxResult
	}
	return l
}

// Errors a limit causes; the errors returned wrap them.
var (
	ErrSteps   = errors.New("starlarktool: step limit exceeded")
	ErrTimeout = errors.New("starlarktool: time limit exceeded")
)

// limitError is a message for the model that wraps ErrSteps or ErrTimeout.
type limitError struct {
	msg  string
	kind error
}

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return e.kind }

// Thread-local keys.
const (
	localCtx  = "starlarktool.ctx"
	localStop = "starlarktool.stop"
)

// stopFlags record why a thread was stopped.
type stopFlags struct{ steps, timeout atomic.Bool }

func (s *stopFlags) stopped() bool { return s.steps.Load() || s.timeout.Load() }

// session runs Starlark threads one after another under one deadline.
type session struct {
	ctx      context.Context // the caller's: its end cancels the run
	hostCtx  context.Context // ctx bounded by the deadline, for host functions
	cancel   context.CancelFunc
	deadline time.Time
	steps    uint64
	print    func(*starlark.Thread, string)
}

// newSession starts the clock; close releases the session.
func newSession(ctx context.Context, lim Limits, print func(*starlark.Thread, string)) *session {
	deadline := time.Now().Add(lim.Timeout)
	hostCtx, cancel := context.WithDeadline(ctx, deadline)
	return &session{ctx: ctx, hostCtx: hostCtx, cancel: cancel, deadline: deadline, steps: lim.Steps, print: print}
}

func (s *session) close() { s.cancel() }

// do runs fn on a fresh thread with the step limit, in a goroutine, and
// returns at the deadline or on cancellation even if fn has not: a
// built-in that runs long only sees the cancellation when it returns.
// A limit is returned as ErrSteps or ErrTimeout, bare.
func (s *session) do(name string, fn func(*starlark.Thread) error) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	remaining := time.Until(s.deadline)
	if remaining <= 0 {
		return ErrTimeout
	}
	flags := &stopFlags{}
	th := &starlark.Thread{
		Name:  name,
		Print: s.print,
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) {
			return nil, errors.New("load is not available")
		},
		OnMaxSteps: func(th *starlark.Thread) {
			flags.steps.Store(true)
			th.Cancel("too many steps")
		},
	}
	th.SetMaxExecutionSteps(s.steps)
	th.SetLocal(localCtx, s.hostCtx)
	th.SetLocal(localStop, flags)

	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("internal error: %v", p)
			}
		}()
		done <- fn(th)
	}()
	timer := time.NewTimer(remaining)
	defer timer.Stop()
	select {
	case err := <-done:
		if flags.steps.Load() {
			return ErrSteps
		}
		if flags.timeout.Load() {
			return ErrTimeout
		}
		return err
	case <-timer.C:
		flags.timeout.Store(true)
		th.Cancel("timeout")
		return ErrTimeout
	case <-s.ctx.Done():
		th.Cancel("cancelled")
		return s.ctx.Err()
	}
}

// Call runs a tool once: it checks code as Inspect does, validates args (a
// JSON object, or empty for none) against PARAMS_SCHEMA, loads the module
// and calls run(**args). A string result is returned as is, anything else
// as JSON, cut to lim.MaxResult with a note. print output is discarded.
// Errors are messages for the model; a limit wraps ErrSteps or ErrTimeout.
// Memory is not bounded: run Call in a child under RLIMIT_DATA.
func Call(ctx context.Context, code []byte, args json.RawMessage, host Host, lim Limits) (string, error) {
	lim = lim.withDefaults(DefaultCallSteps, DefaultCallTimeout)
	t, err := inspect(code)
	if err != nil {
		return "", fmt.Errorf("the tool does not pass its static checks:\n%w", err)
	}
	kwargs, err := callArgs(t, args)
	if err != nil {
		return "", err
	}
	var out string
	s := newSession(ctx, lim, func(*starlark.Thread, string) {})
	defer s.close()
	err = s.do("call", func(th *starlark.Thread) error {
		g, err := starlark.ExecFileOptions(fileOptions(), th, toolFile, code, toolEnv(host, t.hosts))
		if err != nil {
			return err
		}
		v, err := starlark.Call(th, g["run"], nil, kwargs)
		if err != nil {
			return err
		}
		out, err = render(th, v)
		return err
	})
	switch {
	case errors.Is(err, ErrSteps):
		return "", &limitError{fmt.Sprintf("the tool used more than %d steps; it must do less work per call", lim.Steps), ErrSteps}
	case errors.Is(err, ErrTimeout):
		return "", &limitError{fmt.Sprintf("the tool timed out after %v", lim.Timeout), ErrTimeout}
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return "", fmt.Errorf("the call was cancelled: %w", err)
	case err != nil:
		return "", errors.New(explain(err, toolFile))
	}
	return capText(out, lim.MaxResult), nil
}

// callArgs validates args against the schema and makes run's keywords.
func callArgs(t *tool, args json.RawMessage) ([]starlark.Tuple, error) {
	raw := bytes.TrimSpace(args)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	var plain any
	if err := json.Unmarshal(raw, &plain); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	obj, ok := plain.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the arguments must be a JSON object of run's parameters (%s)", describeParams(t.params))
	}
	for _, k := range sortedKeys(obj) {
		if !slices.Contains(t.params, k) {
			return nil, fmt.Errorf("unknown argument %q; %s", k, describeParams(t.params))
		}
	}
	if err := t.schema.Validate(obj); err != nil {
		return nil, fmt.Errorf("the arguments do not match PARAMS_SCHEMA: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var exact map[string]any
	if err := dec.Decode(&exact); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	kwargs := make([]starlark.Tuple, 0, len(exact))
	for _, k := range sortedKeys(exact) {
		v, err := fromJSON(exact[k])
		if err != nil {
			return nil, fmt.Errorf("argument %q: %v", k, err)
		}
		kwargs = append(kwargs, starlark.Tuple{starlark.String(k), v})
	}
	return kwargs, nil
}

// fromJSON converts a value decoded with UseNumber to Starlark: a number
// without a fraction or exponent becomes an int, any other a float.
func fromJSON(v any) (starlark.Value, error) {
	switch v := v.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(v), nil
	case string:
		return starlark.String(v), nil
	case json.Number:
		s := string(v)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return starlark.MakeInt64(i), nil
			}
			if b, ok := new(big.Int).SetString(s, 10); ok {
				return starlark.MakeBigInt(b), nil
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("number %s is out of range", s)
		}
		return starlark.Float(f), nil
	case []any:
		elems := make([]starlark.Value, len(v))
		for i, x := range v {
			e, err := fromJSON(x)
			if err != nil {
				return nil, err
			}
			elems[i] = e
		}
		return starlark.NewList(elems), nil
	case map[string]any:
		d := starlark.NewDict(len(v))
		for _, k := range sortedKeys(v) {
			e, err := fromJSON(v[k])
			if err != nil {
				return nil, err
			}
			if err := d.SetKey(starlark.String(k), e); err != nil {
				return nil, err
			}
		}
		return d, nil
	}
	return nil, fmt.Errorf("unexpected JSON value %T", v)
}

// maxResultDepth bounds the nesting of a result converted to JSON: the
// encoder recurses, and a Go stack overflow kills the process.
const maxResultDepth = 1000

// render shows a string result as is and any other as JSON.
func render(th *starlark.Thread, v starlark.Value) (string, error) {
	if s, ok := v.(starlark.String); ok {
		return string(s), nil
	}
	if depth(v, maxResultDepth) > maxResultDepth {
		return "", fmt.Errorf("run returned a value nested deeper than %d levels (or containing itself); return something flatter", maxResultDepth)
	}
	out, err := starlark.Call(th, starjson.Module.Members["encode"], starlark.Tuple{v}, nil)
	if err != nil {
		msg := err.Error()
		var ee *starlark.EvalError
		if errors.As(err, &ee) {
			msg = ee.Msg
		}
		return "", fmt.Errorf("run returned a %s, which cannot be converted to JSON (%s); return a string, or numbers, bools, None, lists and dicts with string keys", v.Type(), msg)
	}
	return string(out.(starlark.String)), nil
}

// depth returns how deeply lists, tuples and dicts nest in v, counting no
// further than limit+1; a value that contains itself counts as too deep.
// It visits each list and dict once.
func depth(v starlark.Value, limit int) int {
	return depthMemo(v, limit, map[starlark.Value]int{})
}

func depthMemo(v starlark.Value, limit int, memo map[starlark.Value]int) int {
	var elems []starlark.Value
	switch x := v.(type) {
	case *starlark.List:
		for i := range x.Len() {
			elems = append(elems, x.Index(i))
		}
	case starlark.Tuple:
		elems = x
	case *starlark.Dict:
		for _, kv := range x.Items() {
			elems = append(elems, kv[0], kv[1])
		}
	default:
		return 0
	}
	if limit < 0 {
		return 1
	}
	_, isTuple := v.(starlark.Tuple)
	if !isTuple {
		if d, ok := memo[v]; ok {
			if d < 0 { // on the current path: a cycle
				return limit + 2
			}
			return d
		}
		memo[v] = -1
	}
	deepest := 0
	for _, e := range elems {
		deepest = max(deepest, depthMemo(e, limit-1, memo))
		if deepest > limit {
			break
		}
	}
	if !isTuple {
		memo[v] = deepest + 1
	}
	return deepest + 1
}

// explain renders a Starlark error with the backtrace trimmed to the frames
// in files: the code the model wrote, not the interpreter's.
func explain(err error, files ...string) string {
	var ee *starlark.EvalError
	if !errors.As(err, &ee) {
		return err.Error()
	}
	stack := ee.CallStack
	in := ""
	if n := len(stack); n > 0 && stack[n-1].Pos.Filename() == "<builtin>" {
		in = " in " + stack[n-1].Name
		stack = stack[:n-1]
	}
	var b strings.Builder
	for _, fr := range stack {
		if slices.Contains(files, fr.Pos.Filename()) {
			if b.Len() == 0 {
				b.WriteString("Traceback (most recent call last):\n")
			}
			fmt.Fprintf(&b, "  %s: in %s\n", fr.Pos, fr.Name)
		}
	}
	fmt.Fprintf(&b, "Error%s: %s", in, ee.Msg)
	return b.String()
}

// capText cuts s to max bytes at a rune boundary, with a note.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[truncated: %d bytes in all; showing the first %d]", len(s), cut)
}
