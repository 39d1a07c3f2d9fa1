package starlarktool

import (
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Meta is what a tool declares about itself, read without running it.
type Meta struct {
	Description  string
	ParamsSchema json.RawMessage     // canonical JSON: sorted keys, no HTML escaping
	Capabilities map[string][]string // never nil; {"http": [hosts]} at most
}

// tool is what inspect learns: the Meta plus what running the tool needs.
type tool struct {
	meta   Meta
	schema *jsonschema.Resolved
	params []string // run's parameter names, in order
	hosts  []string // CAPABILITIES["http"]
}

// toolPredeclared reports the host modules a tool's code may name.
//
// It and upperConst are functions rather than a map and a regexp made at
// package init: the package's init would run in every process of the
// binary, the idle daemon included, which never inspects a tool
// (BenchmarkDaemonIdleRSS).
func toolPredeclared(name string) bool {
	return name == "json" || name == "math" || name == "http"
}

// upperConst reports whether name has the shape of a tool's other
// top-level names: ^_*[A-Z][A-Z0-9_]*$.
func upperConst(name string) bool {
	i := 0
	for i < len(name) && name[i] == '_' {
		i++
	}
	if i == len(name) || name[i] < 'A' || name[i] > 'Z' {
		return false
	}
	for _, c := range []byte(name[i+1:]) {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Inspect reads a tool's metadata and checks its conventions statically:
// it parses and resolves code but never executes it. See the package doc
// for the rules. An error lists what to fix, by line:col.
func Inspect(code []byte) (Meta, error) {
	t, err := inspect(code)
	if err != nil {
		return Meta{}, err
	}
	return t.meta, nil
}

func inspect(code []byte) (*tool, error) {
	if err := checkText(code); err != nil {
		return nil, err
	}
	f, err := parse(toolFile, code)
	if err != nil {
		return nil, err
	}
	var p problems
	top := checkTopLevel(f, true, &p)
	if !p.empty() {
		return nil, p.err()
	}
	t := &tool{}
	t.meta.Description = checkDescription(top, &p)
	run := top.defs["run"]
	if run == nil {
		p.add(syntax.Position{}, "run is not defined; define it at top level: def run(...): ... return a string (or a value converted to JSON)")
	}
	t.meta.ParamsSchema, t.schema, t.params = checkSchema(top, run, &p)
	t.meta.Capabilities, t.hosts = checkCapabilities(top, &p)
	resolveFile(f, toolPredeclared, starlark.Universe.Has, &p)
	if p.empty() {
		checkSelfRecursion(f, &p)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return t, nil
}

// CheckTest checks a test file statically, executing nothing: the same
// character rules and size limit as a tool, no load, only defs and
// literal assignments at top level, and at least one top-level def test_*
// taking no parameters. Names are resolved against the tool's globals only
// when the test runs.
func CheckTest(test []byte) error {
	if err := checkText(test); err != nil {
		return err
	}
	f, err := parse(testFile, test)
	if err != nil {
		return err
	}
	var p problems
	top := checkTopLevel(f, false, &p)
	if !p.empty() {
		return p.err()
	}
	n := 0
	for _, name := range top.order {
		def := top.defs[name]
		if def == nil || !strings.HasPrefix(name, "test_") {
			continue
		}
		n++
		if len(def.Params) > 0 {
			p.add(def.Name.NamePos, "%s takes parameters; a test function takes none: def %s():", name, name)
		}
	}
	if n == 0 {
		p.add(syntax.Position{}, "the test defines no test function; define at least one top-level def test_something(): that calls the tool's functions and checks results with assert.eq(got, want)")
	}
	// The tool's globals and assert are not known here: every free name
	// passes, but while, top-level control flow and reassignment are caught.
	resolveFile(f, func(string) bool { return true }, starlark.Universe.Has, &p)
	if p.empty() {
		checkSelfRecursion(f, &p)
	}
	return p.err()
}

// topLevel is what a file binds at top level.
type topLevel struct {
	defs   map[string]*syntax.DefStmt
	values map[string]starlark.Value // literal assignments
	stmts  map[string]*syntax.AssignStmt
	order  []string // def names in source order
}

// checkTopLevel refuses anything at top level that would run code when the
// module loads: only defs with literal defaults, docstrings and literal
// assignments remain. A tool's assignments bind UPPERCASE names.
func checkTopLevel(f *syntax.File, isTool bool, p *problems) topLevel {
	top := topLevel{
		defs:   map[string]*syntax.DefStmt{},
		values: map[string]starlark.Value{},
		stmts:  map[string]*syntax.AssignStmt{},
	}
	for _, s := range f.Stmts {
		switch s := s.(type) {
		case *syntax.LoadStmt:
			modules := "json, math and http"
			if !isTool {
				modules = "json, math, assert and the tool's globals"
			}
			p.add(s.Load, "load is not available: %s are predeclared; use them directly (for example json.encode(x))", modules)
		case *syntax.DefStmt:
			name := s.Name.Name
			switch name {
			case "True", "False", "None":
				p.add(s.Name.NamePos, "a function may not be named %s", name)
			}
			checkDefaults(s, p)
			top.defs[name] = s
			top.order = append(top.order, name)
		case *syntax.AssignStmt:
			checkAssign(s, isTool, &top, p)
		case *syntax.ExprStmt:
			if lit, ok := s.X.(*syntax.Literal); ok && lit.Token == syntax.STRING {
				continue // a docstring
			}
			p.add(syntax.Start(s.X), "top-level code is not allowed: found %s; the module is loaded before every call, so its top level may only define constants and functions; move this into a function", describe(s.X))
		case *syntax.IfStmt:
			p.add(s.If, "a top-level if statement is not allowed; the top level may only define constants and functions; move it into a function")
		case *syntax.ForStmt:
			p.add(s.For, "a top-level for loop is not allowed; the top level may only define constants and functions; move it into a function")
		case *syntax.WhileStmt:
			p.add(s.While, "while loops are not available; use a for loop over a bounded range inside a function")
		default:
			start, _ := s.Span()
			p.add(start, "this statement is not allowed at top level")
		}
	}
	return top
}

// checkDefaults refuses a def's default values that are not literals:
// they are evaluated when the module loads.
func checkDefaults(def *syntax.DefStmt, p *problems) {
	for _, param := range def.Params {
		b, ok := param.(*syntax.BinaryExpr)
		if !ok || b.Op != syntax.EQ {
			continue
		}
		if _, bad := literal(b.Y, 0); bad != nil {
			p.add(bad.pos, "the default of %s's parameter %s must be a literal (evaluated when the module loads); found %s; use None and compute the value inside the function",
				def.Name.Name, b.X.(*syntax.Ident).Name, bad.found)
		}
	}
}

// checkAssign accepts NAME = literal (for a tool, NAME in UPPERCASE).
func checkAssign(s *syntax.AssignStmt, isTool bool, top *topLevel, p *problems) {
	id, ok := s.LHS.(*syntax.Ident)
	switch {
	case s.Op != syntax.EQ:
		p.add(s.OpPos, "a top-level %s assignment is not allowed; bind each constant once, with =", s.Op)
		return
	case !ok:
		p.add(syntax.Start(s.LHS), "assign one top-level name per statement (NAME = literal)")
		return
	case isTool && !upperConst(id.Name):
		p.add(id.NamePos, "the top-level name %s must be an UPPERCASE constant (like RATE = 83.2) or a def; top-level variables are not allowed", id.Name)
		return
	}
	v, bad := literal(s.RHS, 0)
	if bad != nil {
		want := "a literal"
		switch id.Name {
		case "PARAMS_SCHEMA", "CAPABILITIES":
			want = "a literal dict"
		case "DESCRIPTION":
			want = "a string literal"
		}
		p.add(bad.pos, "%s must be %s (strings, numbers, True/False/None, lists, tuples and dicts of those); found %s; the top level may not compute anything, so compute inside a function",
			id.Name, want, bad.found)
		return
	}
	top.values[id.Name] = v
	top.stmts[id.Name] = s
}

// checkDescription wants a string of 1 to 1024 characters.
func checkDescription(top topLevel, p *problems) string {
	v, ok := top.values["DESCRIPTION"]
	if !ok {
		p.add(syntax.Position{}, `DESCRIPTION is not defined; add DESCRIPTION = "what the tool does, in one or two sentences"`)
		return ""
	}
	pos := syntax.Start(top.stmts["DESCRIPTION"].RHS)
	s, ok := v.(starlark.String)
	if !ok {
		p.add(pos, "DESCRIPTION must be a string; found a %s", v.Type())
		return ""
	}
	n := len([]rune(string(s)))
	switch {
	case strings.TrimSpace(string(s)) == "":
		p.add(pos, "DESCRIPTION is empty; say what the tool does")
	case n > 1024:
		p.add(pos, "DESCRIPTION is %d characters; the limit is 1024", n)
	}
	return string(s)
}

// checkSelfRecursion refuses a top-level def that calls itself by name:
// recursion fails at run time, so say so now. Mutual recursion is left to
// the run-time check.
func checkSelfRecursion(f *syntax.File, p *problems) {
	for _, s := range f.Stmts {
		def, ok := s.(*syntax.DefStmt)
		if !ok {
			continue
		}
		reported := false
		syntax.Walk(def, func(n syntax.Node) bool {
			if reported {
				return false
			}
			call, ok := n.(*syntax.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fn.(*syntax.Ident)
			if !ok || id.Name != def.Name.Name {
				return true
			}
			if b, ok := id.Binding.(*resolve.Binding); ok && b.Scope == resolve.Global {
				p.add(id.NamePos, "%s calls itself; recursion is not available; use a loop (for over a range, with an explicit stack if need be)", def.Name.Name)
				reported = true
			}
			return !reported
		})
	}
}

// describeParams lists run's parameters for messages.
func describeParams(params []string) string {
	if len(params) == 0 {
		return "run takes no parameters"
	}
	return "run's parameters are " + strings.Join(params, ", ")
}
