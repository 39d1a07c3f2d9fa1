package web

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/config"
)

// homeSettings is a Settings over a real home: config.yaml, .env and
// config.local.yaml read, checked and written by internal/config as the
// daemon's are (the daemon also rebuilds its providers; that is app's).
type homeSettings struct {
	mu      sync.Mutex
	home    string
	environ []string
	applied []config.SettingsChange
}

const hostileValue = `<script>alert(1)</script>`

const settingsConfigYAML = `provider:
  name: claude
  kind: anthropic
  model: claude-sonnet
  api_key_env: ANTHROPIC_API_KEY
fallback:
  - name: local
    kind: openai
    base_url: http://127.0.0.1:11434/v1
    model: qwen
    api_key_env: ""
agent:
  system_prompt: "<script>alert(1)</script>"
`

const (
	settingsKey   = "sk-ant-already-set-key-value-77"
	settingsToken = "already-set-token-value-1234"
)

func newHomeSettings(t *testing.T) *homeSettings {
	t.Helper()
	h := t.TempDir()
	for name, data := range map[string]string{
		config.FileConfig: settingsConfigYAML,
		config.FileEnv:    "ANTHROPIC_API_KEY=\"" + settingsKey + "\"\nSHELLDON_API_TOKEN=\"" + settingsToken + "\"\n",
	} {
		if err := os.WriteFile(filepath.Join(h, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hs := &homeSettings{home: h, environ: []string{"HOME=" + h}}
	if _, err := hs.load(); err != nil {
		t.Fatal(err)
	}
	return hs
}

func (h *homeSettings) load() (*config.Config, error) { return config.Load(h.home, h.environ) }

func (h *homeSettings) Settings() map[string]any {
	cfg, err := h.load()
	if err != nil {
		return map[string]any{}
	}
	m := cfg.Effective()
	sec := map[string]string{}
	for n, set := range cfg.SecretNames() {
		sec[n] = map[bool]string{true: "set", false: "unset"}[set]
	}
	m["secrets"] = sec
	return m
}

func (h *homeSettings) SettingsOverlay() (map[string]any, error) { return config.ReadOverlay(h.home) }

func (h *homeSettings) KeyOrigins() map[string][]string {
	cfg, err := h.load()
	if err != nil {
		return nil
	}
	keys := &provider.KeyBinding{}
	out := map[string][]string{}
	for _, p := range cfg.Providers() {
		keys.Bind(p.APIKeyEnv, p.BaseURL)
	}
	for _, p := range cfg.Providers() {
		if p.APIKeyEnv != "" {
			out[p.APIKeyEnv] = keys.Origins(p.APIKeyEnv)
		}
	}
	return out
}

func (h *homeSettings) ApplySettings(_ context.Context, ch config.SettingsChange) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o, err := config.PrepareSettings(h.home, h.environ, ch)
	if err != nil {
		return nil, err
	}
	if err := o.Write(); err != nil {
		return nil, err
	}
	h.applied = append(h.applied, ch)
	return o.Diff(), nil
}

func (h *homeSettings) current(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := h.load()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func newSettingsFixture(t *testing.T) (*sessionFixture, *homeSettings, string, string) {
	t.Helper()
	hs := newHomeSettings(t)
	f := newSessionFixtureWith(t, func(o *Options) { o.Settings = hs })
	cookie := f.login(t, nil)
	return f, hs, cookie, f.csrf(t, cookie)
}

// TestSettingsPage: the page shows the chain with a provider switch, the
// model, where each key may go (the issuer's well-known host too), the
// secrets as set or unset (never a value), what the overlay sets and the
// config, all escaped and without a script; a signed-out browser goes to
// /login.
func TestSettingsPage(t *testing.T) {
	t.Parallel()
	f, hs, cookie, _ := newSettingsFixture(t)
	if _, err := hs.ApplySettings(t.Context(), config.SettingsChange{Config: map[string]any{"agent": map[string]any{"max_tool_calls": 3}}}); err != nil {
		t.Fatal(err)
	}
	resp, body := f.req(t, "GET", "/settings", map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /settings: %d %s", resp.StatusCode, body)
	}
	wantIn(t, "settings", body, `aria-current="page">Settings`, "claude-sonnet", `value="claude-sonnet"`, "fallback 1",
		`<select id="provider-pick" name="provider">`, `<option value="1">local (openai, qwen, 127.0.0.1:11434)</option>`,
		"<code>https://api.anthropic.com:443</code>", "ANTHROPIC_API_KEY</code>: set", "SHELLDON_API_TOKEN</code>: set",
		`aria-label="Clear SHELLDON_API_TOKEN"`, `type="password"`, "agent.turn_budget",
		`<h2 id="overlay">Changed over config.yaml</h2>`, `name="key" value="agent.max_tool_calls"`, `aria-label="Revert agent.max_tool_calls"`,
		"&lt;script&gt;alert(1)&lt;/script&gt;", `<label for="secret-0">`, `<label for="model-name">`, `<label for="provider-pick">`)
	wantOut(t, "settings", body, settingsToken, settingsKey, hostileValue, "<script")
	resp, _ = f.req(t, "GET", "/settings", nil, "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Errorf("signed out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestSettingsPageActions: the model, the provider, a secret, a clear and
// a revert change the home through ApplySettings and come back with a
// note; a refusal is the page with the daemon's reason (400), never a
// secret's value, and changes nothing; no CSRF token or another origin is
// 403; a secret's value is on no page after it is set.
func TestSettingsPageActions(t *testing.T) {
	t.Parallel()
	f, hs, cookie, csrf := newSettingsFixture(t)
	post := func(origin string, v url.Values) (*http.Response, string) {
		t.Helper()
		return f.req(t, "POST", "/settings", map[string]string{"s": cookie, "Origin": origin, "Content-Type": "application/x-www-form-urlencoded"}, v.Encode())
	}
	for _, tc := range []struct {
		name, origin, csrf string
	}{{"no csrf", f.origin(), ""}, {"wrong csrf", f.origin(), "nope"}, {"other origin", "https://evil.example", csrf}} {
		v := url.Values{"csrf": {tc.csrf}, "form": {"model"}, "model": {"claude-opus"}}
		if resp, _ := post(tc.origin, v); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", tc.name, resp.StatusCode)
		}
	}
	if len(hs.applied) != 0 {
		t.Fatalf("refused posts changed: %v", hs.applied)
	}
	ok := func(v url.Values, note string) {
		t.Helper()
		v.Set("csrf", csrf)
		resp, body := post(f.origin(), v)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/settings?note="+note {
			t.Fatalf("%v: %d %s %s", v, resp.StatusCode, resp.Header.Get("Location"), body)
		}
	}

	ok(url.Values{"form": {"model"}, "model": {"claude-opus"}}, "saved")
	if m := hs.current(t).Provider.Model; m != "claude-opus" {
		t.Errorf("model %q", m)
	}
	// The provider switch puts the local endpoint first, claude behind it.
	ok(url.Values{"form": {"provider"}, "provider": {"1"}}, "saved")
	cfg := hs.current(t)
	if cfg.Provider.Name != "local" || cfg.Provider.BaseURL != "http://127.0.0.1:11434/v1" || len(cfg.Fallback) != 1 ||
		cfg.Fallback[0].Name != "claude" || cfg.Fallback[0].Model != "claude-opus" || cfg.Fallback[0].APIKeyEnv != "ANTHROPIC_API_KEY" {
		t.Errorf("after the switch: %+v, fallbacks %+v", cfg.Provider, cfg.Fallback)
	}
	// Reverting the overlay's keys, one by one, gives config.yaml's chain
	// back.
	overlay, err := hs.SettingsOverlay()
	if err != nil {
		t.Fatal(err)
	}
	rows := overlayRows(overlay)
	if len(rows) != 9 { // provider's eight keys and the fallback list
		t.Errorf("overlay rows: %v", rows)
	}
	for _, r := range rows {
		ok(url.Values{"form": {"revert"}, "key": {r.Key}}, "reverted")
	}
	if cfg := hs.current(t); cfg.Provider.Name != "claude" || cfg.Provider.Model != "claude-sonnet" || cfg.Fallback[0].Name != "local" {
		t.Errorf("after the reverts: %+v", cfg.Provider)
	}
	const secret = "sk-ant-very-secret-value-0001"
	ok(url.Values{"form": {"secret"}, "name": {"ANTHROPIC_API_KEY"}, "value": {secret}}, "saved")
	if hs.current(t).Secret("ANTHROPIC_API_KEY") != secret {
		t.Errorf("secret not applied")
	}
	ok(url.Values{"form": {"clear"}, "name": {"SHELLDON_API_TOKEN"}}, "cleared")
	if hs.current(t).Secret("SHELLDON_API_TOKEN") != "" {
		t.Errorf("the token was not cleared")
	}

	applied := len(hs.applied)
	env, _ := os.ReadFile(filepath.Join(hs.home, config.FileEnv))
	for _, tc := range []struct {
		name string
		v    url.Values
		want string
	}{
		{"empty model", url.Values{"form": {"model"}, "model": {" "}}, "Type the model"},
		{"the provider in use", url.Values{"form": {"provider"}, "provider": {"0"}}, "already the one in use"},
		{"no such provider", url.Values{"form": {"provider"}, "provider": {"7"}}, "Choose one of the configured providers"},
		{"provider not a number", url.Values{"form": {"provider"}, "provider": {"local"}}, "Choose one of the configured providers"},
		{"unknown secret", url.Values{"form": {"secret"}, "name": {"OTHER_KEY"}, "value": {"x1"}}, "no such secret"},
		{"empty secret", url.Values{"form": {"secret"}, "name": {"ANTHROPIC_API_KEY"}, "value": {""}}, "Clear button"},
		{"short token", url.Values{"form": {"secret"}, "name": {"SHELLDON_API_TOKEN"}, "value": {"refuse-this-42"}}, "at least 16 characters"},
		{"clear the key the provider needs", url.Values{"form": {"clear"}, "name": {"ANTHROPIC_API_KEY"}}, "Nothing was changed: "},
		{"clear an unset secret", url.Values{"form": {"clear"}, "name": {"SHELLDON_API_TOKEN"}}, "not set"},
		{"clear a name the config does not name", url.Values{"form": {"clear"}, "name": {"PATH"}}, "no such secret"},
		{"revert a key the overlay does not set", url.Values{"form": {"revert"}, "key": {"agent.system_prompt"}}, "does not set that key"},
		{"revert nothing", url.Values{"form": {"revert"}}, "does not set that key"},
		{"no form", url.Values{}, "Unknown form"},
	} {
		tc.v.Set("csrf", csrf)
		resp, body := post(f.origin(), tc.v)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", tc.name, resp.StatusCode)
		}
		wantIn(t, tc.name, body, `role="alert"`, tc.want, "claude-sonnet")
		wantOut(t, tc.name, body, "refuse-this-42", secret, hostileValue)
	}
	if len(hs.applied) != applied {
		t.Errorf("refused forms were applied: %v", hs.applied[applied:])
	}
	if after, _ := os.ReadFile(filepath.Join(hs.home, config.FileEnv)); string(after) != string(env) {
		t.Errorf("a refused form changed .env")
	}

	for _, path := range []string{"/settings", "/settings?note=saved", "/skills", "/chat", "/api/settings"} {
		_, body := f.req(t, "GET", path, map[string]string{"s": cookie}, "")
		wantOut(t, path, body, secret, settingsToken)
		if path == "/settings?note=saved" {
			wantIn(t, path, body, "Saved.", "ANTHROPIC_API_KEY</code>: set", "SHELLDON_API_TOKEN</code>: unset", "Nothing: the config is config.yaml")
		}
	}
}

// TestSettingsAPIRevertAndClear: POST /api/settings takes "revert" and
// "clear_secrets" as the page does, and GET shows the overlay and the key
// origins; a refused one is 400 and echoes no value.
func TestSettingsAPIRevertAndClear(t *testing.T) {
	t.Parallel()
	f, hs, _, _ := newSettingsFixture(t)
	api := func(method, body string) (*http.Response, string) {
		t.Helper()
		return f.req(t, method, "/api/settings", map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}, body)
	}
	resp, body := api("POST", `{"config":{"provider":{"model":"claude-opus"}}}`)
	if resp.StatusCode != 200 || !strings.Contains(body, `"overlay":{"provider":{"model":"claude-opus"}}`) || !strings.Contains(body, `"key_origins":{"ANTHROPIC_API_KEY":["https://api.anthropic.com:443"]}`) {
		t.Fatalf("POST config: %d %s", resp.StatusCode, body)
	}
	resp, body = api("POST", `{"revert":["provider.model"],"clear_secrets":["SHELLDON_API_TOKEN"]}`)
	if resp.StatusCode != 200 || !strings.Contains(body, `"overlay":{}`) || !regexp.MustCompile(`provider.model: claude-opus -\\u003e claude-sonnet`).MatchString(body) {
		t.Fatalf("POST revert and clear: %d %s", resp.StatusCode, body)
	}
	if hs.current(t).Secret("SHELLDON_API_TOKEN") != "" {
		t.Error("not cleared")
	}
	for _, bad := range []string{
		`{"revert":["provider.model"]}`,
		`{"clear_secrets":["SHELLDON_API_TOKEN"]}`,
		`{"clear_secrets":["bad name"]}`,
		`{"secrets":{"SHELLDON_API_TOKEN":"short-secret-1"},"clear_secrets":["SHELLDON_API_TOKEN"]}`,
		`{"revert":[]}`,
	} {
		resp, body := api("POST", bad)
		if resp.StatusCode != 400 || strings.Contains(body, "short-secret-1") {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, body)
		}
	}
}
