"""The static gate for a shelldon Python tool, part 1 of 4: the allowlist, and each file's
bytes, characters and tokens. See the pytool package doc; the Go side runs the four
parts concatenated, as one script (check_source.py, with check_ast.py at its head,
check_reflect.py, check_tree.py, check_meta.py).

Nothing here imports or runs the sources it checks. Each file is read as raw bytes,
exactly as Python would read it, parsed with ast, tokenized, and walked.

The checker imports only built-in modules and the few small ones below, no re, json,
enum, functools or collections: a gate pays for every module imported here, and a tool
that imports none of them should not. What needs more is imported where it is needed: the
tokenizer for a file with non-ASCII bytes, unicodedata for a character outside ASCII,
json for the checker run as a script (Check).
"""

import _string
import binascii
import builtins
import importlib
import io
import keyword
import sys
import types

# The runner's own imports, so that the module graph resolved below is the one a tool
# sees at run time (importing a submodule adds an attribute to its package).
import os  # noqa: F401

MAX_SOURCE = 64 << 10
MAX_PROBLEMS = 50

class Modules:
    """The allowed modules by name. Membership is by name; a module is imported here, into
    the checker, the first time it is looked up, to resolve module.attr against the real
    module. Importing all of them up front cost more than the rest of the check; a file
    can only name the ones it imports. A package comes with every allowed submodule of it
    (html with html.entities and html.parser), so a package's attributes are the same
    whichever of them a file imports."""

    def __init__(self, names=()):
        self.names = frozenset(names)
        self.loaded = {}

    def __contains__(self, name):
        return name in self.names

    def __getitem__(self, name):
        if name not in self.names:
            raise KeyError(name)
        if name not in self.loaded:
            top = name.split(".")[0]
            for n in sorted(self.names):  # a package before its submodules
                if n == top or n.startswith(top + "."):
                    self.loaded[n] = importlib.import_module(n)
        return self.loaded[name]

    def get(self, name, default=None):
        return self[name] if name in self.names else default


# The pure standard-library modules a tool may import: the Go side sends the list (its
# AllowedModules) with each request; load_modules makes them the table above.
ALLOWED_MODULES = ()
MODULES = Modules()


def load_modules(names):
    global ALLOWED_MODULES, MODULES
    ALLOWED_MODULES = tuple(names)
    MODULES = Modules(names)


# The host module the runner injects; its functions fail closed unless granted.
HOST_MODULE = "shelldon_host"
HOST_FUNCTIONS = ("http_get",)
HOST = object()  # marks a name bound to the host module

# Built-in names a tool may not mention at all: each runs code, reaches the filesystem or
# the terminal, or reads or writes attributes by a computed name.
REFUSED_BUILTINS = {
    "exec": "runs code from a string", "eval": "runs code from a string",
    "compile": "builds code from a string", "open": "opens files",
    "input": "reads the terminal", "breakpoint": "starts a debugger",
    "help": "starts the interactive help", "exit": "exits the interpreter",
    "quit": "exits the interpreter", "copyright": "is interactive only",
    "credits": "is interactive only", "license": "reads files",
    "globals": "exposes the module's namespace", "locals": "exposes the frame",
    "vars": "exposes an object's namespace",
    "dir": "lists an object's attributes by name; use the attributes you know",
    "getattr": "reads attributes by computed name; write obj.name",
    "setattr": "writes attributes by computed name; write obj.name = value",
    "delattr": "deletes attributes by computed name; write del obj.name",
    "hasattr": "looks attributes up by computed name; use isinstance or try/except AttributeError",
}
DANGEROUS = [getattr(builtins, n) for n in REFUSED_BUILTINS if hasattr(builtins, n)]
DANGEROUS += [builtins.__import__, importlib.import_module]


def internal_attributes():
    """The attributes of the interpreter's own objects (frames, code, tracebacks,
    generators, coroutines, cells, classes) that ordinary values do not have: f_globals,
    gi_frame, co_code, tb_next, cell_contents, mro... Read from the running interpreter, so
    a new version's additions are refused without a list to update."""
    ordinary = set()
    for t in (object, str, bytes, bytearray, int, float, complex, bool, list, tuple, dict,
              set, frozenset, range, slice, memoryview, BaseException):
        ordinary.update(dir(t))
    internal = [types.FrameType, types.CodeType, types.TracebackType, types.GeneratorType,
                types.CoroutineType, types.AsyncGeneratorType, type, types.FunctionType,
                types.MethodType, types.BuiltinFunctionType, types.ModuleType,
                types.GetSetDescriptorType, types.MemberDescriptorType,
                types.WrapperDescriptorType, types.MethodWrapperType,
                types.MethodDescriptorType, types.ClassMethodDescriptorType]
    internal.append(getattr(types, "CellType", type((lambda: internal).__closure__[0])))
    found = set()
    for t in internal:
        found.update(a for a in dir(t) if not a.startswith("_"))
    return found - ordinary - {"send", "throw", "close"}  # a generator's own protocol


INTERNAL_ATTRIBUTES = internal_attributes()

# Attribute names refused on any object: the interpreter's internals above, and the
# standard library's reflective back doors (attribute access or code built from a string
# the caller passes). check_reflect.py adds what it finds in the allowed modules' sources;
# this list is the floor that holds where those sources are not installed.
REFUSED_ATTRIBUTES = INTERNAL_ATTRIBUTES | {
    "attrgetter", "methodcaller", "Formatter", "get_field", "vformat", "get_type_hints",
    "ForwardRef", "singledispatch", "singledispatchmethod", "evaluate_forward_ref",
    "get_annotations", "update_wrapper", "wraps", "no_type_check",
    "no_type_check_decorator", "dispatch_table", "UserString", "_evaluate", "_convert_",
    "global_enum",
}

# Words refused inside string literals: the interpreter's internals, which a string could
# name for a reflective helper the rules missed. (Double underscores are refused too.)
# A word counts where it stands alone: neither letter, digit nor _ (ASCII) before or after
# it (refused_word).
REFUSED_WORDS = frozenset(INTERNAL_ATTRIBUTES - {"mro"})

# Dunder methods a class may define (they are only called on its own instances).
PROTOCOL_METHODS = {
    "__init__", "__repr__", "__str__", "__format__", "__eq__", "__ne__", "__lt__",
    "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__len__", "__iter__",
    "__next__", "__contains__", "__getitem__", "__setitem__", "__delitem__", "__call__",
    "__enter__", "__exit__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
    "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__", "__mod__", "__neg__",
    "__pos__", "__abs__", "__int__", "__float__",
}

MAX_HOSTS = 20
INVISIBLE_FILLERS = {"\u115f", "\u1160", "\u3164", "\uffa0"}
BIDI = {"\u061c", "\u200e", "\u200f"} | {chr(c) for c in range(0x202A, 0x202F)} | {
    chr(c) for c in range(0x2066, 0x206A)}
ZERO_WIDTH = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
MISSING = object()


def is_dunder(name):
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def allowed_module(mod):
    """Whether mod is allowed, or a submodule of an allowed package (json.decoder)."""
    n = mod.__name__
    top = MODULES.get(n.split(".")[0])
    return n in MODULES or top is not None and hasattr(top, "__path__")


def is_dangerous(value):
    return any(value is d for d in DANGEROUS)


def is_literal(node):
    try:
        ast.literal_eval(node)
        return True
    except Exception:  # ValueError, TypeError, RecursionError, MemoryError...
        return False


def nfkc(text):
    """unicodedata.normalize("NFKC", text); ASCII is its own NFKC form, so unicodedata is
    imported only for text that is not."""
    if text.isascii():
        return text
    import unicodedata
    return unicodedata.normalize("NFKC", text)


# The ASCII characters bad_char refuses: the controls (category Cc) but tab, newline and
# carriage return. No other ASCII character is refused.
ASCII_CONTROLS = frozenset([chr(c) for c in range(32) if chr(c) not in "\t\n\r"] + ["\x7f"])


def bad_char(ch):
    """Why ch may not appear in a source file, or None."""
    import unicodedata  # here only when the text is not plain ASCII (see Source.load)
    if ch in "\t\n\r":
        return None
    if ch in BIDI:
        return "bidirectional control character"
    if ch in ZERO_WIDTH:
        return "zero-width character"
    if ch in INVISIBLE_FILLERS:
        return "invisible filler character"
    cat = unicodedata.category(ch)
    return {
        "Cc": "control character", "Cf": "invisible format character",
        "Zl": "line separator", "Zp": "paragraph separator",
        "Co": "private-use character", "Cn": "unassigned character", "Cs": "surrogate",
    }.get(cat)


class Source:
    """One file: its raw bytes, its text, its tree and its problems."""

    def __init__(self, fname, raw):
        self.fname, self.raw = fname, raw
        self.lines, self.tree, self.problems = [], None, []

    def add(self, line, col, message):
        self.problems.append({"file": self.fname, "line": line, "col": col, "message": message})

    def at(self, node, message):
        line = getattr(node, "lineno", 1) or 1
        col = getattr(node, "col_offset", 0) or 0
        if 0 < line <= len(self.lines):  # ast columns are UTF-8 byte offsets
            col = len(self.lines[line - 1].encode("utf-8")[:col].decode("utf-8", "replace"))
        self.add(line, col + 1, message)

    def load(self):
        raw = self.raw
        if not raw.strip():
            return self.add(1, 1, "the file is empty")
        if len(raw) > MAX_SOURCE:
            return self.add(1, 1, "the file is %d bytes; the limit is %d" % (len(raw), MAX_SOURCE))
        if raw.startswith(b"\xef\xbb\xbf"):
            return self.add(1, 1, "the file starts with a byte order mark; save it as UTF-8 without one")
        cookie = False
        for i, line in enumerate(raw.split(b"\n")[:2]):
            name = coding_cookie(line)
            if name is not None:
                cookie = True
                enc = name.decode("ascii", "replace").lower().replace("_", "-")
                if enc not in ("utf-8", "utf8"):
                    return self.add(i + 1, 1, "coding cookie %r: only utf-8 is allowed, so that "
                                    "what is reviewed is what runs" % enc)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw[:e.start].count(b"\n") + 1
            return self.add(line, 1, "not valid UTF-8 (byte %d)" % e.start)
        line, col, bad = 1, 1, 0
        # Plain ASCII with no control character has no character bad_char refuses: the
        # loop (and unicodedata) only for text that may.
        if not text.isascii() or not ASCII_CONTROLS.isdisjoint(text):
            import unicodedata
            for ch in text:
                if ch == "\n":
                    line, col = line + 1, 1
                    continue
                why = bad_char(ch)
                if why:
                    bad += 1
                    if bad <= 10:
                        self.add(line, col, "%s U+%04X (%s) is not allowed" % (
                            why, ord(ch), unicodedata.name(ch, "unnamed")))
                col += 1
        if bad:
            return
        self.lines = text.splitlines()  # \n, \r\n, \r only: the others were refused above
        if not self.check_tokens():
            return
        try:
            # tokenize.detect_encoding reads a cookie on the first two lines only, one that
            # coding_cookie also finds: with none, Python reads the file as utf-8 (there is
            # no byte order mark), so the tokenizer is imported only for a file with one.
            enc = "utf-8"
            if cookie:
                import tokenize
                enc, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
            if enc != "utf-8":
                return self.add(1, 1, "Python would read this file as %s; only utf-8 is allowed" % enc)
            self.tree = ast.parse(raw, filename=self.fname)  # the raw bytes, as Python reads them
        except SyntaxError as e:
            return self.add(e.lineno or 1, e.offset or 1, "SyntaxError: %s" % e.msg)
        except (ValueError, RecursionError, MemoryError) as e:
            return self.add(1, 1, "cannot parse: %s" % (e or type(e).__name__))

    def check_tokens(self):
        """Refuses non-ASCII identifiers as written: the tree holds them NFKC-normalised
        (a fullwidth ｏｓ reads as os), so only the tokens show what a reviewer sees.
        Returns whether the tokens are clean; a file that does not tokenize is left to
        ast.parse, whose SyntaxError says more."""
        if self.raw.isascii():
            return True  # every token is ASCII: nothing below can refuse one
        import tokenize  # (and re, enum, functools...): only for a file with non-ASCII bytes
        before = len(self.problems)
        try:
            for tok in tokenize.tokenize(io.BytesIO(self.raw).readline):
                if tok.type == tokenize.NAME and not tok.string.isascii():
                    self.add(tok.start[0], tok.start[1] + 1, "non-ASCII identifier %r (Python reads it "
                             "as %r); use ASCII names" % (tok.string, nfkc(tok.string)))
                elif tok.type == tokenize.STRING and fstring_expr_non_ascii(tok.string):
                    self.add(tok.start[0], tok.start[1] + 1, "non-ASCII character inside an f-string "
                             "expression; use ASCII names")
        except (tokenize.TokenError, SyntaxError):
            pass
        return len(self.problems) == before


NAME_BYTES = frozenset(b"-_.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def coding_cookie(line):
    r"""The encoding a coding cookie on line (bytes, no newline) names, or None: what the
    regular expression rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)" (tokenize's) matches as
    its group, written out so that the checker need not import re."""
    i = 0
    while i < len(line) and line[i] in b" \t\f":
        i += 1
    if line[i:i + 1] != b"#":
        return None
    at = line.find(b"coding", i + 1)
    while at >= 0:
        j = at + 6
        if line[j:j + 1] in (b":", b"="):
            j += 1
            while line[j:j + 1] in (b" ", b"\t"):
                j += 1
            k = j
            while k < len(line) and line[k] in NAME_BYTES:
                k += 1
            if k > j:
                return line[j:k]
        at = line.find(b"coding", at + 1)
    return None


def is_word_char(c):
    return "a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9" or c == "_"


def refused_word(text):
    """The first word of REFUSED_WORDS in text that stands alone (no ASCII letter, digit or
    _ on either side), or None: the first match of the regular expression
    (?<![A-Za-z0-9_])(word|word...)(?![A-Za-z0-9_]). A match must be a whole run of such
    characters, so the runs are what is looked up."""
    start = None
    for i, c in enumerate(text):
        if is_word_char(c):
            if start is None:
                start = i
        elif start is not None:
            if text[start:i] in REFUSED_WORDS:
                return text[start:i]
            start = None
    if start is not None and text[start:] in REFUSED_WORDS:
        return text[start:]
    return None


def is_constant_name(name):
    r"""Whether name matches [A-Z][A-Z0-9_]*\Z: an UPPERCASE constant's name."""
    return bool(name) and "A" <= name[0] <= "Z" and all(
        "A" <= c <= "Z" or "0" <= c <= "9" or c == "_" for c in name[1:])


def fstring_expr_non_ascii(tok):
    """Whether an f-string token (Python < 3.12, where it is one token) has a non-ASCII
    character inside a {...} expression, outside the expression's own string literals."""
    i = 0
    while i < len(tok) and tok[i] not in "'\"":
        i += 1
    if "f" not in tok[:i].lower():
        return False
    q = tok[i:i + 3] if tok[i:i + 3] in ('"""', "'''") else tok[i:i + 1]
    body = tok[i + len(q):len(tok) - len(q)]
    depth, quote, j = 0, None, 0
    while j < len(body):
        c = body[j]
        if depth == 0:
            if c == "{":
                if body[j + 1:j + 2] == "{":
                    j += 1
                else:
                    depth = 1
        elif quote:
            if body.startswith(quote, j):
                j += len(quote) - 1
                quote = None
        elif c in "'\"":
            quote = body[j:j + 3] if body[j:j + 3] in ('"""', "'''") else c
            j += len(quote) - 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif not c.isascii():
            return True
        j += 1
    return False

