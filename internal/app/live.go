package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/shelldon/shelldon/internal/broker"
	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/redact"
	"github.com/shelldon/shelldon/internal/transport/web"
)

// liveModel is the core's model: the current provider chain, swapped when
// the config changes, so a switch of provider or model applies from the
// next model call without a restart.
type liveModel struct {
	chain atomic.Pointer[broker.Chain]
	stats broker.Stats // every chain's provider attempts, for /metrics (metrics.go)
}

func (m *liveModel) set(c *broker.Chain) { m.chain.Store(c.WithStats(&m.stats)) }

func (m *liveModel) Complete(ctx context.Context, req contracts.Request, onText func(string)) (contracts.Completion, error) {
	return m.chain.Load().Complete(ctx, req, onText)
}

// Pin returns the chain in force now, for a turn that starts: a config
// change applies from the next turn, never inside one.
func (m *liveModel) Pin() core.Completer { return m.chain.Load() }

var _ core.Pinner = (*liveModel)(nil)

func (a *App) setConfig(cfg *config.Config, providers []provider.Provider) {
	a.cfgMu.Lock()
	defer a.cfgMu.Unlock()
	a.Config, a.Providers = cfg, providers
}

// current returns the config in force.
func (a *App) current() *config.Config {
	a.cfgMu.Lock()
	defer a.cfgMu.Unlock()
	return a.Config
}

// apply makes cfg the config in force: a new provider chain, each key
// bound as keys says (see keyBinding), the core's tunable settings, the
// redactor's secrets. A turn already running keeps the chain it pinned
// when it started (liveModel.Pin).
func (a *App) apply(cfg *config.Config, keys *provider.KeyBinding) error {
	providers, err := buildBoundProviders(cfg, keys)
	if err != nil {
		return err
	}
	a.install(cfg, providers)
	return nil
}

// install makes cfg, with providers built for it, the config in force.
func (a *App) install(cfg *config.Config, providers []provider.Provider) {
	a.model.set(broker.NewChain(providers, broker.Options{Logger: a.Log}))
	a.Core.Tune(core.Tuning{
		Limits: contracts.Limits{MaxToolCalls: cfg.Agent.MaxToolCalls, Budget: cfg.Agent.TurnBudget.D(),
			Reserve: cfg.Agent.Reserve.D(), MaxTokens: cfg.Provider.MaxTokens},
		System: cfg.Agent.SystemPrompt, HistoryChars: cfg.Agent.HistoryChars, ApprovalTTL: cfg.Approvals.TTL.D(),
		AllowDegraded: cfg.Sandbox.AllowDegraded, MinFreeDisk: uint64(cfg.Sandbox.MinFreeDisk), Strikes: cfg.Selfcode.Strikes,
		Providers: providerNames(cfg), MemoryBytes: int(cfg.Memory.ContextBytes),
		LANHosts: cfg.LANHosts(), GitRemotes: gitRemotes(cfg),
	})
	a.Core.SetBudgets(cfg.Budgets())
	a.Redactor.set(redact.New(cfg.Secrets()...))
	a.setConfig(cfg, providers)
	if a.warm != nil {
		// The worker waiting was started under the config before; the
		// next turn gets one started under this one.
		a.warm.Invalidate()
	}
	a.Log.Info("config applied", "provider", cfg.Provider.Kind, "model", cfg.Provider.Model)
}

// configure carries out an owner-approved update_config (the core checked
// that it is exactly the approved call): checked again as the agent's
// (config.PrepareAgentOverlay: no endpoint the owner did not configure),
// merged into config.local.yaml, validated, written and applied, with the
// keys bound as the config before the change bound them: the agent's
// change never decides where a key may go.
func (a *App) configure(_ context.Context, raw json.RawMessage) ([]string, error) {
	a.settingsMu.Lock()
	defer a.settingsMu.Unlock()
	var changes map[string]any
	if err := json.Unmarshal(raw, &changes); err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	o, err := config.PrepareAgentOverlay(a.current().Home, a.environ, changes)
	if err != nil {
		return nil, err
	}
	keys, err := keyBinding(o.Before)
	if err != nil {
		return nil, config.ErrCurrentConfig
	}
	// Build before writing: a chain the binding refuses is never written.
	if _, err := buildBoundProviders(o.After, keys); err != nil {
		return nil, err
	}
	if err := o.Write(); err != nil {
		return nil, err
	}
	if err := a.apply(o.After, keys); err != nil {
		return nil, err
	}
	return o.Diff(), nil
}

// configCard is the daemon's view of an update_config for the owner's
// card: the diff, every host in it in punycode and Unicode, and where the
// model's requests will go after it. It never says whether a variable is
// set.
func configCard(o *config.Overlay) []string {
	diff := o.Diff()
	if len(diff) == 0 {
		return []string{"Changes nothing in the effective config"}
	}
	lines := []string{"Changes to the effective config (written to config.local.yaml, applied from the next turn; the turn running now keeps its model):"}
	for _, l := range diff {
		lines = append(lines, l)
		// "provider.base_url: <before> -> <after>"; the hosts of a
		// fallback list are in the chain below.
		if key, change, _ := strings.Cut(l, ": "); strings.HasSuffix(key, "base_url") {
			before, after, _ := strings.Cut(change, " -> ")
			lines = append(lines, "  host before: "+config.DescribeHost(before), "  host after: "+config.DescribeHost(after))
		}
	}
	lines = append(lines, "Model requests will go to, in order (each an endpoint of your config; the agent cannot add one):")
	for i, p := range o.After.Providers() {
		key := "no key"
		if p.APIKeyEnv != "" {
			key = "the key in " + p.APIKeyEnv
		}
		lines = append(lines, fmt.Sprintf("  %d. %s (%s) at %s, host %s, with %s", i+1, p.Name, p.Kind, p.BaseURL, config.DescribeHost(p.BaseURL), key))
	}
	return lines
}

// Settings is the effective config for GET /api/settings: secrets appear
// only as set or unset.
func (a *App) Settings() map[string]any {
	cfg := a.current()
	m := cfg.Effective()
	secrets := map[string]string{}
	for name, set := range cfg.SecretNames() {
		secrets[name] = map[bool]string{true: "set", false: "unset"}[set]
	}
	m["secrets"] = secrets
	return m
}

// ApplySettings is POST /api/settings and the settings page: the owner's
// secrets set in or cleared from .env (0600, never echoed), config changes
// merged into and keys reverted from config.local.yaml; all apply at once.
// Everything is checked before anything is written
// (config.PrepareSettings: names, values, the config as it would load
// with both files; then the provider chain it would build), so a refused
// change leaves config.yaml, config.local.yaml and .env as they were. A
// change of SHELLDON_API_TOKEN is taken by the running daemon at once
// (OnAPIToken).
func (a *App) ApplySettings(_ context.Context, ch config.SettingsChange) ([]string, error) {
	a.settingsMu.Lock()
	defer a.settingsMu.Unlock()
	o, err := config.PrepareSettings(a.current().Home, a.environ, ch)
	if err != nil {
		return nil, err
	}
	providers, err := buildProviders(o.After)
	if err != nil {
		return nil, err
	}
	tokenBefore := servedToken(o.Before)
	if err := o.Write(); err != nil {
		return nil, err
	}
	a.install(o.After, providers)
	diff := o.Diff()
	for _, name := range sortedNames(ch.Secrets) {
		diff = append(diff, "secret "+name+": set")
	}
	cleared := slices.Clone(ch.Clear)
	sort.Strings(cleared)
	for _, name := range cleared {
		diff = append(diff, "secret "+name+": cleared")
	}
	if a.onToken != nil {
		// A daemon serves the API: it takes the token the CLI will now
		// read (APIToken generates the token file if the change leaves
		// no other).
		if token, _, err := APIToken(o.After); err != nil {
			a.Log.Error("the API token after a settings change cannot be read; the daemon keeps the one it had", "err", err)
		} else if token != tokenBefore {
			a.onToken(token)
			diff = append(diff, web.TokenReplaced)
		}
	}
	return diff, nil
}

// servedToken is the API token cfg gives (APIToken's), or "" when it
// gives none yet; it never writes the token file.
func servedToken(cfg *config.Config) string {
	if t := cfg.Secret(config.EnvAPIToken); t != "" {
		return t
	}
	data, err := os.ReadFile(cfg.Path(tokenFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// OnAPIToken sets what the daemon does when the settings change the API
// token: its HTTP API takes the new one (web.Server.SetToken).
func (a *App) OnAPIToken(f func(token string)) {
	a.settingsMu.Lock()
	defer a.settingsMu.Unlock()
	a.onToken = f
}

// SettingsOverlay is config.local.yaml as a nested map: what has been set
// over config.yaml, which the settings page lets the owner revert.
func (a *App) SettingsOverlay() (map[string]any, error) {
	return config.ReadOverlay(a.current().Home)
}

// KeyOrigins says where the key in each variable may be sent, the way the
// broker binds it (keyBinding): each key variable of the provider chain
// with its origins, the well-known host of its issuer first.
func (a *App) KeyOrigins() map[string][]string {
	cfg := a.current()
	keys, err := keyBinding(cfg)
	if err != nil {
		return nil
	}
	out := map[string][]string{}
	for _, p := range cfg.Providers() {
		if p.APIKeyEnv != "" {
			out[p.APIKeyEnv] = keys.Origins(p.APIKeyEnv)
		}
	}
	return out
}

// sortedNames are the keys of m in order.
func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// providerNames are the names of the providers cfg configures.
func providerNames(cfg *config.Config) []string {
	var out []string
	for _, p := range cfg.Providers() {
		out = append(out, p.Name)
	}
	return out
}
