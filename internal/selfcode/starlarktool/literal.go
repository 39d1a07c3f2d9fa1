package starlarktool

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// maxLiteralDepth bounds the nesting of lists, tuples and dicts in a literal.
const maxLiteralDepth = 32

// notLiteral says where a literal stops being one, and what was found.
type notLiteral struct {
	pos   syntax.Position
	found string
}

// literal builds the value of expr from the syntax tree alone, executing
// nothing: strings (joined with + if need be), numbers (with a sign),
// True, False, None, and lists, tuples and dicts of literals.
func literal(e syntax.Expr, depth int) (starlark.Value, *notLiteral) {
	if depth > maxLiteralDepth {
		return nil, &notLiteral{syntax.Start(e), fmt.Sprintf("a literal nested more than %d levels deep", maxLiteralDepth)}
	}
	switch e := e.(type) {
	case *syntax.Literal:
		switch v := e.Value.(type) {
		case string:
			if e.Token == syntax.BYTES {
				break
			}
			return starlark.String(v), nil
		case int64:
			return starlark.MakeInt64(v), nil
		case *big.Int:
			return starlark.MakeBigInt(v), nil
		case float64:
			return starlark.Float(v), nil
		}
	case *syntax.Ident:
		switch e.Name {
		case "True":
			return starlark.True, nil
		case "False":
			return starlark.False, nil
		case "None":
			return starlark.None, nil
		}
	case *syntax.ParenExpr:
		return literal(e.X, depth)
	case *syntax.UnaryExpr:
		if e.Op != syntax.MINUS && e.Op != syntax.PLUS || e.X == nil {
			break
		}
		x, bad := literal(e.X, depth)
		if bad != nil {
			return nil, bad
		}
		switch x.(type) {
		case starlark.Int, starlark.Float:
			if v, err := starlark.Unary(e.Op, x); err == nil {
				return v, nil
			}
		}
	case *syntax.BinaryExpr:
		if e.Op != syntax.PLUS {
			break
		}
		x, bad := literal(e.X, depth)
		if bad != nil {
			return nil, bad
		}
		y, bad := literal(e.Y, depth)
		if bad != nil {
			return nil, bad
		}
		xs, xok := x.(starlark.String)
		ys, yok := y.(starlark.String)
		if xok && yok {
			return xs + ys, nil
		}
		return nil, &notLiteral{e.OpPos, "+ between values other than strings (only string literals may be joined)"}
	case *syntax.ListExpr:
		elems, bad := literals(e.List, depth+1)
		if bad != nil {
			return nil, bad
		}
		return starlark.NewList(elems), nil
	case *syntax.TupleExpr:
		elems, bad := literals(e.List, depth+1)
		if bad != nil {
			return nil, bad
		}
		return starlark.Tuple(elems), nil
	case *syntax.DictExpr:
		d := starlark.NewDict(len(e.List))
		for _, entry := range e.List {
			entry := entry.(*syntax.DictEntry)
			k, bad := literal(entry.Key, depth+1)
			if bad != nil {
				return nil, bad
			}
			v, bad := literal(entry.Value, depth+1)
			if bad != nil {
				return nil, bad
			}
			if _, found, err := d.Get(k); err != nil {
				return nil, &notLiteral{syntax.Start(entry.Key), "a dict key that cannot be a key (" + err.Error() + ")"}
			} else if found {
				return nil, &notLiteral{syntax.Start(entry.Key), "the duplicate key " + k.String()}
			}
			if err := d.SetKey(k, v); err != nil {
				return nil, &notLiteral{syntax.Start(entry.Key), "a dict key that cannot be a key (" + err.Error() + ")"}
			}
		}
		return d, nil
	}
	return nil, &notLiteral{syntax.Start(e), describe(e)}
}

func literals(list []syntax.Expr, depth int) ([]starlark.Value, *notLiteral) {
	out := make([]starlark.Value, 0, len(list))
	for _, x := range list {
		v, bad := literal(x, depth)
		if bad != nil {
			return nil, bad
		}
		out = append(out, v)
	}
	return out, nil
}

// describe names the kind of expression e, for a refusal.
func describe(e syntax.Expr) string {
	switch e := e.(type) {
	case *syntax.CallExpr:
		return "a call to " + dotted(e.Fn)
	case *syntax.Comprehension:
		return "a comprehension"
	case *syntax.LambdaExpr:
		return "a lambda"
	case *syntax.Ident:
		return "the variable " + e.Name
	case *syntax.DotExpr:
		return "the attribute " + dotted(e)
	case *syntax.IndexExpr:
		return "an index expression"
	case *syntax.SliceExpr:
		return "a slice expression"
	case *syntax.CondExpr:
		return "a conditional expression"
	case *syntax.BinaryExpr:
		return "an expression with the operator " + e.Op.String()
	case *syntax.UnaryExpr:
		return "an expression with the operator " + e.Op.String()
	case *syntax.Literal:
		if e.Token == syntax.BYTES {
			return "a bytes literal"
		}
	}
	return fmt.Sprintf("an expression (%T)", e)
}

// dotted renders a callee such as json.decode, shortened when long.
func dotted(e syntax.Expr) string {
	var parts []string
	prefix := "..."
	for len(parts) < 5 && prefix != "" {
		switch x := e.(type) {
		case *syntax.DotExpr:
			parts = append(parts, x.Name.Name)
			e = x.X
		case *syntax.CallExpr:
			parts = append(parts, "(...)")
			e = x.Fn
		case *syntax.Ident:
			parts = append(parts, x.Name)
			prefix = ""
		case *syntax.Literal:
			parts = append(parts, clip(x.Raw, 40))
			prefix = ""
		default:
			parts = append(parts, "(...)")
			prefix = ""
		}
	}
	slices.Reverse(parts)
	return prefix + strings.ReplaceAll(strings.Join(parts, "."), ".(...)", "(...)")
}

// clip cuts s to about n bytes, at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// toJSON converts a literal's value to the Go value encoding/json writes:
// dicts need string keys and floats must be finite. where names the value
// in an error, as in PARAMS_SCHEMA["properties"].
func toJSON(v starlark.Value, where string) (any, error) {
	switch v := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(v), nil
	case starlark.String:
		return string(v), nil
	case starlark.Int:
		if i, ok := v.Int64(); ok {
			return i, nil
		}
		return json.Number(v.String()), nil
	case starlark.Float:
		f := float64(v)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%s is %v, which JSON cannot hold", where, v)
		}
		return f, nil
	case *starlark.List:
		out := make([]any, v.Len())
		for i := range out {
			x, err := toJSON(v.Index(i), fmt.Sprintf("%s[%d]", where, i))
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case starlark.Tuple:
		return toJSON(starlark.NewList(v), where)
	case *starlark.Dict:
		out := make(map[string]any, v.Len())
		for _, kv := range v.Items() {
			k, ok := kv[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("%s has the key %s; JSON object keys must be strings", where, kv[0])
			}
			x, err := toJSON(kv[1], fmt.Sprintf("%s[%q]", where, string(k)))
			if err != nil {
				return nil, err
			}
			out[string(k)] = x
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s is a %s, which JSON cannot hold", where, v.Type())
}
