package worker

import (
	"context"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
)

// TestNewBuiltin: a built-in takes its tier from the catalogue, and a name
// the catalogue lacks is refused.
func TestNewBuiltin(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		tier contracts.Tier
		ok   bool
	}{
		{contracts.ToolGetTime, contracts.TierFree, true},
		{contracts.ToolProposeTool, contracts.TierFree, true},
		{contracts.ToolWriteFile, contracts.TierRisky, true},
		{contracts.ToolUpdateConfig, contracts.TierRisky, true},
		{"word_count", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tool, err := NewBuiltin(tc.name, "a tool", func(context.Context, struct{}) (string, error) { return "", nil })
			if !tc.ok {
				if err == nil {
					t.Fatalf("NewBuiltin(%q) = %+v, want an error", tc.name, tool)
				}
				return
			}
			if err != nil || tool.Name != tc.name || tool.Tier != tc.tier {
				t.Fatalf("NewBuiltin(%q) = %+v, %v; want tier %s", tc.name, tool, err, tc.tier)
			}
		})
	}
}

// TestRegistryAddWhileRead: a tool may add tools while the loop reads the
// registry (find_tools); run with -race.
func TestRegistryAddWhileRead(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			if err := reg.Add(&Tool{Name: "t" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Params: []byte(`{"type":"object"}`)}); err != nil {
				t.Error(err)
			}
		}
	}()
	for range 50 {
		_ = reg.Specs()
		reg.Get("taa")
	}
	<-done
	if n := len(reg.Tools()); n != 50 {
		t.Errorf("%d tools, want 50", n)
	}
}

type unusable struct {
	C chan int `json:"c"` // no JSON schema describes a channel
}

// TestSchemaDerivedWhenNeeded: NewTool derives the schema when a call is
// first checked against it (or the spec is asked for), not when the tool
// is made or registered; a type no schema describes fails then, as the
// call's error.
func TestSchemaDerivedWhenNeeded(t *testing.T) {
	t.Parallel()
	tool, err := NewTool("odd", "a tool", contracts.TierFree, func(context.Context, unusable) (string, error) { return "", nil })
	if err != nil {
		t.Fatalf("NewTool = %v; the schema is derived later", err)
	}
	if err := NewRegistry().Add(tool); err != nil {
		t.Fatalf("Add = %v; the schema is derived later", err)
	}
	if tool.Schema != nil {
		t.Fatal("the schema was derived before it was needed")
	}
	if _, err := PrepareArguments(tool, `{}`); err == nil || !strings.Contains(err.Error(), "derive schema") {
		t.Errorf("PrepareArguments = %v, want the derivation's error", err)
	}
}

// TestBuiltinSchemaOfItsType: a built-in is told the precomputed schema
// only when it was derived from the tool's own argument type; another type
// (a stale entry, a test's tool) gets its own schema, derived.
func TestBuiltinSchemaOfItsType(t *testing.T) {
	t.Parallel()
	goType, pre, ok := BuiltinSchema(contracts.ToolReadFile)
	if !ok || goType == "" || !strings.Contains(string(pre), `"path"`) {
		t.Fatalf("BuiltinSchema(read_file) = %q %s %v", goType, pre, ok)
	}
	other, err := NewBuiltin(contracts.ToolReadFile, "a tool", func(context.Context, echoIn) (string, error) { return "", nil })
	if err != nil {
		t.Fatal(err)
	}
	if got := string(other.Spec().Parameters); strings.Contains(got, `"path"`) || !strings.Contains(got, `"text"`) {
		t.Errorf("a read_file of another type is told %s", got)
	}
}
