// Package starlarkjson is go.starlark.net's json module with a nesting
// limit on decode: its recursive descent has none, and
// json.decode("[" * 10**7) would overflow the Go stack, which kills the
// process rather than failing the call. Both places shelldon runs
// Starlark (the eval tool and self-coded tools) use it.
package starlarkjson

import (
	"fmt"

	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Module returns the json module whose decode refuses text nested deeper
// than maxNest.
func Module(maxNest int) *starlarkstruct.Module {
	members := make(starlark.StringDict, len(starjson.Module.Members))
	for k, v := range starjson.Module.Members {
		members[k] = v
	}
	decode := starjson.Module.Members["decode"].(*starlark.Builtin)
	members["decode"] = starlark.NewBuiltin("json.decode", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		vals := append([]starlark.Value(nil), args...)
		for _, kv := range kwargs {
			vals = append(vals, kv[1])
		}
		for _, v := range vals {
			if s, ok := v.(starlark.String); ok && Nesting(string(s)) > maxNest {
				return nil, fmt.Errorf("json.decode: nesting deeper than %d", maxNest)
			}
		}
		return starlark.Call(thread, decode, args, kwargs)
	})
	return &starlarkstruct.Module{Name: "json", Members: members}
}

// Nesting returns the deepest bracket nesting of JSON text, outside strings.
func Nesting(s string) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
