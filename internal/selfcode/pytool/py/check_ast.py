"""The static gate, part 0 of 4 (the Go side runs it as the head of part 1): the ast and
symtable the checker uses, built over _ast and _symtable.

The ast module imports contextlib and enum (and with them functools, collections,
operator...), and symtable imports weakref: a fifth of a gate's time, for what the checker
never uses (ast.unparse and its precedence table, symtable's caches). Their node classes
and tables are _ast's and _symtable's own; what the checker calls of the modules is below,
copied from Python 3.11's ast.py and symtable.py, so that it behaves the same on every
Python the checker runs on. The names ast and symtable in the checker are these
namespaces, never the real modules, which the checker does not import.
"""

import _ast
import _symtable


def _ast_namespace():
    ns = type(_ast)("shelldon_ast")
    ns.__dict__.update((k, v) for k, v in vars(_ast).items() if not k.startswith("__"))
    AST, Constant, Expression = _ast.AST, _ast.Constant, _ast.Expression

    def parse(source, filename="<unknown>", mode="exec"):
        """ast.parse(source, filename, mode): compile with PyCF_ONLY_AST."""
        return compile(source, filename, mode, _ast.PyCF_ONLY_AST)

    def iter_fields(node):
        for field in node._fields:
            try:
                yield field, getattr(node, field)
            except AttributeError:
                pass

    def iter_child_nodes(node):
        for _, field in iter_fields(node):
            if isinstance(field, AST):
                yield field
            elif isinstance(field, list):
                for item in field:
                    if isinstance(item, AST):
                        yield item

    def walk(node):
        """ast.walk: node and every node under it, breadth first, in ast.walk's order."""
        todo, i = [node], 0
        while i < len(todo):
            node = todo[i]
            i += 1
            todo.extend(iter_child_nodes(node))
            yield node

    class NodeVisitor(object):
        def visit(self, node):
            method = "visit_" + node.__class__.__name__
            visitor = getattr(self, method, self.generic_visit)
            return visitor(node)

        def generic_visit(self, node):
            for _, value in iter_fields(node):
                if isinstance(value, list):
                    for item in value:
                        if isinstance(item, AST):
                            self.visit(item)
                elif isinstance(value, AST):
                    self.visit(value)

    def literal_eval(node_or_string):
        if isinstance(node_or_string, str):
            node_or_string = parse(node_or_string.lstrip(" \t"), mode="eval")
        if isinstance(node_or_string, Expression):
            node_or_string = node_or_string.body

        def _raise_malformed_node(node):
            msg = "malformed node or string"
            lno = getattr(node, "lineno", None)
            if lno:
                msg += " on line %s" % lno
            raise ValueError(msg + ": %r" % (node,))

        def _convert_num(node):
            if not isinstance(node, Constant) or type(node.value) not in (int, float, complex):
                _raise_malformed_node(node)
            return node.value

        def _convert_signed_num(node):
            if isinstance(node, _ast.UnaryOp) and isinstance(node.op, (_ast.UAdd, _ast.USub)):
                operand = _convert_num(node.operand)
                if isinstance(node.op, _ast.UAdd):
                    return + operand
                else:
                    return - operand
            return _convert_num(node)

        def _convert(node):
            if isinstance(node, Constant):
                return node.value
            elif isinstance(node, _ast.Tuple):
                return tuple(map(_convert, node.elts))
            elif isinstance(node, _ast.List):
                return list(map(_convert, node.elts))
            elif isinstance(node, _ast.Set):
                return set(map(_convert, node.elts))
            elif (isinstance(node, _ast.Call) and isinstance(node.func, _ast.Name) and
                  node.func.id == "set" and node.args == node.keywords == []):
                return set()
            elif isinstance(node, _ast.Dict):
                if len(node.keys) != len(node.values):
                    _raise_malformed_node(node)
                return dict(zip(map(_convert, node.keys),
                                map(_convert, node.values)))
            elif isinstance(node, _ast.BinOp) and isinstance(node.op, (_ast.Add, _ast.Sub)):
                left = _convert_signed_num(node.left)
                right = _convert_num(node.right)
                if isinstance(left, (int, float)) and isinstance(right, complex):
                    if isinstance(node.op, _ast.Add):
                        return left + right
                    else:
                        return left - right
            return _convert_signed_num(node)
        return _convert(node_or_string)

    def dump_contains(node, text):
        """Whether text is in ast.dump(node): in the repr of a field's value that is not a
        node (a name, an attribute, a constant...), the only places dump writes anything
        the tree holds (its other text is class and field names, and punctuation)."""
        for n in walk(node):
            for _, value in iter_fields(n):
                for v in (value if isinstance(value, list) else [value]):
                    if not isinstance(v, AST) and text in repr(v):
                        return True
        return False

    for f in (parse, iter_fields, iter_child_nodes, walk, NodeVisitor, literal_eval, dump_contains):
        setattr(ns, f.__name__, f)
    return ns


ast = _ast_namespace()
del _ast_namespace


# symtable() and the methods of its tables and symbols that check_tree.py calls, as
# Python 3.11's symtable.py defines them, over the same raw tables.
def _symtable_namespace():
    ns = type(_symtable)("shelldon_symtable")
    USE, DEF_LOCAL = _symtable.USE, _symtable.DEF_LOCAL
    DEF_IMPORT, DEF_BOUND = _symtable.DEF_IMPORT, _symtable.DEF_BOUND
    SCOPE_OFF, SCOPE_MASK = _symtable.SCOPE_OFF, _symtable.SCOPE_MASK
    GLOBAL_IMPLICIT, GLOBAL_EXPLICIT = _symtable.GLOBAL_IMPLICIT, _symtable.GLOBAL_EXPLICIT

    class Symbol:
        def __init__(self, name, flags, namespaces, module_scope):
            self.name, self.flags, self.namespaces, self.module_scope = name, flags, namespaces, module_scope
            self.scope = (flags >> SCOPE_OFF) & SCOPE_MASK

        def get_name(self):
            return self.name

        def is_referenced(self):
            return bool(self.flags & USE)

        def is_global(self):
            return bool(self.scope in (GLOBAL_IMPLICIT, GLOBAL_EXPLICIT)
                        or (self.module_scope and self.flags & DEF_BOUND))

        def is_declared_global(self):
            return bool(self.scope == GLOBAL_EXPLICIT)

        def is_imported(self):
            return bool(self.flags & DEF_IMPORT)

        def is_assigned(self):
            return bool(self.flags & DEF_LOCAL)

        def is_namespace(self):
            return bool(self.namespaces)

    class SymbolTable:
        def __init__(self, raw, filename):
            self.raw, self.filename = raw, filename

        def get_lineno(self):
            return self.raw.lineno

        def get_children(self):
            return [SymbolTable(st, self.filename) for st in self.raw.children]

        def get_symbols(self):
            raw = self.raw
            return [Symbol(name, flags, [st for st in raw.children if st.name == name], raw.name == "top")
                    for name, flags in raw.symbols.items()]

    def symtable(code, filename, compile_type):
        return SymbolTable(_symtable.symtable(code, filename, compile_type), filename)

    ns.symtable = symtable
    return ns


symtable = _symtable_namespace()
del _symtable_namespace
