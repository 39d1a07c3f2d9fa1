//go:build unix

package pytool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// guardTool makes a tool of bodies, each the inside of a function case_<i>() (the first
// also as run()), that Check would refuse: these tests call the runner directly, as if
// the checker had missed, to show what the runner's guard (audit hook, import guard,
// finder) refuses on its own.
func guardTool(bodies ...string) string {
	var b strings.Builder
	b.WriteString(`import functools
import typing
import operator

DESCRIPTION = "x"
PARAMS_SCHEMA = {"type": "object", "properties": {}}
CAPABILITIES = {}


def globals_of_typing():
    """The reported path: typing's globals, sys among them, copied into this module's."""
    def f():
        pass
    functools.update_wrapper(f, typing.cast, assigned=(), updated=("__globals__",))
    return f.__globals__


def run():
    return case_0()
`)
	for i, body := range bodies {
		fmt.Fprintf(&b, "\n\ndef case_%d():\n    sys = typing.sys  # an attribute, not an import: the guard does not see it\n%s\n", i, indent(body, "    "))
	}
	return b.String()
}

func TestGuardRefuses(t *testing.T) {
	needPython(t)
	t.Parallel()
	cases := []struct {
		name, body, want string // want: a substring of the failure, or alternatives split by " || "
	}{
		// Imports outside the allowlist, however they are asked for.
		{"import statement", "import os", "shelldon: import of os is not allowed in a tool"},
		{"__import__ of a loaded module", "return __import__('os').getcwd()", "import of os is not allowed"},
		{"__import__ of a new module", "__import__('socket')", "import of socket is not allowed"},
		{"a submodule of a package that is not allowed", "import xml.dom.minidom", "import of xml.dom.minidom is not allowed"},
		{"from an allowed module, a module it holds", "from typing import sys", "typing.sys is the module sys"},
		{"relative import", "from . import x", "relative imports are not allowed"},
		{"importlib.import_module", "return sys.modules['importlib'].import_module('socket')", "import of socket is not allowed"},
		{"importlib.import_module of a built-in module", "return sys.modules['importlib'].import_module('_posixsubprocess')", "import of _posixsubprocess is not allowed"},
		{"import ctypes", "import ctypes", "import of ctypes is not allowed"},
		{"importlib.__import__", "return sys.modules['importlib'].__import__('csv')", "import of csv is not allowed"},

		// The reported path, end to end: it reaches sys.modules["os"], whose calls are refused.
		// (Python 3.8 audits reading __globals__, so the path stops there.)
		{"reported update_wrapper path to os.system", "g = globals_of_typing()\nreturn g['sys'].modules['os'].system('id')", "shelldon: os.system is not allowed in a tool: tools cannot start or signal processes || shelldon: reading .__globals__ is not allowed"},
		{"os.posix_spawn", "os = sys.modules['os']\nreturn os.posix_spawn('/bin/true', ['true'], {})", "os.posix_spawn is not allowed"},
		{"os.fork", "return sys.modules['os'].fork()", "os.fork is not allowed"},
		{"os.execv", "return sys.modules['os'].execv('/bin/true', ['true'])", "os.exec is not allowed"},
		{"os.kill", "os = sys.modules['os']\nreturn os.kill(os.getpid(), 0)", "os.kill is not allowed"},
		{"os.listdir", "return sys.modules['os'].listdir('/')", "os.listdir is not allowed"},
		{"os.remove", "return sys.modules['os'].remove('x')", "os.remove is not allowed"},
		{"os.open for writing", "os = sys.modules['os']\nreturn os.open('x', os.O_WRONLY | os.O_CREAT)", "open('x') is not allowed"},

		// Files.
		{"open /etc/passwd", "return open('/etc/passwd').read()", "shelldon: open('/etc/passwd') is not allowed in a tool: tools cannot read or write files"},
		{"open a file next to the tool", "return open('notes.txt', 'w')", "open('notes.txt') is not allowed"},
		{"write the tool's own file", "return open('guarded.py', 'a')", "open('guarded.py') is not allowed"},
		{"open the results pipe", "return open(3, 'w')", "open(3) is not allowed"},

		// Code built at run time.
		{"compile", "return compile('1 + 1', 'x', 'eval')", "shelldon: compile is not allowed in a tool"},
		{"exec", "exec('x = 1')", "compile is not allowed"},
		{"eval", "return eval('1')", "compile is not allowed"},
		{"get_type_hints evaluates a string annotation", "def f(x: 'int'):\n    pass\nreturn typing.get_type_hints(f)", "exec is not allowed"},
		{"FunctionType from a code object", "return type(run)(run.__code__, {})", "reading .__code__ is not allowed"},

		// Interpreter internals.
		{"sys._getframe", "return sys._getframe().f_back", "sys._getframe is not allowed"},
		{"gi_frame", "g = (i for i in [1])\nreturn g.gi_frame", "reading .gi_frame is not allowed"},
		{"attrgetter on __code__", "return operator.attrgetter('__code__')(run)", "reading .__code__ is not allowed"},
		{"update_wrapper copies __code__", "def g():\n    pass\nfunctools.update_wrapper(g, run, assigned=('__code__',), updated=())", "reading .__code__ is not allowed"},
		{"traceback frame", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    return e.__traceback__.tb_frame", "reading .tb_frame is not allowed"},
		{"import gc", "import gc", "import of gc is not allowed"},
		{"gc.get_objects through a built-in module made by hand", "ns = sys.modules['types'].SimpleNamespace(name='gc')\ngc = sys.modules['_imp'].create_builtin(ns)\nreturn len(gc.get_objects())", "gc.get_objects is not allowed"},
		{"sys.settrace", "sys.settrace(None)", "sys.settrace is not allowed"},
		{"sys.setprofile", "sys.setprofile(None)", "sys.setprofile is not allowed"},
		{"marshal.loads", "return sys.modules['marshal'].loads(b'N')", "marshal.loads is not allowed"},
	}
	if pythonMinor(t) < 9 { // events Python 3.8 does not raise
		cases = slices.DeleteFunc(cases, func(c struct{ name, body, want string }) bool {
			return c.name == "sys.settrace" || c.name == "sys.setprofile" || c.name == "marshal.loads"
		})
	}
	// One test run holds every case, each a test_<i> calling case_<i>: every one must fail
	// with the guard's message (and the run must go on after each).
	var bodies []string
	var test strings.Builder
	for i, tc := range cases {
		bodies = append(bodies, tc.body)
		fmt.Fprintf(&test, "from guarded import case_%d\n\n\ndef test_%d():\n    case_%d()\n\n\n", i, i, i)
	}
	dir := stage(t, "guarded", guardTool(bodies...), test.String())
	rep, err := RunTests(context.Background(), python, dir, "guarded", 30*time.Second, Host{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Error != "" || len(rep.Tests) != len(cases) {
		t.Fatalf("report: %+v", rep)
	}
	for i, tr := range rep.Tests {
		tc := cases[i]
		matches := slices.ContainsFunc(strings.Split(tc.want, " || "), func(w string) bool { return strings.Contains(tr.Message, w) })
		if tr.Name != fmt.Sprintf("test_%d", i) || tr.OK || !matches {
			t.Errorf("%s: %s ok=%v %q; want a failure containing %q", tc.name, tr.Name, tr.OK, tr.Message, tc.want)
		}
	}
}

// TestGuardKeepsItsHook: sys.addaudithook swallows a hook's refusal, so a refused hook
// is simply never added (and the guard's cannot be removed).
func TestGuardKeepsItsHook(t *testing.T) {
	needPython(t)
	t.Parallel()
	body := "seen = []\nsys.addaudithook(lambda *a: seen.append(a))\nsys.audit('shelldon.test')\nreturn len(seen)"
	dir := stage(t, "guarded", guardTool(body), "def test_x():\n    pass\n")
	got, err := Call(context.Background(), python, dir, "guarded", nil, 8*time.Second, Host{})
	if err != nil || got != "0" {
		t.Fatalf("Call = %q, %v; want 0: the tool's hook was not added", got, err)
	}
}

// TestGuardRefusesInTests: the test file runs under the same guard.
func TestGuardRefusesInTests(t *testing.T) {
	needPython(t)
	t.Parallel()
	test := `import typing
from guarded import run


def test_reaches_os():
    typing.sys.modules["os"].system("id")


def test_imports_subprocess():
    import subprocess


def test_opens():
    open("/etc/hostname")
`
	dir := stage(t, "guarded", guardTool("return 1"), test)
	rep, err := RunTests(context.Background(), python, dir, "guarded", 8*time.Second, Host{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"test_reaches_os":         "PermissionError: shelldon: os.system is not allowed in a tool",
		"test_imports_subprocess": "ImportError: shelldon: import of subprocess is not allowed in a tool",
		"test_opens":              "PermissionError: shelldon: open('/etc/hostname') is not allowed in a tool",
	}
	if len(rep.Tests) != len(want) || rep.Passed {
		t.Fatalf("report = %+v, want %d failed tests", rep, len(want))
	}
	for _, tr := range rep.Tests {
		if tr.OK || !strings.Contains(tr.Message, want[tr.Name]) {
			t.Errorf("%s: ok=%v %q, want a failure containing %q", tr.Name, tr.OK, tr.Message, want[tr.Name])
		}
	}
	// A test that imports the tool's module whole, or itself, is only a test file: allowed.
	if strings.Contains(rep.Error, "shelldon") {
		t.Errorf("Error = %q", rep.Error)
	}
}

// everydayTool uses the allowed modules the way tools do, including what they import
// lazily at run time (datetime.strptime imports _strptime, str.encode an encodings
// module, namedtuple and make_dataclass generate code): the guard must let all of it be.
const everydayTool = `import base64
import binascii
import bisect
import calendar
import cmath
import collections
import copy
import dataclasses
import datetime
import decimal
import difflib
import enum
import fractions
import functools
import hashlib
import heapq
import hmac
import html
import html.parser
import itertools
import json
import math
import numbers
import operator
import pprint
import random
import re
import statistics
import string
import struct
import textwrap
import typing
import unicodedata

DESCRIPTION = "Everyday standard library."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
CAPABILITIES = {}


class Point(typing.NamedTuple):
    x: int
    y: int = 0


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Links(html.parser.HTMLParser):
    def reset(self):
        super().reset()
        self.found = []

    def handle_starttag(self, tag, attrs):
        self.found.extend(v for k, v in attrs if k == "href")


def run(text):
    out = {}
    out["json"] = json.loads(json.dumps({"a": [1, 2.5, None]}))
    out["re"] = re.findall(r"(?P<word>[a-z]+)-(\d{2,})", text)
    out["date"] = datetime.datetime.strptime("2024-03-05 10:20", "%Y-%m-%d %H:%M").isoformat()
    out["weekday"] = calendar.day_name[datetime.date(2024, 3, 5).weekday()]
    out["decimal"] = str(decimal.Decimal("1.10") * 3)
    out["fraction"] = str(fractions.Fraction(3, 4) + fractions.Fraction(1, 4))
    out["stats"] = [statistics.mean([1, 2, 3, 4]), statistics.median([3, 1, 2])]
    out["wrap"] = textwrap.wrap("the quick brown fox jumps", 10)
    out["unicode"] = unicodedata.name("é")
    counts = collections.Counter(text.split())
    Pair = collections.namedtuple("Pair", "left right")
    out["collections"] = [counts.most_common(1), Pair(1, 2)._asdict(), Point(3)._replace(y=4)]
    out["itertools"] = list(itertools.islice(itertools.cycle("ab"), 5))
    out["math"] = [math.sqrt(16), math.comb(5, 2), abs(cmath.sqrt(-4))]
    rng = random.Random(42)
    out["random"] = rng.randint(1, 6) in range(1, 7)
    out["enum"] = [Color.RED.name, enum.Enum("Mood", "HAPPY SAD").SAD.value]
    Item = dataclasses.make_dataclass("Item", [("name", str), ("qty", int, dataclasses.field(default=1))])
    out["dataclass"] = dataclasses.asdict(Item("pen"))
    out["copy"] = copy.deepcopy({"k": [1, [2]]})
    out["functools"] = [functools.reduce(operator.add, [1, 2, 3]), functools.partial(max, 0)(-1)]
    out["cache"] = functools.lru_cache(maxsize=8)(len)("abc")
    out["hash"] = [hashlib.sha256(b"x").hexdigest()[:8], hmac.new(b"k", b"m", "sha256").hexdigest()[:8]]
    out["b64"] = [base64.b64encode(b"hi").decode(), binascii.hexlify(b"hi").decode()]
    out["struct"] = struct.unpack("<I", struct.pack("<I", 7))
    out["heap"] = heapq.nsmallest(2, [5, 1, 3])
    out["bisect"] = bisect.bisect([1, 3, 5], 4)
    out["diff"] = list(difflib.unified_diff(["a"], ["b"], lineterm=""))
    out["html"] = html.unescape("&lt;b&gt;")
    parser = Links()
    parser.feed('<a href="https://example.com/x">x</a>')
    out["links"] = parser.found
    out["template"] = string.Template("$who likes $what").substitute(who="tim", what="kung pao")
    out["format"] = "{} and {:>4}".format("a", "b") + f"{3.14159:.2f}"
    out["pprint"] = pprint.pformat({"b": 1, "a": [1, 2]})
    out["idna"] = "bücher.example".encode("idna").decode()
    out["utf16"] = len("hé".encode("utf-16"))
    out["number"] = isinstance(3, numbers.Integral)
    out["forward"] = str(typing.Optional["Point"])
    out["itemgetter"] = operator.itemgetter(1)([0, 9])
    try:
        json.loads("{")
    except json.JSONDecodeError as e:
        out["error"] = e.msg
    return out
`

func TestGuardAllowsEverydayTools(t *testing.T) {
	needPython(t)
	t.Parallel()
	test := `from everyday import run


def test_runs():
    out = run("alpha-12 beta-345")
    assert out["re"] == [("alpha", "12"), ("beta", "345")]
    assert out["date"] == "2024-03-05T10:20:00"
    assert out["decimal"] == "3.30"
    assert out["idna"] == "xn--bcher-kva.example"
    assert out["dataclass"] == {"name": "pen", "qty": 1}
    assert out["enum"] == ["RED", 2]
`
	if _, err := Check(context.Background(), python, "everyday", []byte(everydayTool), []byte(test)); err != nil {
		t.Fatalf("Check: %v", err)
	}
	dir := stage(t, "everyday", everydayTool, test)
	rep, err := RunTests(context.Background(), python, dir, "everyday", 15*time.Second, Host{})
	if err != nil || !rep.Passed {
		t.Fatalf("RunTests = %+v, %v", rep, err)
	}
	got, err := Call(context.Background(), python, dir, "everyday", json.RawMessage(`{"text": "a b a"}`), 15*time.Second, Host{})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(got), &out); err != nil || out["weekday"] != "Tuesday" || out["error"] != "Expecting property name enclosed in double quotes" {
		t.Fatalf("Call = %s, %v", got, err)
	}
	// An error inside an allowed module is described as usual: the guard does not get in
	// the way of reading the standard library's sources for the traceback.
	bad := strings.Replace(everydayTool, `json.loads("{")`, `json.loads(text)`, 1)
	bad = strings.Replace(bad, "except json.JSONDecodeError as e:", "except KeyError as e:", 1)
	dir = stage(t, "everyday", bad, test)
	_, err = Call(context.Background(), python, dir, "everyday", json.RawMessage(`{"text": "{"}`), 15*time.Second, Host{})
	var te *ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Message, "JSONDecodeError: Expecting property name") || !strings.Contains(te.Message, "at everyday.py:") {
		t.Fatalf("Call = %v, want the JSONDecodeError described", err)
	}
}
