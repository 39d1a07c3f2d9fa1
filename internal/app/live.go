package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/shelldon/shelldon/internal/broker"
	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/redact"
)

// liveModel is the core's model: the current provider chain, swapped when
// the config changes, so a switch of provider or model applies from the
// next model call without a restart.
type liveModel struct{ chain atomic.Pointer[broker.Chain] }

func (m *liveModel) set(c *broker.Chain) { m.chain.Store(c) }

func (m *liveModel) Complete(ctx context.Context, req contracts.Request, onText func(string)) (contracts.Completion, error) {
	return m.chain.Load().Complete(ctx, req, onText)
}

var _ core.Completer = (*liveModel)(nil)

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

// apply makes cfg the config in force: a new provider chain, the core's
// tunable settings, the redactor's secrets.
func (a *App) apply(cfg *config.Config) error {
	providers, err := buildProviders(cfg)
	if err != nil {
		return err
	}
	a.model.set(broker.NewChain(providers, broker.Options{Logger: a.Log}))
	a.Core.Tune(core.Tuning{
		Limits: contracts.Limits{MaxToolCalls: cfg.Agent.MaxToolCalls, Budget: cfg.Agent.TurnBudget.D(),
			Reserve: cfg.Agent.Reserve.D(), MaxTokens: cfg.Provider.MaxTokens},
		System: cfg.Agent.SystemPrompt, HistoryChars: cfg.Agent.HistoryChars, ApprovalTTL: cfg.Approvals.TTL.D(),
		AllowDegraded: cfg.Sandbox.AllowDegraded, MinFreeDisk: uint64(cfg.Sandbox.MinFreeDisk), Strikes: cfg.Selfcode.Strikes,
	})
	a.Redactor.set(redact.New(cfg.Secrets()...))
	a.setConfig(cfg, providers)
	a.Log.Info("config applied", "provider", cfg.Provider.Kind, "model", cfg.Provider.Model)
	return nil
}

// configure carries out an owner-approved update_config (the core checked
// that it is exactly the approved call): merge into config.local.yaml,
// validate, write, apply.
func (a *App) configure(_ context.Context, raw json.RawMessage) ([]string, error) {
	var changes map[string]any
	if err := json.Unmarshal(raw, &changes); err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	if err := config.CheckAgentChanges(changes); err != nil {
		return nil, err
	}
	return a.changeConfig(changes)
}

func (a *App) changeConfig(changes map[string]any) ([]string, error) {
	o, err := config.PrepareOverlay(a.current().Home, a.environ, changes)
	if err != nil {
		return nil, err
	}
	if err := o.Write(); err != nil {
		return nil, err
	}
	if err := a.apply(o.After); err != nil {
		return nil, err
	}
	return o.Diff(), nil
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

// ApplySettings is POST /api/settings: the owner's secrets go to .env
// (0600, never echoed), the config changes to config.local.yaml, validated
// first; both apply at once.
func (a *App) ApplySettings(_ context.Context, changes map[string]any, secrets map[string]string) ([]string, error) {
	home := a.current().Home
	for name, value := range secrets {
		if err := config.SetSecret(home, name, value); err != nil {
			return nil, err
		}
	}
	var diff []string
	if len(changes) > 0 {
		d, err := a.changeConfig(changes)
		if err != nil {
			return nil, err
		}
		diff = d
	} else if len(secrets) > 0 {
		cfg, err := config.Load(home, a.environ)
		if err != nil {
			return nil, err
		}
		if err := a.apply(cfg); err != nil {
			return nil, err
		}
	}
	for name := range secrets {
		diff = append(diff, "secret "+name+": set")
	}
	return diff, nil
}
