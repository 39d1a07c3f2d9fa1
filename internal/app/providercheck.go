package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/inert"
)

// The checks of a provider that init and doctor make: the models endpoint
// (no tokens spent), a test request (the smallest real model call), and
// what to do when either fails.

// Test request: one user message, a reply of a few tokens.
const (
	testPrompt = "Reply with OK"
	testTokens = 16
)

// How long a check may wait: the models endpoint answers at once; a test
// request may wait for a local server to load the model.
const (
	pingTimeout  = 15 * time.Second
	modelsListed = 10 // models named in a "model not found" fix
)

// The checks, as doctor names them.
const (
	checkModels = "models endpoint"
	checkTurn   = "a test request"
)

// pinger is a provider that can check it answers without spending tokens.
type pinger interface {
	Ping(ctx context.Context) error
}

// testTurn sends p the test request and returns its reply's text.
func testTurn(ctx context.Context, p provider.Provider) (string, error) {
	comp, err := p.Complete(ctx, contracts.Request{
		Messages:  []contracts.Message{{Role: contracts.RoleUser, Text: testPrompt}},
		MaxTokens: testTokens,
	}, nil)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(comp.Message.Text), nil
}

// providerCheck is how a provider was checked and what came of it.
type providerCheck struct {
	how     string // checkModels or checkTurn
	why     string // why the test request was used, "" when it was not
	reply   string // the test request's answer
	elapsed time.Duration
	err     error
}

// checkProvider checks that p answers: with its models endpoint when it has
// one (p is a pinger), else (no pinger, or the endpoint answers 404 or 405,
// as many OpenAI-compatible servers do) with a test request of at most
// turnTimeout.
func checkProvider(ctx context.Context, p provider.Provider, turnTimeout time.Duration) providerCheck {
	start := time.Now()
	why := "the provider has no models endpoint"
	if pg, ok := p.(pinger); ok {
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		err := pg.Ping(pctx)
		cancel()
		var pe *provider.Error
		if !errors.As(err, &pe) || (pe.Status != http.StatusNotFound && pe.Status != http.StatusMethodNotAllowed) {
			return providerCheck{how: checkModels, elapsed: time.Since(start), err: err}
		}
		why = fmt.Sprintf("GET /models answered %d", pe.Status)
	}
	start = time.Now()
	tctx, cancel := context.WithTimeout(ctx, turnTimeout)
	defer cancel()
	reply, err := testTurn(tctx, p)
	return providerCheck{how: checkTurn, why: why, reply: reply, elapsed: time.Since(start), err: err}
}

// turnTimeout is how long a test request to pc may take: one attempt's
// timeout, and a little more for the answer to be read.
func turnTimeout(pc config.Provider) time.Duration {
	return pc.Timeout.D() + 5*time.Second
}

// providerFix says what the owner does about err, a failed call to pc of
// cfg: one or two sentences naming the command, or "" when the error says
// all there is to say. sh is the command line that runs shelldon on this
// home ("shelldon", or with --home). A model the server lacks is looked up
// in the server's list of models (openai kind).
func providerFix(ctx context.Context, cfg *config.Config, pc config.Provider, err error, sh string) string {
	var pe *provider.Error
	status, msg := 0, ""
	if errors.As(err, &pe) {
		status, msg = pe.Status, strings.ToLower(pe.Message)
	}
	openai := pc.Kind == config.KindOpenAI
	host := hostPort(pc.BaseURL)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s did not answer in time: a local server may still be loading the model; try again in a minute with `%s doctor`.", host, sh)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		if pc.APIKeyEnv != "" {
			return fmt.Sprintf("The server refused the key in %s: store the right one with `%s config set-secret %s`.", pc.APIKeyEnv, sh, pc.APIKeyEnv)
		}
		return fmt.Sprintf("The server wants an API key: store it with `%s config set-secret NAME`, then name it with `%s config set provider.api_key_env NAME`.", sh, sh)
	case (status == http.StatusNotFound || status == http.StatusBadRequest) && modelMissing(msg):
		return modelFix(ctx, cfg, pc, sh)
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		if openai {
			return fmt.Sprintf("%s/chat/completions does not exist: check the base URL; for an OpenAI-compatible server it usually ends with /v1 (like http://127.0.0.1:11434/v1). Set it with `%s config set provider.base_url URL`.",
				pc.BaseURL, sh)
		}
		return fmt.Sprintf("%s has no Messages API: check the base URL, the API's root (like https://api.anthropic.com). Set it with `%s config set provider.base_url URL`.", pc.BaseURL, sh)
	case status == http.StatusTooManyRequests || status == http.StatusPaymentRequired:
		return "The provider is rate limiting this key, or the account has no credit left: check its plan and billing, then try again."
	case strings.Contains(msg, "connection refused"):
		return fmt.Sprintf("Nothing is listening at %s: is the server running at %s? (Ollama: `ollama serve`.) If it listens elsewhere, `%s config set provider.base_url URL`.", host, pc.BaseURL, sh)
	case strings.Contains(msg, "no such host"):
		return fmt.Sprintf("The host of %s does not resolve: check the base URL (`%s config set provider.base_url URL`).", pc.BaseURL, sh)
	case status >= 500:
		return "The server failed on its side: look at its log; a local server may lack the memory for the model."
	}
	return ""
}

// modelMissing reports whether msg, a provider's error message in lower
// case, says the model does not exist.
func modelMissing(msg string) bool {
	if !strings.Contains(msg, "model") {
		return false
	}
	for _, s := range []string{"not found", "not_found", "does not exist", "no such model", "unknown model", "try pulling"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// modelFix is the fix for a model the server does not have: the models it
// has, when it lists them.
func modelFix(ctx context.Context, cfg *config.Config, pc config.Provider, sh string) string {
	model := inert.Name(pc.Model)
	set := fmt.Sprintf("Set one with `%s config set provider.model NAME`.", sh)
	if pc.Kind != config.KindOpenAI {
		return fmt.Sprintf("The provider has no model %s; its documentation lists the models. %s", model, set)
	}
	names, err := listModels(ctx, cfg, pc)
	switch {
	case err == nil && len(names) > 0:
		shown := names[:min(len(names), modelsListed)]
		for i, n := range shown {
			shown[i] = inert.Name(n)
		}
		more := ""
		if len(names) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(names)-len(shown))
		}
		return fmt.Sprintf("The server has no model %s; it has %s%s. %s", model, strings.Join(shown, ", "), more, set)
	case err == nil:
		return fmt.Sprintf("The server has no model %s, and lists none: fetch one first (Ollama: `ollama pull %s`). %s", model, model, set)
	}
	return fmt.Sprintf("The server has no model %s; list its models with `curl %s/models` (Ollama: `ollama list`; `ollama pull %s` fetches it). %s",
		model, pc.BaseURL, model, set)
}

// listModels asks an OpenAI-compatible server for the names of its models
// (GET {base_url}/models), with pc's key where the owner's config binds it,
// following no redirect.
func listModels(ctx context.Context, cfg *config.Config, pc config.Provider) ([]string, error) {
	keys, err := keyBinding(cfg)
	if err != nil {
		return nil, err
	}
	key := cfg.APIKey(pc)
	h := provider.NewHTTP(pc.Name, provider.Config{BaseURL: pc.BaseURL, APIKey: key, KeyOrigins: keys.Origins(pc.APIKeyEnv), Timeout: pingTimeout})
	header := http.Header{"Accept": {"application/json"}, "User-Agent": {"shelldon"}}
	if key != "" {
		header.Set("Authorization", "Bearer "+key)
	}
	a, err := h.Do(ctx, http.MethodGet, strings.TrimRight(pc.BaseURL, "/")+"/models", header, nil, false)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	data, err := a.ReadAll()
	if err != nil {
		return nil, err
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("models list: %w", err)
	}
	var names []string
	for _, m := range list.Data {
		if m.ID != "" {
			names = append(names, m.ID)
		}
	}
	slices.Sort(names)
	return names, nil
}

// hostPort is the host and port rawURL points at, for a message.
func hostPort(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "(no host)"
	}
	if u.Port() != "" {
		return inert.Line(u.Host)
	}
	port := map[string]string{"http": "80", "https": "443"}[u.Scheme]
	return inert.Line(net.JoinHostPort(u.Hostname(), port))
}

// isLoopback reports whether rawURL's host is this machine: localhost, or
// an address in 127.0.0.0/8 or ::1. A server there (Ollama, llama.cpp,
// vLLM) is the owner's own, and usually wants no key.
func isLoopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
