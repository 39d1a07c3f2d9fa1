package app

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/config"
)

// openaiConfig is a config whose provider is the OpenAI-compatible server
// at baseURL, with model m and the key variable keyEnv ("" for none).
func openaiConfig(t *testing.T, baseURL, keyEnv string, environ ...string) *config.Config {
	t.Helper()
	return loadHome(t, fmt.Sprintf("provider:\n  kind: openai\n  base_url: %s\n  model: m\n  api_key_env: %q\n", baseURL, keyEnv), environ)
}

// TestDoctorProviderCheck: doctor checks a provider with its models
// endpoint, or with a test request when the endpoint is missing (404 or
// 405), and says which; a failure says what to do.
func TestDoctorProviderCheck(t *testing.T) {
	t.Parallel()
	models := func(status int, post brokertest.Reply) func(brokertest.Recorded) brokertest.Reply {
		return func(r brokertest.Recorded) brokertest.Reply {
			if r.Method == http.MethodGet {
				return brokertest.Reply{Status: status}
			}
			return post
		}
	}
	tests := []struct {
		name   string
		script func(brokertest.Recorded) brokertest.Reply
		keyed  bool
		posts  int
		failed int
		want   []string
	}{
		{"models endpoint", models(0, brokertest.Reply{Text: "OK"}), false, 0, 0,
			[]string{"✓ provider", "answers, checked with the models endpoint"}},
		{"no models endpoint (404)", models(http.StatusNotFound, brokertest.Reply{Text: "OK"}), false, 1, 0,
			[]string{"✓ provider", "answers, checked with a test request because GET /models answered 404"}},
		{"no models endpoint (405)", models(http.StatusMethodNotAllowed, brokertest.Reply{Text: "OK"}), false, 1, 0,
			[]string{"answers, checked with a test request because GET /models answered 405"}},
		{"no models endpoint, and the test request fails", models(http.StatusNotFound, brokertest.Reply{Status: http.StatusInternalServerError, Text: "boom"}), false, 1, 1,
			[]string{"✗ provider", "status 500", "(checked with a test request because GET /models answered 404)", "look at its log"}},
		{"models endpoint refuses the key", models(http.StatusUnauthorized, brokertest.Reply{Text: "OK"}), true, 0, 1,
			[]string{"✗ provider", "status 401", "(checked with the models endpoint)", "config set-secret TEST_KEY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := brokertest.NewServer(t, "openai", tt.script)
			cfg := openaiConfig(t, srv.BaseURL(), "")
			if tt.keyed {
				cfg = openaiConfig(t, srv.BaseURL(), "TEST_KEY", "TEST_KEY="+initKey)
			}
			var out bytes.Buffer
			d := &doctor{w: &out, sh: "shelldon"}
			d.checkProviders(context.Background(), cfg)
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("doctor lacks %q:\n%s", w, out.String())
				}
			}
			if d.failed != tt.failed {
				t.Errorf("%d failed, want %d:\n%s", d.failed, tt.failed, out.String())
			}
			posts := 0
			for _, r := range srv.Requests() {
				if r.Method == http.MethodPost {
					posts++
					if r.Request.Messages[0].Text != testPrompt || r.Request.MaxTokens != testTokens {
						t.Errorf("the test request is %+v", r.Request)
					}
				}
			}
			if posts != tt.posts {
				t.Errorf("%d model requests, want %d", posts, tt.posts)
			}
		})
	}
}

// TestProviderFix: the fix each kind of failure gets.
func TestProviderFix(t *testing.T) {
	t.Parallel()
	many := brokertest.NewServer(t, "openai", nil) // lists gpt-fake
	noModels := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Status: http.StatusNotFound}
	})
	anthropicCfg := loadHome(t, "provider:\n  kind: anthropic\n  base_url: http://127.0.0.1:9\n  model: claude-x\n", []string{"ANTHROPIC_API_KEY=" + initKey})
	tests := []struct {
		name string
		cfg  *config.Config
		err  error
		want string
	}{
		{"timeout", openaiConfig(t, many.BaseURL(), ""), fmt.Errorf("x: %w", context.DeadlineExceeded), "did not answer in time"},
		{"rate limit", openaiConfig(t, many.BaseURL(), ""), &provider.Error{Status: 429, Message: "slow down"}, "rate limiting"},
		{"no such host", openaiConfig(t, many.BaseURL(), ""), &provider.Error{Message: "network: dial tcp: lookup nohost: no such host"}, "does not resolve"},
		{"model listed", openaiConfig(t, many.BaseURL(), ""), &provider.Error{Status: 404, Message: "The model `m` does not exist."}, "it has gpt-fake"},
		{"model, no list", openaiConfig(t, noModels.BaseURL(), ""), &provider.Error{Status: 404, Message: "model_not_found"}, "list its models with `curl " + noModels.BaseURL() + "/models`"},
		{"model, 400", openaiConfig(t, many.BaseURL(), ""), &provider.Error{Status: 400, Message: "unknown model m"}, "The server has no model m"},
		{"anthropic model", anthropicCfg, &provider.Error{Status: 404, Message: "not_found_error: model: claude-x"}, "The provider has no model claude-x; its documentation lists"},
		{"anthropic path", anthropicCfg, &provider.Error{Status: 404, Message: "not_found_error: Not Found"}, "has no Messages API"},
		{"bad request", openaiConfig(t, many.BaseURL(), ""), &provider.Error{Status: 400, Message: "max_tokens too small"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fix := providerFix(context.Background(), tt.cfg, tt.cfg.Provider, tt.err, "shelldon")
			if tt.want == "" && fix != "" || !strings.Contains(fix, tt.want) {
				t.Errorf("fix = %q, want %q in it", fix, tt.want)
			}
		})
	}
}
