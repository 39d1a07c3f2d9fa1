package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
)

// ownerConfig is a home the owner set up: Claude first, a local keyless
// Ollama behind it, and Groq on its own host with its own key.
const ownerConfig = `provider:
  name: claude
  kind: anthropic
  base_url: https://api.anthropic.com
  model: claude-a
  api_key_env: ANTHROPIC_API_KEY
fallback:
  - name: ollama
    kind: openai
    base_url: http://127.0.0.1:11434/v1
    model: qwen
  - name: groq
    kind: openai
    base_url: https://api.groq.com/openai/v1
    model: llama
    api_key_env: GROQ_API_KEY
`

var ownerEnv = []string{"ANTHROPIC_API_KEY=sk-ant-owner-secret-0123456789", "OPENAI_API_KEY=sk-openai-owner-secret-987654", "GROQ_API_KEY=gsk-owner-secret-abcdef"}

func ownerHome(t *testing.T) string {
	t.Helper()
	return newHome(t, map[string]string{FileConfig: ownerConfig})
}

func changesOf(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

// TestAgentChangesNeverNameAnEndpoint is the table of hostile update_config
// changes: each would send the model's requests, or a key, somewhere the
// owner did not configure. Each is refused by the worker's check, before
// the owner is asked (contracts.CheckAgentConfig, the tool's Check), with
// a message that names the owner's command; and again by the daemon's
// path (PrepareAgentOverlay: the card and App.configure). Nothing is
// written.
func TestAgentChangesNeverNameAnEndpoint(t *testing.T) {
	t.Parallel()
	h := ownerHome(t)
	for _, changes := range []string{
		// base_url to another host, or another origin of the same host
		`{"provider": {"base_url": "https://attacker.example/v1"}}`,
		`{"provider": {"base_url": "http://127.0.0.1:9999/v1"}}`,
		`{"provider": {"base_url": "https://api.anthropic.com:8443"}}`,
		`{"provider": {"base_url": "http://api.anthropic.com"}}`,
		`{"provider": {"base_url": "https://api.anthropic.com.attacker.example"}}`,
		`{"provider": {"base_url": "https://api.anthropic.com@attacker.example"}}`,
		// homoglyphs: Cyrillic а, its punycode, fullwidth letters
		`{"provider": {"base_url": "https://аpi.anthropic.com"}}`,
		`{"provider": {"base_url": "https://xn--pi-6kc.anthropic.com"}}`,
		`{"provider": {"base_url": "https://ａpi.anthropic.com"}}`,
		// another key variable, or none
		`{"provider": {"api_key_env": "OPENAI_API_KEY"}}`,
		`{"provider": {"api_key_env": "GROQ_API_KEY"}}`,
		`{"provider": {"api_key_env": "TELEGRAM_BOT_TOKEN"}}`,
		`{"fallback": [{"name": "ollama", "api_key_env": "ANTHROPIC_API_KEY"}]}`,
		// kind switches: the same key to the other wire format's default host
		`{"provider": {"kind": "openai"}}`,
		`{"provider": {"name": "claude", "kind": "openai", "model": "gpt-x"}}`,
		// a new fallback, keyed or keyless
		`{"fallback": [{"name": "x", "kind": "openai", "base_url": "https://attacker.example/v1", "model": "m", "api_key_env": "OPENAI_API_KEY"}]}`,
		`{"fallback": [{"name": "x", "kind": "openai", "base_url": "http://127.0.0.1:9999/v1", "model": "m"}]}`,
		`{"fallback": [{"kind": "openai", "base_url": "http://127.0.0.1:9999/v1"}]}`,
		`{"fallback": [{"model": "m"}]}`,
		// a reorder that brings in a new endpoint
		`{"fallback": [{"name": "groq"}, {"name": "ollama", "base_url": "http://127.0.0.1:9999/v1"}]}`,
		`{"provider": {"name": "ollama", "base_url": "https://attacker.example/v1"}}`,
		// keyless endpoints
		`{"provider": {"kind": "openai", "base_url": "http://127.0.0.1:9999/v1", "api_key_env": ""}}`,
		`{"provider": {"base_url": "http://127.0.0.1:11434/v1"}}`,
		// case and spelling variations
		`{"provider": {"Base_URL": "https://attacker.example"}}`,
		`{"provider": {"BASE_URL": "https://attacker.example"}}`,
		`{"provider": {"baseURL": "https://attacker.example"}}`,
		`{"provider": {"base-url": "https://attacker.example"}}`,
		`{"provider": {"base_url ": "https://attacker.example"}}`,
		`{"provider": {"base\u200b_url": "https://attacker.example"}}`,
		`{"provider": {"Kind": "openai"}}`,
		`{"provider": {"API_KEY_ENV": "OPENAI_API_KEY"}}`,
		`{"Provider": {"base_url": "https://attacker.example"}}`,
		`{"PROVIDER": {"model": "m"}}`,
		`{"Fallback": [{"name": "ollama"}]}`,
		// flat key forms
		`{"provider.base_url": "https://attacker.example"}`,
		`{"provider.api_key_env": "OPENAI_API_KEY"}`,
		`{"provider.kind": "openai"}`,
		`{"fallback[0].base_url": "https://attacker.example"}`,
		`{"provider": {"fallback.base_url": "https://attacker.example"}}`,
		// null and empty values
		`{"provider": null}`,
		`{"provider": {}}`,
		`{"provider": {"base_url": null}}`,
		`{"provider": {"base_url": ""}}`,
		`{"provider": {"kind": null}}`,
		`{"provider": {"kind": ""}}`,
		`{"provider": {"api_key_env": null}}`,
		`{"provider": {"api_key_env": ""}}`,
		`{"provider": {"name": null}}`,
		`{"provider": {"name": ""}}`,
		`{"fallback": null}`,
		`{"fallback": [null]}`,
		`{"fallback": [{}]}`,
		`{"fallback": "ollama"}`,
		// other owner's endpoints
		`{"telegram": {"api_base": "https://attacker.example"}}`,
		`{"server": {"listen": "0.0.0.0:7433"}}`,
	} {
		t.Run(changes, func(t *testing.T) {
			t.Parallel()
			c := changesOf(t, changes)
			err := contracts.CheckAgentConfig(c)
			if err == nil {
				t.Fatal("the worker's check let it through: the owner would be asked")
			}
			if strings.Contains(changes, "url") || strings.Contains(changes, "URL") || strings.Contains(strings.ToLower(changes), "kind") || strings.Contains(strings.ToLower(changes), "api_key_env") {
				if !strings.Contains(err.Error(), contracts.OwnerConfigSet) {
					t.Errorf("the refusal does not name %q: %v", contracts.OwnerConfigSet, err)
				}
			}
			if _, err := PrepareAgentOverlay(h, ownerEnv, c); err == nil {
				t.Error("the daemon's path let it through")
			}
			if _, err := os.Stat(filepath.Join(h, FileOverlay)); err == nil {
				t.Error("something was written")
			}
		})
	}
}

// TestAgentChoosesAmongConfiguredProviders: the agent switches the primary
// to a configured provider by name (it goes first, the others follow in
// their order), back again, changes a model, sets the fallback chain by
// names; every endpoint in the chain is always one the owner configured.
func TestAgentChoosesAmongConfiguredProviders(t *testing.T) {
	t.Parallel()
	h := ownerHome(t)
	apply := func(changes string) *Config {
		t.Helper()
		o, err := PrepareAgentOverlay(h, ownerEnv, changesOf(t, changes))
		if err != nil {
			t.Fatalf("%s: %v", changes, err)
		}
		if err := o.Write(); err != nil {
			t.Fatal(err)
		}
		c, err := Load(h, ownerEnv)
		if err != nil {
			t.Fatalf("after %s: %v", changes, err)
		}
		return c
	}
	chain := func(c *Config) string {
		var names []string
		for _, p := range c.Providers() {
			names = append(names, p.Name+"="+p.Kind+"@"+p.BaseURL+"/"+p.APIKeyEnv+"/"+p.Model)
		}
		return strings.Join(names, " ")
	}

	c := apply(`{"provider": {"name": "groq", "model": "llama-big"}}`)
	want := "groq=openai@https://api.groq.com/openai/v1/GROQ_API_KEY/llama-big claude=anthropic@https://api.anthropic.com/ANTHROPIC_API_KEY/claude-a ollama=openai@http://127.0.0.1:11434/v1//qwen"
	if got := chain(c); got != want {
		t.Errorf("switch to groq:\n got %s\nwant %s", got, want)
	}
	c = apply(`{"provider": {"name": "claude"}}`)
	if got := chain(c); !strings.HasPrefix(got, "claude=anthropic@https://api.anthropic.com/ANTHROPIC_API_KEY/claude-a groq=") {
		t.Errorf("switch back: %s", got)
	}
	c = apply(`{"provider": {"model": "claude-b"}, "agent": {"max_tool_calls": 3}}`)
	if c.Provider.Model != "claude-b" || c.Provider.BaseURL != "https://api.anthropic.com" || c.Agent.MaxToolCalls != 3 {
		t.Errorf("model change: %s, %d", chain(c), c.Agent.MaxToolCalls)
	}
	c = apply(`{"fallback": [{"name": "ollama", "model": "llama3"}]}`)
	if got := chain(c); got != "claude=anthropic@https://api.anthropic.com/ANTHROPIC_API_KEY/claude-b ollama=openai@http://127.0.0.1:11434/v1//llama3" {
		t.Errorf("fallback by name: %s", got)
	}
	// Groq left the chain: the agent cannot bring it back; the owner can.
	if _, err := PrepareAgentOverlay(h, ownerEnv, changesOf(t, `{"provider": {"name": "groq"}}`)); err == nil || !strings.Contains(err.Error(), "no configured provider is named") {
		t.Errorf("a provider no longer configured: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(h, FileConfig)); string(data) != ownerConfig {
		t.Error("config.yaml was rewritten")
	}
}

// TestAgentNameIsAmbiguous: two providers of one name with different
// endpoints are not guessed between.
func TestAgentNameIsAmbiguous(t *testing.T) {
	t.Parallel()
	h := newHome(t, map[string]string{FileConfig: "provider:\n  kind: openai\n  base_url: http://127.0.0.1:1/v1\nfallback:\n  - kind: openai\n    base_url: http://127.0.0.1:2/v1\n"})
	_, err := PrepareAgentOverlay(h, nil, changesOf(t, `{"provider": {"name": "openai", "model": "m"}}`))
	if err == nil || !strings.Contains(err.Error(), "more than one") {
		t.Errorf("ambiguous name: %v", err)
	}
}

// TestSameEndpointsIsASafetyNet: a change that reached the overlay without
// the agent's check (a bug, a compromised worker) is still refused if it
// brings in an endpoint.
func TestSameEndpointsIsASafetyNet(t *testing.T) {
	t.Parallel()
	h := ownerHome(t)
	before, err := loadWith(h, ownerEnv, candidate{forAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{
		`{"provider": {"base_url": "http://127.0.0.1:9999"}}`,
		`{"provider": {"api_key_env": "GROQ_API_KEY"}}`,
		`{"fallback": [{"kind": "openai", "base_url": "http://127.0.0.1:11434/v1", "api_key_env": "OPENAI_API_KEY"}]}`,
		`{"provider": {"kind": "openai"}, "fallback": []}`,
	} {
		o, err := prepare(before, ownerEnv, changesOf(t, raw), nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if err := sameEndpoints(o.Before, o.After); err == nil {
			t.Errorf("%s: not refused", raw)
		}
	}
}

// TestAgentPathIsNoOracle: nothing the agent's path answers depends on
// whether a key variable is set, or on what a secret holds.
func TestAgentPathIsNoOracle(t *testing.T) {
	t.Parallel()
	h := ownerHome(t)
	withGroq := ownerEnv
	withoutGroq := ownerEnv[:2]
	secret := strings.TrimPrefix(ownerEnv[0], "ANTHROPIC_API_KEY=")
	for _, changes := range []string{
		`{"provider": {"name": "groq"}}`,
		`{"agent": {"max_tool_calls": 4}}`,
		`{"log": {"level": "` + secret[:12] + `"}}`,
		`{"log": {"level": "not-a-secret"}}`,
		`{"provider": {"model": "` + secret + `", "max_tokens": -1}}`,
		`{"agent": {"turn_budget": "` + secret[3:15] + `"}}`,
	} {
		var answers []string
		for _, env := range [][]string{withGroq, withoutGroq} {
			o, err := PrepareAgentOverlay(h, env, changesOf(t, changes))
			if err != nil {
				answers = append(answers, "refused: "+err.Error())
				continue
			}
			answers = append(answers, strings.Join(o.Diff(), "\n"))
		}
		if answers[0] != answers[1] {
			t.Errorf("%s: the answer depends on GROQ_API_KEY being set:\n%s\n---\n%s", changes, answers[0], answers[1])
		}
		for _, a := range answers {
			if strings.Contains(a, "not set") || strings.Contains(a, "hidden") || strings.Contains(a, "matches a secret") {
				t.Errorf("%s: the answer tells about the secrets: %s", changes, a)
			}
		}
	}
	// A value that is part of a key and one that is not are refused alike.
	var refusals []string
	for _, level := range []string{secret[:12], "zzzzzzzzzzzz"} {
		_, err := PrepareAgentOverlay(h, ownerEnv, changesOf(t, `{"log": {"level": "`+level+`"}}`))
		if err == nil {
			t.Fatal("a bad log level accepted")
		}
		refusals = append(refusals, err.Error())
	}
	if refusals[0] != refusals[1] {
		t.Errorf("the refusal tells a piece of a key from a random value:\n%s\n%s", refusals[0], refusals[1])
	}
}

// TestExistingHomesKeepWorking: what a home's config.yaml and
// config.local.yaml name today counts as the owner's, endpoints an agent
// wrote into the overlay before this change included: such a home loads
// as before, and the agent's allowed changes still apply on top of it.
func TestExistingHomesKeepWorking(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		files map[string]string
	}{
		{"no config, key in the environment", nil},
		{"the README's example", map[string]string{FileConfig: "provider:\n  kind: anthropic\n  base_url: https://api.anthropic.com\n  model: claude-sonnet-4-5\n  api_key_env: ANTHROPIC_API_KEY\n  stream: true\nfallback:\n  - kind: openai\n    base_url: http://127.0.0.1:11434/v1\n    model: qwen2.5:3b\n"}},
		{"a proxy for a well-known key", map[string]string{FileConfig: "provider:\n  kind: anthropic\n  base_url: https://llm-proxy.corp.example/anthropic\n  api_key_env: ANTHROPIC_API_KEY\n"}},
		{"an overlay an agent wrote before", map[string]string{
			FileConfig:  "provider:\n  kind: anthropic\n  model: claude-a\n",
			FileOverlay: "# Written by shelldon (update_config or the settings API); config.yaml is never rewritten.\nprovider:\n  kind: openai\n  base_url: https://api.groq.com/openai/v1\n  model: llama\n  api_key_env: GROQ_API_KEY\n",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHome(t, tt.files)
			before, err := Load(h, ownerEnv)
			if err != nil {
				t.Fatalf("the home no longer loads: %v", err)
			}
			o, err := PrepareAgentOverlay(h, ownerEnv, changesOf(t, `{"provider": {"model": "other-model"}, "agent": {"max_tool_calls": 4}}`))
			if err != nil {
				t.Fatalf("an allowed change: %v", err)
			}
			if got, want := endpointOf(o.After.Provider), endpointOf(before.Provider); got != want {
				t.Errorf("the endpoint moved: %v -> %v", want, got)
			}
			if o.After.Provider.Model != "other-model" {
				t.Errorf("model: %q", o.After.Provider.Model)
			}
			if _, err := PrepareOverlay(h, ownerEnv, changesOf(t, `{"agent": {"max_tool_calls": 5}}`)); err != nil {
				t.Errorf("the owner's path: %v", err)
			}
		})
	}
}
