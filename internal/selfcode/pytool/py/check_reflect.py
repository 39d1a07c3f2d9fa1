"""The static gate, part 2 of 4: the reflective callables of the allowed modules, found by
reading their sources.

A callable is reflective when a value its caller passes reaches, inside it, the name of an
attribute (getattr, setattr, delattr, hasattr), code (eval, exec, __import__), or a format
string (str.format): functools.update_wrapper(f, g, updated=("__globals__",)),
operator.attrgetter, string.Formatter... Such a callable turns a string built at run time
into the very access the rules refuse as syntax, so the names the tool writes prove
nothing. Rather than trust a hand list, each allowed module's source is read (parsed,
never run) the first time a tool reaches the module, and each function is followed:
which of its parameters flow, through assignments, loops, containers and calls, into such
an argument. A function that passes a parameter on to a reflective function of its module
is reflective too; a method that stores a parameter (self.name = name) that another
method later uses that way makes its class reflective. What an argument holds as an
attribute (f.name) does not count: an object's own field names are not a string the
caller chose; except a class's __module__, which the caller may have set to the name of
any module (CHOSEN_ATTRIBUTES), so that sys.modules[cls.__module__] is a module reached by
a name (enum.global_enum writes the class's members into it).

What is found is refused: a module-level function by name, a class if its constructor or
a public method is reflective, and a reflective method's name as an attribute of any
object. REVIEWED lists what was found and judged safe, with the reason. Where a module's
source is not installed, REFUSED_ATTRIBUTES (part 1) is the floor.
"""

# Calls whose argument at this index names an attribute or holds code or a module name.
REFLECTIVE_CALLS = {
    "getattr": (1, "reads attributes by a name it is given"),
    "setattr": (1, "writes attributes by a name it is given"),
    "delattr": (1, "deletes attributes by a name it is given"),
    "hasattr": (1, "looks attributes up by a name it is given"),
    "eval": (0, "runs code built from its arguments"),
    "exec": (0, "runs code built from its arguments"),
    "__import__": (0, "imports a module by a name it is given"),
}
# The same, called as x.name(...) or name(...).
REFLECTIVE_METHODS = {
    "attrgetter": (0, "reads attributes by a name it is given"),
    "methodcaller": (0, "calls methods by a name it is given"),
    "import_module": (0, "imports a module by a name it is given"),
}
# str.format and friends: the receiver is the format string, whose {0.attr} fields read
# attributes.
FORMAT_METHODS = {"format", "format_map", "vformat"}
FORMAT_REASON = "formats with a format string it is given, whose {0.attr} fields read attributes"
MODULES_REASON = "reaches a module by a name it is given (sys.modules[name])"
# Attributes that hold a string the caller may have chosen, not a field name of the
# object's own: a class's __module__ can be set by the module= argument of the Enum
# functional API, namedtuple or make_dataclass, so sys.modules[cls.__module__] is a module
# of the caller's choosing (enum.global_enum writes the class's members into it).
CHOSEN_ATTRIBUTES = {"__module__"}

# Methods the interpreter calls with names from syntax (obj.name) or from a class body,
# which the rules have already read: not a string chosen at run time.
SYNTAX_METHODS = {
    "__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__set_name__",
    "__dir__", "__new__", "__init_subclass__", "__prepare__", "__instancecheck__",
    "__subclasscheck__", "__class_getitem__", "__mro_entries__",
}
CONSTRUCTORS = ("__init__", "__new__", "__call__")
# Methods that put their arguments into the container they are called on.
MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault", "appendleft",
            "extendleft", "push"}

# Found reflective, and judged safe: the names reach the sink only after a check.
REVIEWED = {
    "collections.namedtuple": "field names must be identifiers, not starting with _, "
                              "before they reach the generated code",
    "dataclasses.dataclass": "field names must be identifiers before they reach the generated code; "
                             "the module of the class (sys.modules[cls.__module__]) is only read",
    "dataclasses.make_dataclass": "field names must be identifiers before they reach the generated code; "
                                  "the module of the class (sys.modules[cls.__module__]) is only read",
    "copy.copy": "the names come from the object's own state; dispatch_table is refused",
    "copy.deepcopy": "the names come from the object's own state; dispatch_table is refused",
}

# Method names that every string, list or dict has: never refused as attributes (str.format
# has its own rule).
COMMON_METHODS = set()
for _t in (object, str, bytes, list, dict, set, tuple, int, float):
    COMMON_METHODS.update(dir(_t))

REFLECTIVE = {}         # module name -> Reflective, analysed once
REFLECTIVE_METHOD_NAMES = set()  # every reflective method found so far

# The daemon's cache of analyses (cached_analyses, built with the gate's code cache; gate.py
# sets it from there): (module name, SHA-256 of the source) -> (names as (name, why) pairs,
# methods sorted). An analysis depends only on the module's name, its source, this checker
# and the interpreter; the cache is this checker's and this interpreter's (its file is named
# by the checker's digest, load.py checks the interpreter), and an entry is taken only for
# the very source read here, so a module whose source changed is analysed again.
ANALYSES = None


class Reflective:
    """What one module's source shows: names (public function or class -> why, as "it
    reads attributes..." or "its __init__ ...") and methods (reflective method names)."""

    def __init__(self):
        self.names, self.methods = {}, set()


def reflective(mod):
    """The Reflective of an allowed module (analysed on first use, or taken from ANALYSES),
    or an empty one when its source cannot be read."""
    name = mod.__name__
    if name not in REFLECTIVE:
        r = Reflective()
        REFLECTIVE[name] = r
        src = module_source(mod)
        if src is not None and not cached_analysis(name, src, r):
            analyse_source(name, src, r)
        REFLECTIVE_METHOD_NAMES.update(r.methods)
    return REFLECTIVE[name]


def module_source(mod):
    path = getattr(mod, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return None  # a C module, or only bytecode installed: the floor list applies
    try:
        with io.open(path, "rb") as f:
            return f.read()
    except (OSError, MemoryError):
        return None


def analyse_source(name, src, r):
    """Analyses the source of module name into r; True if the analysis ran to its end."""
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    try:
        analyse(tree, name, r)
    except RecursionError:
        return False
    return True


def source_digest(src):
    """SHA-256 of src, from the smallest module that has it: _sha2 (3.12+) or _sha256, not
    hashlib, which loads OpenSSL (7 ms)."""
    for modname in ("_sha2", "_sha256", "hashlib"):
        try:
            return importlib.import_module(modname).sha256(src).digest()
        except (ImportError, AttributeError):
            pass
    return None


def cached_analysis(name, src, r):
    """Fills r from ANALYSES if it holds name's analysis of this very source; else False."""
    table = ANALYSES
    if type(table) is not dict or not table:
        return False
    digest = source_digest(src)
    entry = table.get((name, digest)) if digest is not None else None
    if type(entry) is not tuple or len(entry) != 2:
        return False
    names, methods = entry
    if type(names) is not tuple or type(methods) is not tuple or not all(
            type(p) is tuple and len(p) == 2 and type(p[0]) is str and type(p[1]) is str
            for p in names) or not all(type(m) is str for m in methods):
        return False
    r.names, r.methods = dict(names), set(methods)
    return True


def cached_analyses(allowed):
    """The analyses of every allowed module and of every submodule of an allowed package
    that importing them loads, as ANALYSES holds them: what the daemon caches. Each is made
    as reflective makes it, on its own (an analysis reads nothing of another module's); a
    module whose analysis did not run to its end (a parse error, too deep) is left out, so
    a gate analyses it itself. Importing the modules runs the standard library's code, never
    a tool's."""
    load_modules(allowed)
    for n in allowed:
        try:
            MODULES.get(n)
        except Exception:  # not installed here: a gate cannot reach it either
            pass
    out = {}
    for mod in list(sys.modules.values()):
        if not isinstance(mod, types.ModuleType) or not allowed_module(mod):
            continue
        src = module_source(mod)
        digest = source_digest(src) if src is not None else None
        if digest is None or (mod.__name__, digest) in out:
            continue
        r = Reflective()
        if analyse_source(mod.__name__, src, r):
            out[(mod.__name__, digest)] = (tuple(r.names.items()), tuple(sorted(r.methods)))
    return out


class Func:
    """One function or method: where its parameters' values flow. The flows are worked
    out on first use (prepare), only for functions that hold a sink or call one."""

    def __init__(self, node, cls, consts):
        self.node, self.cls, self.name, self.consts = node, cls, node.name, consts
        a = node.args
        self.positional = [x.arg for x in a.posonlyargs + a.args]
        names = self.positional + [x.arg for x in a.kwonlyargs]
        names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
        if cls is not None and self.positional and not is_static(node):
            names = [n for n in names if n != self.positional[0]]  # self or cls: not the caller's
        self.params = names
        self.nodes = descendants(node)
        self.calls = [n for n in self.nodes if isinstance(n, ast.Call)]
        # sys.modules[name] and sys.modules.get(name): a module reached by a name
        self.modules_keys = [n.slice for n in self.nodes if isinstance(n, ast.Subscript)
                             and is_sys_modules(n.value)]
        self.modules_keys += [n.args[0] for n in self.nodes if isinstance(n, ast.Call) and n.args
                              and isinstance(n.func, ast.Attribute) and n.func.attr == "get"
                              and is_sys_modules(n.func.value)]
        self.source = None  # local name -> the parameters it derives from
        self.stores = None  # (self attribute, used names)
        self.literal = frozenset()

    def prepare(self):
        if self.source is not None:
            return
        self.source = {p: {p} for p in self.params}
        self.stores = []
        # names only ever assigned a literal (a table): a key into them picks a constant
        literal, other = set(), set(self.params)
        assigns = []
        for n in self.nodes:
            if isinstance(n, ast.Assign):
                assigns.append(n)
                if len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and is_literal(n.value):
                    literal.add(n.targets[0].id)
                    continue
                for t in n.targets:
                    other |= target_names(t)
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor,
                                ast.comprehension)):
                assigns.append(n)
                other |= target_names(n.target)
            elif isinstance(n, ast.withitem) and n.optional_vars is not None:
                assigns.append(n)
                other |= target_names(n.optional_vars)
        self.literal = frozenset(literal - other) | (self.consts - other)
        flows = []
        for n in self.calls:
            f = n.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.attr in MUTATORS:
                # names.append(x), d.update(x): the container now holds x
                flows.append(({f.value.id}, used_names(n.args, n.keywords, self.literal)))
        for n in assigns:
            if isinstance(n, ast.Assign):
                used = used_names([n.value], (), self.literal)
                for t in n.targets:
                    flows.append((target_names(t), used))
                    self.stores += [(a, used) for a in self_attributes(t)]
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
                if n.value is not None:
                    used = used_names([n.value], (), self.literal)
                    flows.append((target_names(n.target), used))
                    self.stores += [(a, used) for a in self_attributes(n.target)]
            elif isinstance(n, ast.withitem):
                flows.append((target_names(n.optional_vars), used_names([n.context_expr], (), self.literal)))
            else:  # for and comprehension targets
                flows.append((target_names(n.target), used_names([n.iter], (), self.literal)))
        changed = True
        while changed:
            changed = False
            for targets, used in flows:
                srcs = set()
                for u in used:
                    srcs |= self.source.get(u, set())
                if not srcs:
                    continue
                for t in targets:
                    have = self.source.setdefault(t, set())
                    if not srcs <= have:
                        have |= srcs
                        changed = True

    def derived(self, names):
        self.prepare()
        out = set()
        for n in names:
            out |= self.source.get(n, set())
        return out


def descendants(root):
    """root and every node under it: ast.walk, without its generators (this runs over
    every function of every module a tool reaches)."""
    out, i, AST = [root], 0, ast.AST
    while i < len(out):
        node = out[i]
        i += 1
        for f in node._fields:
            v = getattr(node, f, None)
            if isinstance(v, AST):
                out.append(v)
            elif isinstance(v, list):
                out.extend(x for x in v if isinstance(x, AST))
    return out


def is_sys_modules(node):
    return isinstance(node, ast.Attribute) and node.attr == "modules" and \
        isinstance(node.value, ast.Name) and node.value.id in ("sys", "_sys")


def is_static(node):
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)


def used_names(exprs, keywords=(), literal=frozenset()):
    """The names whose values flow into exprs: not a name only read as x.attr (an object's
    own attribute is not a string its caller chose), but one called as x.method(...); not
    the key into a literal table (SPECS[key] is one of the table's values)."""
    names, skip, keep = [], set(), set()
    for e in list(exprs) + [k.value for k in keywords]:
        for n in descendants(e):
            if isinstance(n, ast.Name):
                names.append(n)
            elif isinstance(n, ast.Attribute) and n.attr in CHOSEN_ATTRIBUTES:
                base = n.value  # cls.__module__, self.__class__.__module__: the caller's string
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name):
                    keep.add(id(base))
            elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                skip.add(id(n.value))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
                keep.add(id(n.func.value))
            elif isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id in literal:
                skip.update(id(x) for x in descendants(n.slice) if isinstance(x, ast.Name))
    skip -= keep
    return {n.id for n in names if id(n) not in skip}


def target_names(t):
    out = set()
    for n in descendants(t):
        if isinstance(n, ast.Name):
            out.add(n.id)
    return out


def self_attributes(t):
    """The attributes of self (or cls) a target assigns: self.x = ..."""
    return [n.attr for n in descendants(t) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id in ("self", "cls")]


def self_reads(e):
    return {n.attr for n in descendants(e) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id in ("self", "cls")}


def is_constant(e, consts):
    if isinstance(e, ast.Constant):
        return True
    if isinstance(e, ast.JoinedStr):
        return all(isinstance(v, ast.Constant) for v in e.values)
    return isinstance(e, ast.Name) and e.id in consts


def module_functions(tree):
    """(function node, class name or None) for each def at the top level of the module or
    of a top-level class, including those under if/try at the top level."""
    out = []

    def walk_body(body, cls):
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((st, cls))
            elif isinstance(st, ast.ClassDef) and cls is None:
                walk_body(st.body, st.name)
            elif isinstance(st, (ast.If, ast.Try, ast.With)):
                walk_body(st.body, cls)
                for h in getattr(st, "handlers", ()):
                    walk_body(h.body, cls)
                walk_body(getattr(st, "orelse", ()), cls)
                walk_body(getattr(st, "finalbody", ()), cls)

    walk_body(tree.body, None)
    return out


def analyse(tree, modname, result):
    consts = set()  # module-level tables and constants: a key into one picks the module's value
    for st in tree.body:
        if isinstance(st, ast.Assign) and (is_literal(st.value) or isinstance(
                st.value, (ast.Dict, ast.List, ast.Tuple, ast.Set))):
            consts.update(t.id for t in st.targets if isinstance(t, ast.Name))
    funcs = {}   # qualified name -> Func; the first definition wins (fallbacks come later)
    for node, cls in module_functions(tree):
        q = node.name if cls is None else cls + "." + node.name
        if q not in funcs:
            funcs[q] = Func(node, cls, consts)
    stored = {}  # class -> {self.attr -> the (method, parameter) pairs whose values it holds}

    def stored_in(cls, attr):
        if cls not in stored:
            held = stored[cls] = {}
            for q, fn in funcs.items():
                if fn.cls == cls:
                    fn.prepare()
                    for a, used in fn.stores:
                        for p in fn.derived(used):
                            held.setdefault(a, set()).add((q, p))
        return stored[cls].get(attr, ())

    immediate = {q: {} for q in funcs}  # parameter -> why: reaches a sink in this call
    deferred = {q: {} for q in funcs}   # parameter -> why: stored for a sink in another method
    sites = set()                       # methods holding a sink fed by a parameter or field

    def callee_of(fn, call):
        """The module's own Func a call reaches: f(...), C(...) (its __init__) or
        self.m(...), or None."""
        f = call.func
        if isinstance(f, ast.Name):
            if f.id in funcs and funcs[f.id].cls is None:
                return funcs[f.id]
            return funcs.get(f.id + ".__init__") or funcs.get(f.id + ".__new__")
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                f.value.id in ("self", "cls") and fn.cls is not None:
            return funcs.get(fn.cls + "." + f.attr)
        return None

    def sink_args(fn, call):
        """(argument expression, why) for each argument of call that reaches a sink."""
        out = []
        f = call.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if isinstance(f, ast.Name) and name in REFLECTIVE_CALLS and name not in funcs:
            i, why = REFLECTIVE_CALLS[name]
            if len(call.args) > i:
                out.append((call.args[i], why))
        elif name in REFLECTIVE_METHODS:
            i, why = REFLECTIVE_METHODS[name]
            if len(call.args) > i:
                out.append((call.args[i], why))
        elif isinstance(f, ast.Attribute) and name in FORMAT_METHODS and not (
                isinstance(f.value, ast.Name) and f.value.id in ("self", "cls")):
            out.append((f.value, FORMAT_REASON))
        g = callee_of(fn, call)
        if g is not None and immediate[q_of[id(g)]]:
            sinks = immediate[q_of[id(g)]]
            params = g.positional
            if g.cls is not None and params and not is_static(g.node):
                params = params[1:]
            for j, a in enumerate(call.args):
                if isinstance(a, ast.Starred):
                    out += [(a.value, sinks[p]) for p in params[j:] if p in sinks]
                    break
                if j < len(params) and params[j] in sinks:
                    out.append((a, sinks[params[j]]))
            for k in call.keywords:
                if k.arg in sinks or k.arg is None and sinks:
                    out.append((k.value, sinks.get(k.arg) or next(iter(sinks.values()))))
        # a reflective function passed along with its arguments: partial(update_wrapper, updated=x)
        for a in call.args:
            if isinstance(a, ast.Name) and a.id in funcs and funcs[a.id].cls is None:
                sinks = immediate[a.id]
                out += [(k.value, sinks[k.arg]) for k in call.keywords if k.arg in sinks]
        return out

    q_of = {id(fn): q for q, fn in funcs.items()}
    changed = True
    while changed:
        changed = False
        for q, fn in funcs.items():
            if fn.name in SYNTAX_METHODS and fn.cls is not None:
                continue
            found = [(k, MODULES_REASON) for k in fn.modules_keys]
            for call in fn.calls:
                found += sink_args(fn, call)
            for expr, why in found:
                if is_constant(expr, consts):
                    continue
                fn.prepare()
                params = fn.derived(used_names([expr], (), fn.literal))
                reads = self_reads(expr)
                if params or reads:
                    sites.add(q)
                for p in params:
                    if p not in immediate[q]:
                        immediate[q][p] = why
                        changed = True
                for attr in reads:
                    for mq, p in stored_in(fn.cls, attr):
                        if p not in deferred[mq]:
                            deferred[mq][p] = why
                            changed = True

    for q, fn in funcs.items():
        if fn.cls is None:
            if not fn.name.startswith("_") and immediate[q]:
                result.names[fn.name] = "it " + next(iter(immediate[q].values()))
        elif not fn.name.startswith("_") or fn.name in CONSTRUCTORS:
            why = immediate[q] or deferred[q]
            if why and not fn.cls.startswith("_") and fn.cls not in result.names:
                result.names[fn.cls] = "its %s %s" % (fn.name, next(iter(why.values())))
    for name in list(result.names):
        if "%s.%s" % (modname, name) in REVIEWED:
            del result.names[name]
    # the reflective methods of a refused class, and every private reflective method:
    # refused as attributes of any object, since an instance can come from elsewhere
    # (typing.get_args(...)[0] is a ForwardRef, enum.Enum._convert_ is the metaclass's)
    for q, fn in funcs.items():
        if fn.cls is not None and (fn.cls in result.names or fn.name.startswith("_")) and (
                q in sites or immediate[q] or deferred[q]):
            if not is_dunder(fn.name) and fn.name not in COMMON_METHODS:
                result.methods.add(fn.name)
