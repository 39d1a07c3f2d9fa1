package provider

import (
	"slices"
	"testing"
)

func TestOrigin(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ url, want string }{
		{"https://api.anthropic.com", "https://api.anthropic.com:443"},
		{"https://api.anthropic.com/v1/messages", "https://api.anthropic.com:443"},
		{"HTTPS://API.Anthropic.COM:443/", "https://api.anthropic.com:443"},
		{"http://api.anthropic.com", "http://api.anthropic.com:80"},
		{"https://api.anthropic.com:8443", "https://api.anthropic.com:8443"},
		{"http://127.0.0.1:11434/v1", "http://127.0.0.1:11434"},
		{"http://[::1]:8080/v1", "http://[::1]:8080"},
		{"https://аpi.anthropic.com", "https://аpi.anthropic.com:443"}, // Cyrillic а: an origin of its own
		{"https://xn--pi-6kc.anthropic.com", "https://xn--pi-6kc.anthropic.com:443"},
	} {
		if got, err := Origin(tt.url); err != nil || got != tt.want {
			t.Errorf("Origin(%q) = %q, %v; want %q", tt.url, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "api.anthropic.com", "ftp://api.anthropic.com", "https://", "://x", "unix:///tmp/s"} {
		if got, err := Origin(bad); err == nil {
			t.Errorf("Origin(%q) = %q", bad, got)
		}
	}
}

// TestKeyBinding: well-known variables are bound to their provider's host
// over HTTPS; the owner's config adds pairs (a proxy for a well-known key
// adds to its issuer's host, it does not replace it); nothing else is
// allowed: not another host, a look-alike, another port or plain HTTP.
func TestKeyBinding(t *testing.T) {
	t.Parallel()
	var b KeyBinding
	for _, pair := range [][2]string{
		{"ANTHROPIC_API_KEY", "https://llm-proxy.corp.example/anthropic"},
		{"TEST_PROVIDER_KEY", "http://127.0.0.1:4000/v1"},
	} {
		if err := b.Bind(pair[0], pair[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Bind("X_API_KEY", "not a url"); err == nil {
		t.Error("a pair with no URL bound")
	}
	for _, tt := range []struct {
		env, url string
		want     bool
	}{
		{"ANTHROPIC_API_KEY", "https://api.anthropic.com/v1/messages", true},
		{"ANTHROPIC_API_KEY", "https://llm-proxy.corp.example/anthropic/v1/messages", true},
		{"ANTHROPIC_API_KEY", "https://API.ANTHROPIC.COM", true},
		{"ANTHROPIC_API_KEY", "http://api.anthropic.com", false},
		{"ANTHROPIC_API_KEY", "https://api.anthropic.com:8443", false},
		{"ANTHROPIC_API_KEY", "https://аpi.anthropic.com", false},
		{"ANTHROPIC_API_KEY", "https://xn--pi-6kc.anthropic.com", false},
		{"ANTHROPIC_API_KEY", "https://api.anthropic.com.attacker.example", false},
		{"ANTHROPIC_API_KEY", "https://api.openai.com/v1", false},
		{"OPENAI_API_KEY", "https://api.openai.com/v1", true},
		{"OPENAI_API_KEY", "https://llm-proxy.corp.example/anthropic", false},
		{"OPENROUTER_API_KEY", "https://openrouter.ai/api/v1", true},
		{"GROQ_API_KEY", "https://api.groq.com/openai/v1", true},
		{"MISTRAL_API_KEY", "https://api.mistral.ai/v1", true},
		{"DEEPSEEK_API_KEY", "https://api.deepseek.com", true},
		{"TOGETHER_API_KEY", "https://api.together.xyz/v1", true},
		{"FIREWORKS_API_KEY", "https://api.fireworks.ai/inference/v1", true},
		{"XAI_API_KEY", "https://api.x.ai/v1", true},
		{"GEMINI_API_KEY", "https://generativelanguage.googleapis.com/v1beta/openai", true},
		{"GROQ_API_KEY", "https://api.openai.com/v1", false},
		{"TEST_PROVIDER_KEY", "http://127.0.0.1:4000/v1/chat/completions", true},
		{"TEST_PROVIDER_KEY", "http://127.0.0.1:4001/v1", false},
		{"TEST_PROVIDER_KEY", "http://localhost:4000/v1", false},
		{"UNKNOWN_API_KEY", "https://api.anthropic.com", false},
		{"", "https://api.anthropic.com", false},
	} {
		if got := b.Allows(tt.env, tt.url); got != tt.want {
			t.Errorf("Allows(%s, %s) = %v", tt.env, tt.url, got)
		}
	}
	if got := b.Origins("ANTHROPIC_API_KEY"); !slices.Equal(got, []string{"https://api.anthropic.com:443", "https://llm-proxy.corp.example:443"}) {
		t.Errorf("origins: %v", got)
	}
	var zero *KeyBinding
	if !zero.Allows("OPENAI_API_KEY", "https://api.openai.com/v1") || zero.Allows("TEST_PROVIDER_KEY", "http://127.0.0.1:4000") {
		t.Error("a nil binding binds more or less than the well-known keys")
	}
}
