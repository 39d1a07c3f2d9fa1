package contracts

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckAgentConfig: the shapes the agent may propose pass; every key
// outside AgentConfigKeys is refused, and an endpoint key, in any
// spelling, with a message naming the owner's command. The full hostile
// table, through the daemon's path too, is internal/config's
// TestAgentChangesNeverNameAnEndpoint.
func TestCheckAgentConfig(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{
		`{"provider": {"model": "x"}}`,
		`{"provider": {"name": "ollama"}}`,
		`{"provider": {"name": "ollama", "model": "m", "stream": false, "timeout": "90s", "max_tokens": 800}}`,
		`{"provider": {"model": null}}`,
		`{"fallback": []}`,
		`{"fallback": [{"name": "claude"}, {"name": "ollama", "model": "m"}]}`,
		`{"agent": {"max_tool_calls": 4, "turn_budget": "40s", "system_prompt": "be brief"}}`,
		`{"approvals": {"ttl": "2h"}, "log": {"level": "debug"}, "selfcode": {"strikes": 5}}`,
	} {
		if err := CheckAgentConfig(decode(t, ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, tt := range []struct {
		changes  string
		endpoint bool // refused as an endpoint key, naming the owner's command
	}{
		{`{}`, false},
		{`{"provider": {"base_url": "http://127.0.0.1:9/v1"}}`, true},
		{`{"provider": {"kind": "openai"}}`, true},
		{`{"provider": {"api_key_env": "OPENAI_API_KEY"}}`, true},
		{`{"provider": {"Base_URL": "http://x"}}`, true},
		{`{"provider": {"baseUrl": "http://x"}}`, true},
		{`{"provider.base_url": "http://x"}`, true},
		{`{"fallback": [{"name": "a", "base_url": "http://x"}]}`, true},
		{`{"fallback": [{"model": "m"}]}`, false},
		{`{"fallback": [null]}`, false},
		{`{"fallback": null}`, false},
		{`{"fallback": {"name": "a"}}`, false},
		{`{"provider": null}`, false},
		{`{"provider": {}}`, false},
		{`{"provider": {"name": ""}}`, false},
		{`{"provider": {"name": 3}}`, false},
		{`{"provider": {"model": {"a": 1}}}`, false},
		{`{"Provider": {"model": "x"}}`, false},
		{`{"agent.max_tool_calls": 3}`, false},
		{`{"agent": {"max_tool_calls": [3]}}`, false},
		{`{"agent": {"nosuch": 1}}`, false},
		{`{"agent": 3}`, false},
		{`{"telegram": {"api_base": "http://x"}}`, true},
		{`{"workspace": "/"}`, false},
		{`{"server": {"listen": "0.0.0.0:80"}}`, false},
		// resource guards are the owner's: the agent cannot raise them
		{`{"skills": {"max_skill_bytes": "4MiB"}}`, false},
		{`{"skills": {"max_file_bytes": "16MiB"}}`, false},
		{`{"sandbox": {"min_free_disk": 0}}`, false},
		{`{"agent": {"warm_worker": false}}`, false},
	} {
		err := CheckAgentConfig(decode(t, tt.changes))
		if err == nil {
			t.Errorf("%s accepted", tt.changes)
			continue
		}
		if got := strings.Contains(err.Error(), OwnerConfigSet); tt.endpoint && !got {
			t.Errorf("%s: the refusal does not name %q: %v", tt.changes, OwnerConfigSet, err)
		}
	}
}

// TestAgentConfigKeysHaveNoEndpoint: no agent key is an endpoint key.
func TestAgentConfigKeysHaveNoEndpoint(t *testing.T) {
	t.Parallel()
	for _, k := range AgentConfigKeys {
		if endpointLike(k) {
			t.Errorf("%s is an agent key and looks like an endpoint key", k)
		}
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCheckProviderNames: only the owner's provider names may be chosen;
// an unknown one (in the provider or any fallback entry) is refused with
// the names there are; without the names (nil) the daemon decides.
func TestCheckProviderNames(t *testing.T) {
	configured := []string{"claude", "ollama"}
	for name, tc := range map[string]struct {
		changes map[string]any
		wantErr string
	}{
		"configured":            {map[string]any{"provider": map[string]any{"name": "ollama"}}, ""},
		"a model only":          {map[string]any{"provider": map[string]any{"model": "m"}}, ""},
		"unknown provider":      {map[string]any{"provider": map[string]any{"name": "canary"}}, `no provider called "canary" is configured; the owner's providers are claude, ollama`},
		"unknown fallback":      {map[string]any{"fallback": []any{map[string]any{"name": "claude"}, map[string]any{"name": "evil"}}}, `"evil"`},
		"case matters":          {map[string]any{"provider": map[string]any{"name": "Claude"}}, `"Claude"`},
		"look-alike":            {map[string]any{"provider": map[string]any{"name": "cl\u0430ude"}}, "no provider called"},
		"trailing space":        {map[string]any{"provider": map[string]any{"name": "claude "}}, "no provider called"},
		"other sections ignore": {map[string]any{"agent": map[string]any{"max_tool_calls": 3}}, ""},
	} {
		err := CheckProviderNames(tc.changes, configured)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: %v, want %q", name, err, tc.wantErr)
		}
	}
	if err := CheckProviderNames(map[string]any{"provider": map[string]any{"name": "canary"}}, nil); err != nil {
		t.Errorf("without the names: %v", err)
	}
}
