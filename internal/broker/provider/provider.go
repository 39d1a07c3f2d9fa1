// Package provider is the common ground of the broker's adapters: the
// Provider interface every adapter implements, a provider's Config, the
// classified *Error every adapter returns, secret redaction, the HTTP plumbing
// of one attempt and a server-sent events reader.
//
// Credentials live only in Config. No error built here ever carries one: every
// message passes through Redact before it is stored. A key is sent only to
// the origins it is bound to (KeyBinding, Config.KeyOrigins), and no request
// follows a redirect.
package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

// Provider is one configured model endpoint.
//
// Complete sends req and returns the normalized answer. When onText is not
// nil and the provider streams, onText receives the answer's text as it
// arrives; the returned Completion still holds the whole text. A failure is
// an *Error whenever the adapter could classify it.
type Provider interface {
	Name() string
	Complete(ctx context.Context, req contracts.Request, onText func(delta string)) (contracts.Completion, error)
}

// Defaults applied by Config.WithDefaults.
const (
	DefaultTimeout   = 60 * time.Second
	DefaultMaxTokens = 4096
)

// Config configures one provider.
type Config struct {
	Name    string // shown in logs and errors; empty means "<kind>:<model>"
	Kind    string // "anthropic" or "openai"
	BaseURL string // the API's own convention, see DESIGN section 5
	Model   string
	APIKey  string
	Stream  bool

	// KeyOrigins are where APIKey may be sent ("https://api.anthropic.com:443",
	// see Origin and KeyBinding): a request to any other origin is refused
	// before it is sent. Empty means BaseURL's origin only.
	KeyOrigins []string

	// Timeout bounds one HTTP attempt. A plain reply must arrive whole
	// within it; a streamed reply must start within it and never pause
	// longer than it between two reads, so a long answer that keeps
	// flowing is not cut off. Zero means DefaultTimeout.
	Timeout time.Duration

	// MaxTokens caps the answer when the Request sets no cap of its own.
	// Zero means DefaultMaxTokens.
	MaxTokens int

	// Caps bound one reply, streamed or plain; zero fields mean the
	// defaults (DefaultMaxText and the rest).
	Caps Caps

	// HTTPClient sends the requests; nil means a client of the adapter's
	// own. Its Timeout, if any, applies on top of Timeout above. Its
	// CheckRedirect is never used: no request follows a redirect.
	HTTPClient *http.Client
}

// WithDefaults returns c with the zero fields that have a default filled in.
func (c Config) WithDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	c.Caps = c.Caps.WithDefaults()
	return c
}

// DisplayName is the name a provider reports: Name if set, else
// "<kind>:<model>".
func (c Config) DisplayName(kind string) string {
	if c.Name != "" {
		return c.Name
	}
	if c.Model == "" {
		return kind
	}
	return kind + ":" + c.Model
}

// CompletionProvider is the value adapters put in Completion.Provider: Name
// if set, else the kind.
func (c Config) CompletionProvider(kind string) string {
	if c.Name != "" {
		return c.Name
	}
	return kind
}

// MaxTokensFor returns the token cap for req: its own, else the config's.
func (c Config) MaxTokensFor(req contracts.Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	if c.MaxTokens > 0 {
		return c.MaxTokens
	}
	return DefaultMaxTokens
}

// emptySchema is the parameter schema of a tool that has none.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// ToolSchema returns a tool's parameter schema for a provider's request:
// p itself when it is a JSON object, else an empty object schema. It
// neither decodes nor copies p: the request's encoding compacts it, and a
// turn's some twenty schemas are most of a request's tools.
func ToolSchema(p json.RawMessage) json.RawMessage {
	b := bytes.TrimLeft(p, " \t\r\n")
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return emptySchema
	}
	return p
}
