package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
)

// onboardStdin is what a command of these tests reads as its standard input.
type onboardStdin string

const (
	stdinDevNull onboardStdin = "/dev/null" // shelldon ... </dev/null
	stdinClosed  onboardStdin = "closed"    // shelldon ... <&-
	stdinPipe    onboardStdin = "pipe"      // an empty pipe
)

// runOnboard runs the binary on home h with standard input in, the test
// environment plus extra, and returns what it printed and its status.
func runOnboard(t *testing.T, h string, in onboardStdin, extra []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	switch in {
	case stdinClosed:
		cmd = exec.Command("/bin/sh", append([]string{"-c", `exec "$0" "$@" <&-`, binary}, args...)...)
	case stdinDevNull:
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	case stdinPipe:
		cmd.Stdin = strings.NewReader("")
	}
	return execute(t, cmd, h, extra)
}

// onboardKey is the key the keyed fake server wants.
const onboardKey = "sk-onboard-0123456789abcdefghij"

// TestOnboardInit runs `shelldon init` as a newcomer would, without a
// terminal (stdin /dev/null, closed, or an empty pipe), against fake
// OpenAI-compatible servers on loopback: every form writes the config and
// exits 0, says how to add a missing key, and tests the provider unless
// told not to.
func TestOnboardInit(t *testing.T) {
	t.Parallel()
	keyless := brokertest.NewServer(t, "openai", brokertest.Sequence(brokertest.Reply{Text: "OK"}))
	keyed := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		if r.Header.Get("Authorization") != "Bearer "+onboardKey {
			return brokertest.Reply{Status: http.StatusUnauthorized, Text: "Incorrect API key provided"}
		}
		return brokertest.Reply{Text: "OK"}
	})
	tests := []struct {
		name    string
		in      onboardStdin
		extra   []string
		args    []string
		code    int
		config  []string // lines of config.yaml; nil: no config.yaml
		env     bool     // .env written
		want    []string // in stdout and stderr
		server  *brokertest.Server
		tested  bool // the server got the test request
		keySent bool // with the key
	}{
		{
			name: "keyless loopback server, stdin /dev/null", in: stdinDevNull,
			args:   []string{"--provider", "openai", "--base-url", keyless.BaseURL(), "--model", "m"},
			config: []string{"kind: openai", "base_url: " + keyless.BaseURL(), "model: m", `#api_key_env: ""`},
			want:   []string{"is used without one", "✓ m answered", ": OK"},
			server: keyless, tested: true,
		},
		{
			name: "keyless loopback server, stdin closed, --no-test", in: stdinClosed,
			args:   []string{"--provider", "openai", "--base-url", keyless.BaseURL(), "--model", "m2", "--no-test"},
			config: []string{"model: m2", `#api_key_env: ""`},
			want:   []string{"Not tested (--no-test)"},
			server: keyless,
		},
		{
			name: "keyed loopback server, key in the environment", in: stdinPipe, extra: []string{"LOCAL_KEY=" + onboardKey},
			args:   []string{"--provider", "openai", "--base-url", keyed.BaseURL(), "--model", "m3", "--api-key-env", "LOCAL_KEY"},
			config: []string{"api_key_env: LOCAL_KEY"},
			want:   []string{"✓ m3 answered"},
			server: keyed, tested: true, keySent: true,
		},
		{
			name: "keyed loopback server, wrong key", in: stdinDevNull, extra: []string{"LOCAL_KEY=sk-wrong-0123456789abcdefghij"},
			args:   []string{"--provider", "openai", "--base-url", keyed.BaseURL(), "--model", "m4", "--api-key-env", "LOCAL_KEY"},
			config: []string{"api_key_env: LOCAL_KEY"},
			want:   []string{"✗ The test request failed", "status 401", "shelldon config set-secret LOCAL_KEY", "The config is written"},
			server: keyed, tested: true,
		},
		{
			name: "anthropic without its key, stdin closed", in: stdinClosed,
			args:   []string{"--provider", "anthropic"},
			config: []string{"kind: anthropic", "api_key_env: ANTHROPIC_API_KEY"},
			want:   []string{"ANTHROPIC_API_KEY is not set", "shelldon config set-secret ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY=<your key>", "Not tested without the key"},
		},
		{
			name: "no flags, OPENAI_API_KEY in the environment", in: stdinDevNull, extra: []string{"OPENAI_API_KEY=" + onboardKey},
			args:   []string{"--no-test"},
			config: []string{"kind: openai", "api_key_env: OPENAI_API_KEY"},
			want:   []string{"Provider openai: OPENAI_API_KEY is set"},
		},
		{
			name: "no flags, no key anywhere", in: stdinDevNull,
			config: []string{"kind: anthropic"},
			want:   []string{"Provider anthropic: no --provider given", "shelldon config set-secret ANTHROPIC_API_KEY"},
		},
		{
			name: "another host without a key", in: stdinPipe,
			args:   []string{"--provider", "openai", "--base-url", "http://192.0.2.1:8000/v1", "--no-test"},
			config: []string{"api_key_env: OPENAI_API_KEY"},
			want:   []string{"shelldon config set-secret OPENAI_API_KEY", "--force --no-key"},
		},
		{
			name: "another host, --no-key", in: stdinClosed,
			args:   []string{"--provider", "openai", "--base-url", "http://192.0.2.1:8000/v1", "--no-key", "--no-test"},
			config: []string{`#api_key_env: ""`},
			want:   []string{"is used without one"},
		},
		{
			name: "--no-key for anthropic", in: stdinDevNull,
			args: []string{"--provider", "anthropic", "--no-key"}, code: 2,
			want: []string{"always needs a key"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := filepath.Join(t.TempDir(), "home")
			stdout, stderr, code := runOnboard(t, h, tt.in, tt.extra, append([]string{"init"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d:\n%s%s", code, tt.code, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("output lacks %q:\n%s%s", w, stdout, stderr)
				}
			}
			data, err := os.ReadFile(filepath.Join(h, "config.yaml"))
			switch {
			case tt.config == nil && err == nil:
				t.Errorf("config.yaml written:\n%s", data)
			case tt.config != nil && err != nil:
				t.Fatalf("config.yaml: %v", err)
			}
			for _, line := range tt.config {
				if !strings.Contains(string(data), "\n  "+line+"\n") {
					t.Errorf("config.yaml lacks %q:\n%s", line, data)
				}
			}
			if _, err := os.Stat(filepath.Join(h, ".env")); (err == nil) != tt.env {
				t.Errorf(".env written: %v, want %v", err == nil, tt.env)
			}
			if tt.server == nil {
				return
			}
			model := ""
			for i, a := range tt.args {
				if a == "--model" {
					model = tt.args[i+1]
				}
			}
			tested, keySent := false, false
			for _, r := range tt.server.Requests() {
				if r.Method == http.MethodPost && r.Model == model {
					tested = true
					keySent = r.Header.Get("Authorization") == "Bearer "+onboardKey
				}
			}
			if tested != tt.tested || keySent != tt.keySent {
				t.Errorf("test request sent %v (want %v), with the key %v (want %v)", tested, tt.tested, keySent, tt.keySent)
			}
		})
	}
}

// TestOnboardKeylessLocalServer: `init --provider openai --base-url
// http://127.0.0.1:.../v1 --model m` and then `chat -m hi` just work
// against a keyless server, and no request carries an Authorization header.
func TestOnboardKeylessLocalServer(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", brokertest.Sequence(brokertest.Reply{Text: "OK"}, brokertest.Reply{Text: "Hello from the local model."}))
	h := filepath.Join(t.TempDir(), "home")
	stdout, stderr, code := runOnboard(t, h, stdinDevNull, nil, "init", "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "m")
	if code != 0 || !strings.Contains(stdout, "✓ m answered") {
		t.Fatalf("init: exit %d:\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = runOnboard(t, h, stdinDevNull, nil, "chat", "-m", "hi")
	if code != 0 || strings.TrimSpace(stdout) != "Hello from the local model." {
		t.Fatalf("chat: exit %d: %q %q", code, stdout, stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the test request and the chat's", len(reqs))
	}
	if got := reqs[0].Request.Messages[0].Text; got != "Reply with OK" {
		t.Errorf("the test request says %q", got)
	}
	for _, r := range reqs {
		if v, ok := r.Header["Authorization"]; ok {
			t.Errorf("%s %s carries Authorization %q", r.Method, r.Path, v)
		}
	}
}

// TestOnboardDoctorWithoutModelsEndpoint: doctor passes a working
// OpenAI-compatible server that has no GET /models, checking it with a
// test request and saying so.
func TestOnboardDoctorWithoutModelsEndpoint(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		if r.Method == http.MethodGet {
			return brokertest.Reply{Status: http.StatusNotFound, Text: "404 page not found"}
		}
		return brokertest.Reply{Text: "OK"}
	})
	h := filepath.Join(t.TempDir(), "home")
	if stdout, stderr, code := runOnboard(t, h, stdinDevNull, nil, "init", "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "m", "--no-test"); code != 0 {
		t.Fatalf("init: exit %d:\n%s%s", code, stdout, stderr)
	}
	stdout, _, _ := runOnboard(t, h, stdinDevNull, nil, "doctor")
	if !strings.Contains(stdout, "✓ provider   openai (m at "+srv.BaseURL()+") answers, checked with a test request because GET /models answered 404") {
		t.Errorf("doctor does not pass the provider with a test request:\n%s", stdout)
	}
}
