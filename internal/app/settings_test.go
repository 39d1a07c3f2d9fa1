package app

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/config"
)

// ownerFiles are the files of a home a refused change must leave as they
// were.
var ownerFiles = []string{config.FileConfig, config.FileOverlay, config.FileEnv}

// readOwnerFiles reads them ("" for one that does not exist).
func readOwnerFiles(t *testing.T, home string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range ownerFiles {
		data, err := os.ReadFile(filepath.Join(home, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out[name] = string(data)
	}
	return out
}

// settingsApp is an App with the config of home and nothing else: enough
// for ApplySettings to refuse a change (applying one needs the core).
func settingsApp(t *testing.T, home string, environ []string) *App {
	t.Helper()
	cfg, err := config.Load(home, environ)
	if err != nil {
		t.Fatal(err)
	}
	a := &App{environ: environ, model: &liveModel{}, Redactor: &liveRedactor{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	a.setConfig(cfg, nil)
	return a
}

// deepChange is a change nested n maps deep.
func deepChange(n int) map[string]any {
	m := map[string]any{"x": 1}
	for range n {
		m = map[string]any{"agent": m}
	}
	return m
}

// TestApplySettingsRefusedWritesNothing: POST /api/settings that is
// refused (400) leaves config.yaml, config.local.yaml and .env
// byte-identical, whichever part of it is wrong. The first case is the
// issue's: a valid secret with an invalid config change wrote .env before
// the change was refused.
func TestApplySettingsRefusedWritesNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		changes map[string]any
		secrets map[string]string
		want    string
	}{
		{"valid secret, invalid change", map[string]any{"agent": map[string]any{"turn_budget": "soon"}},
			map[string]string{"OTHER_KEY": "sk-other-0123456789"}, "turn_budget"},
		{"valid secret, unknown key", map[string]any{"nosuch": 1},
			map[string]string{"OTHER_KEY": "sk-other-0123456789"}, "unknown key"},
		{"one bad secret among good ones", nil,
			map[string]string{"A_KEY": "sk-a-0123456789", "bad name": "v", "Z_KEY": "sk-z-0123456789"}, "not a variable name"},
		{"an API token the HTTP API would refuse", nil,
			map[string]string{config.EnvAPIToken: "tiny-tok"}, "at least 16"},
		{"a value with a line break", map[string]any{"agent": map[string]any{"max_tool_calls": 3}},
			map[string]string{"OTHER_KEY": "two\nlines"}, "line break"},
		{"a change nested 10,000 deep", deepChange(10000),
			map[string]string{"OTHER_KEY": "sk-other-0123456789"}, "nests more than"},
		{"a revert of a key the overlay does not set, with a valid secret", nil,
			map[string]string{"OTHER_KEY": "sk-other-0123456789"}, "nothing to revert"},
		{"a clear of a variable .env does not set, with a valid change", map[string]any{"agent": map[string]any{"max_tool_calls": 3}},
			nil, "nothing to clear"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home, environ := testHome(t)
			if err := os.WriteFile(filepath.Join(home, config.FileEnv), []byte("# mine\nEXISTING=\"kept\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, config.FileOverlay), []byte("agent:\n  workers: 1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			a := settingsApp(t, home, environ)
			before := readOwnerFiles(t, home)
			ch := config.SettingsChange{Config: tc.changes, Secrets: tc.secrets}
			switch tc.want {
			case "nothing to revert":
				ch.Revert = []string{"agent.max_tool_calls"}
			case "nothing to clear":
				ch.Clear = []string{"NOT_IN_DOTENV"}
			}
			_, err := a.ApplySettings(t.Context(), ch)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ApplySettings = %v, want an error about %q", err, tc.want)
			}
			for _, v := range tc.secrets {
				if len(v) > 4 && strings.Contains(err.Error(), v) {
					t.Errorf("the error echoes a secret: %v", err)
				}
			}
			after := readOwnerFiles(t, home)
			for _, name := range ownerFiles {
				if before[name] != after[name] {
					t.Errorf("%s changed by a refused request:\nbefore %q\nafter  %q", name, before[name], after[name])
				}
			}
		})
	}
}

// TestInitRefusedWritesNothing: `shelldon init` with a flag the config
// refuses writes nothing, not even the home, and exits with the config
// status.
func TestInitRefusedWritesNothing(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--provider", "openai", "--base-url", "ftp://example.com/v1"},
		{"--provider", "openai", "--api-key-env", "bad-name"},
	} {
		home := filepath.Join(t.TempDir(), "home")
		var out, errOut bytes.Buffer
		code := Main(append([]string{"--home", home, "init"}, args...), strings.NewReader(""), &out, &errOut, []string{"HOME=" + home})
		if code != exitConfig {
			t.Errorf("init %v: exit %d, want %d; %s", args, code, exitConfig, errOut.String())
		}
		if _, err := os.Stat(home); !os.IsNotExist(err) {
			t.Errorf("init %v made the home: %v", args, err)
		}
	}
}

// TestSetSecretRefusesShortAPIToken: `shelldon config set-secret` refuses
// an API token the daemon would refuse at every start.
func TestSetSecretRefusesShortAPIToken(t *testing.T) {
	t.Parallel()
	home, environ := testHome(t)
	before := readOwnerFiles(t, home)
	var out, errOut bytes.Buffer
	code := Main([]string{"--home", home, "config", "set-secret", config.EnvAPIToken}, strings.NewReader("short\n"), &out, &errOut, environ)
	if code == exitOK || !strings.Contains(errOut.String(), "at least 16") {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
	if after := readOwnerFiles(t, home); after[config.FileEnv] != before[config.FileEnv] {
		t.Errorf(".env written: %q", after[config.FileEnv])
	}
}

// TestServeConfigIsADirectory: a config.yaml that is a directory is a
// config error (exit 2, the file named), like every other.
func TestServeConfigIsADirectory(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, config.FileConfig), 0o700); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Main([]string{"--home", home, "serve"}, strings.NewReader(""), &out, &errOut, []string{"HOME=" + home})
	if code != exitConfig || !strings.Contains(errOut.String(), "a directory, not a file") {
		t.Errorf("exit %d, want %d: %s", code, exitConfig, errOut.String())
	}
}

// TestDoctorLayout: doctor fails a tools/ or skills/ that is a file and a
// workspace that is, or links to, the root or a directory holding the
// home; it passes the usual layout.
func TestDoctorLayout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, home string)
		want  string // a failed line holding this; "" for none
	}{
		{"usual", func(t *testing.T, home string) {
			mkdir(t, filepath.Join(home, "workspace"))
			mkdir(t, filepath.Join(home, "tools"))
		}, ""},
		{"tools is a file", func(t *testing.T, home string) {
			writeFile(t, filepath.Join(home, "tools"))
		}, "✗ tools      " + "%s/tools is a file, not a directory"},
		{"skills is a file", func(t *testing.T, home string) {
			writeFile(t, filepath.Join(home, "skills"))
		}, "✗ skills     " + "%s/skills is a file, not a directory"},
		{"workspace links to /", func(t *testing.T, home string) {
			symlink(t, "/", filepath.Join(home, "workspace"))
		}, "is the root of the file system"},
		{"workspace links to the home's parent", func(t *testing.T, home string) {
			symlink(t, filepath.Dir(home), filepath.Join(home, "workspace"))
		}, "holds shelldon's home"},
		{"workspace is a file", func(t *testing.T, home string) {
			writeFile(t, filepath.Join(home, "workspace"))
		}, "is a file, not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home, environ := testHome(t)
			if err := os.Chmod(home, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, home)
			cfg, err := config.Load(home, environ)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			d := &doctor{w: &out}
			d.checkPerms(cfg)
			want := strings.ReplaceAll(tc.want, "%s", cfg.Home)
			switch {
			case want == "" && d.failed > 0:
				t.Errorf("doctor failed the usual layout:\n%s", out.String())
			case want != "" && (d.failed == 0 || !strings.Contains(out.String(), want)):
				t.Errorf("doctor output lacks a failure %q:\n%s", want, out.String())
			}
		})
	}
}

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// TestMemoryLimit: a daemon sets its own soft memory limit unless the
// owner set GOMEMLIMIT.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	if limit, ok := memoryLimit([]string{"HOME=/x"}); !ok || limit != daemonMemoryLimit {
		t.Errorf("memoryLimit without GOMEMLIMIT = %d, %v", limit, ok)
	}
	if _, ok := memoryLimit([]string{"GOMEMLIMIT=200MiB"}); ok {
		t.Error("memoryLimit overrides GOMEMLIMIT")
	}
}
