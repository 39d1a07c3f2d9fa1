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

// TestPrepareSettingsRevert: a reverted key leaves config.local.yaml, so
// config.yaml's value (or the default) applies again; the other keys stay,
// empty sections go, and a key the overlay does not set, or one both
// changed and reverted, is refused with nothing written.
func TestPrepareSettingsRevert(t *testing.T) {
	t.Parallel()
	h, env := overlayHome(t)
	o, err := PrepareOverlay(h, env, map[string]any{
		"provider": map[string]any{"model": "claude-b"},
		"agent":    map[string]any{"max_tool_calls": 3},
		"budget":   map[string]any{"prices": map[string]any{"gpt-4.1": map[string]any{"input": "0.000002", "output": "0.000008"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Write(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(h, FileOverlay))
	for _, bad := range []SettingsChange{
		{Revert: []string{"provider.kind"}}, // not in the overlay
		{Revert: []string{"agent"}, Config: map[string]any{"agent": map[string]any{"workers": 1}}}, // both
		{Revert: []string{"provider.model"}, Config: map[string]any{"provider": map[string]any{"model": "x"}}},
		{Revert: []string{"nosuch.key"}},
		{Revert: []string{""}},
	} {
		if _, err := PrepareSettings(h, env, bad); err == nil {
			t.Errorf("PrepareSettings(%+v) accepted", bad)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(h, FileOverlay)); string(after) != string(before) {
		t.Fatalf("a refused revert changed the overlay:\n%s", after)
	}
	o, err = PrepareSettings(h, env, SettingsChange{Revert: []string{"provider.model", "budget.prices.gpt-4.1.input"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := strings.Join(o.Diff(), "\n"); !strings.Contains(diff, "provider.model: claude-b -> claude-a") {
		t.Errorf("diff:\n%s", diff)
	}
	if err := o.Write(); err != nil {
		t.Fatal(err)
	}
	c, err := Load(h, env)
	if err != nil || c.Provider.Model != "claude-a" || c.Agent.MaxToolCalls != 3 {
		t.Fatalf("after revert: model %q, max_tool_calls %d, %v", c.Provider.Model, c.Agent.MaxToolCalls, err)
	}
	left, err := ReadOverlay(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := left["provider"]; ok {
		t.Errorf("an emptied section stayed: %v", left)
	}
	prices := left["budget"].(map[string]any)["prices"].(map[string]any)["gpt-4.1"].(map[string]any)
	if _, ok := prices["input"]; ok || prices["output"] == nil {
		t.Errorf("a dotted key was not reverted alone: %v", prices)
	}
}

// TestPrepareSettingsClear: a cleared variable leaves .env, its other
// lines stay; one .env does not set, one set and cleared at once, one the
// process environment sets (clearing .env would not unset it), and one
// the config needs (the provider's key) are refused with nothing written.
func TestPrepareSettingsClear(t *testing.T) {
	t.Parallel()
	h, env := overlayHome(t)
	dotenv := "# keys\nGROQ_API_KEY=\"gsk-1\"\nexport OTHER=\"2\"\n"
	os.WriteFile(filepath.Join(h, FileEnv), []byte(dotenv), 0o600)
	envNoKey := []string{"OPENAI_API_KEY=sk-openai-secret-987654"}
	os.WriteFile(filepath.Join(h, FileEnv), []byte(dotenv+"ANTHROPIC_API_KEY=\"sk-ant-from-dotenv-1234\"\n"), 0o600)
	before, _ := os.ReadFile(filepath.Join(h, FileEnv))
	for _, bad := range []struct {
		environ []string
		ch      SettingsChange
	}{
		{envNoKey, SettingsChange{Clear: []string{"NOT_THERE"}}},
		{envNoKey, SettingsChange{Clear: []string{"bad-name"}}},
		{envNoKey, SettingsChange{Clear: []string{"GROQ_API_KEY"}, Secrets: map[string]string{"GROQ_API_KEY": "gsk-2"}}},
		{env, SettingsChange{Clear: []string{"ANTHROPIC_API_KEY"}}},      // set in the environment too
		{envNoKey, SettingsChange{Clear: []string{"ANTHROPIC_API_KEY"}}}, // the provider's key
	} {
		if _, err := PrepareSettings(h, bad.environ, bad.ch); err == nil {
			t.Errorf("PrepareSettings(%+v) accepted", bad.ch)
		} else if strings.Contains(err.Error(), "sk-ant-from-dotenv") {
			t.Errorf("the error shows a value: %v", err)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(h, FileEnv)); string(after) != string(before) {
		t.Fatalf("a refused clear changed .env:\n%s", after)
	}
	o, err := PrepareSettings(h, envNoKey, SettingsChange{Clear: []string{"GROQ_API_KEY", "OTHER"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Write(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(h, FileEnv))
	if string(after) != "# keys\nANTHROPIC_API_KEY=\"sk-ant-from-dotenv-1234\"\n" {
		t.Errorf(".env after clearing: %q", after)
	}
	c, err := Load(h, envNoKey)
	if err != nil || c.Secret("GROQ_API_KEY") != "" || c.Secret("ANTHROPIC_API_KEY") == "" {
		t.Errorf("after clearing: %v", err)
	}
}
