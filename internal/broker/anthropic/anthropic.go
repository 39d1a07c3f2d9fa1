// Package anthropic is the broker's adapter for the Anthropic Messages API,
// written over net/http without an SDK. It translates a contracts.Request to
// the wire format, sends it (streamed or not) and normalizes the reply to a
// contracts.Completion. It holds the API key and executes nothing.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

// Kind is the provider kind this package serves.
const Kind = "anthropic"

// APIVersion is the anthropic-version header sent with every request.
const APIVersion = "2023-06-01"

// Client talks to one Anthropic model.
type Client struct {
	cfg  provider.Config
	name string
	http *provider.HTTP
}

var _ provider.Provider = (*Client)(nil)

// New returns a client for cfg. BaseURL is the API root such as
// https://api.anthropic.com (a trailing slash or a trailing /v1 is
// tolerated).
func New(cfg provider.Config) *Client {
	cfg = cfg.WithDefaults()
	name := cfg.DisplayName(Kind)
	return &Client{cfg: cfg, name: name, http: provider.NewHTTP(name, cfg)}
}

// Name returns the configured name, else "anthropic:<model>".
func (c *Client) Name() string { return c.name }

// Complete sends req to POST /v1/messages and returns the normalized answer.
func (c *Client) Complete(ctx context.Context, req contracts.Request, onText func(delta string)) (contracts.Completion, error) {
	return c.http.Complete(ctx, c.cfg, Kind, c.url("/messages"), c.header(), buildRequest(c.cfg, req), onText, decodeStream, decodeResponse)
}

// Ping checks that the API answers and accepts the key, with GET /v1/models.
func (c *Client) Ping(ctx context.Context) error {
	return c.http.Ping(ctx, c.url("/models"), c.header())
}

func (c *Client) url(path string) string {
	base := strings.TrimRight(c.cfg.BaseURL, "/")
	base = strings.TrimSuffix(base, "/v1")
	return base + "/v1" + path
}

func (c *Client) header() http.Header {
	h := http.Header{}
	if c.cfg.APIKey != "" {
		h.Set("X-Api-Key", c.cfg.APIKey)
	}
	h.Set("Anthropic-Version", APIVersion)
	h.Set("Content-Type", "application/json")
	if c.cfg.Stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	h.Set("User-Agent", "shelldon")
	return h
}

// errorFor turns the "error" found inside a 200 reply (a plain body, or a
// stream's error event) into an *Error: Anthropic's {"type","message"}, or
// whatever a server or proxy speaking this format sends instead (a string,
// another shape; see provider.ErrorValueText), so its message is not lost.
func errorFor(raw json.RawMessage) *provider.Error {
	var e wireError
	if json.Unmarshal(raw, &e) != nil || e.Type == "" && e.Message == "" {
		e = wireError{}
		if t := strings.TrimSpace(string(raw)); t != "" && t != "null" {
			e.Message, _ = provider.ErrorValueText(raw)
		}
	}
	status, retryable := 0, true
	switch e.Type {
	case "invalid_request_error":
		status, retryable = 400, false
	case "authentication_error":
		status, retryable = 401, false
	case "billing_error":
		status, retryable = 402, false
	case "permission_error":
		status, retryable = 403, false
	case "not_found_error":
		status, retryable = 404, false
	case "request_too_large":
		status, retryable = 413, false
	case "rate_limit_error":
		status = 429
	case "api_error":
		status = 500
	case "timeout_error":
		status = 504
	case "overloaded_error":
		status = 529
	}
	msg := e.Message
	if e.Type != "" {
		msg = e.Type + ": " + msg
	}
	if msg == "" {
		msg = "error without a message"
	}
	// Not cleaned here: Attempt.Fail redacts with the key before trimming,
	// so a cut can never leave part of the key behind.
	return &provider.Error{Status: status, Retryable: retryable, Message: msg}
}

var errNoStop = errors.New("stream ended before message_stop")
