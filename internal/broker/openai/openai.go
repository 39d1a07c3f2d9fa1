// Package openai is the broker's adapter for the OpenAI Chat Completions API
// and every server that speaks it (Ollama, vLLM, llama.cpp ...), written over
// net/http without an SDK. It translates a contracts.Request to the wire
// format, sends it (streamed or not) and normalizes the reply to a
// contracts.Completion. It holds the API key and executes nothing.
package openai

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

// Kind is the provider kind this package serves.
const Kind = "openai"

// Client talks to one model of an OpenAI-compatible server.
type Client struct {
	cfg  provider.Config
	name string
	http *provider.HTTP
	// newTokenField: the server wants max_completion_tokens (api.openai.com)
	// rather than max_tokens (everything compatible).
	newTokenField bool
}

var _ provider.Provider = (*Client)(nil)

// New returns a client for cfg. BaseURL is the API root including its
// version, such as https://api.openai.com/v1 or http://localhost:11434/v1.
func New(cfg provider.Config) *Client {
	cfg = cfg.WithDefaults()
	name := cfg.DisplayName(Kind)
	c := &Client{cfg: cfg, name: name, http: provider.NewHTTP(name, cfg)}
	if u, err := url.Parse(cfg.BaseURL); err == nil && strings.EqualFold(u.Hostname(), "api.openai.com") {
		c.newTokenField = true
	}
	return c
}

// Name returns the configured name, else "openai:<model>".
func (c *Client) Name() string { return c.name }

// Complete sends req to POST {BaseURL}/chat/completions and returns the
// normalized answer.
func (c *Client) Complete(ctx context.Context, req contracts.Request, onText func(delta string)) (contracts.Completion, error) {
	return c.http.Complete(ctx, c.cfg, Kind, c.url("/chat/completions"), c.header(), buildRequest(c.cfg, req, c.newTokenField), onText, decodeStream, decodeResponse)
}

// Ping checks that the server answers and accepts the key, with GET
// {BaseURL}/models.
func (c *Client) Ping(ctx context.Context) error {
	return c.http.Ping(ctx, c.url("/models"), c.header())
}

func (c *Client) url(path string) string {
	return strings.TrimRight(c.cfg.BaseURL, "/") + path
}

func (c *Client) header() http.Header {
	h := http.Header{}
	if c.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	h.Set("Content-Type", "application/json")
	if c.cfg.Stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	h.Set("User-Agent", "shelldon")
	return h
}
