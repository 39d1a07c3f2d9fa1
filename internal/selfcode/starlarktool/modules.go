package starlarktool

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	starmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/shelldon/shelldon/internal/starlarkjson"
)

// maxJSONNest bounds the nesting json.decode accepts.
const maxJSONNest = 1000

// Host functions a caller may grant a tool.
type Host struct {
	// HTTPGet fetches url and returns its status and body; nil when http
	// is not granted. The caller enforces its own policy (SSRF-safe
	// client, body cap); http.get already refuses hosts the tool did not
	// declare in CAPABILITIES.
	HTTPGet func(ctx context.Context, url string) (status int, body string, err error)
}

// toolEnv is what a tool's code sees beside the universe.
func toolEnv(host Host, hosts []string) starlark.StringDict {
	return starlark.StringDict{
		"json": starlarkjson.Module(maxJSONNest),
		"math": starmath.Module,
		"http": httpModule(host, hosts),
	}
}

// httpModule is http.get for the declared hosts when the host grants http,
// and otherwise a stub that fails closed.
func httpModule(host Host, hosts []string) starlark.Value {
	switch {
	case len(hosts) == 0:
		return &denied{name: "http", msg: `http is not granted to this tool; declare CAPABILITIES = {"http": ["host"]} with the hostnames it needs`}
	case host.HTTPGet == nil:
		return &denied{name: "http", msg: "http is not granted in this run: the tool declares it, but the owner has not granted it, " +
			"or this is the test run, which has no network; test the code that handles a response on canned data instead"}
	}
	get := starlark.NewBuiltin("http.get", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var raw string
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "url", &raw); err != nil {
			return nil, err
		}
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
			return nil, fmt.Errorf("%q is not an http or https URL", raw)
		}
		if u.User != nil || u.Port() != "" {
			return nil, fmt.Errorf("%q: credentials and ports are not allowed in the URL", raw)
		}
		if h := strings.ToLower(u.Hostname()); !slices.Contains(hosts, h) {
			return nil, fmt.Errorf("host %q is not declared in CAPABILITIES[\"http\"] (%s)", h, strings.Join(hosts, ", "))
		}
		ctx, _ := thread.Local(localCtx).(context.Context)
		if ctx == nil {
			ctx = context.Background()
		}
		status, body, err := host.HTTPGet(ctx, u.String())
		if err != nil {
			return nil, err
		}
		return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
			"status": starlark.MakeInt(status),
			"body":   starlark.String(body),
		}), nil
	})
	return &starlarkstruct.Module{Name: "http", Members: starlark.StringDict{"get": get}}
}

// denied stands for a host module that was not granted: every attribute
// and every call fails with msg. It is falsy, so a tool may test it.
type denied struct{ name, msg string }

var (
	_ starlark.HasAttrs = (*denied)(nil)
	_ starlark.Callable = (*denied)(nil)
)

func (d *denied) String() string        { return "<" + d.name + " (not granted)>" }
func (d *denied) Type() string          { return "module" }
func (d *denied) Freeze()               {}
func (d *denied) Truth() starlark.Bool  { return starlark.False }
func (d *denied) Hash() (uint32, error) { return 0, errors.New(d.msg) }
func (d *denied) Attr(string) (starlark.Value, error) {
	return nil, errors.New(d.msg)
}
func (d *denied) AttrNames() []string { return nil }
func (d *denied) Name() string        { return d.name }
func (d *denied) CallInternal(*starlark.Thread, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return nil, errors.New(d.msg)
}

// assertModule is what a test checks results with.
func assertModule() *starlarkstruct.Module {
	return &starlarkstruct.Module{Name: "assert", Members: starlark.StringDict{
		"eq":       starlark.NewBuiltin("assert.eq", assertEq),
		"ne":       starlark.NewBuiltin("assert.ne", assertNe),
		"true":     starlark.NewBuiltin("assert.true", assertTrue),
		"contains": starlark.NewBuiltin("assert.contains", assertContains),
		"fails":    starlark.NewBuiltin("assert.fails", assertFails),
	}}
}

func assertEq(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	var msg string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "got", &x, "want", &y, "msg?", &msg); err != nil {
		return nil, err
	}
	eq, err := starlark.Equal(x, y)
	if err != nil {
		return nil, err
	}
	if !eq {
		return nil, failure(msg, "%s != %s", short(x), short(y))
	}
	return starlark.None, nil
}

func assertNe(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	var msg string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "got", &x, "unwanted", &y, "msg?", &msg); err != nil {
		return nil, err
	}
	eq, err := starlark.Equal(x, y)
	if err != nil {
		return nil, err
	}
	if eq {
		return nil, failure(msg, "both are %s", short(x))
	}
	return starlark.None, nil
}

func assertTrue(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var msg string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "msg?", &msg); err != nil {
		return nil, err
	}
	if !x.Truth() {
		return nil, failure(msg, "got %s, which is not true", short(x))
	}
	return starlark.None, nil
}

func assertContains(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var container, x starlark.Value
	var msg string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "container", &container, "x", &x, "msg?", &msg); err != nil {
		return nil, err
	}
	in, err := starlark.Binary(syntax.IN, x, container)
	if err != nil {
		return nil, err
	}
	if !in.Truth() {
		return nil, failure(msg, "%s does not contain %s", short(container), short(x))
	}
	return starlark.None, nil
}

// assertFails calls fn and wants an error whose message contains pattern.
// A run that hit a limit stays failed: the limit is not the error sought.
func assertFails(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fn starlark.Callable
	var pattern string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "fn", &fn, "pattern", &pattern); err != nil {
		return nil, err
	}
	_, err := starlark.Call(thread, fn, nil, nil)
	if st, ok := thread.Local(localStop).(*stopFlags); ok && st.stopped() {
		return nil, err
	}
	if err == nil {
		return nil, fmt.Errorf("%s() succeeded; expected an error containing %q", fn.Name(), pattern)
	}
	text := err.Error()
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		text = ee.Msg
	}
	if !strings.Contains(text, pattern) {
		return nil, fmt.Errorf("%s() failed with %q, which does not contain %q", fn.Name(), text, pattern)
	}
	return starlark.None, nil
}

func failure(msg, format string, args ...any) error {
	s := fmt.Sprintf(format, args...)
	if msg != "" {
		s = msg + ": " + s
	}
	return errors.New(s)
}

// short is v's representation, cut to keep a failure readable.
func short(v starlark.Value) string {
	return clip(v.String(), 300)
}
