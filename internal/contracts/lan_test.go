package contracts

import (
	"slices"
	"strings"
	"testing"
)

// TestCheckAgentConfigRefusesAllowHosts: the hosts of the owner's network
// http_get may reach are the owner's; update_config cannot name them in
// any shape, and they are in no list of agent keys.
func TestCheckAgentConfigRefusesAllowHosts(t *testing.T) {
	t.Parallel()
	entry := []any{map[string]any{"host": "192.168.1.10", "ports": []any{float64(80)}}}
	for _, changes := range []map[string]any{
		{"http": map[string]any{"allow_hosts": entry}},
		{"http": map[string]any{"allow_hosts": []any{}}},
		{"http": map[string]any{"allow_hosts": "192.168.1.10"}},
		{"http.allow_hosts": entry},
		{"http": entry},
		{"agent": map[string]any{"max_tool_calls": float64(8)}, "http": map[string]any{"allow_hosts": entry}},
	} {
		if err := CheckAgentConfig(changes); err == nil || !strings.Contains(err.Error(), "not a key the agent may change") {
			t.Errorf("CheckAgentConfig(%v) = %v, want a refusal", changes, err)
		}
	}
	for _, k := range AgentConfigKeys {
		if strings.HasPrefix(k, "http") {
			t.Errorf("AgentConfigKeys holds %s", k)
		}
	}
	if !slices.Contains(AgentConfigKeys, "agent.max_tool_calls") {
		t.Error("the agent keys changed; this test's control case is stale")
	}
}
