package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/lazy"
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

// Overlay is a change to the owner's files, validated as a whole and not
// yet written: config.local.yaml, and .env when secrets change with it.
type Overlay struct {
	home   string
	data   []byte // the new config.local.yaml; nil: unchanged
	env    []byte // the new .env; nil: unchanged
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
	return PrepareSettings(home, environ, SettingsChange{Config: changes})
}

// SettingsChange is one change of the owner's settings (POST /api/settings,
// the settings page), checked and written as a whole.
type SettingsChange struct {
	Config  map[string]any    // merged into config.local.yaml
	Secrets map[string]string // set in .env
	// Revert takes keys out of config.local.yaml, so that config.yaml's
	// value (or the default) applies again. A key is dotted
	// ("provider.model"); a list is reverted whole ("fallback").
	Revert []string
	Clear  []string // variables taken out of .env
}

// empty reports whether ch changes nothing.
func (ch SettingsChange) empty() bool {
	return len(ch.Config) == 0 && len(ch.Secrets) == 0 && len(ch.Revert) == 0 && len(ch.Clear) == 0
}

// PrepareSettings is the owner's change to the home (POST /api/settings):
// secrets set in or cleared from .env, changes merged into and keys
// reverted from config.local.yaml, checked together and loaded as they
// would be after both files are written. Nothing is written: a change any
// part of which is refused leaves every file as it was.
func PrepareSettings(home string, environ []string, ch SettingsChange) (*Overlay, error) {
	if ch.empty() {
		return nil, errors.New("config: no changes")
	}
	for _, name := range ch.Clear {
		if _, set := ch.Secrets[name]; set {
			return nil, fmt.Errorf("config: %s is both set and cleared", name)
		}
	}
	var env []byte
	if len(ch.Secrets) > 0 || len(ch.Clear) > 0 {
		var err error
		if env, err = envWith(home, ch.Secrets, ch.Clear); err != nil {
			return nil, err
		}
	}
	if err := checkChanges(ch.Config); err != nil {
		return nil, err
	}
	before, err := Load(home, environ)
	if err != nil {
		return nil, err
	}
	for _, name := range ch.Clear {
		// Clearing .env would not unset it: the page must not say it did.
		if before.env[name] != "" {
			return nil, fmt.Errorf("config: %s is set in shelldon's process environment, which .env does not override; unset it where shelldon is started (the service's environment)", name)
		}
	}
	return prepare(before, environ, ch.Config, ch.Revert, env)
}

// checkChanges refuses a change nested deeper than any config can be,
// before it is merged or encoded.
func checkChanges(changes map[string]any) error {
	if mapDepth(changes) > maxDepth {
		return fmt.Errorf("config: the change nests more than %d levels deep; shelldon's config needs at most 4", maxDepth)
	}
	return nil
}

// prepare reverts keys of and merges changes into the overlay of before's
// home and loads the result the way before was loaded (for the owner or
// for the agent), with env (when not nil) as the new .env.
func prepare(before *Config, environ []string, changes map[string]any, revert []string, env []byte) (*Overlay, error) {
	if len(changes) == 0 && len(revert) == 0 && env == nil {
		return nil, errors.New("config: no changes")
	}
	if err := checkChanges(changes); err != nil {
		return nil, err
	}
	var data []byte
	if len(changes) > 0 || len(revert) > 0 {
		current, err := readOverlay(before.Path(FileOverlay))
		if err != nil {
			return nil, err
		}
		for _, key := range revert {
			if overlayHas(changes, key) {
				return nil, fmt.Errorf("config: %s is both changed and reverted", key)
			}
			if !removeKey(current, strings.Split(key, ".")) {
				return nil, fmt.Errorf("config: %s does not set %s; nothing to revert", FileOverlay, key)
			}
		}
		merged := deepMerge(current, changes)
		enc, err := yaml.Marshal(merged)
		if err != nil {
			return nil, fmt.Errorf("config: encode overlay: %w", err)
		}
		data = append([]byte("# Written by shelldon (update_config, the settings API or `shelldon config set`); config.yaml is never rewritten.\n"), enc...)
	}
	after, err := loadWith(before.Home, environ, candidate{overlay: data, env: env, forAgent: before.forAgent})
	if err != nil {
		return nil, err
	}
	return &Overlay{home: before.Home, data: data, env: env, Before: before, After: after}, nil
}

// ReadOverlay is the home's config.local.yaml as a nested map: what the
// agent's approved changes, the settings API and `shelldon config set`
// have set over config.yaml. No file is an empty map.
func ReadOverlay(home string) (map[string]any, error) {
	return readOverlay(filepath.Join(home, FileOverlay))
}

func readOverlay(path string) (map[string]any, error) {
	current := map[string]any{}
	raw, ok, err := readOptional(path)
	if err != nil || !ok {
		return current, err
	}
	if err := checkShape(path, raw); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(raw, &current); err != nil {
		return nil, fmt.Errorf("config: %s: %w", FileOverlay, err)
	}
	if current == nil {
		current = map[string]any{}
	}
	return current, nil
}

// removeKey deletes the leaf at the dotted path parts from m, and every
// map it leaves empty; a key may itself hold dots ("budget.prices" keyed
// by a model named "gpt-4.1"), so the longest key that is present is
// taken at each level. It reports whether anything was deleted.
func removeKey(m map[string]any, parts []string) bool {
	for i := len(parts); i >= 1; i-- {
		k := strings.Join(parts[:i], ".")
		v, ok := m[k]
		if !ok {
			continue
		}
		if i == len(parts) {
			delete(m, k)
			return true
		}
		if sub, ok := v.(map[string]any); ok && removeKey(sub, parts[i:]) {
			if len(sub) == 0 {
				delete(m, k)
			}
			return true
		}
	}
	return false
}

// overlayHas reports whether changes set key or anything under or above
// it.
func overlayHas(changes map[string]any, key string) bool {
	for _, leaf := range flatten("", changes) {
		if leaf.key == key || strings.HasPrefix(leaf.key, key+".") || strings.HasPrefix(key, leaf.key+".") {
			return true
		}
	}
	return false
}

// Diff lists what the overlay changes in the effective config, one
// "key: before -> after" line each.
func (o *Overlay) Diff() []string { return Diff(o.Before, o.After) }

// Write writes the overlay's files atomically, mode 0600: .env first, then
// config.local.yaml. If the second cannot be written, the first is put back
// as it was, so a failed Write leaves the home as it found it.
func (o *Overlay) Write() error {
	return writeEnvThen(o.home, o.env, filepath.Join(o.home, FileOverlay), o.data)
}

// writeEnvThen writes .env in home (when env is not nil), then path (when
// data is not nil), each atomically with mode 0600; if path cannot be
// written, .env is put back as it was, so a failure leaves the home as it
// found it.
func writeEnvThen(home string, env []byte, path string, data []byte) error {
	envPath := filepath.Join(home, FileEnv)
	var old []byte
	var had bool
	if env != nil {
		var err error
		if old, had, err = readOptional(envPath); err != nil {
			return err
		}
		if err := WriteFileAtomic(envPath, env, 0o600); err != nil {
			return err
		}
	}
	if data == nil {
		return nil
	}
	if err := WriteFileAtomic(path, data, 0o600); err != nil {
		if env != nil {
			if had {
				_ = WriteFileAtomic(envPath, old, 0o600)
			} else {
				_ = os.Remove(envPath)
			}
		}
		return err
	}
	return nil
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

var secretNameRe lazy.Value[*regexp.Regexp]

func secretNamePattern() *regexp.Regexp {
	return secretNameRe.Get(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,63}$`) })
}

// checkSecret refuses a secret .env could not hold or shelldon would not
// read back; the message never quotes the value.
func checkSecret(name, value string) error {
	if !secretNamePattern().MatchString(name) {
		return fmt.Errorf("config: %q is not a variable name (A-Z, 0-9 and _, starting with a letter or _)", name)
	}
	if value == "" {
		return fmt.Errorf("config: the value of %s is empty", name)
	}
	if strings.ContainsAny(value, "\n\r\x00") {
		return fmt.Errorf("config: the value of %s contains a line break or NUL", name)
	}
	if name == EnvAPIToken && len(value) < MinAPIToken {
		return fmt.Errorf("config: %s must be at least %d characters (the HTTP API refuses a shorter one, and the daemon would not start)", name, MinAPIToken)
	}
	return nil
}

// envWith is the home's .env with secrets set and the variables in clear
// taken out, its other lines kept: every name and value checked first, so
// either all change or none. A variable to clear that .env does not set is
// refused.
func envWith(home string, secrets map[string]string, clear []string) ([]byte, error) {
	names := make([]string, 0, len(secrets))
	for name, value := range secrets {
		if err := checkSecret(name, value); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	sort.Strings(names)
	drop := map[string]bool{}
	for _, name := range names {
		drop[name] = true
	}
	for _, name := range clear {
		if !secretNamePattern().MatchString(name) {
			return nil, fmt.Errorf("config: %q is not a variable name (A-Z, 0-9 and _, starting with a letter or _)", name)
		}
		drop[name] = true
	}
	path := filepath.Join(home, FileEnv)
	data, _, err := readOptional(path)
	if err != nil {
		return nil, err
	}
	if len(clear) > 0 {
		current, err := parseDotenv(path, data)
		if err != nil {
			return nil, err
		}
		for _, name := range clear {
			if _, ok := current[name]; !ok {
				return nil, fmt.Errorf("config: %s does not set %s; nothing to clear", FileEnv, name)
			}
		}
	}
	var lines []string
	if len(data) > 0 {
		for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			k, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(l), "export "), "=")
			if !drop[strings.TrimSpace(k)] {
				lines = append(lines, l)
			}
		}
	}
	for _, name := range names {
		quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(secrets[name]) + `"`
		lines = append(lines, name+"="+quoted)
	}
	out := []byte(strings.Join(lines, "\n") + "\n")
	if len(lines) == 0 {
		out = []byte{}
	}
	// What is written must read back: a line of .env that does not parse
	// would stop every later command.
	if _, err := parseDotenv(path, out); err != nil {
		return nil, fmt.Errorf("config: %s would not read back after the change; fix it by hand first: %w", FileEnv, err)
	}
	return out, nil
}

// SetSecret sets name=value in the home's .env, keeping its other lines,
// atomically and with mode 0600 (`shelldon config set-secret`, init). The
// value is never printed or logged. If the home's config loads now, it must
// still load with the secret set (setting ANTHROPIC_API_KEY can change the
// provider a config without a kind defaults to); a config that does not
// load yet may (the key it lacks is what is being set).
func SetSecret(home string, environ []string, name, value string) error {
	env, err := envWith(home, map[string]string{name: value}, nil)
	if err != nil {
		return err
	}
	if _, err := Load(home, environ); err == nil {
		if _, err := loadWith(home, environ, candidate{env: env}); err != nil {
			return fmt.Errorf("config: nothing written: with %s set the config would not load:\n%w", name, err)
		}
	}
	return WriteFileAtomic(filepath.Join(home, FileEnv), env, 0o600)
}
