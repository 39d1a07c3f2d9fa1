"""Lists the callables of the allowed modules and of the builtins that may take an
attribute name, for TestCheckRefusesGenerated. Run with python3 -I -S, the allowed
modules comma-separated as the argument; prints a JSON list of

    {"module": "functools", "call": "functools.update_wrapper(f, f, assigned=(NAME,))",
     "why": "param-name" or what the probe saw: "getattr", "setattr", "import", "exec"...}

where NAME stands for the attribute name and f for any object. Two ways of finding them:

- By signature: every parameter named like an attribute name (name, attr, assigned,
  updated, field_name, key...), with NAME in its place.
- By calling: every callable (module functions, classes, methods of an instance made with
  no arguments, methods of the builtin types) is called once per parameter with a marked
  string there (as is, in a tuple, as "{0.marked}" and "marked.marked") and probe objects
  elsewhere; a callable is listed when a probe sees the marked name read, written or
  deleted, or an audit hook sees it imported, or run as code. The call is what the probe
  made, with NAME for the marked string.

The probing runs standard-library code on probe objects, each call under a 0.3 s alarm,
with stdout and stderr swallowed.
"""

import builtins
import importlib
import inspect
import io
import json
import signal
import sys
import types

MARK = "shelldonprobe"
NAME_PARAMS = {
    "name", "names", "attr", "attrs", "attribute", "attrname", "assigned", "updated",
    "field", "field_name", "fields", "field_names", "key", "keys", "method", "methodname",
    "typename", "qualname", "module", "format_string", "fmt", "format", "item", "items",
    "obj_name", "member", "members",
}
PLURAL = {"names", "attrs", "assigned", "updated", "fields", "field_names", "keys", "items",
          "members"}
# Found by calling, and reviewed: the name reaches no attribute. A codec lookup imports
# only from the encodings package; namedtuple and friends check that field names are
# identifiers before they reach generated code.
REVIEWED = {"builtins.str.encode", "builtins.bytes.decode", "builtins.bytearray.decode",
            "collections.namedtuple", "typing.NamedTuple", "dataclasses.make_dataclass"}
INTERACTIVE = {"input", "breakpoint", "help", "exit", "quit", "copyright", "credits",
               "license", "print", "open"}

HITS = {}     # label -> (call template, why)
CURRENT = [None]


def note(why):
    label, template = CURRENT[0] or (None, None)
    if label is not None and label not in HITS:
        HITS[label] = (template, why)


class Probe:
    """Records the marked names it is asked for; answers anything else with a Probe."""

    def __getattribute__(self, name):
        if MARK in name:
            note("getattr")
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        if MARK in name:
            note("getattr")
        if name.startswith("__"):
            raise AttributeError(name)
        return Probe()

    def __setattr__(self, name, value):
        if MARK in name:
            note("setattr")

    def __delattr__(self, name):
        if MARK in name:
            note("delattr")

    def __call__(self, *args, **kwargs):
        return Probe()

    def __getitem__(self, key):
        return Probe()

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


def code_names(code):
    found = list(code.co_names) + list(code.co_varnames)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            found += code_names(c)
        elif isinstance(c, str):
            found.append(c)
    return found


def hook(event, args):
    if CURRENT[0] is None:
        return
    if event == "exec" and args and isinstance(args[0], types.CodeType):
        if any(MARK in n for n in code_names(args[0])):
            note("exec")
    elif event == "import" and args and MARK in str(args[0]):
        if not str(args[0]).startswith("encodings."):
            note("import")
    elif event.startswith("object.__") and len(args) > 1 and MARK in str(args[1]):
        note(event)


class Stop(BaseException):
    pass


def alarm(signum, frame):
    raise Stop()


def shapes():
    """(value, its text in a template): the marked name as is, in a tuple, in a
    positional or named format field, dotted."""
    return [(MARK + "_x", "NAME"), ((MARK + "_x",), "(NAME,)"),
            ("{0.%s_x}" % MARK, '"{0." + NAME + "}"'), ("{a.%s_x}" % MARK, '"{a." + NAME + "}"'),
            ("%s_x.%s_x" % (MARK, MARK), 'NAME + "." + NAME')]


def signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def calls(sig, skip_self):
    """(param, kind, index) for each parameter that could take the name, and the call
    (args, kwargs) with value in it."""
    params = list(sig.parameters.values())
    if skip_self and params and params[0].name in ("self", "cls"):
        params = params[1:]
    out = []
    for target in params:
        if target.kind == target.VAR_KEYWORD:
            continue
        out.append(target)
    return params, out


def build(params, target, value, text):
    """The call's args and kwargs, and its template text."""
    args, kwargs, targs, tkw = [], {}, [], []
    for p in params:
        positional = p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        if p is target:
            if p.kind == p.VAR_POSITIONAL or positional and (p.default is p.empty or p.kind == p.POSITIONAL_ONLY):
                args.append(value)
                targs.append(text)
            else:
                kwargs[p.name] = value
                tkw.append("%s=%s" % (p.name, text))
        elif positional and p.default is p.empty:
            args.append(Probe())
            targs.append("f")
        elif p.kind == p.KEYWORD_ONLY and p.default is p.empty:
            kwargs[p.name] = Probe()
            tkw.append("%s=f" % p.name)
    return args, kwargs, ", ".join(targs + tkw)


def probe(label, fn, expr, skip_self=False):
    sig = signature(fn)
    if sig is None:
        # no signature (some C callables): positions 0..2, probes elsewhere
        for n in range(1, 4):
            for i in range(n):
                for value, text in shapes():
                    args = [value if j == i else Probe() for j in range(n)]
                    targs = [text if j == i else "f" for j in range(n)]
                    attempt(label, fn, args, {}, "%s(%s)" % (expr, ", ".join(targs)))
        return
    params, targets = calls(sig, skip_self)
    for target in targets:
        if target.name in NAME_PARAMS:
            _, _, text = build(params, target, None, "(NAME,)" if target.name in PLURAL else "NAME")
            BY_NAME.append({"module": label.split(".")[0], "call": "%s(%s)" % (expr, text), "why": "param-name"})
        for value, text in shapes():
            args, kwargs, ttext = build(params, target, value, text)
            attempt(label, fn, args, kwargs, "%s(%s)" % (expr, ttext))


def attempt(label, fn, args, kwargs, template):
    if label in HITS:
        return
    CURRENT[0] = (label, template)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        result = fn(*args, **kwargs)
        if isinstance(result, types.GeneratorType):
            for _ in zip(range(3), result):
                pass
        elif callable(result) and not isinstance(result, type):
            result(Probe())  # attrgetter(name) returns the reader
    except BaseException:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout = sys.stderr = io.StringIO()
        CURRENT[0] = None


def instance(cls):
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        return cls()
    except BaseException:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


BY_NAME = []


def main():
    allowed = [m for m in sys.argv[1].split(",") if m]
    out = sys.stdout
    sys.stdout = sys.stderr = io.StringIO()  # instances made below keep the stream they saw
    signal.signal(signal.SIGALRM, alarm)
    sys.addaudithook(hook)
    targets = [(m, importlib.import_module(m)) for m in allowed]
    for modname, mod in targets:
        for n in sorted(dir(mod)):
            v = getattr(mod, n, None)
            if n.startswith("_") or isinstance(v, types.ModuleType) or not callable(v):
                continue
            label = "%s.%s" % (modname, n)
            probe(label, v, label)
            if isinstance(v, type):
                inst = instance(v)
                if inst is None:
                    continue
                for a in sorted(dir(v)):
                    meth = getattr(inst, a, None) if not a.startswith("_") else None
                    if callable(meth):
                        probe("%s.%s" % (label, a), meth, "%s().%s" % (label, a))
    for n in sorted(dir(builtins)):
        v = getattr(builtins, n)
        if n.startswith("_") or n in INTERACTIVE or not callable(v):
            continue
        probe("builtins." + n, v, n)
        if v is str:  # the string is the receiver: "{0.attr}".format(obj)
            for value, text in shapes():
                if isinstance(value, str):
                    for a in ("format", "format_map"):
                        attempt("builtins.str." + a, getattr(value, a), [Probe()], {},
                                "(%s).%s(f)" % (text, a))
        if isinstance(v, type) and not issubclass(v, BaseException):
            inst = instance(v)
            for a in sorted(dir(v)):
                meth = getattr(inst, a, None) if inst is not None and not a.startswith("_") else None
                if callable(meth):
                    probe("builtins.%s.%s" % (n, a), meth, "%s().%s" % (n, a))
    found = list(BY_NAME)
    for label, (template, why) in sorted(HITS.items()):
        if label not in REVIEWED and not any(label.startswith(r + ".") for r in REVIEWED):
            found.append({"module": label.split(".")[0], "call": template, "why": why, "label": label})
    out.write(json.dumps(found))


main()
