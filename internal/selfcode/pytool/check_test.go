package pytool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// header is a well-formed word_count tool; hostile cases append to it.
const header = `DESCRIPTION = "Count the words in a text."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
CAPABILITIES = {}


def run(text):
    return str(len(text.split()))
`

const goodTest = `from word_count import run


def test_counts():
    assert run("a b") == "2"
`

// helper wraps a statement in a function body, where calls are allowed: the rule it
// breaks is then the one under test, not "nothing runs at import".
func helper(stmt string) string { return header + "\n\ndef helper(x):\n    " + stmt + "\n" }

func TestCheckAccepts(t *testing.T) {
	needPython(t)
	t.Parallel()
	for _, tc := range []struct {
		name, tool, code, test string
		want                   Meta
	}{{
		name: "word count example", tool: "word_count",
		code: readTestdata(t, "word_count.py"), test: readTestdata(t, "test_word_count.py"),
		want: Meta{
			Description:  "Count the words in a text.",
			ParamsSchema: json.RawMessage(`{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}`),
			Capabilities: map[string][]string{},
		},
	}, {
		name: "usd to inr with decimal", tool: "usd_inr",
		code: readTestdata(t, "usd_inr.py"), test: readTestdata(t, "test_usd_inr.py"),
		want: Meta{
			Description: "Convert an amount in US dollars to Indian rupees (fixed rate, updated by the owner).",
			ParamsSchema: json.RawMessage(`{"type": "object", "properties": {
				"amount": {"type": "string", "description": "USD amount, e.g. \"12.50\""},
				"rate": {"type": "string", "description": "INR per USD; defaults to the fixed rate"}},
				"required": ["amount"]}`),
			Capabilities: map[string][]string{},
		},
	}, {
		name: "http tool with a class, types and keyword-only defaults", tool: "weather",
		code: `"""Weather."""
import json
import typing
from shelldon_host import http_get

DESCRIPTION = "Today's forecast for a place."
PARAMS_SCHEMA = {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}, "days": {"type": "integer", "minimum": 1}}, "required": ["lat", "lon"]}
CAPABILITIES = {"http": ["api.open-meteo.com", "xn--bcher-kva.example"]}
UNITS: str = "metric"


class Forecast:
    """One forecast."""
    unit = "C"
    high: float = 0.0

    def __init__(self, high: "float", low: typing.Optional[float] = None) -> None:
        self.high, self.low = high, low

    def __str__(self):
        return "high %s%s" % (self.high, self.unit)


def run(lat, lon, *, days=1):
    status, body = http_get("https://api.open-meteo.com/v1/forecast?latitude=%s&longitude=%s" % (lat, lon))
    if status != 200:
        raise ValueError("status %d" % status)
    data = json.loads(body)
    key = lambda d, k="daily": d[k]
    return str(Forecast(max(key(data)["temperature_2m_max"][:days])))
`,
		test: `import json
from weather import Forecast


def test_str():
    assert str(Forecast(3)) == "high 3C"
    assert json.dumps([1]) == "[1]"
`,
		want: Meta{
			Description:  "Today's forecast for a place.",
			ParamsSchema: json.RawMessage(`{"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}, "days": {"type": "integer", "minimum": 1}}, "required": ["lat", "lon"]}`),
			Capabilities: map[string][]string{"http": {"api.open-meteo.com", "xn--bcher-kva.example"}},
		},
	}, {
		name: "everyday standard library use", tool: "top_words",
		code: `import collections.abc
import re
from collections import Counter, abc
from itertools import islice

DESCRIPTION = "The most common words in a text."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}, "n": {"type": "integer"}}, "required": ["text"]}
CAPABILITIES = {}
WORD = r"[a-z']+"


def words(text: str) -> "abc.Iterator[str]":
    pattern = re.compile(WORD, re.IGNORECASE)
    for m in pattern.finditer(text):
        yield m.group(0).lower()


def run(text, n=3):
    counts = Counter(words(text))
    assert isinstance(counts, collections.abc.Mapping)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join("%s=%d" % kv for kv in islice(top, n))
`,
		test: "from top_words import run\n\n\ndef test_top():\n    assert run(\"b a b\", n=1) == \"b=2\"\n",
		want: Meta{
			Description:  "The most common words in a text.",
			ParamsSchema: json.RawMessage(`{"type": "object", "properties": {"text": {"type": "string"}, "n": {"type": "integer"}}, "required": ["text"]}`),
			Capabilities: map[string][]string{},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Check(context.Background(), python, tc.tool, []byte(tc.code), []byte(tc.test))
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if !jsonEqual(t, got.ParamsSchema, tc.want.ParamsSchema) {
				t.Errorf("ParamsSchema = %s, want %s", got.ParamsSchema, tc.want.ParamsSchema)
			}
			got.ParamsSchema, tc.want.ParamsSchema = nil, nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Meta (-want +got):\n%s", diff)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return cmp.Equal(x, y)
}

func TestCheckRefuses(t *testing.T) {
	needPython(t)
	t.Parallel()
	const tool, testFile = "word_count.py", "test_word_count.py"
	for _, tc := range []struct {
		name       string
		code, test string // test defaults to goodTest
		file       string // where the problem is; tool by default
		want       string // a substring of one problem's message
	}{
		// Imports.
		{name: "import os", code: header + "import os\n", want: "import os: not allowed"},
		{name: "import subprocess", code: header + "import subprocess\n", want: "import subprocess: not allowed"},
		{name: "from os import system", code: header + "from os import system\n", want: "from os import ...: not allowed"},
		{name: "import socket", code: header + "import socket\n", want: "import socket: not allowed"},
		{name: "import urllib.request", code: header + "import urllib.request\n", want: "import urllib.request: not allowed"},
		{name: "import importlib", code: helper("import importlib; importlib.import_module('os')"), want: "import importlib: not allowed"},
		{name: "star import", code: header + "from math import *\n", want: "from math import *"},
		{name: "relative import", code: header + "from . import word_count\n", want: "relative imports are not allowed"},
		{name: "import in a function", code: helper("import os"), want: "import os: not allowed"},
		{name: "module reached through a module", code: helper("import typing; return typing.sys.modules"), want: "typing.sys is the module sys"},
		{name: "builtins reached through enum", code: header + "import enum\n" + helper("return enum.bltns.open")[len(header):], want: "enum.bltns is the module builtins"},
		{name: "module imported from a module", code: header + "from json import codecs\n", want: "json.codecs is the module codecs"},
		{name: "private module attribute", code: helper("import random; return random._os"), want: "random._os is private"},
		{name: "module stored in a variable", code: helper("import json; m = json; return m"), want: "the module json can only be used as json.name"},
		{name: "module attribute assigned", code: helper("import json; json.dumps = str"), want: "module attributes cannot be assigned"},
		{name: "module rebound", code: header + "import json\n" + helper("json = 1")[len(header):], want: "rebinds the imported module json"},
		{name: "host function not provided", code: header + "from shelldon_host import system\n", want: "shelldon_host has no system"},
		{name: "host without the http capability", code: header + "import shelldon_host\n", want: "CAPABILITIES does not declare \"http\""},

		// Dynamic code and reflection.
		{name: "__import__", code: helper("__import__('os')"), want: "__import__: dunder names are not allowed"},
		{name: "exec", code: helper("exec('import os')"), want: "exec is not allowed"},
		{name: "eval", code: helper("return eval(x)"), want: "eval is not allowed"},
		{name: "compile", code: helper("return compile(x, 'f', 'exec')"), want: "compile is not allowed"},
		{name: "open", code: helper("return open('/etc/passwd').read()"), want: "open is not allowed"},
		{name: "getattr", code: helper("return getattr(x, '__globals__')"), want: "getattr is not allowed"},
		{name: "getattr passed as a value", code: helper("return list(map(getattr, [x], ['y']))"), want: "getattr is not allowed"},
		{name: "globals", code: helper("return globals()"), want: "globals is not allowed"},
		{name: "subclasses walk", code: helper("return ().__class__.__bases__[0].__subclasses__()"), want: "__class__: dunder names are not allowed"},
		{name: "__dict__", code: helper("return x.__dict__"), want: "__dict__: dunder names are not allowed"},
		{name: "__builtins__", code: helper("return __builtins__"), want: "__builtins__: dunder names"},
		{name: "generator frame", code: helper("g = (i for i in x); return g.gi_frame.f_globals"), want: ".gi_frame is not allowed"},
		{name: "attrgetter", code: helper("import operator; return operator.attrgetter('__class__')(x)"), want: "operator.attrgetter is not allowed"},
		{name: "formatter get_field", code: helper("import string; return string.Formatter().get_field('0.__class__', [x], {})"), want: "string.Formatter is not allowed"},
		{name: "get_type_hints", code: header + "from typing import get_type_hints\n", want: "typing.get_type_hints is not allowed"},
		{name: "match on a dunder attribute", code: helper("match x:\n        case object(__class__=c):\n            return c"), want: "__class__: dunder names"},
		{name: "dunder method outside the list", code: header + "\nclass A:\n    def __init_subclass__(cls):\n        pass\n", want: "__init_subclass__: dunder names"},
		{name: "super(A, self).__init__", code: header + "\nclass A(ValueError):\n    def __init__(self):\n        super(A, self).__init__('x')\n", want: "__init__: dunder names"},
		{name: "async", code: header + "\nasync def helper():\n    pass\n", want: "async code is not supported"},

		// Characters and encodings.
		{name: "fullwidth import os", code: header + "import ｏｓ\n", want: "non-ASCII identifier 'ｏｓ' (Python reads it as 'os')"},
		{name: "fullwidth eval", code: helper("return ｅｖａｌ(x)"), want: "non-ASCII identifier 'ｅｖａｌ'"},
		{name: "fullwidth keyword", code: header + "ｉｍｐｏｒｔ os\n", want: "ｉｍｐｏｒｔ"},
		{name: "fullwidth name in an f-string", code: helper(`return f"{ｘ}"`), want: "non-ASCII character inside an f-string expression"},
		{name: "non-ASCII identifier", code: helper("café = 1"), want: "non-ASCII identifier 'café'"},
		{name: "utf-7 cookie", code: "# -*- coding: utf-7 -*-\n" + header + "+AAo-import os\n", want: "coding cookie 'utf-7'"},
		{name: "latin-1 cookie on line 2", code: "#!/usr/bin/env python3\n# vim: set fileencoding=latin-1 :\n" + header, want: "coding cookie 'latin-1'"},
		{name: "byte order mark", code: "\ufeff" + header, want: "byte order mark"},
		{name: "invalid utf-8", code: header + "# \xff\n", want: "not valid UTF-8"},
		{name: "zero-width in an identifier", code: helper("te\u200bxt = x"), want: "zero-width character U+200B"},
		{name: "bidi override in a string", code: helper("return \"abc\u202e\" + x"), want: "bidirectional control character U+202E"},
		{name: "bidi isolate in a comment", code: header + "# \u2066admin\u2069\n", want: "bidirectional control character U+2066"},
		{name: "hangul filler", code: helper("a\u3164 = 1"), want: "invisible filler character U+3164"},
		{name: "form feed", code: header + "\f\n", want: "control character U+000C"},
		{name: "NUL byte", code: header + "\x00\n", want: "control character U+0000"},

		// Nothing runs at import.
		{name: "top-level print", code: header + "print('hi')\n", want: "top-level call runs at import"},
		{name: "top-level for", code: header + "for i in range(3):\n    pass\n", want: "top-level for loop runs at import"},
		{name: "top-level try", code: header + "try:\n    pass\nexcept Exception:\n    pass\n", want: "top-level try runs at import"},
		{name: "main guard", code: header + "if __name__ == '__main__':\n    run('x')\n", want: "remove the if __name__"},
		{name: "lowercase top-level assignment", code: header + "rate = 83\n", want: "UPPERCASE_NAME = literal"},
		{name: "constant from a call", code: header + "RATE = float('83')\n", want: "RATE must be a literal"},
		{name: "decorator", code: header + "\ndef deco(f):\n    return f\n\n\n@deco\ndef helper():\n    pass\n", want: "decorators are not allowed"},
		{name: "decorator in a class", code: header + "\nclass A:\n    @staticmethod\n    def f():\n        pass\n", want: "decorators are not allowed"},
		{name: "default runs code", code: header + "\ndef helper(x=__import__(\"os\")):\n    pass\n", want: "default values must be literals"},
		{name: "annotation runs code", code: header + "\ndef helper(x: print(1)):\n    pass\n", want: "annotations and bases are evaluated at import"},
		{name: "string annotation hides code", code: header + "\ndef helper(x: \"__import__('os')\"):\n    pass\n", want: "__import__: dunder names"},
		{name: "class body call", code: header + "\nclass A:\n    X = 1\n    print(X)\n", want: "a class body runs at import"},
		{name: "metaclass", code: header + "\nclass A(metaclass=type):\n    pass\n", want: "class keywords"},
		{name: "shadows a built-in", code: header + "\ndef len(x):\n    return 0\n", want: "len shadows the built-in len"},
		{name: "run twice", code: header + "\ndef run(text):\n    return text\n", want: "run is defined twice"},
		{name: "syntax error", code: header + "def broken(:\n", want: "SyntaxError"},

		// Conventions.
		{name: "no DESCRIPTION", code: strings.Replace(header, `DESCRIPTION = "Count the words in a text."`, "", 1), want: "DESCRIPTION is missing"},
		{name: "empty DESCRIPTION", code: strings.Replace(header, `"Count the words in a text."`, `"  "`, 1), want: "DESCRIPTION is empty"},
		{name: "DESCRIPTION not a literal", code: strings.Replace(header, `"Count the words in a text."`, `"a" + "b"`, 1), want: "DESCRIPTION must be a literal"},
		{name: "no run", code: strings.Replace(header, "def run(text):", "def walk(text):", 1), want: "def run(...) is missing"},
		{name: "schema type not object", code: strings.Replace(header, `{"type": "object",`, `{"type": "array",`, 1), want: `must have "type": "object"`},
		{name: "schema property not a parameter", code: strings.Replace(header, "def run(text):", "def run(words):", 1), want: "run's parameter 'words' is not in PARAMS_SCHEMA"},
		{name: "parameter without default not required", code: strings.Replace(header, `, "required": ["text"]`, "", 1), want: "has no default, so PARAMS_SCHEMA[\"required\"] must list it"},
		{name: "parameter with default required", code: strings.Replace(header, "def run(text):", "def run(text=''):", 1), want: "has a default, so PARAMS_SCHEMA[\"required\"] must not list it"},
		{name: "run with **kwargs", code: strings.Replace(header, "def run(text):", "def run(text, **kw):", 1), want: "no /, *args or **kwargs"},
		{name: "schema not JSON", code: strings.Replace(header, `"required": ["text"]`, `"required": ("text",)`, 1), want: "a tuple is not JSON"},
		{name: "schema invalid JSON Schema", code: strings.Replace(header, `{"type": "string"}`, `{"type": "string", "pattern": "("}`, 1), want: "not a valid JSON Schema"},
		{name: "unknown capability", code: strings.Replace(header, "CAPABILITIES = {}", `CAPABILITIES = {"fs": ["/"]}`, 1), want: "unknown capability 'fs'"},
		{name: "IP host", code: strings.Replace(header, "CAPABILITIES = {}", `CAPABILITIES = {"http": ["10.0.0.1"]}`, 1), want: "IP addresses are not allowed"},
		{name: "host with port", code: strings.Replace(header, "CAPABILITIES = {}", `CAPABILITIES = {"http": ["example.com:8080"]}`, 1), want: "no scheme, port"},
		{name: "wildcard host", code: strings.Replace(header, "CAPABILITIES = {}", `CAPABILITIES = {"http": ["*.example.com"]}`, 1), want: "wildcards"},
		{name: "uppercase host", code: strings.Replace(header, "CAPABILITIES = {}", `CAPABILITIES = {"http": ["API.example.com"]}`, 1), want: "lowercase"},
		{name: "single-label host", code: strings.Replace(header, "CAPABILITIES = {}", `CAPABILITIES = {"http": ["localhost"]}`, 1), want: "not a DNS hostname"},
		{name: "too many hosts", code: strings.Replace(header, "CAPABILITIES = {}", `CAPABILITIES = {"http": [`+manyHosts(21)+`]}`, 1), want: "at most 20"},

		// The test file.
		{name: "test imports os", code: header, test: "import os\n" + goodTest, file: testFile, want: "import os: not allowed"},
		{name: "test without tests", code: header, test: "from word_count import run\n", file: testFile, want: "no tests"},
		{name: "test with a fixture parameter", code: header, test: "def test_x(tmp_path):\n    assert tmp_path\n", file: testFile, want: "test functions take none"},
		{name: "test imports what the tool does not define", code: header, test: "from word_count import os\n" + goodTest[len("from word_count import run\n"):], file: testFile, want: "word_count.py defines no top-level os"},
		{name: "test imports the tool module", code: header, test: "import word_count\n\ndef test_x():\n    assert word_count.run('a') == '1'\n", file: testFile, want: "from word_count import run"},
		{name: "test runs code at import", code: header, test: goodTest + "print(run('a'))\n", file: testFile, want: "top-level call runs at import"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			test := tc.test
			if test == "" {
				test = goodTest
			}
			file := tc.file
			if file == "" {
				file = tool
			}
			_, err := checkedWithCache(t, "word_count", []byte(tc.code), []byte(test))
			var ce *CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("Check = %v, want a *CheckError", err)
			}
			for _, p := range ce.Problems {
				if p.File == file && strings.Contains(p.Message, tc.want) && p.Line > 0 && p.Col > 0 {
					return
				}
			}
			t.Errorf("no problem in %s containing %q; got:\n%v", file, tc.want, err)
		})
	}
}

func manyHosts(n int) string {
	hosts := make([]string, n)
	for i := range hosts {
		hosts[i] = `"h` + strings.Repeat("x", i) + `.example.com"`
	}
	return strings.Join(hosts, ", ")
}

func TestCheckPositions(t *testing.T) {
	needPython(t)
	t.Parallel()
	code := header + "\n\ndef helper(x):\n    return \"é\" + eval(x)\n"
	_, err := Check(context.Background(), python, "word_count", []byte(code), []byte(goodTest))
	want := "word_count.py:11:18: eval is not allowed: it runs code from a string"
	if err == nil || err.Error() != want {
		t.Errorf("Check = %v, want exactly %q (columns in characters, not bytes)", err, want)
	}
}

func TestCheckName(t *testing.T) {
	needPython(t)
	t.Parallel()
	for _, tc := range []struct{ name, want string }{
		{"Bad-Name", "invalid tool name"},
		{"../x", "invalid tool name"},
		{"", "invalid tool name"},
		{"json", "would shadow a module"},
		{"list", "is a Python built-in"},
		{"class", "is a Python keyword"},
		{"test_x", "would shadow a module"},
		{"shelldon_host", "would shadow a module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			test := strings.ReplaceAll(goodTest, "word_count", tc.name)
			_, err := Check(context.Background(), python, tc.name, []byte(header), []byte(test))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check(%q) = %v, want %q", tc.name, err, tc.want)
			}
		})
	}
}

// TestCheckNeverBreaks feeds the checker garbage: every input gets a verdict, never an
// ErrChecker.
func TestCheckNeverBreaks(t *testing.T) {
	needPython(t)
	t.Parallel()
	for _, tc := range []struct{ name, code string }{
		{"empty", ""},
		{"binary", "\x89PNG\r\n\x1a\n\x00\x00"},
		{"deep parentheses", strings.Repeat("(", 5000)},
		{"long chain", "X = " + strings.Repeat("1+", 30000) + "1\n"},
		{"deep nesting in a function", "def f():\n    return " + strings.Repeat("[", 150) + strings.Repeat("]", 150) + "\n"},
		{"oversized", strings.Repeat("#", MaxSource+1)},
		{"lone surrogate bytes", "X = '\xed\xa0\x80'\n"},
		{"unknown cookie", "# coding: no-such-codec\n"},
		{"tabs and spaces", "def run(text):\n\treturn 1\n        return 2\n"},
		{"nonlocal at the top level", header + "nonlocal x\n"},
		{"a bad format string", helper(`return "{0:{".format(x)`)},
		{"a deep format spec", helper(`return "{:{:{:{:{}}}}}".format(1, 2, 3, 4, 5)`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Check(context.Background(), python, "word_count", []byte(tc.code), []byte(goodTest))
			var ce *CheckError
			if !errors.As(err, &ce) {
				t.Errorf("Check = %v, want a *CheckError", err)
			}
		})
	}
}

func TestCheckerFailure(t *testing.T) {
	t.Parallel()
	_, err := Check(context.Background(), "/nonexistent/python3", "word_count", []byte(header), []byte(goodTest))
	if !errors.Is(err, ErrChecker) {
		t.Errorf("Check with a missing python = %v, want ErrChecker", err)
	}
	_, err = Check(context.Background(), "/bin/echo", "word_count", []byte(header), []byte(goodTest))
	if !errors.Is(err, ErrChecker) {
		t.Errorf("Check with a python that prints something else = %v, want ErrChecker", err)
	}
}

// FuzzCheck: whatever the source, the checker answers (a verdict), never breaks.
func FuzzCheck(f *testing.F) {
	if _, err := os.Stat(python); err != nil {
		f.Skipf("%s is missing: %v", python, err)
	}
	f.Add([]byte(header))
	f.Add([]byte("import os\n"))
	f.Add([]byte("# coding: utf-7\n+AAo-import os\n"))
	f.Add([]byte("import functools\nimport typing\n\n\ndef run(f):\n    functools.update_wrapper(f, typing.cast, (), (\"__globals__\",))\n    return sys\n"))
	f.Add([]byte("def run(f):\n    return \"{0.__globals__}\".format(f), \"{0:{1}}\".format(f, \"{\")\n"))
	f.Add([]byte("nonlocal x\n"))
	f.Add([]byte("class K:\n    def m(self):\n        return undefined_name\n"))
	f.Fuzz(func(t *testing.T, code []byte) {
		_, err := Check(context.Background(), python, "word_count", code, []byte(goodTest))
		if errors.Is(err, ErrChecker) {
			t.Fatalf("checker broke on %q: %v", code, err)
		}
	})
}
