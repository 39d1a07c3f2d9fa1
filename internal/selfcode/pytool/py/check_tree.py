"""The static gate, part 2 of 3: the rules on the syntax tree.

Three ideas. Nothing runs at import: the top level holds only imports, UPPERCASE = literal
constants, def and class (no decorators, literal defaults, annotations that are types).
Imports are allowlisted, and a name bound to a module is only ever used as module.attr,
resolved here against the real module, so typing.sys or json.codecs is refused. No
interpreter internals: no dunder names, no exec/eval/compile/open/getattr..., no frames.
"""


class Walker(ast.NodeVisitor):
    def __init__(self, src, kind, name, tool_names):
        self.src, self.kind, self.name = src, kind, name
        self.tool_names = tool_names  # for the test file: what the tool defines
        self.aliases = {}             # name -> module (or HOST) it is bound to
        self.receivers = set()        # id() of each Name that is the x in x.attr
        self.scope = ["module"]
        self.uses_host = None         # the first node that imports the host module
        self.shown_allowlist = False

    def refuse(self, node, message):
        self.src.at(node, message)

    # ---- entry --------------------------------------------------------------------

    def check(self):
        tree = self.src.tree
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                self.receivers.add(id(node.value))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.check_import(node)
        self.check_top_level(tree.body)
        self.visit(tree)

    def check_top_level(self, body):
        seen = {}
        for i, st in enumerate(body):
            if i == 0 and is_docstring(st) or isinstance(st, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(st, (ast.Assign, ast.AnnAssign)):
                target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else getattr(st, "target", None)
                if not isinstance(target, ast.Name) or not CONST_RE.match(target.id):
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
            elif isinstance(st, ast.If) and "__name__" in ast.dump(st.test):
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
                if self.tool_names is not None and a.name not in self.tool_names:
                    self.refuse(node, "%s.py defines no top-level %s" % (self.name, a.name))
                self.bind(node, bound, None)
            elif mod in MODULES:
                value = self.check_module_attr(node, MODULES[mod], mod, a.name)
                ok_module = isinstance(value, types.ModuleType) and allowed_module(value)
                self.bind(node, bound, value if ok_module else None)
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
        elif attr in REFUSED_ATTRIBUTES:
            self.refuse(node, "%s is not allowed (reflective access)" % where)
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
        if not ident.isascii() or unicodedata.normalize("NFKC", ident) != ident:
            self.refuse(node, "non-ASCII %s %r; use ASCII names" % (what, ident))
        elif is_dunder(ident):
            self.refuse(node, "%s: dunder names are not allowed (they reach interpreter internals)" % ident)
            return False
        return True

    def check_binding(self, node, ident):
        """A name being bound: by an import, def, class, parameter, target or handler."""
        if self.check_ident(node, ident):
            if ident in REFUSED_BUILTINS:
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

    def visit_Attribute(self, node):
        attr = node.attr
        if self.check_ident(node, attr, "attribute"):
            base = self.resolve(node.value)
            if base is HOST:
                if attr not in HOST_FUNCTIONS or not isinstance(node.ctx, ast.Load):
                    self.refuse(node, "%s provides only %s" % (HOST_MODULE, ", ".join(HOST_FUNCTIONS)))
            elif base is not None:
                dotted = ast.unparse(node.value)
                if not isinstance(node.ctx, ast.Load):
                    self.refuse(node, "%s.%s: module attributes cannot be assigned or deleted" % (dotted, attr))
                else:
                    self.check_module_attr(node, base, dotted, attr)
            elif attr in REFUSED_ATTRIBUTES:
                self.refuse(node, ".%s is not allowed (frame, code or reflective access)" % attr)
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
            if self.check_ident(node, attr, "attribute") and attr in REFUSED_ATTRIBUTES:
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
        self.check_binding(node, node.name)
        self.refuse_decorators(node)
        if node.keywords:
            self.refuse(node, "class keywords (metaclass=...) are not allowed")
        if getattr(node, "type_params", None):
            self.refuse(node, "type parameters are not allowed")
        for b in node.bases:
            self.check_type(b)
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
        self.generic_visit(node)
        self.scope.pop()

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


def is_docstring(st):
    return isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str)


def describe_stmt(st):
    if isinstance(st, ast.Expr):
        return "call" if isinstance(st.value, ast.Call) else "expression"
    return {"For": "for loop", "While": "while loop", "With": "with", "Try": "try", "If": "if"}.get(
        type(st).__name__, type(st).__name__.lower() + " statement")


def describe_expr(node):
    return {"Call": "a call", "Lambda": "a lambda"}.get(type(node).__name__, "an expression")
