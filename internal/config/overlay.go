package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/shelldon/shelldon/internal/contracts"
)

// CheckAgentChanges refuses changes the agent may not propose
// (contracts.CheckAgentConfig); PrepareAgentOverlay checks the rest.
func CheckAgentChanges(changes map[string]any) error { return contracts.CheckAgentConfig(changes) }

// flatKey is one leaf of a nested map.
type flatKey struct {
	key   string
	value any
}

// flatten lists the leaves of a nested map as dotted keys; a list is one
// leaf.
func flatten(prefix string, m map[string]any) []flatKey {
	var out []flatKey
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			out = append(out, flatten(key, sub)...)
			continue
		}
		out = append(out, flatKey{key, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// deepMerge merges src into dst: maps merge, anything else replaces.
func deepMerge(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				dst[k] = deepMerge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// Overlay is a change to config.local.yaml, validated and not yet written.
type Overlay struct {
	home   string
	data   []byte
	Before *Config
	After  *Config
}

// PrepareOverlay deep-merges changes into the home's config.local.yaml (the
// agent's and the settings API's file; config.yaml is never rewritten) and
// loads the result, so a change that would make the config invalid is
// refused before anything is written. It is the owner's path (the settings
// API, `shelldon config set`): any key may change. The agent's is
// PrepareAgentOverlay.
func PrepareOverlay(home string, environ []string, changes map[string]any) (*Overlay, error) {
	before, err := Load(home, environ)
	if err != nil {
		return nil, err
	}
	return prepare(before, environ, changes)
}

// prepare merges changes into the overlay of before's home and loads the
// result the way before was loaded (for the owner or for the agent).
func prepare(before *Config, environ []string, changes map[string]any) (*Overlay, error) {
	if len(changes) == 0 {
		return nil, errors.New("config: no changes")
	}
	current := map[string]any{}
	if data, ok, err := readOptional(before.Path(FileOverlay)); err != nil {
		return nil, err
	} else if ok {
		if err := yaml.Unmarshal(data, &current); err != nil {
			return nil, fmt.Errorf("config: %s: %w", FileOverlay, err)
		}
		if current == nil {
			current = map[string]any{}
		}
	}
	merged := deepMerge(current, changes)
	data, err := yaml.Marshal(merged)
	if err != nil {
		return nil, fmt.Errorf("config: encode overlay: %w", err)
	}
	data = append([]byte("# Written by shelldon (update_config, the settings API or `shelldon config set`); config.yaml is never rewritten.\n"), data...)
	after, err := loadWith(before.Home, environ, data, before.forAgent)
	if err != nil {
		return nil, err
	}
	return &Overlay{home: before.Home, data: data, Before: before, After: after}, nil
}

// Diff lists what the overlay changes in the effective config, one
// "key: before -> after" line each.
func (o *Overlay) Diff() []string { return Diff(o.Before, o.After) }

// Write writes the overlay atomically, mode 0600.
func (o *Overlay) Write() error {
	return WriteFileAtomic(o.Before.Path(FileOverlay), o.data, 0o600)
}

// Effective is the effective config as a nested map of its YAML keys.
func (c *Config) Effective() map[string]any {
	data, _ := yaml.Marshal(c)
	m := map[string]any{}
	yaml.Unmarshal(data, &m)
	return m
}

// Diff lists the keys whose effective values differ.
func Diff(before, after *Config) []string {
	b, a := flatMap(before.Effective()), flatMap(after.Effective())
	keys := map[string]bool{}
	for k := range b {
		keys[k] = true
	}
	for k := range a {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if b[k] != a[k] {
			out = append(out, fmt.Sprintf("%s: %s -> %s", k, orNone(b[k]), orNone(a[k])))
		}
	}
	sort.Strings(out)
	return out
}

func flatMap(m map[string]any) map[string]string {
	out := map[string]string{}
	for _, k := range flatten("", m) {
		out[k.key] = fmt.Sprint(k.value)
	}
	return out
}

func orNone(s string) string {
	if s == "" || s == "<nil>" {
		return "(none)"
	}
	return s
}

// SecretNames are the variables the config names as secrets, with whether
// each is set (never the value).
func (c *Config) SecretNames() map[string]bool {
	out := map[string]bool{EnvAPIToken: c.Secret(EnvAPIToken) != ""}
	for _, p := range c.Providers() {
		if p.APIKeyEnv != "" {
			out[p.APIKeyEnv] = c.Secret(p.APIKeyEnv) != ""
		}
	}
	if c.Telegram.TokenEnv != "" {
		out[c.Telegram.TokenEnv] = c.Secret(c.Telegram.TokenEnv) != ""
	}
	return out
}

var secretNameRe = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,63}$`)

// SetSecret sets name=value in the home's .env, keeping its other lines,
// atomically and with mode 0600. The value is never printed or logged.
func SetSecret(home, name, value string) error {
	if !secretNameRe.MatchString(name) {
		return fmt.Errorf("config: %q is not a variable name (A-Z, 0-9 and _, starting with a letter or _)", name)
	}
	if value == "" {
		return fmt.Errorf("config: the value of %s is empty", name)
	}
	if strings.ContainsAny(value, "\n\r\x00") {
		return fmt.Errorf("config: the value of %s contains a line break or NUL", name)
	}
	path := home + "/" + FileEnv
	var lines []string
	if data, err := os.ReadFile(path); err == nil {
		for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			k, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(l), "export "), "=")
			if strings.TrimSpace(k) != name {
				lines = append(lines, l)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("config: read %s: %w", FileEnv, err)
	}
	quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(value) + `"`
	lines = append(lines, name+"="+quoted)
	return WriteFileAtomic(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}
