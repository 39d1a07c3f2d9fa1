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
