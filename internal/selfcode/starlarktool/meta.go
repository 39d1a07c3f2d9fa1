package starlarktool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// maxHosts bounds CAPABILITIES["http"].
const maxHosts = 20

// schemaVersions are the $schema values the validator supports.
var schemaVersions = []string{
	"http://json-schema.org/draft-07/schema#",
	"https://json-schema.org/draft-07/schema#",
	"https://json-schema.org/draft/2020-12/schema",
}

// param is one of run's parameters.
type param struct {
	name       string
	pos        syntax.Position
	hasDefault bool
}

// checkSchema checks PARAMS_SCHEMA: a valid JSON Schema of an object whose
// properties are run's parameters. It returns the canonical JSON, the
// resolved schema and run's parameter names.
func checkSchema(top topLevel, run *syntax.DefStmt, p *problems) (json.RawMessage, *jsonschema.Resolved, []string) {
	params := runParams(run, p)
	names := make([]string, len(params))
	for i, pr := range params {
		names[i] = pr.name
	}
	v, ok := top.values["PARAMS_SCHEMA"]
	if !ok {
		p.add(syntax.Position{}, `PARAMS_SCHEMA is not defined; add PARAMS_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}, one property per parameter of run`)
		return nil, nil, names
	}
	pos := syntax.Start(top.stmts["PARAMS_SCHEMA"].RHS)
	if _, ok := v.(*starlark.Dict); !ok {
		p.add(pos, "PARAMS_SCHEMA must be a literal dict; found a %s", v.Type())
		return nil, nil, names
	}
	j, err := toJSON(v, "PARAMS_SCHEMA")
	if err != nil {
		p.add(pos, "%v", err)
		return nil, nil, names
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		p.add(pos, "PARAMS_SCHEMA cannot be written as JSON: %v", err)
		return nil, nil, names
	}
	raw := json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))

	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		p.add(pos, "PARAMS_SCHEMA is not a valid JSON Schema: %v", err)
		return raw, nil, names
	}
	if s.Schema != "" && !slices.Contains(schemaVersions, s.Schema) {
		p.add(pos, "PARAMS_SCHEMA has $schema %q, which is not supported; leave $schema out", s.Schema)
		return raw, nil, names
	}
	if s.Type != "object" {
		found := "no type"
		if s.Type != "" {
			found = fmt.Sprintf("%q", s.Type)
		} else if s.Types != nil {
			found = fmt.Sprintf("%q", s.Types)
		}
		p.add(pos, `PARAMS_SCHEMA must have "type": "object" at the top, since run takes named arguments; found %s`, found)
		return raw, nil, names
	}
	if err := checkTypes(&s, ""); err != nil {
		p.add(pos, "PARAMS_SCHEMA is not a valid JSON Schema: %v", err)
		return raw, nil, names
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		p.add(pos, "PARAMS_SCHEMA is not a valid JSON Schema: %v", err)
		return raw, nil, names
	}
	if run != nil {
		matchParams(&s, params, pos, p)
	}
	return raw, rs, names
}

// jsonTypes are the values "type" may take.
var jsonTypes = []string{"string", "number", "integer", "boolean", "array", "object", "null"}

// checkTypes checks the "type" of s and of its subschemas, which
// Schema.Resolve does not: it does not check a schema against the
// meta-schema. path is s's JSON pointer.
func checkTypes(s *jsonschema.Schema, path string) error {
	for _, typ := range append([]string{s.Type}, s.Types...) {
		if typ != "" && !slices.Contains(jsonTypes, typ) {
			where := ""
			if path != "" {
				where = " at " + path
			}
			return fmt.Errorf("the type %q%s is not a JSON type; use one of %s", typ, where, strings.Join(jsonTypes, ", "))
		}
	}
	// Subschemas sit in fields of type *Schema, []*Schema and
	// map[string]*Schema.
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" { // Items and the like marshal by hand
			name = strings.ToLower(sf.Name[:1]) + sf.Name[1:]
		}
		switch sub := f.Interface().(type) {
		case *jsonschema.Schema:
			if sub != nil {
				if err := checkTypes(sub, path+"/"+name); err != nil {
					return err
				}
			}
		case []*jsonschema.Schema:
			for j, x := range sub {
				if x != nil {
					if err := checkTypes(x, fmt.Sprintf("%s/%s/%d", path, name, j)); err != nil {
						return err
					}
				}
			}
		case map[string]*jsonschema.Schema:
			for _, k := range sortedKeys(sub) {
				if x := sub[k]; x != nil {
					if err := checkTypes(x, path+"/"+name+"/"+k); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// runParams returns run's named parameters, refusing *args and **kwargs.
func runParams(run *syntax.DefStmt, p *problems) []param {
	if run == nil {
		return nil
	}
	var out []param
	for _, x := range run.Params {
		switch x := x.(type) {
		case *syntax.Ident:
			out = append(out, param{x.Name, x.NamePos, false})
		case *syntax.BinaryExpr:
			id := x.X.(*syntax.Ident)
			out = append(out, param{id.Name, id.NamePos, true})
		case *syntax.UnaryExpr:
			if x.X == nil {
				continue // the bare * before keyword-only parameters
			}
			p.add(x.OpPos, "run may not take %s%s; it is called with the arguments as keywords, one named parameter per PARAMS_SCHEMA property",
				x.Op, x.X.(*syntax.Ident).Name)
		}
	}
	return out
}

// matchParams wants PARAMS_SCHEMA's properties to be run's parameters, and
// every parameter without a default to be required.
func matchParams(s *jsonschema.Schema, params []param, pos syntax.Position, p *problems) {
	names := make([]string, len(params))
	for i, pr := range params {
		names[i] = pr.name
	}
	for _, pr := range params {
		if _, ok := s.Properties[pr.name]; !ok {
			p.add(pr.pos, "run's parameter %s is not in PARAMS_SCHEMA's properties; describe it there, with its type", pr.name)
			continue
		}
		if !pr.hasDefault && !slices.Contains(s.Required, pr.name) {
			p.add(pr.pos, `run's parameter %s has no default, so PARAMS_SCHEMA must list it in "required" (or give it a default: %s=None)`, pr.name, pr.name)
		}
	}
	for _, prop := range sortedKeys(s.Properties) {
		if !slices.Contains(names, prop) {
			p.add(pos, "PARAMS_SCHEMA has the property %q, but run has no such parameter (%s); run is called with the arguments as keywords", prop, describeParams(names))
		}
	}
	for _, req := range s.Required {
		if !slices.Contains(names, req) {
			if _, ok := s.Properties[req]; ok {
				continue // reported above
			}
			p.add(pos, "PARAMS_SCHEMA requires %q, but run has no such parameter (%s)", req, describeParams(names))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkCapabilities checks CAPABILITIES, {} when absent, and returns it
// with the http hosts.
func checkCapabilities(top topLevel, p *problems) (map[string][]string, []string) {
	caps := map[string][]string{}
	v, ok := top.values["CAPABILITIES"]
	if !ok {
		return caps, nil
	}
	rhs := unparen(top.stmts["CAPABILITIES"].RHS)
	dict, ok := rhs.(*syntax.DictExpr)
	if !ok {
		p.add(syntax.Start(rhs), `CAPABILITIES must be a literal dict, like {} or {"http": ["api.example.com"]}; found a %s`, v.Type())
		return caps, nil
	}
	var hosts []string
	for _, e := range dict.List {
		entry := e.(*syntax.DictEntry)
		k, _ := literal(entry.Key, 0)
		if k != starlark.String("http") {
			p.add(syntax.Start(entry.Key), `unknown capability %s; the only capability is "http", a list of hostnames the tool may GET from, like {"http": ["api.example.com"]}`, k)
			continue
		}
		hosts = checkHosts(entry.Value, p)
		caps["http"] = hosts
	}
	return caps, hosts
}

// checkHosts checks the list of hostnames of CAPABILITIES["http"].
func checkHosts(e syntax.Expr, p *problems) []string {
	var elems []syntax.Expr
	switch x := unparen(e).(type) {
	case *syntax.ListExpr:
		elems = x.List
	case *syntax.TupleExpr:
		elems = x.List
	default:
		p.add(syntax.Start(e), `CAPABILITIES["http"] must be a list of hostnames, like ["api.example.com"]`)
		return nil
	}
	switch {
	case len(elems) == 0:
		p.add(syntax.Start(e), `CAPABILITIES["http"] is empty; list the hostnames the tool needs, or drop the "http" key`)
	case len(elems) > maxHosts:
		p.add(syntax.Start(e), `CAPABILITIES["http"] lists %d hosts; the limit is %d`, len(elems), maxHosts)
	}
	var hosts []string
	for _, x := range elems {
		v, _ := literal(x, 0)
		h, ok := v.(starlark.String)
		if !ok {
			p.add(syntax.Start(x), `CAPABILITIES["http"] must hold hostname strings; found a %s`, v.Type())
			continue
		}
		if why := badHost(string(h)); why != "" {
			p.add(syntax.Start(x), `CAPABILITIES["http"] host %q is %s`, string(h), why)
			continue
		}
		if slices.Contains(hosts, string(h)) {
			p.add(syntax.Start(x), `CAPABILITIES["http"] lists %q twice`, string(h))
			continue
		}
		hosts = append(hosts, string(h))
	}
	return hosts
}

// badHost says why h is not a lowercase DNS name with at least two labels,
// or returns "".
func badHost(h string) string {
	bare := "; give the hostname alone, like \"api.example.com\""
	switch {
	case h == "":
		return "empty" + bare
	case strings.Contains(h, "://") || strings.ContainsAny(h, "/?#@"):
		return "a URL, not a hostname" + bare
	case strings.Contains(h, "*"):
		return "a wildcard; list each hostname the tool needs"
	case net.ParseIP(strings.Trim(h, "[]")) != nil:
		return "an IP address; list a DNS name"
	case strings.Contains(h, ":"):
		return "a hostname with a port; ports are not allowed" + bare
	case h != strings.ToLower(h):
		return "not lowercase; write " + fmt.Sprintf("%q", strings.ToLower(h))
	case len(h) > 253:
		return "longer than 253 characters"
	case strings.HasSuffix(h, "."):
		return "written with a trailing dot" + bare
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return "not a fully qualified DNS name" + bare
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "not a valid DNS name (a label is empty or longer than 63 characters)"
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "not a valid DNS name (letters a-z, digits, hyphens and dots only; write an international name in its xn-- form)"
			}
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "not a valid DNS name (a label starts or ends with a hyphen)"
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" || strings.HasPrefix(labels[len(labels)-1], "0x") {
		return "an IP address, or looks like one; list a DNS name"
	}
	return ""
}

func unparen(e syntax.Expr) syntax.Expr {
	for {
		p, ok := e.(*syntax.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}
