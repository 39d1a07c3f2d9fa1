package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/shelldon/shelldon/internal/config"
)

// The settings page: the provider chain with forms to switch the provider
// (among the endpoints the owner configured) and its model, where each key
// variable may be sent, a write-only field and a Clear button per secret,
// what config.local.yaml sets over config.yaml (each key revertible), and
// the effective config. Every change goes through Settings.ApplySettings,
// checked as a whole before anything is written; a secret's value is never
// shown, not even its length.

// TokenReplaced is the line of a settings change's diff that says the API
// took a new token (and so ended every browser's session).
const TokenReplaced = "the API serves the new token; every browser signs in again"

// settingRow is one leaf of a config map.
type settingRow struct{ Key, Value string }

// settingsProvider is one provider of the chain, as the effective config
// holds it.
type settingsProvider struct {
	Role, Name, Kind, BaseURL, Model, KeyEnv string
	entry                                    map[string]any // the whole entry, to move it first
}

// keyBindingRow is where the key in a variable may be sent.
type keyBindingRow struct {
	Env       string
	Origins   []string
	Providers string // the providers of the chain that use it
}

type secretRow struct {
	Name string
	Set  bool
	ID   string // the input's id
}

type settingsPage struct {
	Available bool
	Config    []settingRow
	Overlay   []settingRow       // config.local.yaml's leaves, a list as one
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
		page = settingsView(s.sets.Settings(), s.sets.KeyOrigins())
		overlay, err := s.sets.SettingsOverlay()
		if err != nil {
			s.log.Error("read the settings overlay", "err", err)
			d.Error = "config.local.yaml could not be read; see shelldon doctor."
		}
		page.Overlay = overlayRows(overlay)
	}
	s.showSettings(w, status, d, page)
}

// settingsView is what the page shows of Settings() and KeyOrigins(): the
// config's leaves (the secrets apart), the provider chain, where each key
// goes and the secrets.
func settingsView(m map[string]any, origins map[string][]string) settingsPage {
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
	for env, o := range origins {
		row := keyBindingRow{Env: env, Origins: o}
		var users []string
		for _, p := range page.Chain {
			if p.KeyEnv == env && !slices.Contains(users, p.Name) {
				users = append(users, p.Name)
			}
		}
		row.Providers = strings.Join(users, ", ")
		page.Bindings = append(page.Bindings, row)
	}
	sort.Slice(page.Bindings, func(i, j int) bool { return page.Bindings[i].Env < page.Bindings[j].Env })
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

// overlayRows are the leaves of config.local.yaml, the key a revert
// takes: maps are walked, a list is one leaf (written as JSON).
func overlayRows(m map[string]any) []settingRow {
	var out []settingRow
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			switch v := v.(type) {
			case map[string]any:
				if len(v) > 0 {
					walk(key, v)
					continue
				}
				out = append(out, settingRow{key, "{}"})
			case []any:
				b, _ := json.Marshal(v)
				out = append(out, settingRow{key, string(b)})
			case nil:
				out = append(out, settingRow{key, "(none)"})
			default:
				out = append(out, settingRow{key, fmt.Sprint(v)})
			}
		}
	}
	walk("", m)
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
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
	return settingsProvider{Role: role, Name: str("name"), Kind: str("kind"), BaseURL: str("base_url"), Model: str("model"), KeyEnv: str("api_key_env"), entry: p}
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

// settingsForm turns one of the page's forms into a change, or says in
// words why it cannot: "provider" (one of the configured endpoints first,
// the others behind it in order), "model" (the provider's model),
// "secret" (one secret's value), "clear" (one secret out of .env),
// "revert" (one key out of config.local.yaml).
func settingsForm(form url.Values, view settingsPage) (config.SettingsChange, string) {
	var ch config.SettingsChange
	switch form.Get("form") {
	case "provider":
		i, err := strconv.Atoi(form.Get("provider"))
		if err != nil || i < 0 || i >= len(view.Chain) {
			return ch, "Choose one of the configured providers."
		}
		if i == 0 {
			return ch, "That provider is already the one in use."
		}
		rest := []any{}
		for j, p := range view.Chain {
			if j != i {
				rest = append(rest, p.entry)
			}
		}
		ch.Config = map[string]any{"provider": view.Chain[i].entry, "fallback": rest}
	case "model":
		model := strings.TrimSpace(form.Get("model"))
		if model == "" {
			return ch, "Type the model's name."
		}
		ch.Config = map[string]any{"provider": map[string]any{"model": model}}
	case "secret":
		name, value := form.Get("name"), form.Get("value")
		if !slices.ContainsFunc(view.Secrets, func(x secretRow) bool { return x.Name == name }) {
			return ch, "The config names no such secret."
		}
		if value == "" {
			return ch, "Type the secret's new value, or clear it with its Clear button."
		}
		ch.Secrets = map[string]string{name: value}
	case "clear":
		name := form.Get("name")
		if !slices.ContainsFunc(view.Secrets, func(x secretRow) bool { return x.Name == name && x.Set }) {
			return ch, "The config names no such secret, or it is not set."
		}
		ch.Clear = []string{name}
	case "revert":
		key := form.Get("key")
		if !slices.ContainsFunc(view.Overlay, func(x settingRow) bool { return x.Key == key }) {
			return ch, "config.local.yaml does not set that key."
		}
		ch.Revert = []string{key}
	default:
		return ch, "Unknown form."
	}
	return ch, ""
}

// postSettingsPage applies one of the page's forms (settingsForm).
func (s *Server) postSettingsPage(w http.ResponseWriter, r *http.Request) {
	d := pageData{CSRF: r.PostForm.Get("csrf")}
	if s.sets == nil {
		d.Error = "Settings are not available."
		s.renderSettings(w, http.StatusNotFound, d)
		return
	}
	view := settingsView(s.sets.Settings(), nil)
	overlay, err := s.sets.SettingsOverlay()
	if err != nil {
		d.Error = "config.local.yaml could not be read; see shelldon doctor."
		s.renderSettings(w, http.StatusInternalServerError, d)
		return
	}
	view.Overlay = overlayRows(overlay)
	ch, refused := settingsForm(r.PostForm, view)
	if refused != "" {
		d.Error = refused
		s.renderSettings(w, http.StatusBadRequest, d)
		return
	}
	diff, err := s.sets.ApplySettings(r.Context(), ch)
	if err != nil {
		// Never the value, even inside an error.
		d.Error = "Nothing was changed: " + scrubSecrets(err.Error(), ch.Secrets)
		s.renderSettings(w, http.StatusBadRequest, d)
		return
	}
	switch {
	case slices.Contains(diff, TokenReplaced):
		// This browser's session ended with the token it signed in with.
		back(w, r, "/login", "token-replaced")
	case len(ch.Revert) > 0:
		back(w, r, "/settings", "reverted")
	case len(ch.Clear) > 0:
		back(w, r, "/settings", "cleared")
	default:
		back(w, r, "/settings", "saved")
	}
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
			settingsOverlay(p, d.CSRF, data.Overlay)
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

// settingsModel writes the provider chain, the form that puts another of
// its providers first and the one that switches the provider's model.
func settingsModel(p *page, csrf string, data settingsPage) {
	p.m(`<section aria-labelledby="model">
<h2 id="model">Provider and model</h2>
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
`)
	if len(data.Chain) > 1 {
		p.m(`<form method="post" action="/settings" class="settings-provider">
`).csrfField(csrf).hidden("form", "provider").m(`
<p><label for="provider-pick">Use this provider first (the others stay behind it, in order)</label>
<select id="provider-pick" name="provider">`)
		for i, c := range data.Chain {
			p.m(`<option value="`).t(strconv.Itoa(i)).m(`"`)
			if i == 0 {
				p.m(` selected`)
			}
			p.m(`>`).t(c.Name + " (" + c.Kind + ", " + c.Model + ", " + hostOf(c.BaseURL) + ")").m(`</option>`)
		}
		p.m(`</select></p>
<p><button type="submit">Switch the provider</button></p>
</form>
`)
	}
	p.m(`<form method="post" action="/settings" class="settings-model">
`).csrfField(csrf).hidden("form", "model").m(`
<p><label for="model-name">The provider's model</label>
<input id="model-name" name="model" type="text" value="`).t(data.Model).m(`" required autocomplete="off" spellcheck="false"></p>
<p><button type="submit" class="primary">Switch the model</button></p>
</form>
<p class="muted">A switch applies from the next turn. Only the endpoints your config names can be chosen; add one with <code>shelldon config set</code>.</p>

</section>`)
}

// settingsBindings writes where each key variable may be sent.
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
<thead><tr><th scope="col">Key variable</th><th scope="col">Sent only to</th><th scope="col">Used by</th></tr></thead>
<tbody>`)
	for _, b := range bindings {
		p.m(`<tr><td>`).el("code", "", b.Env).m(`</td><td>`)
		for i, o := range b.Origins {
			if i > 0 {
				p.m(`<br>`)
			}
			p.el("code", "", o)
		}
		p.m(`</td>`).el("td", "", b.Providers).m("</tr>\n")
	}
	p.m(`</tbody>
</table>
<p class="muted">A well-known key may always go to its issuer's API over HTTPS; any other host only because your config pairs it with that key. The daemon refuses to send a key anywhere else, whatever a config change or the model asks.</p>

</section>`)
}

// settingsSecrets writes a write-only form per secret, and a Clear button
// for each that is set.
func settingsSecrets(p *page, csrf string, secrets []secretRow) {
	p.m(`<section aria-labelledby="secrets">
<h2 id="secrets">Secrets</h2>
<p class="muted">Values are written to <code>.env</code> (mode 0600) and never shown. Replacing <code>SHELLDON_API_TOKEN</code> signs every browser out, this one too.</p>
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
		if sec.Set {
			p.m(`<form method="post" action="/settings" class="secret-clear">
`).csrfField(csrf).hidden("form", "clear").hidden("name", sec.Name).m(`
<p><button type="submit" class="danger" aria-label="Clear `).t(sec.Name).m(`">Clear</button></p>
</form>
`)
		}
	}
	if len(secrets) == 0 {
		p.m(`<p class="muted">The config names no secrets.</p>`)
	}
	p.m(`
</section>`)
}

// settingsOverlay writes what config.local.yaml sets, each key with a
// button that reverts it.
func settingsOverlay(p *page, csrf string, rows []settingRow) {
	p.m(`<section aria-labelledby="overlay">
<h2 id="overlay">Changed over config.yaml</h2>
<p class="muted">These keys are set in <code>config.local.yaml</code>: by changes you approved for the agent, by this page, the settings API or <code>shelldon config set</code>. Reverting one makes <code>config.yaml</code>'s value (or the default) apply again.</p>
`)
	if len(rows) == 0 {
		p.m(`<p class="muted">Nothing: the config is config.yaml's.</p>
</section>`)
		return
	}
	p.m(`<table class="settings-config">
<thead><tr><th scope="col">Key</th><th scope="col">Value</th><th scope="col">Revert</th></tr></thead>
<tbody>`)
	for _, r := range rows {
		p.m(`<tr><td>`).el("code", "", r.Key).m(`</td><td>`).el("code", "", r.Value).m(`</td><td>
<form method="post" action="/settings">`).csrfField(csrf).hidden("form", "revert").hidden("key", r.Key).
			m(`<button type="submit" aria-label="Revert `).t(r.Key).m(`">Revert</button></form></td></tr>
`)
	}
	p.m(`</tbody>
</table>
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
