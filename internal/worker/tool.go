package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/shelldon/shelldon/internal/contracts"
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
	Schema      *jsonschema.Schema
	Run         func(ctx context.Context, args json.RawMessage) (string, error)
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

	params   json.RawMessage // the schema as sent to the model
	once     sync.Once
	resolved *jsonschema.Resolved
	resErr   error
}

// Spec returns what the model is told about the tool.
func (t *Tool) Spec() contracts.ToolSpec {
	if t.params == nil {
		t.params = t.Params
		if t.params == nil {
			t.params, _ = json.Marshal(t.Schema)
		}
	}
	return contracts.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.params}
}

// resolve decodes (for Params) and resolves the tool's schema, once.
func (t *Tool) resolve() (*jsonschema.Resolved, error) {
	t.once.Do(func() {
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
// and whose arguments are decoded into an In before fn runs.
func NewTool[In any](name, description string, tier contracts.Tier, fn func(context.Context, In) (string, error)) (*Tool, error) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, fmt.Errorf("tool %s: derive schema: %w", name, err)
	}
	return &Tool{
		Name:        name,
		Description: description,
		Tier:        tier,
		Schema:      schema,
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
// catalogue lacks is an error: every built-in is catalogued.
func NewBuiltin[In any](name, description string, fn func(context.Context, In) (string, error)) (*Tool, error) {
	b, ok := contracts.Builtin(name)
	if !ok {
		return nil, fmt.Errorf("tool %s: not in the catalogue of built-in tools", name)
	}
	return NewTool(name, description, b.Tier, fn)
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

// Add registers t, resolving its schema. A duplicate name or a schema that
// does not resolve is an error.
func (r *Registry) Add(t *Tool) error {
	if t == nil || t.Name == "" {
		return fmt.Errorf("registry: tool without a name")
	}
	if t.Params == nil {
		// A built-in's schema is resolved now: a broken one is a bug.
		if _, err := t.resolve(); err != nil {
			return fmt.Errorf("registry: tool %q: resolve schema: %w", t.Name, err)
		}
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
