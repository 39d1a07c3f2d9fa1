package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The settings page: the effective config (secrets only as set or unset),
// the provider and model in use with a form to switch the model, where
// each key variable is sent, and a write-only field per secret. Changes go
// through Settings.ApplySettings, checked as a whole before anything is
// written; a secret's value is never shown, not even its length.

// settingRow is one leaf of the effective config.
type settingRow struct{ Key, Value string }

// settingsProvider is one provider of the chain.
type settingsProvider struct {
	Role, Name, Kind, BaseURL, Model, KeyEnv string
}

// keyBindingRow is where the key in a variable is sent.
type keyBindingRow struct {
	Env, Host, Provider string
}

type secretRow struct {
	Name string
	Set  bool
	ID   string // the input's id
}

type settingsPage struct {
	Available bool
	Config    []settingRow
	Chain     []settingsProvider // the provider, then the fallbacks
	Model     string             // the provider's model
	Bindings  []keyBindingRow
	Secrets   []secretRow
}

func (s *Server) routeSettingsPage(mux *http.ServeMux) {
	mux.HandleFunc("GET /settings", s.uiPage(func(w http.ResponseWriter, r *http.Request, d pageData) {
		s.renderSettings(w, http.StatusOK, d)
	}))
	mux.HandleFunc("POST /settings", s.uiAction(s.postSettingsPage))
}

func (s *Server) renderSettings(w http.ResponseWriter, status int, d pageData) {
	d.Nav = "settings"
	page := settingsPage{}
	if s.sets == nil {
		if d.Error == "" {
			d.Error = "Settings are not available."
		}
	} else {
		page = settingsView(s.sets.Settings())
	}
	s.showSettings(w, status, d, page)
}

// settingsView is what the page shows of Settings(): the config's leaves
// (the secrets apart), the provider chain and the secrets.
func settingsView(m map[string]any) settingsPage {
	page := settingsPage{Available: true}
	for k, v := range m {
		if k != "secrets" {
			flattenSetting(k, v, &page.Config)
		}
	}
	sort.Slice(page.Config, func(i, j int) bool { return page.Config[i].Key < page.Config[j].Key })
	if p, ok := m["provider"].(map[string]any); ok {
		page.Chain = append(page.Chain, chainEntry("provider", p))
		page.Model = page.Chain[0].Model
	}
	if fb, ok := m["fallback"].([]any); ok {
		for i, e := range fb {
			if p, ok := e.(map[string]any); ok {
				page.Chain = append(page.Chain, chainEntry(fmt.Sprintf("fallback %d", i+1), p))
			}
		}
	}
	for _, p := range page.Chain {
		if p.KeyEnv == "" {
			continue
		}
		page.Bindings = append(page.Bindings, keyBindingRow{Env: p.KeyEnv, Host: hostOf(p.BaseURL), Provider: p.Name})
	}
	switch sec := m["secrets"].(type) {
	case map[string]string:
		for n, v := range sec {
			page.Secrets = append(page.Secrets, secretRow{Name: n, Set: v == "set"})
		}
	case map[string]any:
		for n, v := range sec {
			page.Secrets = append(page.Secrets, secretRow{Name: n, Set: v == "set"})
		}
	}
	sort.Slice(page.Secrets, func(i, j int) bool { return page.Secrets[i].Name < page.Secrets[j].Name })
	for i := range page.Secrets {
		page.Secrets[i].ID = "secret-" + strconv.Itoa(i)
	}
	return page
}

// flattenSetting appends the leaves of v under key: a map's as key.sub,
// a list's as key[i].
func flattenSetting(key string, v any, out *[]settingRow) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			*out = append(*out, settingRow{key, "{}"})
		}
		for k, sub := range v {
			flattenSetting(key+"."+k, sub, out)
		}
	case []any:
		if len(v) == 0 {
			*out = append(*out, settingRow{key, "[]"})
		}
		for i, sub := range v {
			flattenSetting(fmt.Sprintf("%s[%d]", key, i), sub, out)
		}
	case nil:
		*out = append(*out, settingRow{key, "(none)"})
	default:
		*out = append(*out, settingRow{key, fmt.Sprint(v)})
	}
}

func chainEntry(role string, p map[string]any) settingsProvider {
	str := func(k string) string {
		if v, ok := p[k]; ok && v != nil {
			return fmt.Sprint(v)
		}
		return ""
	}
	return settingsProvider{Role: role, Name: str("name"), Kind: str("kind"), BaseURL: str("base_url"), Model: str("model"), KeyEnv: str("api_key_env")}
}

// hostOf is the host (and port, when given) of a base URL, or the URL
// itself when it does not parse.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return u.Host
}

// postSettingsPage applies one of the page's forms: "model" (the
// provider's model) or "secret" (one secret's value).
func (s *Server) postSettingsPage(w http.ResponseWriter, r *http.Request) {
	d := pageData{CSRF: r.PostForm.Get("csrf")}
	if s.sets == nil {
		d.Error = "Settings are not available."
		s.renderSettings(w, http.StatusNotFound, d)
		return
	}
	var (
		changes map[string]any
		secrets map[string]string
	)
	switch r.PostForm.Get("form") {
	case "model":
		model := strings.TrimSpace(r.PostForm.Get("model"))
		if model == "" {
			d.Error = "Type the model's name."
			s.renderSettings(w, http.StatusBadRequest, d)
			return
		}
		changes = map[string]any{"provider": map[string]any{"model": model}}
	case "secret":
		name, value := r.PostForm.Get("name"), r.PostForm.Get("value")
		if !slices.ContainsFunc(settingsView(s.sets.Settings()).Secrets, func(x secretRow) bool { return x.Name == name }) {
			d.Error = "The config names no such secret."
			s.renderSettings(w, http.StatusBadRequest, d)
			return
		}
		if value == "" {
			d.Error = "Type the secret's new value. A secret cannot be cleared here: remove its line from .env in shelldon's home."
			s.renderSettings(w, http.StatusBadRequest, d)
			return
		}
		secrets = map[string]string{name: value}
	default:
		d.Error = "Unknown form."
		s.renderSettings(w, http.StatusBadRequest, d)
		return
	}
	if _, err := s.sets.ApplySettings(r.Context(), changes, secrets); err != nil {
		d.Error = "Nothing was changed: " + err.Error()
		for _, v := range secrets {
			if strings.Contains(err.Error(), v) {
				// Never the value, even inside an error.
				d.Error = "Nothing was changed: the secret was refused; see shelldon doctor."
			}
		}
		s.renderSettings(w, http.StatusBadRequest, d)
		return
	}
	back(w, r, "/settings", "saved")
}

// showSettings writes the settings page.
func (s *Server) showSettings(w http.ResponseWriter, status int, d pageData, data settingsPage) {
	s.show(w, status, "Settings", d, func(p *page) {
		if data.Available {
			p.m("\n")
			settingsModel(p, d.CSRF, data)
			p.m("\n\n")
			settingsBindings(p, data.Bindings)
			p.m("\n\n")
			settingsSecrets(p, d.CSRF, data.Secrets)
			p.m("\n\n")
			settingsConfig(p, data.Config)
			p.m("\n")
		}
		settingsSessions(p, d.CSRF)
		p.m("\n")
	})
}

// settingsSessions writes the form that signs every browser out.
func settingsSessions(p *page, csrf string) {
	p.m(`<section aria-labelledby="sessions">
<h2 id="sessions">Signed-in browsers</h2>
<p>Signing out everywhere ends every browser's session, this one's too; each signs in again with the API token.</p>
<div class="actions">`)
	p.button("/sessions/revoke", csrf, "Sign out everywhere", "danger")
	p.m(`</div>
</section>`)
}

// settingsModel writes the provider chain and the form that switches the
// provider's model.
func settingsModel(p *page, csrf string, data settingsPage) {
	p.m(`<section aria-labelledby="model">
<h2 id="model">Model</h2>
`)
	if len(data.Chain) == 0 {
		p.m(`<p class="muted">No provider configured.</p>
</section>`)
		return
	}
	p.m(`<table>
<thead><tr><th scope="col">Role</th><th scope="col">Provider</th><th scope="col">Kind</th><th scope="col">Model</th><th scope="col">Base URL</th><th scope="col">Key variable</th></tr></thead>
<tbody>`)
	for _, c := range data.Chain {
		p.m(`<tr>`).el("td", "", c.Role).el("td", "", c.Name).el("td", "", c.Kind).
			m(`<td>`).el("code", "", c.Model).m(`</td><td>`).el("code", "", c.BaseURL).m(`</td><td>`)
		if c.KeyEnv != "" {
			p.el("code", "", c.KeyEnv)
		} else {
			p.m(`none`)
		}
		p.m("</td></tr>\n")
	}
	p.m(`</tbody>
</table>
<form method="post" action="/settings" class="settings-model">
`).csrfField(csrf).hidden("form", "model").m(`
<p><label for="model-name">The provider's model</label>
<input id="model-name" name="model" type="text" value="`).t(data.Model).m(`" required autocomplete="off" spellcheck="false"></p>
<p><button type="submit" class="primary">Switch the model</button></p>
</form>
<p class="muted">Where requests and keys go (kind, base URL, key variable, the fallbacks) is set with <code>shelldon config set</code>.</p>

</section>`)
}

// settingsBindings writes where each key variable is sent.
func settingsBindings(p *page, bindings []keyBindingRow) {
	p.m(`<section aria-labelledby="bindings">
<h2 id="bindings">Where each key is sent</h2>
`)
	if len(bindings) == 0 {
		p.m(`<p class="muted">No provider uses a key.</p>
</section>`)
		return
	}
	p.m(`<table>
<thead><tr><th scope="col">Key variable</th><th scope="col">Host</th><th scope="col">Provider</th></tr></thead>
<tbody>`)
	for _, b := range bindings {
		p.m(`<tr><td>`).el("code", "", b.Env).m(`</td><td>`).el("code", "", b.Host).m(`</td>`).el("td", "", b.Provider).m("</tr>\n")
	}
	p.m(`</tbody>
</table>
<p class="muted">A key is sent only to the hosts your config pairs it with (and its provider's well-known host).</p>

</section>`)
}

// settingsSecrets writes a write-only form per secret.
func settingsSecrets(p *page, csrf string, secrets []secretRow) {
	p.m(`<section aria-labelledby="secrets">
<h2 id="secrets">Secrets</h2>
<p class="muted">Values are written to <code>.env</code> (mode 0600) and never shown. A secret cannot be cleared here.</p>
`)
	for _, sec := range secrets {
		state, label := "unset", "Set"
		if sec.Set {
			state, label = "set", "Replace"
		}
		p.m(`<form method="post" action="/settings" class="secret">
`).csrfField(csrf).hidden("form", "secret").hidden("name", sec.Name).m(`
<p><label for="`).t(sec.ID).m(`">`).el("code", "", sec.Name).m(`: `).t(state).m(`</label>
<input id="`).t(sec.ID).m(`" name="value" type="password" autocomplete="off" required></p>
<p><button type="submit">`).t(label).m(`</button></p>
</form>
`)
	}
	if len(secrets) == 0 {
		p.m(`<p class="muted">The config names no secrets.</p>`)
	}
	p.m(`
</section>`)
}

// settingsConfig writes the effective config's leaves.
func settingsConfig(p *page, config []settingRow) {
	p.m(`<section aria-labelledby="config">
<h2 id="config">Effective config</h2>
<table class="settings-config">
<thead><tr><th scope="col">Key</th><th scope="col">Value</th></tr></thead>
<tbody>`)
	for _, c := range config {
		p.m(`<tr><td>`).el("code", "", c.Key).m(`</td><td>`).el("code", "", c.Value).m("</td></tr>\n")
	}
	p.m(`</tbody>
</table>
</section>`)
}
