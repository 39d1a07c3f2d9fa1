"""The static gate, part 3 of 4: the rules on the syntax tree.

Four ideas. Nothing runs at import: the top level holds only imports, UPPERCASE = literal
constants, def and class (no decorators, literal defaults, annotations that are types,
bases whose metaclass calls none of the class's own methods while it makes the class, and
Enums without underscore methods, whose members the metaclass makes at import).
Imports are allowlisted, and a module is only ever used as module.attr, resolved here
against the real module, so typing.sys or json.codecs is refused. No interpreter
internals: no dunder names, no exec/eval/compile/open/getattr..., no frames. And no
attribute reached by a string: no reflective callable (found in the allowed modules'
sources by check_reflect.py), no format string that is not a literal or whose fields read
attributes, no string literal holding "__" or naming an interpreter attribute, no
type(name, bases, dict), no instance method called on a class with a self of one's choosing,
no module= or qualname= (a class claiming a module of one's choosing).
"""


# Metaclasses that call none of the class's own methods while they make it: they read
# the class body's names and values (literals and functions) and set attributes. The
# Enum metaclass is handled apart (see Walker.check_class_creation); any other is refused.
SAFE_METACLASSES = {
    ("builtins", "type"), ("abc", "ABCMeta"), ("typing", "_ProtocolMeta"),
    ("typing", "NamedTupleMeta"), ("typing", "_TypedDictMeta"), ("typing", "_AnyMeta"),
}

# Keywords that choose the module a class claims to come from.
MODULE_KEYWORDS = ("module", "qualname")


class Walker(ast.NodeVisitor):
    def __init__(self, src, kind, name, tool=None):
        self.src, self.kind, self.name = src, kind, name
        self.tool = tool              # for the test file: the tool's Walker
        self.aliases = {}             # name -> module (or HOST) it is bound to
        self.classes = {}             # name -> class of an allowed module it is bound to
        self.values = {}              # name -> what of an allowed module it is bound to (from m import x)
        self.class_metas = [{}]       # the classes made at import, by name: module level, then
        #                               each enclosing class body -> their metaclasses (or None)
        self.functions = {}           # top-level def -> its parameter names
        self.super_calls = set()      # id() of each super().__protocol__ in super().__protocol__(...)
        self.receivers = set()        # id() of each Name or Attribute that is the x in x.attr
        self.statements = set()       # id() of each string that is a whole statement (docstrings)
        self.str_consts = {}          # top-level NAME = "literal", never reassigned
        self.scope = ["module"]
        self.uses_host = None         # the first node that imports the host module
        self.shown_allowlist = False

    def refuse(self, node, message):
        self.src.at(node, message)

    # ---- entry --------------------------------------------------------------------

    def check(self):
        tree = self.src.tree
        constants = set()  # id() of the targets of top-level NAME = "literal"
        for st in tree.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
                    and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                name = st.targets[0].id
                self.str_consts[name] = None if name in self.str_consts else st.value.value
                constants.add(id(st.targets[0]))
        for st in tree.body:
            if isinstance(st, ast.FunctionDef):
                a = st.args
                self.functions[st.name] = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
        self.bindings = binding_counts(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and is_super_protocol(node.func):
                self.super_calls.add(id(node.func))
            if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)):
                self.receivers.add(id(node.value))
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                self.statements.add(id(node.value))
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in constants:
                self.str_consts[node.id] = None  # assigned elsewhere too: not a constant
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for n in node.names:
                    self.str_consts[n] = None
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.check_import(node)
        self.analyse_reached(tree)
        self.check_top_level(tree.body)
        self.visit(tree)
        self.check_defined(tree)

    def check_defined(self, tree):
        """Every name a scope reads must be defined: bound in the file (by an import, def,
        class, assignment, parameter...) or a built-in. A name bound nowhere would be a
        NameError, or a value slipped into the module's globals at run time (the way
        functools.update_wrapper(f, g, updated=("__globals__",)) copies another module's
        globals, sys included, into the tool's)."""
        try:
            top = symtable.symtable("\n".join(self.src.lines) + "\n", self.src.fname, "exec")
        except SyntaxError as e:
            return self.src.add(e.lineno or 1, e.offset or 1, "SyntaxError: %s" % e.msg)
        except (ValueError, RecursionError, MemoryError):
            return
        defined = set(dir(builtins))
        tables = [top]
        for t in tables:
            tables.extend(t.get_children())
            for sym in t.get_symbols():
                if t is top and (sym.is_assigned() or sym.is_imported() or sym.is_namespace()):
                    defined.add(sym.get_name())
                elif sym.is_declared_global() and sym.is_assigned():
                    defined.add(sym.get_name())
        loads = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                loads.setdefault(node.id, []).append(node)
        reported = set()
        for t in tables:
            for sym in t.get_symbols():
                name = sym.get_name()
                if not sym.is_referenced() or name in defined or name in reported or is_dunder(name):
                    continue
                if t is top or sym.is_global():
                    reported.add(name)
                    at = [n for n in loads.get(name, ()) if n.lineno >= t.get_lineno()] or loads.get(name) or [tree]
                    self.refuse(at[0], "%s is not defined: import it, define it in this file, or pass it "
                                "as a parameter" % name)

    def analyse_reached(self, tree):
        """Reads the source of every allowed module the file reaches (imports and
        module.attr chains), so that the reflective methods they define are known before
        any attribute is checked."""
        reached = [m for m in self.aliases.values() if isinstance(m, types.ModuleType)]
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                m = self.resolve(node)
                if isinstance(m, types.ModuleType):
                    reached.append(m)
        reached += [sys.modules.get(c.__module__) for c in self.classes.values()]
        for m in reached:
            if isinstance(m, types.ModuleType) and allowed_module(m):
                reflective(m)

    def check_top_level(self, body):
        seen = {}
        for i, st in enumerate(body):
            if i == 0 and is_docstring(st) or isinstance(st, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(st, (ast.Assign, ast.AnnAssign)):
                target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else getattr(st, "target", None)
                if not isinstance(target, ast.Name) or not is_constant_name(target.id):
                    self.refuse(st, "top-level assignments must be UPPERCASE_NAME = literal; "
                                "compute other values inside run()")
                    continue
                if st.value is None or not is_literal(st.value):
                    self.refuse(st, "%s must be a literal (str, number, list, dict...): the top level "
                                "runs at import, so no calls, names or expressions" % target.id)
                bound = target.id
            elif isinstance(st, (ast.FunctionDef, ast.ClassDef)):
                bound = st.name
                if hasattr(builtins, bound):
                    self.refuse(st, "%s shadows the built-in %s; rename it" % (bound, bound))
            elif isinstance(st, ast.If) and ast.dump_contains(st.test, "__name__"):  # in ast.dump(st.test)
                self.refuse(st, "remove the if __name__ == ... block: nothing may run at import")
                continue
            else:
                self.refuse(st, "top-level %s runs at import; only imports, UPPERCASE = literal "
                            "constants, def and class are allowed" % describe_stmt(st))
                continue
            if bound in seen:
                self.refuse(st, "%s is defined twice (first on line %d)" % (bound, seen[bound]))
            seen.setdefault(bound, st.lineno)

    # ---- imports ------------------------------------------------------------------

    def allowlist_hint(self):
        if self.shown_allowlist:
            return ""
        self.shown_allowlist = True
        return "; allowed: %s" % ", ".join(ALLOWED_MODULES)

    def bind(self, node, bound, value):
        self.check_binding(node, bound)
        if value is not None:
            self.aliases[bound] = value

    def check_import(self, node):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                if a.name == HOST_MODULE:
                    self.uses_host = self.uses_host or node
                    self.bind(node, a.asname or a.name, HOST)
                elif a.name in MODULES:
                    self.bind(node, a.asname or top, MODULES[a.name if a.asname else top])
                elif self.kind == "test" and a.name == self.name:
                    self.refuse(node, "import the tool as: from %s import run" % self.name)
                else:
                    self.refuse(node, "import %s: not allowed; tools may import only pure "
                                "standard-library modules%s" % (a.name, self.allowlist_hint()))
            return
        mod = node.module or ""
        if node.level:
            return self.refuse(node, "relative imports are not allowed")
        if any(a.name == "*" for a in node.names):
            return self.refuse(node, "from %s import *: import the names you use" % mod)
        for a in node.names:
            bound = a.asname or a.name
            if not self.check_ident(node, a.name):
                continue
            if mod == HOST_MODULE:
                self.uses_host = self.uses_host or node
                if a.name not in HOST_FUNCTIONS:
                    self.refuse(node, "%s has no %s; it provides %s" % (HOST_MODULE, a.name, ", ".join(HOST_FUNCTIONS)))
                self.bind(node, bound, None)
            elif self.kind == "test" and mod == self.name:
                if self.tool is not None and a.name not in self.tool.names:
                    self.refuse(node, "%s.py defines no top-level %s" % (self.name, a.name))
                self.bind(node, bound, None)
                if self.tool is not None:
                    if a.name in self.tool.class_metas[0]:
                        self.class_metas[0][bound] = self.tool.class_metas[0][a.name]
                    if a.name in self.tool.functions:
                        self.functions[bound] = self.tool.functions[a.name]
            elif mod in MODULES:
                value = self.check_module_attr(node, MODULES[mod], mod, a.name)
                ok_module = isinstance(value, types.ModuleType) and allowed_module(value)
                self.bind(node, bound, value if ok_module else None)
                if isinstance(value, type):
                    self.classes[bound] = value
                if value is not MISSING and not isinstance(value, types.ModuleType):
                    self.values[bound] = value
            else:
                return self.refuse(node, "from %s import ...: not allowed; tools may import only "
                                   "pure standard-library modules%s" % (mod, self.allowlist_hint()))

    def check_module_attr(self, node, mod, dotted, attr):
        """Checks mod.attr (or from mod import attr); returns the value, or MISSING."""
        where = "%s.%s" % (dotted, attr)
        if is_dunder(attr):
            self.refuse(node, "%s: dunder names are not allowed" % where)
        elif attr.startswith("_"):
            self.refuse(node, "%s is private to the standard library" % where)
        elif attr in reflective(mod).names:
            self.refuse(node, "%s is not allowed: %s (reflective access); write the attribute "
                        "access out: obj.name" % (where, reflective(mod).names[attr]))
        elif attr in REFUSED_ATTRIBUTES:
            self.refuse(node, "%s is not allowed: it reaches attributes or code by a name or string "
                        "(reflective access); write the attribute access out: obj.name" % where)
        else:
            value = getattr(mod, attr, MISSING)
            if value is MISSING:
                self.refuse(node, "%s does not exist" % where)
            elif isinstance(value, types.ModuleType) and not allowed_module(value):
                self.refuse(node, "%s is the module %s, which is not allowed" % (where, value.__name__))
            elif is_dangerous(value):
                self.refuse(node, "%s is not allowed: it runs code or reaches the host" % where)
            else:
                return value
        return MISSING

    # ---- names --------------------------------------------------------------------

    def check_ident(self, node, ident, what="name"):
        if not ident.isascii() or nfkc(ident) != ident:
            self.refuse(node, "non-ASCII %s %r; use ASCII names" % (what, ident))
        elif is_dunder(ident):
            self.refuse(node, "%s: dunder names are not allowed (they reach interpreter internals)" % ident)
            return False
        return True

    def check_binding(self, node, ident):
        """A name being bound: by an import, def, class, parameter, target or handler."""
        if self.check_ident(node, ident):
            if ident == "super":
                self.refuse(node, "super may not be rebound: super().__init__(...) is allowed only "
                            "as the built-in's")
            elif ident in REFUSED_BUILTINS:
                self.refuse(node, "the name %s is not allowed: the built-in %s %s" % (
                    ident, ident, REFUSED_BUILTINS[ident]))
            elif not isinstance(node, (ast.Import, ast.ImportFrom)) and ident in self.aliases:
                self.refuse(node, "%s rebinds the imported module %s; rename it" % (ident, ident))

    def visit_Name(self, node):
        if not isinstance(node.ctx, ast.Load):
            return self.check_binding(node, node.id)
        if not self.check_ident(node, node.id):
            return
        if node.id in REFUSED_BUILTINS:
            self.refuse(node, "%s is not allowed: it %s" % (node.id, REFUSED_BUILTINS[node.id]))
        elif node.id in self.aliases and id(node) not in self.receivers:
            self.refuse(node, "the module %s can only be used as %s.name: it cannot be passed, "
                        "stored or returned" % (node.id, node.id))

    def resolve(self, node):
        """The allowed module (or HOST) an expression like json.decoder names, or None."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, types.ModuleType):
                value = getattr(base, node.attr, None)
                if isinstance(value, types.ModuleType) and allowed_module(value):
                    return value
        return None

    def resolve_class(self, node):
        """The class of an allowed module an expression like json.JSONEncoder names, or None."""
        if isinstance(node, ast.Name):
            return self.classes.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, types.ModuleType):
                value = getattr(base, node.attr, None)
                if isinstance(value, type):
                    return value
        return None

    def visit_Attribute(self, node):
        attr = node.attr
        if id(node) in self.super_calls:
            pass  # super().__init__(...): the parent's own method, on this instance
        elif self.check_ident(node, attr, "attribute"):
            base = self.resolve(node.value)
            if base is HOST:
                if attr not in HOST_FUNCTIONS or not isinstance(node.ctx, ast.Load):
                    self.refuse(node, "%s provides only %s" % (HOST_MODULE, ", ".join(HOST_FUNCTIONS)))
            elif base is not None:
                dotted = dotted_name(node.value)
                if not isinstance(node.ctx, ast.Load):
                    self.refuse(node, "%s.%s: module attributes cannot be assigned or deleted" % (dotted, attr))
                else:
                    value = self.check_module_attr(node, base, dotted, attr)
                    if isinstance(value, types.ModuleType) and id(node) not in self.receivers:
                        self.refuse(node, "the module %s.%s can only be used as %s.%s.name: it cannot be "
                                    "passed, stored or returned" % (dotted, attr, dotted, attr))
            elif attr in REFUSED_ATTRIBUTES or attr in REFLECTIVE_METHOD_NAMES:
                self.refuse(node, ".%s is not allowed (frame, code or reflective access)" % attr)
            else:
                if attr in ("format", "format_map") and isinstance(node.ctx, ast.Load):
                    self.check_format(node)
                self.check_unbound_method(node)
        self.generic_visit(node)

    def check_unbound_method(self, node):
        """json.JSONEncoder.default(x, o): a Python method called on its class takes any
        object as self, which turns the method's self.attr into a reflective helper."""
        cls = self.resolve_class(node.value)
        if cls is None:
            return
        for k in cls.__mro__:
            if node.attr in vars(k):
                if isinstance(vars(k)[node.attr], types.FunctionType):
                    name = dotted_name(node.value)
                    self.refuse(node, "%s.%s is a method: call it on an instance (%s(...).%s) or use "
                                "super(); on the class it takes any object as self" % (
                                    name, node.attr, name, node.attr))
                return

    def check_format(self, node):
        """"...".format(...) only on a string literal (or a top-level constant) whose
        fields name no attribute or item: "{0.__globals__}" reads attributes."""
        recv = node.value
        if isinstance(recv, ast.Name) and self.str_consts.get(recv.id) is not None:
            text = self.str_consts[recv.id]
        elif isinstance(recv, ast.Constant) and isinstance(recv.value, str):
            text = recv.value
        else:
            return self.refuse(node, ".%s is only allowed on a string literal, like \"{} of {}\".%s(a, b), "
                               "or use an f-string: a format string built at run time can read attributes "
                               "(\"{0.__globals__}\")" % (node.attr, node.attr))
        why = format_fields_problem(text)
        if why:
            self.refuse(node, why)

    def visit_Constant(self, node):
        if id(node) in self.statements or not isinstance(node.value, (str, bytes)):
            return
        text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
        shown = repr(node.value if len(node.value) <= 40 else node.value[:40])
        if "__" in text:
            self.refuse(node, "%s: a string may not contain \"__\" (two underscores): strings can "
                        "name interpreter internals like __globals__" % shown)
        else:
            word = refused_word(text)
            if word:
                self.refuse(node, "%s: a string may not name the interpreter attribute %s" % (shown, word))

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name) and f.id == "type" and (
                len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred)):
            self.refuse(node, "type() is allowed only as type(x), to get x's class; "
                        "type(name, bases, dict) builds a class from strings: write a class statement")
        own = ()  # the parameters of the function of this file called, if its name is bound only once
        if isinstance(f, ast.Name) and self.bindings.get(f.id) == 1:
            own = self.functions.get(f.id, ())
        for k in node.keywords:
            if k.arg in MODULE_KEYWORDS and k.arg not in own:
                self.refuse(k, "the keyword %s= is not allowed: it sets the module a class claims to come "
                            "from (Enum(...), namedtuple, make_dataclass), a module the standard library "
                            "then reads and writes as that class's (enum.global_enum); leave it out "
                            "(for a function of this file, name the parameter %s)" % (k.arg, k.arg))
        self.generic_visit(node)

    def visit_arg(self, node):
        self.check_binding(node, node.arg)
        self.generic_visit(node)

    def visit_keyword(self, node):
        if node.arg is not None:
            self.check_ident(node, node.arg, "keyword")
        self.generic_visit(node)

    def visit_ExceptHandler(self, node):
        if node.name:
            self.check_binding(node, node.name)
        self.generic_visit(node)

    def visit_Global(self, node):
        for n in node.names:
            self.check_binding(node, n)

    visit_Nonlocal = visit_Global

    def visit_MatchAs(self, node):
        if node.name:
            self.check_binding(node, node.name)
        self.generic_visit(node)

    visit_MatchStar = visit_MatchAs

    def visit_MatchMapping(self, node):
        if node.rest:
            self.check_binding(node, node.rest)
        self.generic_visit(node)

    def visit_MatchClass(self, node):
        for attr in node.kwd_attrs:  # case C(attr=...) reads obj.attr
            if self.check_ident(node, attr, "attribute") and (
                    attr in REFUSED_ATTRIBUTES or attr in REFLECTIVE_METHOD_NAMES):
                self.refuse(node, ".%s is not allowed (frame, code or reflective access)" % attr)
        self.generic_visit(node)

    def visit_alias(self, node):
        pass  # checked with its import

    # ---- definitions --------------------------------------------------------------

    def visit_FunctionDef(self, node):
        at_import = self.scope[-1] != "function"  # the def itself runs at import
        if is_dunder(node.name) and self.scope[-1] == "class" and node.name in PROTOCOL_METHODS:
            pass
        else:
            self.check_binding(node, node.name)
        self.refuse_decorators(node)
        if getattr(node, "type_params", None):
            self.refuse(node, "type parameters are not allowed")
        a = node.args
        for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
            if arg is not None and arg.annotation is not None:
                self.check_type(arg.annotation)
        if node.returns is not None:
            self.check_type(node.returns)
        if at_import:
            for d in a.defaults + [d for d in a.kw_defaults if d is not None]:
                if not is_literal(d):
                    self.refuse(d, "default values must be literals: they are evaluated when the "
                                "def runs, at import; use None and compute inside the function")
        self.scope.append("function")
        self.generic_visit(node)
        self.scope.pop()

    def visit_ClassDef(self, node):
        at_import = self.scope[-1] != "function"  # the class statement runs at import
        self.check_binding(node, node.name)
        self.refuse_decorators(node)
        if node.keywords:
            self.refuse(node, "class keywords (metaclass=...) are not allowed")
        if getattr(node, "type_params", None):
            self.refuse(node, "type parameters are not allowed")
        for b in node.bases:
            self.check_type(b)
        if at_import:
            self.class_metas[-1][node.name] = self.check_class_creation(node)
        for i, st in enumerate(node.body):
            if i == 0 and is_docstring(st) or isinstance(st, (ast.Pass, ast.FunctionDef, ast.ClassDef)):
                continue
            if isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets) and is_literal(st.value):
                continue
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and (
                    st.value is None or is_literal(st.value)):
                continue  # the annotation is checked by visit_AnnAssign
            self.refuse(st, "a class body runs at import: only def, class, and name = literal are allowed")
        self.scope.append("class")
        if at_import:
            self.class_metas.append({})
        self.generic_visit(node)
        if at_import:
            self.class_metas.pop()
        self.scope.pop()

    # ---- class creation -------------------------------------------------------------

    def check_class_creation(self, node):
        """A class statement at import runs its metaclass, and only some metaclasses call
        none of the class's own methods while they make it (SAFE_METACLASSES). An Enum's
        metaclass calls the class's __init__ (and __eq__, __hash__, _missing_, a mixin's
        __init__...) for each member: its class may define only methods whose names do not
        start with _, and mix in no class of this file that is not an Enum. Returns the
        class's metaclasses, or None when refused."""
        metas, own = set(), []
        for b in node.bases:
            got = self.base_metaclasses(b)
            if got is None:
                self.refuse(b, "%s: the checker cannot tell what the base %s is: a class made at import (at the "
                            "top level or in a class) may derive only from built-in classes, classes of the "
                            "allowed modules and classes defined earlier in this file" % (node.name, dotted_name(
                                b.value if isinstance(b, ast.Subscript) else b)))
                return None
            metas |= got[0]
            if got[1]:
                own.append((b, got[0]))
        metas = frozenset(metas or (type,))
        for m in metas:
            if not safe_metaclass(m):
                self.refuse(node, "%s: its base's metaclass %s.%s runs code while the class is made, at "
                            "import; derive from another class, or define the class inside a function"
                            % (node.name, m.__module__, m.__qualname__))
                return None
        if any(is_enum_meta(m) for m in metas):
            for b, bm in own:
                if not any(is_enum_meta(m) for m in bm):
                    self.refuse(b, "%s is an Enum: its members are made at import, running the methods of "
                                "the class %s it mixes in; mix in only built-in or standard-library types "
                                "(str, int...)" % (node.name, dotted_name(b)))
            for st in node.body:
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name.startswith("_"):
                    self.refuse(st, "%s is an Enum: its metaclass calls the class's own underscore methods "
                                "(__init__, __eq__, __hash__, _missing_, _generate_next_value_...) while it "
                                "makes the members, at import; an Enum may hold only members (NAME = literal) "
                                "and methods whose names do not start with _ (def label(self) rather than "
                                "__str__)" % node.name)
                elif isinstance(st, ast.ClassDef):
                    self.refuse(st, "%s is an Enum: a class inside it would be made a member at import; "
                                "define %s at the top level" % (node.name, st.name))
        return metas

    def base_metaclasses(self, node):
        """(the metaclasses a class base brings, whether it is a class of this tool), or None
        when the checker cannot tell what the base is."""
        if isinstance(node, ast.Subscript):
            node = node.value  # dict[str, int], typing.Generic[T]: the class subscripted
        value = MISSING
        if isinstance(node, ast.Name):
            for scope in (self.class_metas[-1], self.class_metas[0]):
                if node.id in scope:
                    metas = scope[node.id]
                    return None if metas is None else (metas, True)
            if node.id in self.values:
                value = self.values[node.id]
            elif node.id not in self.aliases and hasattr(builtins, node.id):
                value = getattr(builtins, node.id)
        elif isinstance(node, ast.Attribute):
            mod = self.resolve(node.value)
            if isinstance(mod, types.ModuleType):
                value = getattr(mod, node.attr, MISSING)
        metas = metaclasses_of(value)
        return None if metas is None else (metas, False)

    def refuse_decorators(self, node):
        for d in node.decorator_list:
            self.refuse(d, "decorators are not allowed (they run at import); write plain functions and classes")

    def refuse_async(self, node):
        self.refuse(node, "async code is not supported")

    visit_AsyncFunctionDef = visit_Await = visit_AsyncFor = visit_AsyncWith = refuse_async

    def visit_AnnAssign(self, node):
        self.check_type(node.annotation)
        self.generic_visit(node)

    def check_type(self, node):
        """Annotations and bases are evaluated when the def or class runs: types only
        (int, list[str], X | None, typing.Optional[X], "Forward")."""
        if isinstance(node, ast.Name) or isinstance(node, ast.Constant) and not isinstance(node.value, str):
            return
        if isinstance(node, ast.Attribute):
            return self.check_type(node.value)
        if isinstance(node, ast.Subscript):
            self.check_type(node.value)
            return self.check_type(node.slice)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            self.check_type(node.left)
            return self.check_type(node.right)
        if isinstance(node, (ast.Tuple, ast.List)):
            for e in node.elts:
                self.check_type(e)
            return
        if isinstance(node, ast.Constant):  # a string annotation: typing may evaluate it
            try:
                inner = ast.parse(node.value.strip(), mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return self.refuse(node, "a string annotation must be a type expression")
            for n in ast.walk(inner):
                if "lineno" in n._attributes:
                    n.lineno, n.col_offset = node.lineno, node.col_offset
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                    self.receivers.add(id(n.value))
            self.check_type(inner)
            return self.visit(inner)
        self.refuse(node, "annotations and bases are evaluated at import: write a type (int, "
                    "list[str], X | None), not %s" % describe_expr(node))


def binding_counts(tree):
    """How many times each name is bound anywhere in the file: by a def or class, an
    assignment or deletion, a parameter, an import, an except or match name, or global."""
    counts = {}
    for node in ast.walk(tree):
        names = ()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = (node.name,)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names = (node.id,)
        elif isinstance(node, ast.arg):
            names = (node.arg,)
        elif isinstance(node, ast.alias):
            names = ((node.asname or node.name).split(".")[0],)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names = node.names
        elif isinstance(node, ast.ExceptHandler) or type(node).__name__ in ("MatchAs", "MatchStar"):
            names = (node.name,) if node.name else ()
        elif type(node).__name__ == "MatchMapping":
            names = (node.rest,) if node.rest else ()
        for n in names:
            counts[n] = counts.get(n, 0) + 1
    return counts


def is_super_protocol(node):
    """Whether node is super().__name__, with no arguments to super and a protocol method
    a class may define: the parent's own method, bound to this instance (the zero-argument
    super() reads its class and instance from the method, never from its caller)."""
    return isinstance(node, ast.Attribute) and node.attr in PROTOCOL_METHODS and \
        isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) and \
        node.value.func.id == "super" and not node.value.args and not node.value.keywords


def metaclasses_of(value):
    """The metaclasses a class base brings: the class's, or those of the classes its
    __mro_entries__ puts in its place (typing.NamedTuple, typing.List); None when value is
    not something a class can derive from."""
    if isinstance(value, type):
        return frozenset([type(value)])
    if value is MISSING or isinstance(value, types.ModuleType):
        return None
    entries = getattr(value, "__mro_entries__", None)  # standard-library code, run in the checker
    if not callable(entries):
        return None
    try:
        bases = entries((value,))
    except Exception:
        return None
    if not isinstance(bases, tuple) or not all(isinstance(b, type) for b in bases):
        return None
    return frozenset(type(b) for b in bases)


def is_enum_meta(meta):
    # enum as MODULES.get("enum") would give it, without importing it: a metaclass that
    # exists while enum is not loaded is no EnumMeta.
    enum = sys.modules.get("enum") if "enum" in MODULES else None
    return enum is not None and isinstance(meta, type) and issubclass(meta, enum.EnumMeta)


def safe_metaclass(meta):
    return meta is type or is_enum_meta(meta) or (
        getattr(meta, "__module__", None), getattr(meta, "__qualname__", None)) in SAFE_METACLASSES


def dotted_name(node):
    """json.decoder for the expression json.decoder (ast.unparse is Python 3.9+)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return dotted_name(node.value) + "." + node.attr
    return "(...)"


def format_fields_problem(text, depth=0):
    """Why a literal format string may not be used with .format, or None."""
    try:
        parsed = list(_string.formatter_parser(text))  # string.Formatter().parse(text)
    except (ValueError, TypeError) as e:
        return "%r is not a valid format string: %s" % (text[:40], e)
    for _, field, spec, _ in parsed:
        if field and ("." in field or "[" in field):
            return ("format field {%s} reads an attribute or an item; format the value itself, "
                    "like \"{}\".format(obj.name) or an f-string" % field)
        if spec and field is not None:
            if depth >= 2:
                return "format fields nested more than two deep are not valid"
            why = format_fields_problem(spec, depth + 1)
            if why:
                return why
    return None


def is_docstring(st):
    return isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str)


def describe_stmt(st):
    if isinstance(st, ast.Expr):
        return "call" if isinstance(st.value, ast.Call) else "expression"
    return {"For": "for loop", "While": "while loop", "With": "with", "Try": "try", "If": "if"}.get(
        type(st).__name__, type(st).__name__.lower() + " statement")


def describe_expr(node):
    return {"Call": "a call", "Lambda": "a lambda"}.get(type(node).__name__, "an expression")
