package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// fakeSettings is a Settings over a config in memory: a provider with a
// key, a keyless fallback, a value the model wrote, and two secrets.
type fakeSettings struct {
	mu      sync.Mutex
	model   string
	secrets map[string]string
	changes []map[string]any
}

const hostileValue = `<script>alert(1)</script>`

func (f *fakeSettings) Settings() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	sec := map[string]string{}
	for _, n := range []string{"ANTHROPIC_API_KEY", "SHELLDON_API_TOKEN"} {
		sec[n] = map[bool]string{true: "set", false: "unset"}[f.secrets[n] != ""]
	}
	return map[string]any{
		"provider": map[string]any{"name": "claude", "kind": "anthropic", "base_url": "https://api.anthropic.com",
			"model": f.model, "api_key_env": "ANTHROPIC_API_KEY"},
		"fallback": []any{map[string]any{"name": "local", "kind": "openai", "base_url": "http://127.0.0.1:11434/v1", "model": "qwen", "api_key_env": ""}},
		"agent":    map[string]any{"turn_budget": "40s", "persona": hostileValue},
		"secrets":  sec,
	}
}

func (f *fakeSettings) ApplySettings(_ context.Context, changes map[string]any, secrets map[string]string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := changes["provider"].(map[string]any); ok && p["model"] == "bad" {
		return nil, errors.New("config: provider.model: " + hostileValue + " is not a model")
	}
	for n, v := range secrets {
		if strings.HasPrefix(v, "refuse") {
			return nil, errors.New("config: the value " + v + " of " + n + " is refused")
		}
	}
	if p, ok := changes["provider"].(map[string]any); ok {
		f.model = p["model"].(string)
	}
	for n, v := range secrets {
		f.secrets[n] = v
	}
	f.changes = append(f.changes, changes)
	return []string{"changed"}, nil
}

func newSettingsFixture(t *testing.T) (*sessionFixture, *fakeSettings, string, string) {
	t.Helper()
	fs := &fakeSettings{model: "claude-sonnet", secrets: map[string]string{"SHELLDON_API_TOKEN": "already-set-token-value-1234"}}
	f := newSessionFixtureWith(t, func(o *Options) { o.Settings = fs })
	cookie := f.login(t, nil)
	return f, fs, cookie, f.csrf(t, cookie)
}

// TestSettingsPage: the page shows the chain, the model, where each key
// goes, the secrets as set or unset (never a value) and the config, all
// escaped and without a script; a signed-out browser goes to /login.
func TestSettingsPage(t *testing.T) {
	t.Parallel()
	f, _, cookie, _ := newSettingsFixture(t)
	resp, body := f.req(t, "GET", "/settings", map[string]string{"s": cookie}, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /settings: %d %s", resp.StatusCode, body)
	}
	wantIn(t, "settings", body, `aria-current="page">Settings`, "claude-sonnet", `value="claude-sonnet"`, "fallback 1",
		"<code>api.anthropic.com</code>", "ANTHROPIC_API_KEY</code>: unset", "SHELLDON_API_TOKEN</code>: set",
		`type="password"`, "agent.turn_budget", "&lt;script&gt;alert(1)&lt;/script&gt;", `<label for="secret-0">`, `<label for="model-name">`)
	wantOut(t, "settings", body, "already-set-token-value-1234", hostileValue, "<script")
	resp, _ = f.req(t, "GET", "/settings", nil, "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Errorf("signed out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestSettingsPageActions: the model and a secret change through
// ApplySettings and come back with "saved"; a refusal is the page with the
// daemon's reason (400), never the secret's value; no CSRF token or
// another origin is 403; a secret's value is on no page after it is set.
func TestSettingsPageActions(t *testing.T) {
	t.Parallel()
	f, fs, cookie, csrf := newSettingsFixture(t)
	post := func(origin string, v url.Values) (*http.Response, string) {
		t.Helper()
		return f.req(t, "POST", "/settings", map[string]string{"s": cookie, "Origin": origin, "Content-Type": "application/x-www-form-urlencoded"}, v.Encode())
	}
	model := url.Values{"csrf": {csrf}, "form": {"model"}, "model": {"claude-opus"}}
	for _, tc := range []struct {
		name, origin, csrf string
	}{{"no csrf", f.origin(), ""}, {"wrong csrf", f.origin(), "nope"}, {"other origin", "https://evil.example", csrf}} {
		v := url.Values{"csrf": {tc.csrf}, "form": {"model"}, "model": {"claude-opus"}}
		if resp, _ := post(tc.origin, v); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", tc.name, resp.StatusCode)
		}
	}
	if len(fs.changes) != 0 {
		t.Fatalf("refused posts changed: %v", fs.changes)
	}

	resp, body := post(f.origin(), model)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/settings?note=saved" {
		t.Fatalf("model: %d %s %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if fs.model != "claude-opus" {
		t.Errorf("model %q", fs.model)
	}

	const secret = "sk-ant-very-secret-value-0001"
	resp, body = post(f.origin(), url.Values{"csrf": {csrf}, "form": {"secret"}, "name": {"ANTHROPIC_API_KEY"}, "value": {secret}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/settings?note=saved" {
		t.Fatalf("secret: %d %s %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if fs.secrets["ANTHROPIC_API_KEY"] != secret {
		t.Errorf("secret not applied")
	}

	for _, tc := range []struct {
		name string
		v    url.Values
		want string
	}{
		{"bad model", url.Values{"form": {"model"}, "model": {"bad"}}, "&lt;script&gt;alert(1)&lt;/script&gt; is not a model"},
		{"empty model", url.Values{"form": {"model"}, "model": {" "}}, "Type the model"},
		{"unknown secret", url.Values{"form": {"secret"}, "name": {"OTHER_KEY"}, "value": {"x1"}}, "no such secret"},
		{"empty secret", url.Values{"form": {"secret"}, "name": {"ANTHROPIC_API_KEY"}, "value": {""}}, "cannot be cleared here"},
		{"refused secret", url.Values{"form": {"secret"}, "name": {"ANTHROPIC_API_KEY"}, "value": {"refuse-this-secret-42"}}, "the secret was refused"},
		{"no form", url.Values{}, "Unknown form"},
	} {
		tc.v.Set("csrf", csrf)
		resp, body := post(f.origin(), tc.v)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", tc.name, resp.StatusCode)
		}
		wantIn(t, tc.name, body, `role="alert"`, tc.want, "claude-opus")
		wantOut(t, tc.name, body, "refuse-this-secret-42", secret, hostileValue)
	}

	for _, path := range []string{"/settings", "/settings?note=saved", "/skills", "/chat", "/api/settings"} {
		_, body := f.req(t, "GET", path, map[string]string{"s": cookie}, "")
		wantOut(t, path, body, secret, "already-set-token-value-1234")
		if path == "/settings?note=saved" {
			wantIn(t, path, body, "Saved.", "ANTHROPIC_API_KEY</code>: set", "claude-opus")
		}
	}
}
