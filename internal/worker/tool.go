package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/lazy"
)

// Tool is one tool the model may call in a turn.
//
// Run receives arguments that were already filtered to Schema's declared
// properties and validated against it. A returned error is a failed result
// for the model (ToolResult{OK: false}), never a failure of the turn.
type Tool struct {
	Name        string
	Description string
	Tier        contracts.Tier
	// Schema is the parameter schema. A tool made by NewTool leaves it
	// nil and derives it from its Go type when it is first needed
	// (ResolveSchema): a worker is a fresh process per turn, and deriving
	// and resolving some twenty schemas by reflection would cost every
	// turn milliseconds for the few tools it calls.
	Schema *jsonschema.Schema
	Run    func(ctx context.Context, args json.RawMessage) (string, error)
	// Check, for a RISKY tool, refuses a call before the owner is asked
	// (a path the tool would never write, a URL it would never fetch), so
	// the owner only sees calls that can run. Run checks again.
	Check func(ctx context.Context, args json.RawMessage) error
	// Guard names what Check enforces, for the audit row and the line a
	// refused call leaves ("the workspace guard (…)").
	Guard string
	// Bind, for a RISKY tool, says what a call resolves to now (write_file:
	// the resolved path). It is shown to and approved by the owner with the
	// call, and Run gets it back (see BindingFrom) to refuse a call that
	// would now resolve elsewhere.
	Bind func(ctx context.Context, args json.RawMessage) (string, error)
	// Params is the parameter schema as JSON, for a tool that comes with
	// one (a self-coded tool) instead of Schema: it is decoded and resolved
	// only when the tool is called, so a thousand offered tools cost little.
	Params json.RawMessage

	params   json.RawMessage                    // the schema as sent to the model
	derive   func() (*jsonschema.Schema, error) // NewTool's: Schema from the Go type
	argsType string                             // NewTool's: reflect's name of that type
	once     sync.Once
	resolved *jsonschema.Resolved
	resErr   error
}

// Spec returns what the model is told about the tool. A built-in's
// parameter schema is the precomputed JSON (builtin_schemas.go); another
// tool's is Params, or Schema marshaled.
func (t *Tool) Spec() contracts.ToolSpec {
	if t.params == nil {
		t.params = t.Params
		if t.params == nil {
			if _, err := t.ResolveSchema(); err == nil {
				t.params, _ = json.Marshal(t.Schema)
			}
		}
	}
	return contracts.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.params}
}

// ArgsType is reflect's name of the Go type a tool made by NewTool decodes
// its arguments into ("" for another tool).
func (t *Tool) ArgsType() string { return t.argsType }

// ResolveSchema derives (for a tool made by NewTool), decodes (for Params)
// and resolves the tool's schema, once; the loop validates each call's
// arguments against it.
func (t *Tool) ResolveSchema() (*jsonschema.Resolved, error) {
	t.once.Do(func() {
		if t.Schema == nil && t.derive != nil {
			if t.Schema, t.resErr = t.derive(); t.resErr != nil {
				return
			}
		}
		if t.Schema == nil {
			var s jsonschema.Schema
			if len(t.Params) > 0 {
				if err := json.Unmarshal(t.Params, &s); err != nil {
					t.resErr = fmt.Errorf("the tool's parameter schema does not decode: %w", err)
					return
				}
			} else {
				s.Type = "object"
			}
			t.Schema = &s
		}
		t.resolved, t.resErr = t.Schema.Resolve(nil)
	})
	return t.resolved, t.resErr
}

// NewTool builds a Tool whose parameter schema is derived from the Go type In
// (when first needed: see Tool.Schema) and whose arguments are decoded into
// an In before fn runs.
func NewTool[In any](name, description string, tier contracts.Tier, fn func(context.Context, In) (string, error)) (*Tool, error) {
	return &Tool{
		Name:        name,
		Description: description,
		Tier:        tier,
		argsType:    reflect.TypeFor[In]().String(),
		derive: func() (*jsonschema.Schema, error) {
			schema, err := jsonschema.For[In](nil)
			if err != nil {
				return nil, fmt.Errorf("derive schema: %w", err)
			}
			return schema, nil
		},
		Run: func(ctx context.Context, raw json.RawMessage) (string, error) {
			var in In
			if err := json.Unmarshal(raw, &in); err != nil {
				return "", fmt.Errorf("arguments do not fit the schema: %v", err)
			}
			return fn(ctx, in)
		},
	}, nil
}

// NewBuiltin builds the built-in tool called name, as NewTool does, with the
// tier the catalogue gives it (contracts.BuiltinTools). A name the
// catalogue lacks is an error: every built-in is catalogued. The schema the
// model is told is the one precomputed for name and In (builtin_schemas.go),
// when there is one, so a turn derives by reflection only the schemas of
// the tools it calls.
func NewBuiltin[In any](name, description string, fn func(context.Context, In) (string, error)) (*Tool, error) {
	tier, ok := builtinTiers()[name]
	if !ok {
		return nil, fmt.Errorf("tool %s: not in the catalogue of built-in tools", name)
	}
	t, err := NewTool(name, description, tier, fn)
	if err != nil {
		return nil, err
	}
	if s, ok := builtinSchemas(name); ok && s.goType == t.argsType {
		t.params = json.RawMessage(s.json)
	}
	return t, nil
}

// builtinTiers is the catalogue's tier of each built-in by name, made once
// a process: a worker looks up each of some twenty built-ins as it builds a
// turn's tools, and contracts.BuiltinTools makes the whole catalogue afresh
// on each call (a tenth of the time the tools took to build). A zero-value
// lazy.Value rather than a package-level sync.OnceValue, whose call is init
// work for every process of the binary, the idle daemon included (package
// lazy).
func builtinTiers() map[string]contracts.Tier {
	return builtinTierMap.Get(func() map[string]contracts.Tier {
		tiers := map[string]contracts.Tier{}
		for _, b := range contracts.BuiltinTools() {
			tiers[b.Name] = b.Tier
		}
		return tiers
	})
}

var builtinTierMap lazy.Value[map[string]contracts.Tier]

// BuiltinSchema returns the parameter schema precomputed for the built-in
// tool called name and the Go type it was derived from, for the test that
// keeps builtin_schemas.go true to the types.
func BuiltinSchema(name string) (goType string, schema json.RawMessage, ok bool) {
	s, ok := builtinSchemas(name)
	return s.goType, json.RawMessage(s.json), ok
}

// builtinSchema is the parameter schema of a built-in, precomputed.
type builtinSchema struct {
	goType string // reflect's name of the argument type: a guard against a stale entry
	json   string // what json.Marshal makes of the schema jsonschema.For derives
}

// Registry holds the tools of a turn by name. It refuses duplicate names.
// It is safe for concurrent use: a tool may add tools to the turn it runs
// in (find_tools), for the next model call.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*Tool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{tools: map[string]*Tool{}} }

// Add registers t. A duplicate name is an error. The tool's schema is
// resolved when a call is first validated (Tool.ResolveSchema); that every
// built-in's resolves is a test (childproc's TestBuiltinSchemas).
func (r *Registry) Add(t *Tool) error {
	if t == nil || t.Name == "" {
		return fmt.Errorf("registry: tool without a name")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[t.Name]; dup {
		return fmt.Errorf("registry: duplicate tool %q", t.Name)
	}
	r.tools[t.Name] = t
	return nil
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Tools returns every registered tool, sorted by name.
func (r *Registry) Tools() []*Tool {
	r.mu.RLock()
	out := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Specs returns the specs of every registered tool, sorted by name.
func (r *Registry) Specs() []contracts.ToolSpec {
	tools := r.Tools()
	out := make([]contracts.ToolSpec, len(tools))
	for i, t := range tools {
		out[i] = t.Spec()
	}
	return out
}

type bindingKey struct{}

// WithBinding returns ctx carrying the binding the owner approved.
func WithBinding(ctx context.Context, binding string) context.Context {
	if binding == "" {
		return ctx
	}
	return context.WithValue(ctx, bindingKey{}, binding)
}

// BindingFrom returns the binding the owner approved for the running call,
// or "" when there is none.
func BindingFrom(ctx context.Context) string {
	b, _ := ctx.Value(bindingKey{}).(string)
	return b
}
