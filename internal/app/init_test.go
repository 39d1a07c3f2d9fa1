package app

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/config"
)

const initKey = "sk-init-test-0123456789abcdef"

// keyedServer is a fake OpenAI-compatible server on loopback that answers
// "OK" to a request carrying initKey and 401 to any other; models says
// whether it has GET /models.
func keyedServer(t *testing.T, models bool) *brokertest.Server {
	return brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		switch {
		case r.Header.Get("Authorization") != "Bearer "+initKey:
			return brokertest.Reply{Status: http.StatusUnauthorized, Text: "Incorrect API key provided"}
		case r.Method == http.MethodGet && !models:
			return brokertest.Reply{Status: http.StatusNotFound, Text: "not found"}
		}
		return brokertest.Reply{Text: "OK"}
	})
}

// closedURL is the base URL of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

// runInit runs `shelldon init` in process on a new home, its standard
// input not a terminal, and returns the home, the exit status and what it
// printed.
func runInit(t *testing.T, environ []string, args ...string) (home string, code int, stdout, stderr string) {
	t.Helper()
	home = filepath.Join(t.TempDir(), "home")
	var out, errOut bytes.Buffer
	code = Main(append([]string{"--home", home, "init"}, args...), strings.NewReader(""), &out, &errOut, append([]string{"HOME=" + home}, environ...))
	return home, code, out.String(), errOut.String()
}

func readInitConfig(t *testing.T, home string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(home, config.FileConfig))
	if err != nil {
		t.Fatalf("config.yaml: %v", err)
	}
	return string(data)
}

// TestInitTestTurn: init ends with a test request through the configured
// provider; a failure says its cause and the fix, and init still exits 0
// with the config written.
func TestInitTestTurn(t *testing.T) {
	t.Parallel()
	ok := brokertest.NewServer(t, "openai", brokertest.Sequence(brokertest.Reply{Text: "OK"}))
	keyed := keyedServer(t, true)
	missingModel := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		if r.Method == http.MethodPost {
			return brokertest.Reply{Status: http.StatusNotFound, Text: `model "m" not found, try pulling it first`}
		}
		return brokertest.Reply{}
	})
	broken := brokertest.NewServer(t, "openai", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Status: http.StatusInternalServerError, Text: "out of memory"}
	})
	tests := []struct {
		name    string
		url     string
		environ []string
		args    []string
		want    []string
	}{
		{"answers", ok.BaseURL(), nil, nil, []string{"✓ m answered", ": OK"}},
		{"keyed server, right key", keyed.BaseURL(), []string{"TEST_KEY=" + initKey}, []string{"--api-key-env", "TEST_KEY"}, []string{"✓ m answered"}},
		{"wrong key", keyed.BaseURL(), []string{"TEST_KEY=sk-wrong-0123456789abcdef"}, []string{"--api-key-env", "TEST_KEY"},
			[]string{"✗ The test request failed", "status 401", "refused the key in TEST_KEY", "config set-secret TEST_KEY"}},
		{"keyless, but the server wants a key", keyed.BaseURL(), nil, nil,
			[]string{"✗ The test request failed", "wants an API key", "config set-secret NAME", "config set provider.api_key_env NAME"}},
		{"connection refused", closedURL(t), nil, nil,
			[]string{"✗ The test request failed", "connection refused", "is the server running at http://127.0.0.1:"}},
		{"base URL without /v1", strings.TrimSuffix(ok.BaseURL(), "/v1"), nil, nil,
			[]string{"✗ The test request failed", "status 404", "usually ends with /v1", "config set provider.base_url URL"}},
		{"model not found", missingModel.BaseURL(), nil, nil,
			[]string{"✗ The test request failed", "The server has no model m; it has gpt-fake. Set one with", "config set provider.model NAME"}},
		{"server error", broken.BaseURL(), nil, nil, []string{"✗ The test request failed", "status 500", "look at its log"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--provider", "openai", "--base-url", tt.url, "--model", "m"}, tt.args...)
			home, code, stdout, stderr := runInit(t, tt.environ, args...)
			if code != exitOK {
				t.Fatalf("exit %d, want 0: %s %s", code, stdout, stderr)
			}
			if cfg := readInitConfig(t, home); !strings.Contains(cfg, "base_url: "+tt.url) {
				t.Errorf("config.yaml lacks the base URL:\n%s", cfg)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if strings.Contains(stdout, "✗") && !strings.Contains(stdout, "The config is written") {
				t.Errorf("a failed test does not say the config is written:\n%s", stdout)
			}
		})
	}
}

// TestInitNoTest: --no-test writes the config and sends nothing.
func TestInitNoTest(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", nil)
	_, code, stdout, stderr := runInit(t, nil, "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "m", "--no-test")
	if code != exitOK || !strings.Contains(stdout, "Not tested (--no-test)") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("--no-test sent %d requests", n)
	}
}

// TestInitKeyChoice: which key variable init writes, from the flags and
// the base URL, and what it says about it.
func TestInitKeyChoice(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		code    int
		key     string // the api_key_env line written; "" when nothing is
		want    string // in stdout or stderr
		environ []string
	}{
		{"loopback IPv4: no key", []string{"--provider", "openai", "--base-url", "http://127.0.0.2:8080/v1"}, 0, `#api_key_env: ""`, "is used without one", nil},
		{"loopback IPv6: no key", []string{"--provider", "openai", "--base-url", "http://[::1]:8080/v1"}, 0, `#api_key_env: ""`, "is used without one", nil},
		{"localhost: no key", []string{"--provider", "openai", "--base-url", "http://localhost:8080/v1"}, 0, `#api_key_env: ""`, "is used without one", nil},
		{"loopback, key named", []string{"--provider", "openai", "--base-url", "http://127.0.0.1:8080/v1", "--api-key-env", "LOCAL_KEY"}, 0, "api_key_env: LOCAL_KEY", "config set-secret LOCAL_KEY", nil},
		{"other host: the key", []string{"--provider", "openai", "--base-url", "https://llm.example.com/v1"}, 0, "api_key_env: OPENAI_API_KEY", "--force --no-key", nil},
		{"other host, --no-key", []string{"--provider", "openai", "--base-url", "https://llm.example.com/v1", "--no-key"}, 0, `#api_key_env: ""`, "is used without one", nil},
		{"other host, empty --api-key-env", []string{"--provider", "openai", "--base-url", "https://llm.example.com/v1", "--api-key-env", ""}, 0, `#api_key_env: ""`, "is used without one", nil},
		{"anthropic, no key yet", []string{"--provider", "anthropic"}, 0, "api_key_env: ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY=<your key>", nil},
		{"anthropic, key in the environment", []string{"--provider", "anthropic"}, 0, "api_key_env: ANTHROPIC_API_KEY", "", []string{"ANTHROPIC_API_KEY=" + initKey}},
		{"anthropic --no-key", []string{"--provider", "anthropic", "--no-key"}, exitConfig, "", "always needs a key", nil},
		{"api.openai.com --no-key", []string{"--provider", "openai", "--no-key"}, exitConfig, "", "always needs a key", nil},
		{"--no-key and a key", []string{"--provider", "openai", "--no-key", "--api-key-env", "K"}, exitConfig, "", "contradict", nil},
		{"unknown provider", []string{"--provider", "gemini"}, exitConfig, "", "unknown provider gemini", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home, code, stdout, stderr := runInit(t, tt.environ, append(tt.args, "--no-test")...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("output lacks %q:\n%s%s", tt.want, stdout, stderr)
			}
			if tt.key == "" {
				if _, err := os.Stat(home); !os.IsNotExist(err) {
					t.Errorf("a refused init made the home: %v", err)
				}
				return
			}
			if cfg := readInitConfig(t, home); !strings.Contains(cfg, "\n  "+tt.key+"\n") {
				t.Errorf("config.yaml lacks %q:\n%s", tt.key, cfg)
			}
			if _, err := os.Stat(filepath.Join(home, config.FileEnv)); !os.IsNotExist(err) {
				t.Errorf("init without a pasted key wrote .env: %v", err)
			}
		})
	}
}

// TestInitChoosesProviderOffTerminal: without --provider and off a
// terminal, init takes the provider whose key is set, else anthropic, and
// says so.
func TestInitChoosesProviderOffTerminal(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		environ  []string
		kind     string
		because  string
		addedKey bool
	}{
		{nil, "anthropic", "no --provider given", true},
		{[]string{"OPENAI_API_KEY=" + initKey}, "openai", "OPENAI_API_KEY is set", false},
		{[]string{"ANTHROPIC_API_KEY=" + initKey, "OPENAI_API_KEY=" + initKey}, "anthropic", "ANTHROPIC_API_KEY is set", false},
	} {
		home, code, stdout, stderr := runInit(t, tt.environ, "--no-test")
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s %s", tt.environ, code, stdout, stderr)
		}
		if cfg := readInitConfig(t, home); !strings.Contains(cfg, "kind: "+tt.kind) {
			t.Errorf("%v: config.yaml is not %s:\n%s", tt.environ, tt.kind, cfg)
		}
		if !strings.Contains(stdout, "Provider "+tt.kind+": "+tt.because) {
			t.Errorf("%v: stdout does not say why %s:\n%s", tt.environ, tt.kind, stdout)
		}
		if got := strings.Contains(stdout, "config set-secret"); got != tt.addedKey {
			t.Errorf("%v: says how to add the key: %v, want %v:\n%s", tt.environ, got, tt.addedKey, stdout)
		}
	}
}

// interactiveInit is an init session on a terminal whose owner types typed;
// a key is asked for with readSecret, which answers key and counts.
func interactiveInit(t *testing.T, typed, key string) (*initSession, *bytes.Buffer, *int) {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	out := &bytes.Buffer{}
	asked := new(int)
	return &initSession{
		home: home, environ: []string{"HOME=" + home}, out: out, sh: "shelldon",
		interactive: true, in: bufio.NewReader(strings.NewReader(typed)),
		readSecret: func(string) (string, error) { *asked++; return key, nil },
	}, out, asked
}

// TestInitInteractive: on a terminal init asks for the provider, the base
// URL of an OpenAI-compatible server (its default shown, kept by an empty
// answer), the model, and a key only where one is needed.
func TestInitInteractive(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", brokertest.Sequence(brokertest.Reply{Text: "OK"}))
	tests := []struct {
		name      string
		typed     string
		flags     initFlags
		askedKey  int
		skipKey   bool     // the owner pastes no key
		want      []string // in config.yaml
		wantOut   []string
		notWanted string // not in stdout
	}{
		{
			name: "local server: its URL, no key", typed: "openai\n" + srv.BaseURL() + "\nm\n",
			want:    []string{"kind: openai", "base_url: " + srv.BaseURL(), "model: m", `#api_key_env: ""`},
			wantOut: []string{"Base URL of the server (for any OpenAI-compatible one, like http://127.0.0.1:8080/v1) [https://api.openai.com/v1]: ", "✓ m answered"},
		},
		{
			name: "empty answers keep the defaults", typed: "openai\n\n\n", flags: initFlags{noTest: true}, askedKey: 1, skipKey: true,
			want:    []string{"base_url: https://api.openai.com/v1", "model: gpt-4o-mini", "api_key_env: OPENAI_API_KEY"},
			wantOut: []string{"[https://api.openai.com/v1]: ", "Model [gpt-4o-mini]: ", "config set-secret OPENAI_API_KEY"},
		},
		{
			name: "ollama: its default URL", typed: "ollama\n\nllama3.2\n", flags: initFlags{noTest: true},
			want:    []string{"base_url: http://127.0.0.1:11434/v1", "model: llama3.2", `#api_key_env: ""`},
			wantOut: []string{"[http://127.0.0.1:11434/v1]: "},
		},
		{
			name: "other host, no key needed", typed: "openai\nhttps://llm.example.com/v1\nm\nn\n", flags: initFlags{noTest: true},
			want:    []string{"base_url: https://llm.example.com/v1", `#api_key_env: ""`},
			wantOut: []string{"Does the server at llm.example.com:443 need an API key? [y/n] [y]: "},
		},
		{
			name: "other host, key pasted", typed: "openai\nhttps://llm.example.com/v1\nm\ny\n", flags: initFlags{noTest: true}, askedKey: 1,
			want:    []string{"api_key_env: OPENAI_API_KEY"},
			wantOut: []string{"Saved OPENAI_API_KEY"},
		},
		{
			name: "a bad URL is asked again", typed: "openai\nftp://x\n" + srv.BaseURL() + "\nm\n", flags: initFlags{noTest: true},
			want:    []string{"base_url: " + srv.BaseURL()},
			wantOut: []string{"ftp://x: not an http or https URL"},
		},
		{
			name: "anthropic: no base URL asked", typed: "anthropic\n\n", flags: initFlags{noTest: true}, askedKey: 1,
			want: []string{"kind: anthropic", "api_key_env: ANTHROPIC_API_KEY"}, notWanted: "Base URL",
		},
		{
			name: "flags are not asked again", typed: "", flags: initFlags{provider: "openai", baseURL: srv.BaseURL(), model: "m"},
			want: []string{"base_url: " + srv.BaseURL()}, notWanted: "[",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key := initKey
			if tt.skipKey {
				key = ""
			}
			s, out, asked := interactiveInit(t, tt.typed, key)
			if err := s.run(context.Background(), tt.flags); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			cfg := readInitConfig(t, s.home)
			for _, w := range tt.want {
				if !strings.Contains(cfg, "\n  "+w+"\n") {
					t.Errorf("config.yaml lacks %q:\n%s", w, cfg)
				}
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if tt.notWanted != "" && strings.Contains(out.String(), tt.notWanted) {
				t.Errorf("stdout has %q:\n%s", tt.notWanted, out)
			}
			if *asked != tt.askedKey {
				t.Errorf("asked for the key %d times, want %d", *asked, tt.askedKey)
			}
			env, err := os.ReadFile(filepath.Join(s.home, config.FileEnv))
			if pasted := tt.askedKey > 0 && !tt.skipKey; pasted != strings.Contains(string(env), initKey) {
				t.Errorf(".env holds the pasted key: %v, want %v (%v)", !pasted, pasted, err)
			}
		})
	}
}

// TestIsLoopback: the hosts init takes for this machine.
func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{
		"http://127.0.0.1:8080/v1": true, "http://127.1.2.3/v1": true, "http://[::1]:8080/v1": true,
		"http://localhost:11434/v1": true, "http://LOCALHOST./v1": true,
		"http://10.0.0.1/v1": false, "https://api.openai.com/v1": false, "http://localhost.example.com/v1": false,
		"http://[::ffff:10.0.0.1]/v1": false, "http://0.0.0.0:8080/v1": false, "not a url\x7f": false,
	} {
		if got := isLoopback(url); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", url, got, want)
		}
	}
}

// TestShelldonFor: the fixes name --home when the home is not the default.
func TestShelldonFor(t *testing.T) {
	t.Parallel()
	if got := shelldonFor("/h/.shelldon", []string{"HOME=/h"}); got != "shelldon" {
		t.Errorf("default home: %q", got)
	}
	if got := shelldonFor("/srv/my home", []string{"HOME=/h"}); got != "shelldon --home '/srv/my home'" {
		t.Errorf("other home: %q", got)
	}
}
