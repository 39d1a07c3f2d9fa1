//go:build unix

package pytool

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// equivDriver runs after the checker's code, in one interpreter with the modules the
// checker no longer imports (re, ast, symtable, string, math), and compares each stand-in
// with what it replaced, on hand-picked cases and on generated ones. It prints one line
// per difference, then "checked N".
const equivDriver = `
import ast as real_ast
import math
import random
import re
import string
import symtable as real_symtable

rng = random.Random(15)
diffs = []
n = 0


def same(what, case, got, want):
    global n
    n += 1
    if got != want:
        diffs.append("%s %r: got %r, want %r" % (what, case, got, want))


def outcome(f, *args):
    try:
        return ("ok", repr(f(*args)))
    except Exception as e:
        return ("raises", type(e).__name__)


def gen(parts, most):
    return "".join(rng.choice(parts) for _ in range(rng.randint(0, most)))


# coding_cookie: the coding cookie regular expression, group 1.
COOKIE_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
lines = [b"# -*- coding: latin-1 -*-", b"#coding=utf8", b"  \t#x coding: ", b"# coding:  ", b"# codingcoding: utf-8",
         b"#coding:\tutf_8", b"x = 1 # coding: latin-1", b"\x0c# coding: ascii", b"# coding: utf-8\r", b"",
         b"#  vim: set fileencoding=utf-8 :", b"# coding: \xc3\xa9", b"#coding:", b"# coding=:x", b"#coding: a b"]
parts = [b"#", b" ", b"\t", b"\x0c", b"coding", b"cod", b"ing", b":", b"=", b"utf-8", b"x", b"\r", b"-", b".",
         b"_", b"\xc3\xa9", b"9"]
lines += [b"".join(rng.choice(parts) for _ in range(rng.randint(0, 10))) for _ in range(5000)]
for line in lines:
    m = COOKIE_RE.match(line)
    same("coding_cookie", line, coding_cookie(line), m.group(1) if m else None)

# refused_word: the refused-words regular expression, its first match.
WORDS_RE = re.compile(r"(?<![A-Za-z0-9_])(%s)(?![A-Za-z0-9_])" % "|".join(
    sorted(INTERNAL_ATTRIBUTES - {"mro"}, key=len, reverse=True)))
words = sorted(INTERNAL_ATTRIBUTES) + ["mro", "a", "_", "1", " ", ".", "\u00e9", "\n", "f_", "code", "__"]
for text in ["f_globals", "x.f_globals", "af_globals", "f_globals1", "mro", "co_code tb_next", "\u00e9f_back\u00e9", ""] + [
        gen(words, 6) for _ in range(5000)]:
    m = WORDS_RE.search(text)
    same("refused_word", text, refused_word(text), m.group(1) if m else None)

# is_constant_name and is_hostname: their regular expressions.
CONST_RE = re.compile(r"[A-Z][A-Z0-9_]*\Z")
LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
HOST_RE = re.compile(r"%s(?:\.%s)+\Z" % (LABEL, LABEL))
chars = ["A", "Z", "a", "z", "0", "9", "_", "-", ".", "\n", "\u00c9", " ", "x" * 30]
for s in ["A", "AB_1", "A\n", "_A", "", "api.example.com", "a.b", "a-.b", "-a.b", "a" * 63 + ".b", "a" * 64 + ".b",
          "a..b", "a.b.", "a.b\n", "\u00e9.com"] + [gen(chars, 8) for _ in range(5000)]:
    same("is_constant_name", s, is_constant_name(s), bool(CONST_RE.match(s)))
    same("is_hostname", s, is_hostname(s), bool(HOST_RE.match(s)))

# _string.formatter_parser: string.Formatter().parse.
for s in ["{}", "{0.x}", "{a[1]}", "{:{}}", "{{", "}", "{", "a{b!r:>{c}}d", "{0:{1:{2}}}"]:
    same("formatter_parser", s, outcome(lambda t: list(_string.formatter_parser(t)), s),
         outcome(lambda t: list(string.Formatter().parse(t)), s))

# ast: parse, walk, NodeVisitor, literal_eval and dump_contains, on the checker's own source,
# a few standard-library modules and made-up expressions.
sources = [open(real_ast.__file__).read(), open(real_symtable.__file__).read(), open(re.__file__).read(),
           open(string.__file__).read()]
exprs = ["1", "-1", "+1.5", "1+2j", "-1-2j", "1+2", "(1, [2, {3: 4}], {5}, set())", "set(x)", "{**a}", "x",
         "b'x'", "'a' 'b'", "None", "True", "--1", "-(1)", "1j+1", "f()", "[1, 2,]", "{1: 2, 3: f()}",
         "__name__", "x.__name__", "'a__name__b'", "f(__name__=1)", "__name__ == '__main__'", "b'__name__'",
         "[x for x in y]", "lambda: 0", "(yield)", "{'a': [1, (2, None)]}", "-True", "1 - 2j"]
sources += ["X = %s\nif %s:\n    pass\n" % (e, e) for e in exprs if e != "(yield)"]
for src in sources:
    mine, real = ast.parse(src, "<s>"), real_ast.parse(src, "<s>")
    same("parse", src[:40], real_ast.dump(mine, include_attributes=True), real_ast.dump(real, include_attributes=True))
    order = [(type(x).__name__, getattr(x, "lineno", 0), getattr(x, "col_offset", 0)) for x in ast.walk(mine)]
    same("walk", src[:40], order, [(type(x).__name__, getattr(x, "lineno", 0), getattr(x, "col_offset", 0))
                                   for x in real_ast.walk(real)])
    seen = []

    class Mine(ast.NodeVisitor):
        def visit_Name(self, node):
            seen.append(node.id)
            self.generic_visit(node)

    class Real(real_ast.NodeVisitor):
        def visit_Name(self, node):
            seen.append(node.id)
            self.generic_visit(node)

    Mine().visit(mine)
    got, seen[:] = seen[:], []
    Real().visit(real)
    same("NodeVisitor", src[:40], got, seen)
    for node in ast.walk(mine):
        if isinstance(node, ast.expr):
            same("literal_eval", real_ast.dump(node)[:60], outcome(ast.literal_eval, node),
                 outcome(real_ast.literal_eval, node))
            same("dump_contains", real_ast.dump(node)[:60], ast.dump_contains(node, "__name__"),
                 "__name__" in real_ast.dump(node))
for e in exprs:
    same("literal_eval str", e, outcome(ast.literal_eval, e), outcome(real_ast.literal_eval, e))

# symtable: every table, in order, and what check_tree.py asks of each symbol.
def tables(top):
    out, todo = [], [top]
    for t in todo:
        todo.extend(t.get_children())
        syms = [(s.get_name(), s.is_referenced(), s.is_global(), s.is_declared_global(), s.is_imported(),
                 s.is_assigned(), s.is_namespace()) for s in t.get_symbols()]
        out.append((t.get_lineno(), syms))
    return out


for src in sources + ["def top():\n    x = 1\n    def f():\n        global g\n        g = x\n    return f\n",
                      "import a.b as c\nfrom d import e\nclass K:\n    y = z\n    def m(self):\n        return y\n"]:
    same("symtable", src[:40], tables(symtable.symtable(src, "<s>", "exec")),
         tables(real_symtable.symtable(src, "<s>", "exec")))

# json_problem's finiteness: math.isfinite.
for v in [0.0, -0.0, 1e308, float("inf"), float("-inf"), float("nan"), 5e-324]:
    same("finite", v, json_problem(v, "x") is None, math.isfinite(v))

for d in diffs[:50]:
    print(d)
print("checked %d" % n)
`

// TestCheckerStandInsMatch: what the checker uses in place of re, ast, symtable, string
// and math (so that a gate imports none of them) gives what those give, on hand-picked
// and generated cases: the checks are exactly as strict as with the modules.
func TestCheckerStandInsMatch(t *testing.T) {
	needPython(t)
	t.Parallel()
	script := "__name__ = 'shelldon_check'  # not main: the checker must not read a request\n" +
		checkerScript() + "\n" + equivDriver
	cmd := exec.Command(python, append(slices.Clone(pythonFlags), "-c", script)...)
	cmd.Env = cleanEnv
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := strings.TrimSpace(string(out))
	lines := strings.Split(text, "\n")
	last := lines[len(lines)-1]
	if len(lines) > 1 || !strings.HasPrefix(last, "checked ") || last == "checked 0" {
		t.Errorf("the stand-ins differ from the modules:\n%s", text)
	}
	t.Log(last)
}
