"""The static gate, part 4 of 4: the conventions (DESCRIPTION, PARAMS_SCHEMA, CAPABILITIES,
run, test_* functions), the metadata handed back to Go, and main.

stdin:  {"name": str, "code": base64, "test": base64, "allowed": [module, ...]}
stdout: {"problems": [{"file", "line", "col", "message"}, ...], "meta": {...} or null}
"""

MAX_DESCRIPTION = 2048


def top_level(tree):
    """The module's top-level definitions: name -> node (assigned value, def or class)."""
    out = {}
    for st in tree.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            out.setdefault(st.targets[0].id, st)
        elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
            out.setdefault(st.target.id, st)
        elif isinstance(st, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            out.setdefault(st.name, st)
    return out


def json_problem(value, path):
    """Why a literal is not plain JSON, or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "%s: a string that is not valid Unicode (a lone surrogate)" % path
        return None
    if value is None or isinstance(value, (bool, int)):
        return None
    if isinstance(value, float):
        finite = value == value and value not in (float("inf"), float("-inf"))  # math.isfinite
        return None if finite else "%s: %r is not a JSON number" % (path, value)
    if isinstance(value, list):
        for i, v in enumerate(value):
            p = json_problem(v, "%s[%d]" % (path, i))
            if p:
                return p
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                return "%s: the key %r is not a string" % (path, k)
            p = json_problem(k, "%s key" % path)
            if p:
                return p
            p = json_problem(v, "%s[%r]" % (path, k))
            if p:
                return p
        return None
    return "%s: a %s is not JSON; use dict, list, str, int, float, bool or None" % (path, type(value).__name__)


def constant(src, defs, name, kind):
    """The literal value of a top-level NAME, or MISSING (with a problem recorded)."""
    st = defs.get(name)
    if st is None:
        src.add(1, 1, "%s is missing; the conventions: DESCRIPTION = \"...\", PARAMS_SCHEMA = "
                "{\"type\": \"object\", ...}, CAPABILITIES = {}, def run(...)" % name)
        return MISSING
    if not isinstance(st, (ast.Assign, ast.AnnAssign)):
        src.at(st, "%s must be assigned a literal" % name)
        return MISSING
    try:
        value = ast.literal_eval(st.value)
    except Exception:
        return MISSING  # the top-level rules reported it
    if not isinstance(value, kind):
        src.at(st, "%s must be a %s" % (name, kind.__name__))
        return MISSING
    p = json_problem(value, name)
    if p:
        src.at(st, p)
        return MISSING
    return value


def check_tool(src, walker, name):
    """The tool's conventions; returns its metadata (possibly partial)."""
    defs = top_level(src.tree)
    desc = constant(src, defs, "DESCRIPTION", str)
    if desc is not MISSING and not desc.strip():
        src.at(defs["DESCRIPTION"], "DESCRIPTION is empty")
    elif desc is not MISSING and len(desc) > MAX_DESCRIPTION:
        src.at(defs["DESCRIPTION"], "DESCRIPTION is longer than %d characters" % MAX_DESCRIPTION)
    schema = constant(src, defs, "PARAMS_SCHEMA", dict)
    caps = constant(src, defs, "CAPABILITIES", dict)
    run = defs.get("run")
    if not isinstance(run, ast.FunctionDef):
        src.add(1, 1, "def run(...) is missing: the tool's entry point")
    elif schema is not MISSING:
        check_schema(src, defs["PARAMS_SCHEMA"], schema, run)
    if caps is not MISSING:
        check_capabilities(src, defs["CAPABILITIES"], caps)
        if walker.uses_host and "http" not in caps:
            src.at(walker.uses_host, "%s is imported but CAPABILITIES does not declare \"http\"" % HOST_MODULE)
    return {
        "description": desc if desc is not MISSING else "",
        "params_schema": schema if schema is not MISSING else None,
        "schema_line": getattr(defs.get("PARAMS_SCHEMA"), "lineno", 1),
        "capabilities": caps if caps is not MISSING else {},
        "names": sorted(defs),
    }


def check_schema(src, st, schema, run):
    if schema.get("type") != "object":
        src.at(st, "PARAMS_SCHEMA must have \"type\": \"object\"")
    props = schema.get("properties", {})
    if not isinstance(props, dict) or not all(isinstance(v, dict) for v in props.values()):
        return src.at(st, "PARAMS_SCHEMA[\"properties\"] must map each parameter to a schema (a dict)")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return src.at(st, "PARAMS_SCHEMA[\"required\"] must be a list of parameter names")
    if len(set(required)) != len(required):
        src.at(st, "PARAMS_SCHEMA[\"required\"] lists a name twice")
    for r in required:
        if r not in props:
            src.at(st, "PARAMS_SCHEMA[\"required\"] names %r, which is not in \"properties\"" % r)
    a = run.args
    if a.posonlyargs or a.vararg or a.kwarg:
        return src.at(run, "run takes named parameters only: no /, *args or **kwargs")
    params = {}
    positional = a.args
    for i, arg in enumerate(positional):
        params[arg.arg] = i >= len(positional) - len(a.defaults)
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        params[arg.arg] = default is not None
    for p, has_default in params.items():
        if p not in props:
            src.at(run, "run's parameter %r is not in PARAMS_SCHEMA[\"properties\"]" % p)
        elif not has_default and p not in required:
            src.at(run, "run's parameter %r has no default, so PARAMS_SCHEMA[\"required\"] must list it" % p)
        elif has_default and p in required:
            src.at(run, "run's parameter %r has a default, so PARAMS_SCHEMA[\"required\"] must not list it" % p)
    for p in props:
        if p not in params:
            src.at(st, "PARAMS_SCHEMA property %r is not a parameter of run" % p)


def check_capabilities(src, st, caps):
    for key, value in caps.items():
        if key != "http":
            src.at(st, "CAPABILITIES: unknown capability %r; the only one is \"http\"" % key)
            continue
        if not isinstance(value, list) or not value or not all(isinstance(h, str) for h in value):
            src.at(st, "CAPABILITIES[\"http\"] must be a non-empty list of hostnames")
            continue
        if len(value) > MAX_HOSTS:
            src.at(st, "CAPABILITIES[\"http\"] lists %d hosts; at most %d" % (len(value), MAX_HOSTS))
        if len(set(value)) != len(value):
            src.at(st, "CAPABILITIES[\"http\"] lists a host twice")
        for h in value:
            why = host_problem(h)
            if why:
                src.at(st, "CAPABILITIES[\"http\"]: %r: %s" % (h, why))


def host_problem(h):
    if ":" in h or "/" in h or "@" in h:
        return "a bare hostname only: no scheme, port, path or IPv6 address"
    if "*" in h:
        return "wildcards are not allowed; list each host"
    if h != h.lower():
        return "hostnames must be lowercase"
    if h.endswith("."):
        return "no trailing dot"
    if not is_hostname(h) or len(h) > 253:
        return "not a DNS hostname like api.example.com"
    if h.rsplit(".", 1)[1].isdigit():
        return "IP addresses are not allowed; use the hostname"
    return None


def is_hostname(h):
    r"""Whether h matches LABEL(?:\.LABEL)+\Z, LABEL being [a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?:
    two labels or more, each of 1 to 63 lowercase letters, digits and hyphens, with no
    hyphen first or last."""
    labels = h.split(".")
    return len(labels) >= 2 and all(
        0 < len(x) <= 63 and x[0] != "-" and x[-1] != "-" and all(
            "a" <= c <= "z" or "0" <= c <= "9" or c == "-" for c in x) for x in labels)


def check_test(src):
    tests = [st for st in src.tree.body if isinstance(st, ast.FunctionDef) and st.name.startswith("test_")]
    if not tests:
        src.add(1, 1, "no tests: define top-level functions named test_... that use assert")
    for st in tests:
        a = st.args
        if a.posonlyargs or a.args or a.kwonlyargs or a.vararg or a.kwarg:
            src.at(st, "%s takes parameters; test functions take none (there are no fixtures)" % st.name)


SOFT_KEYWORDS = set(getattr(keyword, "softkwlist", ())) | {"match", "case", "_", "type"}


def stdlib_module_names():
    """sys.stdlib_module_names (Python 3.10+), or what the standard library's directories
    and the built-in modules hold."""
    names = getattr(sys, "stdlib_module_names", None)
    if names is not None:
        return names
    found = set(sys.builtin_module_names)
    lib = os.path.dirname(os.__file__)
    for d in (lib, os.path.join(lib, "lib-dynload")):
        try:
            entries = os.listdir(d)
        except OSError:
            continue
        found.update(e.split(".")[0] for e in entries)
    return found


def name_problem(name):
    if not name.isascii() or not name.isidentifier() or is_dunder(name):
        return "%r is not a valid module name" % name
    if keyword.iskeyword(name) or name in SOFT_KEYWORDS:
        return "%r is a Python keyword" % name
    if hasattr(builtins, name):
        return "%r is a Python built-in" % name
    if name in stdlib_module_names() or name == HOST_MODULE or name.startswith("test_"):
        return "%r would shadow a module; choose another name" % name
    return None


def walk(src, kind, name, tool=None):
    walker = Walker(src, kind, name, tool)
    try:
        walker.check()
    except RecursionError:
        src.add(1, 1, "the code is nested too deeply to check")
    return walker


def check(name, code, test):
    tool = Source("%s.py" % name, code)
    tests = Source("test_%s.py" % name, test)
    why = name_problem(name)
    if why:
        tool.add(1, 1, "tool name: " + why)
    tool.load()
    tests.load()
    meta, walker = None, None
    if tool.tree is not None:
        walker = walk(tool, "tool", name)
        meta = check_tool(tool, walker, name)
        walker.names = set(meta["names"])
    if tests.tree is not None:
        walk(tests, "test", name, walker)
        check_test(tests)
    by_position = lambda p: (p["line"], p["col"])
    problems = sorted(tool.problems, key=by_position) + sorted(tests.problems, key=by_position)
    if len(problems) > MAX_PROBLEMS:
        extra = len(problems) - MAX_PROBLEMS
        problems = problems[:MAX_PROBLEMS]
        problems.append(dict(problems[-1], message="... and %d more problems" % extra))
    if problems:
        meta = None
    elif meta is not None:
        del meta["names"]
    return {"problems": problems, "meta": meta}


def check_request(req):
    """The checker's answer to a request (name, code and test in base64, allowed)."""
    load_modules(req["allowed"])
    # binascii, not base64: the same decoding (Go's standard encoding), without importing
    # base64 (and struct) into every gate.
    return check(req["name"], binascii.a2b_base64(req["code"]), binascii.a2b_base64(req["test"]))


def main():
    import json  # only here: the gate (py/gate.py) reads and writes its JSON itself
    out = check_request(json.loads(sys.stdin.buffer.read()))
    sys.stdout.write(json.dumps(out, ensure_ascii=True))


# Run as a script (Check), the checker answers on stdout; the gate (py/gate.py) runs it in
# a namespace of its own and calls check_request itself.
if __name__ == "__main__":
    main()
