package provider

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// wellKnownKeys binds the API key variables of well-known providers to the
// host of their API, where such a key is always allowed (over HTTPS on port
// 443): the key's own issuer learns nothing from it. A switch rather than a
// map literal, which every process of the binary would build at init (see
// ansiSequence); each call returns a new slice, which the caller may keep.
func wellKnownKeys(env string) []string {
	switch env {
	case "ANTHROPIC_API_KEY":
		return []string{"api.anthropic.com"}
	case "OPENAI_API_KEY":
		return []string{"api.openai.com"}
	case "OPENROUTER_API_KEY":
		return []string{"openrouter.ai"}
	case "GROQ_API_KEY":
		return []string{"api.groq.com"}
	case "MISTRAL_API_KEY":
		return []string{"api.mistral.ai"}
	case "DEEPSEEK_API_KEY":
		return []string{"api.deepseek.com"}
	case "TOGETHER_API_KEY":
		return []string{"api.together.xyz", "api.together.ai"}
	case "FIREWORKS_API_KEY":
		return []string{"api.fireworks.ai"}
	case "XAI_API_KEY":
		return []string{"api.x.ai"}
	case "GEMINI_API_KEY", "GOOGLE_API_KEY":
		return []string{"generativelanguage.googleapis.com"}
	}
	return nil
}

// WellKnownKeyHosts returns the hosts the key variable env is bound to by
// default, or nil for a variable that is not well known.
func WellKnownKeyHosts(env string) []string { return wellKnownKeys(env) }

// KeyBinding says to which origins (scheme://host:port) the key held in
// each variable may be sent. It is the well-known variables' hosts (over
// HTTPS) plus every (api_key_env, base_url) pair the owner's config names:
// a well-known key the owner points at a proxy of their own may go to the
// proxy and still to its issuer. It is built from a config the owner wrote,
// never from one the agent proposed; the zero value binds only the
// well-known variables.
type KeyBinding struct {
	origins map[string][]string // variable -> origins
}

// Bind allows the key in env to go to the origin of baseURL (the owner
// configured both).
func (b *KeyBinding) Bind(env, baseURL string) error {
	if env == "" {
		return nil
	}
	o, err := Origin(baseURL)
	if err != nil {
		return fmt.Errorf("bind %s: %w", env, err)
	}
	if b.origins == nil {
		b.origins = map[string][]string{}
	}
	if !slices.Contains(b.origins[env], o) {
		b.origins[env] = append(b.origins[env], o)
	}
	return nil
}

// Origins lists where the key in env may go: its well-known host's, then
// those the owner bound, in order.
func (b *KeyBinding) Origins(env string) []string {
	var out []string
	for _, h := range wellKnownKeys(env) {
		out = append(out, "https://"+h+":443")
	}
	if b != nil {
		for _, o := range b.origins[env] {
			if !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out
}

// Allows reports whether the key in env may be sent to rawURL.
func (b *KeyBinding) Allows(env, rawURL string) bool {
	o, err := Origin(rawURL)
	return err == nil && slices.Contains(b.Origins(env), o)
}

// Origin is rawURL's scheme, host and port, the unit a key is bound to:
// "https://api.anthropic.com:443". Scheme and host are lower-cased (what
// every client does before it dials); nothing else is mapped, so a
// look-alike or Unicode host is an origin of its own. The port is made
// explicit.
func Origin(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", errors.New("not a URL")
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if host == "" || (scheme != "http" && scheme != "https") {
		return "", errors.New("not an http(s) URL with a host")
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(host, port), nil
}
