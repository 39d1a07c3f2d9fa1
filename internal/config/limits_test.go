package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const okConfig = "provider:\n  kind: openai\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  api_key_env: K\n"

var okEnv = []string{"K=sk-0123456789abcdef"}

func writeHome(t *testing.T, files map[string]string) string {
	t.Helper()
	h := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(h, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// TestLoadRefusesDeepNesting: a config nested far deeper than any config
// is refused on its bytes, naming the file, before YAML decodes it (20 KB
// nested 10,000 deep cost 176 MB to reject).
func TestLoadRefusesDeepNesting(t *testing.T) {
	t.Parallel()
	indented := ""
	for i := range 40 {
		indented += strings.Repeat(" ", i) + "a:\n"
	}
	for name, data := range map[string]string{
		"flow lists":      "provider: " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n",
		"flow maps":       "provider: " + strings.Repeat("{a: ", 5000) + "1" + strings.Repeat("}", 5000) + "\n",
		"compact entries": "fallback:\n  " + strings.Repeat("- ", 10000) + "x\n",
		"indentation":     indented,
		"behind a quote":  "fallback: [\"a #\", " + strings.Repeat("[", 100) + "]\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := writeHome(t, map[string]string{FileConfig: data})
			_, err := Load(h, okEnv)
			var ce *Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "nests more than") || ce.File != filepath.Join(h, FileConfig) {
				t.Errorf("Load = %v, want an *Error naming %s about nesting", err, FileConfig)
			}
		})
	}
}

// TestLoadRefusesLargeYAML: a config file over the YAML cap is refused on
// its size.
func TestLoadRefusesLargeYAML(t *testing.T) {
	t.Parallel()
	h := writeHome(t, map[string]string{FileConfig: okConfig + "# " + strings.Repeat("x", maxYAML) + "\n"})
	if _, err := Load(h, okEnv); err == nil || !strings.Contains(err.Error(), "at most 128KiB") {
		t.Errorf("Load = %v", err)
	}
}

// TestYAMLDepth: the depth bound counts what nests and not what only
// looks like it (brackets inside scalars, quotes and block scalars).
func TestYAMLDepth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		yaml string
		max  int // the bound must be at least the real depth and at most this
		min  int
	}{
		{okConfig, 2, 2},
		{"fallback:\n  - name: a\n    kind: openai\n  - name: b\n", 3, 3},
		{"telegram:\n  allowed_users: [1, 2]\n", 3, 3},
		{"a: [[1], {b: [2]}]\n", 4, 4},
		{"agent:\n  system_prompt: use [brackets] and {braces [[[[[ freely\n", 2, 2},
		{"agent:\n  system_prompt: \"[[[[[[[[[[\"\n", 2, 2},
		{"agent:\n  system_prompt: '[[[[''[[[['\n", 2, 2},
		{"agent:\n  system_prompt: |\n    [[[[[[[[[[[[\n      - - - - - - - -\n        deeper\n  workers: 2\n", 2, 2},
		{"a: # [[[[[[[[\n  b: 1\n", 2, 2},
		{"a: &x [1]\nb: *x\n", 2, 2},
		{"- - - x\n", 3, 3},
	} {
		got, _ := yamlDepth([]byte(tc.yaml))
		if got < tc.min || got > tc.max {
			t.Errorf("yamlDepth(%q) = %d, want %d..%d", tc.yaml, got, tc.min, tc.max)
		}
	}
	// The commented template init writes loads within the bounds.
	tmpl := InitTemplate(KindOpenAI, "m", "http://127.0.0.1:9/v1", "K")
	if got, _ := yamlDepth(tmpl); got > 4 {
		t.Errorf("yamlDepth(init template) = %d", got)
	}
}

// TestUnreadableConfigIsAConfigError: a config.yaml, config.local.yaml or
// .env that is a directory is an *Error naming it (the command line's
// config status), not a bare I/O error.
func TestUnreadableConfigIsAConfigError(t *testing.T) {
	t.Parallel()
	for _, name := range []string{FileConfig, FileOverlay, FileEnv} {
		h := writeHome(t, map[string]string{FileConfig: okConfig})
		os.Remove(filepath.Join(h, name))
		if err := os.Mkdir(filepath.Join(h, name), 0o700); err != nil {
			t.Fatal(err)
		}
		_, err := Load(h, okEnv)
		var ce *Error
		if !errors.As(err, &ce) || ce.File != filepath.Join(h, name) || !strings.Contains(err.Error(), "a directory, not a file") {
			t.Errorf("%s a directory: Load = %v", name, err)
		}
	}
}

// TestPrepareSettingsChecksTheWhole: secrets and changes are checked
// together, before anything is written; a refused one writes nothing,
// an accepted one writes both.
func TestPrepareSettingsChecksTheWhole(t *testing.T) {
	t.Parallel()
	h := writeHome(t, map[string]string{FileConfig: okConfig, FileEnv: "OLD=\"1\"\n"})
	bad := []struct {
		changes map[string]any
		secrets map[string]string
	}{
		{map[string]any{"agent": map[string]any{"turn_budget": "soon"}}, map[string]string{"NEW_KEY": "v-0123456789"}},
		{map[string]any{"agent": map[string]any{"workers": 1}}, map[string]string{"NEW_KEY": "v", "bad-name": "v"}},
		{nil, map[string]string{EnvAPIToken: "0123456789"}},
		{nil, nil},
	}
	for _, b := range bad {
		if _, err := PrepareSettings(h, okEnv, SettingsChange{Config: b.changes, Secrets: b.secrets}); err == nil {
			t.Errorf("PrepareSettings(%v, %d secrets) accepted", b.changes, len(b.secrets))
		}
	}
	// A provider whose key is in the same request loads.
	o, err := PrepareSettings(h, okEnv, SettingsChange{Config: map[string]any{"provider": map[string]any{"api_key_env": "NEW_KEY"}}, Secrets: map[string]string{"NEW_KEY": "v-0123456789"}})
	if err != nil {
		t.Fatal(err)
	}
	if env, _ := os.ReadFile(filepath.Join(h, FileEnv)); string(env) != "OLD=\"1\"\n" {
		t.Fatalf("PrepareSettings wrote .env: %q", env)
	}
	if err := o.Write(); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(h, okEnv)
	if err != nil || cfg.Provider.APIKeyEnv != "NEW_KEY" || cfg.Secret("NEW_KEY") != "v-0123456789" || cfg.Secret("OLD") != "1" {
		t.Errorf("after Write: %+v, %v", cfg, err)
	}
}

// TestOverlayWriteRestoresEnv: when config.local.yaml cannot be written,
// the .env written just before is put back as it was.
func TestOverlayWriteRestoresEnv(t *testing.T) {
	t.Parallel()
	h := writeHome(t, map[string]string{FileConfig: okConfig, FileEnv: "OLD=\"1\"\n"})
	o, err := PrepareSettings(h, okEnv, SettingsChange{Config: map[string]any{"agent": map[string]any{"workers": 1}}, Secrets: map[string]string{"NEW_KEY": "v-0123456789"}})
	if err != nil {
		t.Fatal(err)
	}
	// A directory where config.local.yaml goes: its rename fails.
	if err := os.MkdirAll(filepath.Join(h, FileOverlay, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := o.Write(); err == nil {
		t.Fatal("Write over a directory succeeded")
	}
	if env, _ := os.ReadFile(filepath.Join(h, FileEnv)); string(env) != "OLD=\"1\"\n" {
		t.Errorf(".env after a failed Write: %q", env)
	}
}

// TestPrepareInit: init's files are checked before any is written.
func TestPrepareInit(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	if _, err := PrepareInit(home, nil, KindOpenAI, "m", "ftp://example.com", "", nil); err == nil {
		t.Error("PrepareInit accepted an ftp base URL")
	}
	if _, err := PrepareInit(home, nil, KindAnthropic, "m", "", "ANTHROPIC_API_KEY", map[string]string{"ANTHROPIC_API_KEY": "a\nb"}); err == nil {
		t.Error("PrepareInit accepted a key with a line break")
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Fatalf("a refused PrepareInit made the home: %v", err)
	}
	f, err := PrepareInit(home, nil, KindAnthropic, "m", "", "ANTHROPIC_API_KEY", map[string]string{"ANTHROPIC_API_KEY": "sk-ant-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write("workspace"); err != nil {
		t.Fatal(err)
	}
	if cfg, err := Load(home, nil); err != nil || cfg.Provider.Kind != KindAnthropic {
		t.Errorf("Load after init: %v", err)
	}
}

// TestChangeTooDeep: a change nested deeper than maxDepth is refused
// before it is merged or encoded, on the owner's path and the agent's.
func TestChangeTooDeep(t *testing.T) {
	t.Parallel()
	h := writeHome(t, map[string]string{FileConfig: okConfig})
	deep := map[string]any{"x": 1}
	for range 10000 {
		deep = map[string]any{"agent": deep}
	}
	if _, err := PrepareOverlay(h, okEnv, deep); err == nil || !strings.Contains(err.Error(), "nests more than") {
		t.Errorf("PrepareOverlay = %v", err)
	}
	if _, err := PrepareAgentOverlay(h, okEnv, deep); err == nil || !strings.Contains(err.Error(), "nests more than") {
		t.Errorf("PrepareAgentOverlay = %v", err)
	}
}
