package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSettingChange: `shelldon config set KEY VALUE` through the settings
// API's path: the owner may set any key, endpoints included; the list
// forms write the whole list; the config is validated before anything is
// written.
func TestSettingChange(t *testing.T) {
	t.Parallel()
	set := func(h, key, value string) (*Overlay, error) {
		cfg, err := Load(h, ownerEnv)
		if err != nil {
			t.Fatal(err)
		}
		changes, err := SettingChange(cfg, key, value)
		if err != nil {
			return nil, err
		}
		o, err := PrepareOverlay(h, ownerEnv, changes)
		if err != nil {
			return nil, err
		}
		return o, o.Write()
	}
	h := ownerHome(t)
	for _, tt := range []struct{ key, value, want string }{
		{"provider.base_url", "https://llm-proxy.corp.example/anthropic", "provider.base_url: https://api.anthropic.com -> https://llm-proxy.corp.example/anthropic"},
		{"provider.api_key_env", "GROQ_API_KEY", "provider.api_key_env: ANTHROPIC_API_KEY -> GROQ_API_KEY"},
		{"agent.turn_budget", "40s", "agent.turn_budget: 25s -> 40s"},
		{"agent.max_tool_calls", "8", "agent.max_tool_calls: 6 -> 8"},
		{"provider.stream", "false", "provider.stream: true -> false"},
		{"agent.system_prompt", "", ""}, // already empty: nothing changes
		{"fallback[0].base_url", "http://127.0.0.1:8080/v1", "fallback:"},
		{"fallback[2]", "{name: local, kind: openai, base_url: 'http://127.0.0.1:1234/v1', model: m}", "fallback:"},
	} {
		o, err := set(h, tt.key, tt.value)
		if err != nil {
			t.Errorf("set %s %q: %v", tt.key, tt.value, err)
			continue
		}
		if diff := strings.Join(o.Diff(), "\n"); !strings.Contains(diff, tt.want) {
			t.Errorf("set %s %q: diff %q lacks %q", tt.key, tt.value, diff, tt.want)
		}
	}
	c, err := Load(h, ownerEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider.BaseURL != "https://llm-proxy.corp.example/anthropic" || c.Provider.APIKeyEnv != "GROQ_API_KEY" {
		t.Errorf("provider: %+v", c.Provider)
	}
	if len(c.Fallback) != 3 || c.Fallback[0].BaseURL != "http://127.0.0.1:8080/v1" || c.Fallback[0].Model != "qwen" ||
		c.Fallback[1].Name != "groq" || c.Fallback[2].Name != "local" {
		t.Errorf("fallback: %+v", c.Fallback)
	}
	if data, _ := os.ReadFile(filepath.Join(h, FileConfig)); string(data) != ownerConfig {
		t.Error("config.yaml was rewritten")
	}
	// null restores the default.
	if _, err := set(h, "agent.turn_budget", "null"); err != nil {
		t.Fatal(err)
	}
	if c, _ := Load(h, ownerEnv); c.Agent.TurnBudget.D().Seconds() != 25 {
		t.Errorf("null: %s", c.Agent.TurnBudget)
	}

	written, _ := os.ReadFile(filepath.Join(h, FileOverlay))
	for _, tt := range []struct{ key, value, want string }{
		{"provider.bsae_url", "https://x.example", "bsae_url"},
		{"Provider.base_url", "https://x.example", "not a config key"},
		{"provider..model", "m", "not a config key"},
		{"provider.base_url", "ftp://x.example", "http or https"},
		{"provider.base_url", "https://user:pw@x.example", "user name or password"},
		{"provider.api_key_env", "NOT_SET_ANYWHERE_API_KEY", "not set"},
		{"provider.api_key_env", "sk-ant-pasted-key-0123456789", "name of an environment variable"},
		{"agent.turn_budget", "soon", "duration"},
		{"agent.max_tool_calls", "[1", "not valid YAML"},
		{"fallback[9].model", "m", "has 3 entries"},
		{"agent[0]", "m", "not a list"},
		{"nosuch", "1", "nosuch"},
	} {
		_, err := set(h, tt.key, tt.value)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("set %s %q: %v, want an error with %q", tt.key, tt.value, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "pasted-key") {
			t.Errorf("the error echoes what may be a key: %v", err)
		}
	}
	if now, _ := os.ReadFile(filepath.Join(h, FileOverlay)); string(now) != string(written) {
		t.Error("a refused setting was written")
	}
}
