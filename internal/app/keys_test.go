package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/config"
)

func loadHome(t *testing.T, yaml string, environ []string) *config.Config {
	t.Helper()
	h := t.TempDir()
	if err := os.WriteFile(filepath.Join(h, config.FileConfig), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(h, environ)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestKeysBoundWhereTheOwnerPointsThem: providers built for a config are
// bound by the config the binding came from. The owner's own config always
// builds (a well-known key at a proxy included); a config whose key would
// go somewhere the binding's config never paired it with is refused before
// any adapter exists.
func TestKeysBoundWhereTheOwnerPointsThem(t *testing.T) {
	t.Parallel()
	env := []string{"ANTHROPIC_API_KEY=sk-ant-0123456789abcdef", "TEST_PROVIDER_KEY=k-0123456789abcdef"}
	owner := loadHome(t, "provider:\n  kind: anthropic\n  base_url: https://llm-proxy.corp.example/anthropic\nfallback:\n  - kind: openai\n    base_url: http://127.0.0.1:4000/v1\n    api_key_env: TEST_PROVIDER_KEY\n", env)
	if _, err := buildProviders(owner); err != nil {
		t.Fatalf("the owner's config: %v", err)
	}
	keys, err := keyBinding(owner)
	if err != nil {
		t.Fatal(err)
	}
	for _, elsewhere := range []string{
		"provider:\n  kind: openai\n  base_url: http://127.0.0.1:4001/v1\n  api_key_env: TEST_PROVIDER_KEY\n",
		"provider:\n  kind: anthropic\n  base_url: https://xn--pi-6kc.anthropic.com\n",
		"provider:\n  kind: openai\n  base_url: http://127.0.0.1:4000/v1\n  api_key_env: ANTHROPIC_API_KEY\n",
	} {
		_, err := buildBoundProviders(loadHome(t, elsewhere, env), keys)
		if err == nil || !strings.Contains(err.Error(), "is not sent to") || strings.Contains(err.Error(), "0123456789abcdef") {
			t.Errorf("%s: %v", elsewhere, err)
		}
	}
	// The issuer's host stays allowed beside the owner's proxy.
	if _, err := buildBoundProviders(loadHome(t, "provider:\n  kind: anthropic\n", env), keys); err != nil {
		t.Errorf("ANTHROPIC_API_KEY to api.anthropic.com: %v", err)
	}
}
