package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func overlayHome(t *testing.T) (string, []string) {
	t.Helper()
	h := t.TempDir()
	os.WriteFile(filepath.Join(h, FileConfig), []byte("provider:\n  kind: anthropic\n  model: claude-a\n# the owner's comment\n"), 0o600)
	return h, []string{"ANTHROPIC_API_KEY=sk-ant-secret-value-123456", "OPENAI_API_KEY=sk-openai-secret-987654"}
}

func TestPrepareOverlay(t *testing.T) {
	t.Parallel()
	h, env := overlayHome(t)
	o, err := PrepareOverlay(h, env, map[string]any{"provider": map[string]any{"kind": "openai", "model": "gpt-x"}, "agent": map[string]any{"max_tool_calls": 3}})
	if err != nil {
		t.Fatal(err)
	}
	diff := strings.Join(o.Diff(), "\n")
	for _, want := range []string{"provider.kind: anthropic -> openai", "provider.model: claude-a -> gpt-x", "agent.max_tool_calls: 6 -> 3", "provider.api_key_env: ANTHROPIC_API_KEY -> OPENAI_API_KEY"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if strings.Contains(diff, "sk-") {
		t.Errorf("a secret in the diff:\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(h, FileOverlay)); err == nil {
		t.Fatal("PrepareOverlay wrote the file")
	}
	if err := o.Write(); err != nil {
		t.Fatal(err)
	}
	c, err := Load(h, env)
	if err != nil || c.Provider.Kind != "openai" || c.Agent.MaxToolCalls != 3 {
		t.Fatalf("after write: %+v %v", c, err)
	}
	fi, _ := os.Stat(filepath.Join(h, FileOverlay))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("overlay mode %v", fi.Mode())
	}
	if data, _ := os.ReadFile(filepath.Join(h, FileConfig)); !strings.Contains(string(data), "the owner's comment") {
		t.Error("config.yaml was rewritten")
	}
	// A second change merges with the first.
	o2, err := PrepareOverlay(h, env, map[string]any{"agent": map[string]any{"turn_budget": "40s"}})
	if err != nil {
		t.Fatal(err)
	}
	o2.Write()
	c, _ = Load(h, env)
	if c.Agent.MaxToolCalls != 3 || c.Agent.TurnBudget.D().Seconds() != 40 || c.Provider.Kind != "openai" {
		t.Errorf("merge lost a change: %+v", c.Agent)
	}
}

func TestPrepareOverlayRefusesInvalid(t *testing.T) {
	t.Parallel()
	h, env := overlayHome(t)
	for _, changes := range []map[string]any{
		{"provider": map[string]any{"kind": "gemini"}},
		{"agent": map[string]any{"turn_budget": "soon"}},
		{"nosuchkey": 1},
		{},
	} {
		if _, err := PrepareOverlay(h, env, changes); err == nil {
			t.Errorf("%v accepted", changes)
		}
	}
	if _, err := os.Stat(filepath.Join(h, FileOverlay)); err == nil {
		t.Error("a refused change was written")
	}
}

func TestCheckAgentChanges(t *testing.T) {
	t.Parallel()
	ok := []map[string]any{
		{"provider": map[string]any{"model": "x"}},
		{"provider": map[string]any{"name": "groq"}},
		{"agent": map[string]any{"max_tool_calls": 4}},
		{"fallback": []any{map[string]any{"name": "openai"}}},
	}
	for _, c := range ok {
		if err := CheckAgentChanges(c); err != nil {
			t.Errorf("%v: %v", c, err)
		}
	}
	bad := []map[string]any{
		{"workspace": "/"},
		{"sandbox": map[string]any{"allow_degraded": true}},
		{"server": map[string]any{"listen": "0.0.0.0:7433"}},
		{"telegram": map[string]any{"allowed_users": []any{1}}},
		{"telegram": map[string]any{"api_base": "http://evil"}},
		{"provider": map[string]any{"api_key_env": "GROQ_API_KEY"}},
		{"fallback": []any{map[string]any{"kind": "openai"}}},
		{"provider": map[string]any{"api_key_env": "TELEGRAM_BOT_TOKEN"}},
		{"provider": map[string]any{"api_key_env": "SHELLDON_API_TOKEN"}},
		{"provider": map[string]any{"api_key_env": "AWS_SECRET_ACCESS_KEY"}},
		{"agent": map[string]any{"max_tool_calls": 3}, "approvals": map[string]any{"ttl": "1h"}, "server": 1},
	}
	for _, c := range bad {
		if err := CheckAgentChanges(c); err == nil {
			t.Errorf("%v accepted", c)
		}
	}
}

func TestSetSecret(t *testing.T) {
	t.Parallel()
	h := t.TempDir()
	os.WriteFile(filepath.Join(h, FileEnv), []byte("# keys\nOTHER=1\nMY_KEY=old\n"), 0o600)
	if err := SetSecret(h, nil, "MY_KEY", `new "quoted" \ value`); err != nil {
		t.Fatal(err)
	}
	c, err := Load(h, []string{"OPENAI_API_KEY=x"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Secret("MY_KEY") != `new "quoted" \ value` || c.Secret("OTHER") != "1" {
		t.Errorf("secrets: %q %q", c.Secret("MY_KEY"), c.Secret("OTHER"))
	}
	fi, _ := os.Stat(filepath.Join(h, FileEnv))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf(".env mode %v", fi.Mode())
	}
	for _, name := range []string{"", "lower", "1X", "A-B", "A B", "A=B", strings.Repeat("A", 70)} {
		if err := SetSecret(h, nil, name, "v"); err == nil {
			t.Errorf("name %q accepted", name)
		}
	}
	err = SetSecret(h, nil, "X", "line\nbreak-secret")
	if err == nil || strings.Contains(err.Error(), "break-secret") {
		t.Errorf("a value with a newline: %v", err)
	}
	if names := c.SecretNames(); !names["OPENAI_API_KEY"] || names["TELEGRAM_BOT_TOKEN"] {
		t.Errorf("secret names: %v", names)
	}
}
