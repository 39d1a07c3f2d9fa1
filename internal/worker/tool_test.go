package worker

import (
	"context"
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
