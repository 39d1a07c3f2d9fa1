package pytool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// withImports is a tool that imports mods, then defines helper(f) with body: the rule a
// case breaks is then the one under test, not "nothing runs at import".
func withImports(mods, body string) string {
	var b strings.Builder
	for _, m := range strings.Fields(mods) {
		b.WriteString("import " + m + "\n")
	}
	b.WriteString("\n" + header + "\n\ndef helper(f, name=\"x\"):\n" + indent(body, "    ") + "\n")
	return b.String()
}

// computed is a dunder name no string literal holds: the reflective helper, not the
// string, must be what is refused.
const computed = `name = chr(95) * 2 + "glo" + "bals" + chr(95) * 2`

// TestCheckRefusesReflection: attribute access by a string, through the builtins and the
// allowed modules' reflective helpers, each the way an attacker would write it.
func TestCheckRefusesReflection(t *testing.T) {
	needPython(t)
	t.Parallel()
	checkCases(t, []checkCase{
		// The reported path and its variants.
		{"reported update_wrapper", "functools typing", "functools.update_wrapper(f, typing.cast, assigned=(), updated=(\"__globals__\",))\nreturn sys.modules[\"os\"].system(\"id\")", "functools.update_wrapper is not allowed"},
		{"reported: the injected global", "functools typing", "return sys.modules", "sys is not defined"},
		{"update_wrapper, computed name", "functools typing", computed + "\nfunctools.update_wrapper(f, typing.cast, (), (name,))", "functools.update_wrapper is not allowed: it reads attributes by a name it is given"},
		{"update_wrapper imported by name", "typing", "from functools import update_wrapper\nupdate_wrapper(f, typing.cast)", "functools.update_wrapper is not allowed"},
		{"wraps", "functools typing", computed + "\nreturn functools.wraps(typing.cast, (), (name,))(f)", "functools.wraps is not allowed"},
		{"partial of update_wrapper", "functools typing", "return functools.partial(functools.update_wrapper, f)", "functools.update_wrapper is not allowed"},
		{"update_wrapper through a module attribute", "typing", "return typing.functools.update_wrapper(f, typing.cast)", "typing.functools.update_wrapper is not allowed"},
		{"functools stored from typing", "typing", "m = typing.functools\nreturn m.update_wrapper(f, typing.cast)", "the module typing.functools can only be used as typing.functools.name"},
		{"update_wrapper on any object", "", "return f.update_wrapper", ".update_wrapper is not allowed"},

		// getattr and the other builtins, however they are reached.
		{"getattr", "", computed + "\nreturn getattr(f, name)", "getattr is not allowed"},
		{"getattr through map", "", "return list(map(getattr, [f], [name]))", "getattr is not allowed"},
		{"getattr through an alias", "", "g = getattr\nreturn g(f, name)", "getattr is not allowed"},
		{"partial of getattr", "functools", "return functools.partial(getattr, f)(name)", "getattr is not allowed"},
		{"reduce of getattr", "functools", "return functools.reduce(getattr, [name], f)", "getattr is not allowed"},
		{"setattr", "", "setattr(f, name, 1)", "setattr is not allowed"},
		{"delattr", "", "delattr(f, name)", "delattr is not allowed"},
		{"hasattr", "", "return hasattr(f, name)", "hasattr is not allowed"},
		{"vars", "", "return vars(f)", "vars is not allowed"},
		{"dir", "", "return dir(f)", "dir is not allowed"},
		{"globals", "", "return globals()", "globals is not allowed"},
		{"locals", "", "return locals()", "locals is not allowed"},
		{"eval", "", "return eval(name)", "eval is not allowed"},
		{"exec", "", "exec(name)", "exec is not allowed"},
		{"compile", "", "return compile(name, 'x', 'exec')", "compile is not allowed"},
		{"__import__", "", "return __import__(name)", "__import__: dunder names are not allowed"},
		{"type with three arguments", "", "return type(name, (), {})", "type() is allowed only as type(x)"},
		{"type with keywords", "", "return type(f, **{})", "type() is allowed only as type(x)"},
		{"getattr from builtins through sys", "typing", "return typing.sys.modules[\"builtins\"].getattr(f, name)", "typing.sys is the module sys"},
		{"object.__getattribute__", "", "return object.__getattribute__(f, name)", "__getattribute__: dunder names are not allowed"},
		{"__subclasses__ walk", "", "return object.__subclasses__()", "__subclasses__: dunder names are not allowed"},
		{"mro", "", "return type(f).mro()", ".mro is not allowed"},

		// operator.
		{"attrgetter", "operator", "return operator.attrgetter(\"__globals__\")(f)", "operator.attrgetter is not allowed"},
		{"attrgetter, computed", "operator", computed + "\nreturn operator.attrgetter(name)(f)", "operator.attrgetter is not allowed"},
		{"attrgetter imported", "", "from operator import attrgetter as ag\nreturn ag(name)(f)", "operator.attrgetter is not allowed"},
		{"methodcaller", "operator", "return operator.methodcaller(name)(f)", "operator.methodcaller is not allowed"},
		{"itemgetter on a dunder key", "operator", "return operator.itemgetter(\"__builtins__\")(f)", "a string may not contain \"__\""},
		{"getitem on a dunder key", "operator", "return operator.getitem(f, \"__builtins__\")", "a string may not contain \"__\""},

		// Format strings.
		{"format field reads an attribute", "", "return \"{0.__globals__}\".format(f)", "format field {0.__globals__} reads an attribute"},
		{"format field reads an item", "", "return \"{0[k]}\".format(f)", "format field {0[k]} reads an attribute or an item"},
		{"format field reads a class", "", "return \"{0.__class__.__mro__}\".format(f)", "format field {0.__class__.__mro__}"},
		{"format field nested in a spec", "", "return \"{0:{1.x}}\".format(f, f)", "format field {1.x} reads"},
		{"format_map field", "", "return \"{f.x}\".format_map({\"f\": f})", "format field {f.x} reads"},
		{"format on a computed string", "", "return name.format(f)", ".format is only allowed on a string literal"},
		{"format on a concatenation", "", "return (\"{0.\" + \"x}\").format(f)", ".format is only allowed on a string literal"},
		{"str.format unbound", "", "return str.format(name, f)", ".format is only allowed on a string literal"},
		{"format method stored", "", "g = name.format\nreturn g(f)", ".format is only allowed on a string literal"},
		{"format_map on a computed string", "", "return name.format_map({\"f\": f})", ".format_map is only allowed on a string literal"},
		{"format constant reassigned", "", "global FMT\nFMT = name\nreturn FMT.format(f)", ".format is only allowed on a string literal"},
		{"string.Formatter", "string", "return string.Formatter().format(name, f)", "string.Formatter is not allowed"},
		{"Formatter.get_field", "string", "return string.Formatter().get_field(\"0.x\", [f], {})", "string.Formatter is not allowed"},
		{"get_field on any object", "", "return f.get_field(name, [f], {})", ".get_field is not allowed"},
		{"vformat on any object", "", "return f.vformat(name, [f], {})", ".vformat is not allowed"},
		{"UserString.format", "collections", "return collections.UserString(name).format(f)", "collections.UserString is not allowed"},
		{"a method on its class takes any self", "pprint", "return pprint.PrettyPrinter.isreadable(name, f)", "pprint.PrettyPrinter.isreadable is a method: call it on an instance"},

		// typing evaluates strings.
		{"get_type_hints", "typing", "return typing.get_type_hints(f)", "typing.get_type_hints is not allowed"},
		{"ForwardRef", "typing", "return typing.ForwardRef(name)", "typing.ForwardRef is not allowed"},
		{"ForwardRef._evaluate", "typing", "return typing.get_args(typing.Optional[f])[0]._evaluate({}, {}, frozenset())", "._evaluate is not allowed"},
		{"no_type_check", "typing", "return typing.no_type_check(f)", "typing.no_type_check is not allowed"},
		{"an enum from a module's globals by name", "enum", "return enum.Enum._convert_(\"X\", name, f)", "._convert_ is not allowed"},
		{"singledispatch", "functools", "return functools.singledispatch(f)", "functools.singledispatch is not allowed"},
		{"string annotation with code", "", "def g(x: \"__import__('os').system('id')\"):\n    pass\nreturn g", "__import__: dunder names are not allowed"},

		// copy and the reduce protocol.
		{"copy.dispatch_table", "copy", "copy.dispatch_table[type(f)] = f", "copy.dispatch_table is not allowed"},
		{"a class with __reduce__", "", "class R:\n    def __reduce__(self):\n        return (f, ())\nreturn R", "__reduce__: dunder names are not allowed"},

		// Strings that spell internals.
		{"dunder in a string", "", "return \"__globals__\"", "'__globals__': a string may not contain \"__\""},
		{"dunder split in two", "", "return \"__glo\" + \"bals__\"", "a string may not contain \"__\""},
		{"dunder in bytes", "", "return b\"__globals__\".decode()", "a string may not contain \"__\""},
		{"dunder in an f-string", "", "return f\"__{name}__\"", "a string may not contain \"__\""},
		{"dunder in a dict key", "", "return dict(**{\"__class__\": 1})", "a string may not contain \"__\""},
		{"frame attribute in a string", "", "return \"gi_frame\"", "may not name the interpreter attribute gi_frame"},
		{"frame attribute in bytes", "", "return b\"f_globals\"", "may not name the interpreter attribute f_globals"},

		// Frames, code, tracebacks.
		{"gi_frame", "", "g = (i for i in f)\nreturn g.gi_frame.f_globals", ".gi_frame is not allowed"},
		{"gi_code", "", "g = (i for i in f)\nreturn g.gi_code", ".gi_code is not allowed"},
		{"f_back", "", "return f.f_back", ".f_back is not allowed"},
		{"tb_next", "", "return f.tb_next", ".tb_next is not allowed"},
		{"__traceback__", "", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    return e.__traceback__", "__traceback__: dunder names are not allowed"},
		{"cell_contents", "", "return f.cell_contents", ".cell_contents is not allowed"},
		{"co_consts", "", "return f.co_consts", ".co_consts is not allowed"},
		{"frame attribute in a match pattern (3.10+)", "", "match f:\n    case object(gi_frame=g):\n        return g", ".gi_frame is not allowed"},

		// Modules past the allowlist.
		{"sys through typing", "typing", "return typing.sys.modules", "typing.sys is the module sys"},
		{"module returned", "typing", "return typing.collections", "the module typing.collections can only be used as typing.collections.name"},
		{"undefined name", "", "return os.system(name)", "os is not defined"},
		{"method reads a class-level name", "", "class K:\n    y = 1\n\n    def m(self):\n        return y\nreturn K", "y is not defined"},
	})
}

// checkCase is a helper body, the modules it uses, and what Check must say about it.
type checkCase struct {
	name, mods, body string
	want             string // a substring of a problem's message on one of the body's lines
}

// checkCases checks the cases eight to a tool (each its own function, a checker run
// costing far more than a case) and requires, for each, a problem on one of its lines
// containing its want.
func checkCases(t *testing.T, cases []checkCase) {
	t.Helper()
	if pythonMinor(t) < 10 { // no match statement before 3.10
		cases = slices.DeleteFunc(slices.Clone(cases), func(c checkCase) bool { return strings.Contains(c.name, "(3.10+)") })
	}
	const batch = 8
	for start := 0; start < len(cases); start += batch {
		group := cases[start:min(start+batch, len(cases))]
		t.Run(group[0].name, func(t *testing.T) {
			t.Parallel()
			mods := map[string]bool{}
			var imports, body strings.Builder
			for _, tc := range group {
				for _, m := range strings.Fields(tc.mods) {
					if !mods[m] {
						mods[m] = true
						imports.WriteString("import " + m + "\n")
					}
				}
			}
			code := imports.String() + "\n" + header
			lines := strings.Count(code, "\n") + 1
			first := make([]int, len(group)+1) // case i spans lines first[i] to first[i+1]-1
			for i, tc := range group {
				fn := fmt.Sprintf("\n\ndef case_%d(f, name=\"x\"):\n%s\n", i, indent(tc.body, "    "))
				first[i] = lines + 2
				lines += strings.Count(fn, "\n")
				body.WriteString(fn)
			}
			first[len(group)] = lines + 1
			code += body.String()
			_, err := checkedWithCache(t, "word_count", []byte(code), []byte(goodTest))
			var ce *CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("Check = %v, want a *CheckError for:\n%s", err, code)
			}
			for i, tc := range group {
				ok := false
				for _, p := range ce.Problems {
					if strings.HasPrefix(p.Message, "... and ") {
						t.Fatalf("too many problems to tell the cases apart: %v", err)
					}
					ok = ok || p.Line >= first[i] && p.Line < first[i+1] && strings.Contains(p.Message, tc.want)
				}
				if !ok {
					t.Errorf("%s: no problem on lines %d-%d containing %q; got:\n%v\ncode:\n%s",
						tc.name, first[i], first[i+1]-1, tc.want, err, code)
				}
			}
		})
	}
}

// TestCheckAcceptsPlainFormatting: what the format and string rules leave alone.
func TestCheckAcceptsPlainFormatting(t *testing.T) {
	needPython(t)
	t.Parallel()
	code := `import string

DESCRIPTION = "Greets."
PARAMS_SCHEMA = {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
CAPABILITIES = {}
GREETING = "Hello, {who}! You are {age:>3} ({pct:.1%})."


def run(who):
    """Docstrings may mention __init__ and gi_frame."""
    a = "{} and {:>{}}".format(who, "b", 4)
    b = GREETING.format(who=who, age=7, pct=0.5)
    c = "{name}".format_map({"name": who})
    d = "%(who)s %%d" % {"who": who}
    e = f"{who!r:>10} {len(who):03d}"
    g = string.Template("$who here").substitute(who=who)
    return " ".join([a, b, c, d, e, g, format(3.5, ".2f"), "snake_case_name", str(type(who))])
`
	test := "from word_count import run\n\n\ndef test_run():\n    assert run(\"x\")\n"
	if _, err := Check(context.Background(), python, "word_count", []byte(code), []byte(test)); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// probeResult is one callable the probe script found, and a call of it.
type probeResult struct {
	Module string `json:"module"` // to import; "builtins" for none
	Call   string `json:"call"`   // e.g. functools.update_wrapper(f, f, assigned=(NAME,))
	Why    string `json:"why"`    // "param-name", or the access the probe saw: getattr...
	Label  string `json:"label"`  // e.g. functools.update_wrapper, for a found access
}

// TestCheckRefusesGenerated builds its cases from Python's own reflection: a probe
// script (testdata/reflective_probe.py) lists every callable of every allowed module and
// of the builtins whose parameters look like they take an attribute name (name, attr,
// assigned, updated, field_name, key...), and every one it sees, by calling it with
// marked strings and probe objects, read or write an attribute, import or run code named
// by a string it was given. Each becomes a tool: with a dunder string literal for the
// first kind (refused, at least, by the string rule), and with a name computed at run time
// for the second, which only refusing the callable itself can stop.
func TestCheckRefusesGenerated(t *testing.T) {
	needPython(t)
	t.Parallel()
	cmd := exec.Command(python, append(slices.Clone(pythonFlags), filepath.Join("testdata", "reflective_probe.py"), strings.Join(allowedModules, ","))...)
	cmd.Env = cleanEnv
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the probe failed: %v\n%s", err, out)
	}
	var found []probeResult
	if err := json.Unmarshal(out, &found); err != nil {
		t.Fatalf("the probe's output: %v\n%s", err, out)
	}
	var byName, byProbe []probeResult
	for _, r := range found {
		if r.Why == "param-name" {
			byName = append(byName, r)
		} else {
			byProbe = append(byProbe, r)
		}
	}
	// The probe must find at least the reflective helpers this package knows of: if it
	// finds none, it is broken, not the standard library fixed.
	for _, must := range []string{"builtins.getattr", "builtins.str.format", "functools.update_wrapper",
		"functools.wraps", "operator.attrgetter", "operator.methodcaller", "string.Formatter.get_field"} {
		if !slices.ContainsFunc(byProbe, func(r probeResult) bool { return r.Label == must }) {
			t.Errorf("the probe did not find %s", must)
		}
	}
	if len(byName) < 20 {
		t.Errorf("the probe found only %d callables by parameter name", len(byName))
	}
	t.Logf("%d callables by parameter name, %d seen reflecting", len(byName), len(byProbe))
	checkCalls(t, "dunder literal", byName, `"__globals__"`)
	checkCalls(t, "computed name", byProbe, "name")
}

// checkCalls checks each call, NAME replaced by name, as the body of its own function,
// ten to a tool (Check reports at most 50 problems), and requires a problem on every
// call's line.
func checkCalls(t *testing.T, label string, found []probeResult, name string) {
	t.Helper()
	const batch = 10
	for start := 0; start < len(found); start += batch {
		group := found[start:min(start+batch, len(found))]
		t.Run(fmt.Sprintf("%s %d", label, start/batch), func(t *testing.T) {
			t.Parallel()
			var imports, body strings.Builder
			seen := map[string]bool{"builtins": true}
			for i, r := range group {
				if !seen[r.Module] {
					seen[r.Module] = true
					imports.WriteString("import " + r.Module + "\n")
				}
				fmt.Fprintf(&body, "\n\ndef probe_%d(f):\n    %s\n    return %s\n", i, computed,
					strings.ReplaceAll(r.Call, "NAME", name))
			}
			code := imports.String() + "\n" + header + body.String()
			calls := map[int]string{} // line -> call, in the probe functions only
			inProbe := false
			for n, l := range strings.Split(code, "\n") {
				if strings.HasPrefix(l, "def ") {
					inProbe = strings.HasPrefix(l, "def probe_")
				}
				if c, ok := strings.CutPrefix(l, "    return "); ok && inProbe {
					calls[n+1] = c
				}
			}
			_, err := checkedWithCache(t, "word_count", []byte(code), []byte(goodTest))
			var ce *CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("Check = %v, want a *CheckError for:\n%s", err, code)
			}
			for _, p := range ce.Problems {
				if strings.HasPrefix(p.Message, "... and ") {
					t.Fatalf("too many problems to tell the calls apart: %v", err)
				}
				delete(calls, p.Line)
			}
			for line, c := range calls {
				t.Errorf("line %d, %s: not refused\n%v", line, c, err)
			}
		})
	}
}

// FuzzCheckReflectiveHelpers: whatever name is handed to a reflective helper, and however
// it is spelled, the helper is refused. Run as a test, it checks the seed corpus.
func FuzzCheckReflectiveHelpers(f *testing.F) {
	if _, err := os.Stat(python); err != nil {
		f.Skipf("%s is missing: %v", python, err)
	}
	sinks := []string{
		"functools.update_wrapper(f, typing.cast, (), (%s,))",
		"functools.wraps(typing.cast, (), (%s,))(f)",
		"operator.attrgetter(%s)(f)",
		"operator.methodcaller(%s)(f)",
		"string.Formatter().get_field(%s, [f], {})",
		"typing.ForwardRef(%s)",
		"getattr(f, %s)",
		"%s.format(f)",
		"str.format_map(%s, {})",
		"type(%s, (), {})",
	}
	names := []string{"__globals__", "gi_frame", "{0.__class__}", "", "plain"}
	for i := range sinks {
		f.Add(uint8(i), names[i%len(names)])
	}
	f.Fuzz(func(t *testing.T, sink uint8, name string) {
		expr := fmt.Sprintf(sinks[int(sink)%len(sinks)], "(\"\" + "+strconv.Quote(name)+")")
		code := withImports("functools operator string typing", "return "+expr)
		_, err := Check(context.Background(), python, "word_count", []byte(code), []byte(goodTest))
		var ce *CheckError
		if !errors.As(err, &ce) {
			t.Fatalf("Check = %v, want a *CheckError for:\n%s", err, code)
		}
	})
}

// TestReflectiveAnalysis runs check_reflect.py's source analysis alone: on the real
// allowed modules it must find the known reflective helpers without the hand list (and
// leave everyday callables alone), and on a made-up module it must follow parameters
// through assignments, loops, calls and self attributes.
func TestReflectiveAnalysis(t *testing.T) {
	needPython(t)
	t.Parallel()
	driver := `
import json as _json
load_modules(ALLOWED)
real = {m: sorted(reflective(MODULES[m]).names) for m in ALLOWED}
fake = Reflective()
analyse(ast.parse(FAKE), "fake", fake)
print(_json.dumps({"real": real, "fake": sorted(fake.names), "methods": sorted(fake.methods)}))
`
	fake := `
TABLE = {"a": "{0}", "b": "{0:>4}"}


def direct(obj, name):
    return getattr(obj, name)


def through_a_loop(obj, names):
    for n in names:
        obj = getattr(obj, n.strip())
    return obj


def passes_it_on(obj, attr):
    return direct(obj, attr)


def passes_a_constant(obj):
    return direct(obj, "x")


def own_field(obj):
    return getattr(obj, obj.name)


def exports(cls):
    sys.modules[cls.__module__].__dict__.update(cls.__members__)


def exports_through_get(obj):
    return sys.modules.get(obj.__class__.__module__)


def names_itself(cls):
    return "%s.%s" % (cls.__module__, cls.__name__)


def fixed(obj):
    return getattr(obj, "x")


def runs(code):
    exec(code)


def formats(fmt, obj):
    return fmt.format(obj)


def formats_from_a_table(key, obj):
    return TABLE[key].format(obj)


def wraps_it(obj, names):
    return partial(direct, name=names)


class Stores:
    def __init__(self, name):
        self._name = name

    def __call__(self, obj):
        return getattr(obj, self._name)


class Harmless:
    def __init__(self, name):
        self.name = name

    def get(self, obj):
        return getattr(obj, "x")


class _Private:
    def get_it(self, obj, name):
        return getattr(obj, name)
`
	script := checkSource + "\n" + checkReflect + "\nALLOWED = " + pyList(allowedModules) + "\nFAKE = " + strconv.Quote(fake) + "\n" + driver
	cmd := exec.Command(python, append(slices.Clone(pythonFlags), "-c", script)...)
	cmd.Env = cleanEnv
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got struct {
		Real    map[string][]string
		Fake    []string
		Methods []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for m, names := range map[string][]string{
		"functools":   {"update_wrapper", "wraps"},
		"operator":    {"attrgetter", "methodcaller"},
		"string":      {"Formatter"},
		"typing":      {"ForwardRef"},
		"collections": {"UserString"},
		"enum":        {"global_enum"},
	} {
		for _, n := range names {
			if !slices.Contains(got.Real[m], n) {
				t.Errorf("%s.%s not found reflective; found %v", m, n, got.Real[m])
			}
		}
	}
	for m, names := range map[string][]string{
		"collections": {"namedtuple", "Counter", "OrderedDict", "defaultdict"},
		"copy":        {"copy", "deepcopy"},
		"dataclasses": {"asdict", "fields", "make_dataclass", "replace"},
		"datetime":    {"datetime", "date", "time"},
		"enum":        {"Enum", "Flag"},
		"functools":   {"partial", "reduce", "lru_cache", "total_ordering"},
		"json":        {"dumps", "loads", "JSONEncoder"},
		"typing":      {"NamedTuple", "TypedDict", "cast", "Optional"},
		"string":      {"Template", "capwords"},
	} {
		for _, n := range names {
			if slices.Contains(got.Real[m], n) {
				t.Errorf("%s.%s found reflective: a false positive", m, n)
			}
		}
	}
	want := []string{"Stores", "direct", "exports", "exports_through_get", "formats", "passes_it_on", "runs", "through_a_loop", "wraps_it"}
	if !slices.Equal(got.Fake, want) {
		t.Errorf("made-up module: found %v, want %v", got.Fake, want)
	}
}

func pyList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// pythonMinor is python's minor version: 11 for 3.11.
func pythonMinor(t *testing.T) int {
	t.Helper()
	out, err := exec.Command(python, "-I", "-S", "-c", "import sys; print(sys.version_info[1])").Output()
	if err != nil {
		t.Fatalf("%s: %v", python, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("%s: version %q", python, out)
	}
	return n
}

// indent prefixes each line of s.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
