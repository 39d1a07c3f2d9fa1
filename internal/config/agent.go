package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
)

// ErrCurrentConfig is the agent's answer when the current config does not
// load: why is the owner's business (and could tell which secrets are set),
// so the agent is told only that.
var ErrCurrentConfig = errors.New("config: the current config does not load; the owner can see why with `shelldon doctor`")

// PrepareAgentOverlay is PrepareOverlay for a change the agent proposed
// (update_config), where the owner's endpoints are out of its reach:
//
//   - the change must pass contracts.CheckAgentConfig (no endpoint key, in
//     any spelling);
//   - a provider entry with a name is the configured provider of that name
//     (kind, base_url, api_key_env and the rest filled in from the current
//     config), with the agent's model, stream, timeout or max_tokens on
//     top; naming another provider as the primary moves it to the front
//     and keeps the others in order behind it, unless the change also
//     gives the fallback list;
//   - after the change, every provider in the chain must have an endpoint
//     (kind, base_url, api_key_env) that a provider had before: the agent
//     can reorder and drop the owner's endpoints, never bring in another.
//
// Nothing it answers depends on the owner's secrets: whether a key
// variable is set is not checked, and values are never compared with a
// secret (Config.forAgent).
func PrepareAgentOverlay(home string, environ []string, changes map[string]any) (*Overlay, error) {
	if err := checkChanges(changes); err != nil {
		return nil, err
	}
	if err := contracts.CheckAgentConfig(changes); err != nil {
		return nil, err
	}
	before, err := loadWith(home, environ, candidate{forAgent: true})
	if err != nil {
		return nil, ErrCurrentConfig
	}
	resolved, err := resolveProviders(before, changes)
	if err != nil {
		return nil, err
	}
	o, err := prepare(before, environ, resolved, nil, nil)
	if err != nil {
		return nil, err
	}
	if err := sameEndpoints(o.Before, o.After); err != nil {
		return nil, err
	}
	return o, nil
}

// endpoint is where a provider's requests and key go.
type endpoint struct{ kind, baseURL, keyEnv string }

func endpointOf(p Provider) endpoint { return endpoint{p.Kind, p.BaseURL, p.APIKeyEnv} }

func (e endpoint) String() string {
	key := e.keyEnv
	if key == "" {
		key = "no key"
	}
	return fmt.Sprintf("%s at %s with %s", e.kind, e.baseURL, key)
}

// sameEndpoints refuses an after whose chain holds an endpoint before's
// chain did not: the safety net under resolveProviders, which never
// builds one.
func sameEndpoints(before, after *Config) error {
	known := map[endpoint]bool{}
	for _, p := range before.Providers() {
		known[endpointOf(p)] = true
	}
	for i, p := range after.Providers() {
		if e := endpointOf(p); !known[e] {
			return fmt.Errorf("%s: %s is not an endpoint the owner configured; only the owner adds one (%s, config.yaml or the settings API)",
				chainKey(i), e, contracts.OwnerConfigSet)
		}
	}
	return nil
}

// chainKey is the config key of the i-th provider of the chain.
func chainKey(i int) string {
	if i == 0 {
		return "provider"
	}
	return fmt.Sprintf("fallback[%d]", i-1)
}

// resolveProviders turns the agent's provider and fallback entries, which
// name configured providers, into full provider entries for the overlay.
// The other sections pass through.
func resolveProviders(before *Config, changes map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(changes))
	for k, v := range changes {
		out[k] = v
	}
	chain := before.Providers()
	prov, hasProv := changes["provider"].(map[string]any)
	list, hasList := changes["fallback"].([]any)

	if name, ok := prov["name"].(string); hasProv && ok {
		i, err := lookupProvider(chain, "provider.name", name)
		if err != nil {
			return nil, err
		}
		if i != 0 {
			out["provider"] = withTuning(providerEntry(chain[i]), prov)
			if !hasList {
				// The chosen one goes first; the rest keep their order.
				rest := []any{}
				for j, p := range chain {
					if j != i {
						rest = append(rest, providerEntry(p))
					}
				}
				out["fallback"] = rest
			}
		}
	}
	if hasList {
		entries := make([]any, 0, len(list))
		for n, item := range list {
			m, _ := item.(map[string]any)
			name, _ := m["name"].(string)
			i, err := lookupProvider(chain, fmt.Sprintf("fallback[%d].name", n), name)
			if err != nil {
				return nil, err
			}
			entries = append(entries, withTuning(providerEntry(chain[i]), m))
		}
		out["fallback"] = entries
	}
	return out, nil
}

// lookupProvider finds the provider of the chain named name; two of that
// name with different endpoints make it ambiguous.
func lookupProvider(chain []Provider, key, name string) (int, error) {
	found := -1
	var names []string
	for i, p := range chain {
		names = append(names, p.Name)
		if p.Name != name {
			continue
		}
		if found >= 0 && endpointOf(chain[found]) != endpointOf(p) {
			return 0, fmt.Errorf("%s: more than one configured provider is named %q; the owner can name them apart (%s %s NAME)",
				key, name, contracts.OwnerConfigSet, chainKey(i)+".name")
		}
		if found < 0 {
			found = i
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("%s: no configured provider is named %q (configured: %s); adding one is the owner's (%s, config.yaml or the settings API)",
			key, name, strings.Join(names, ", "), contracts.OwnerConfigSet)
	}
	return found, nil
}

// providerEntry is p, completed, as an overlay entry.
func providerEntry(p Provider) map[string]any {
	stream := true
	if p.Stream != nil {
		stream = *p.Stream
	}
	return map[string]any{
		"name": p.Name, "kind": p.Kind, "base_url": p.BaseURL, "api_key_env": p.APIKeyEnv,
		"model": p.Model, "stream": stream, "timeout": p.Timeout.String(), "max_tokens": p.MaxTokens,
	}
}

// withTuning sets on entry the keys of the agent's entry other than the
// name (contracts.CheckAgentConfig allowed only model, stream, timeout and
// max_tokens).
func withTuning(entry, agent map[string]any) map[string]any {
	for k, v := range agent {
		if k != "name" {
			entry[k] = v
		}
	}
	return entry
}
