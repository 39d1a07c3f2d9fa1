package contracts

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// AgentConfigKeys are the config keys the agent may propose to change with
// update_config (the owner approves each diff). Everything else (the
// workspace, the server, the sandbox, Telegram, the resource guards such
// as the skills' sizes, skills.max_skill_bytes and skills.max_file_bytes,
// the spend budgets budget.* and when self-driven turns run, schedules.*,
// whether a worker waits started ahead, agent.warm_worker, the hosts of
// the owner's network http_get may reach, http.allow_hosts, and where the
// model's requests and the API keys go) is the owner's alone.
//
// provider.name and fallback[].name choose among the providers the owner
// configured, by name: the daemon fills in their endpoint (kind, base_url,
// api_key_env) from the owner's config. The agent never writes an endpoint.
var AgentConfigKeys = []string{
	"provider.name", "provider.model", "provider.stream", "provider.timeout", "provider.max_tokens",
	"fallback[].name", "fallback[].model", "fallback[].stream", "fallback[].timeout", "fallback[].max_tokens",
	"agent.max_tool_calls", "agent.turn_budget", "agent.reserve", "agent.history_chars", "agent.system_prompt",
	"agent.workers", "approvals.ttl", "log.level", "selfcode.strikes",
	"memory.context_bytes",
}

// EndpointKeys are a provider's keys that say where the model's requests
// and its API key go. Only the owner sets them: `shelldon init`,
// config.yaml, OwnerConfigSet, the settings API.
var EndpointKeys = []string{"kind", "base_url", "api_key_env"}

// OwnerConfigSet is the owner's command that sets any config key, named in
// the agent's refusals.
const OwnerConfigSet = "shelldon config set"

// providerTuning are the keys of a provider entry the agent may write
// besides its name: they change what is asked of the endpoint, not where
// the request goes.
var providerTuning = []string{"model", "stream", "timeout", "max_tokens"}

// CheckAgentConfig refuses a change the agent may not propose: a key
// outside AgentConfigKeys (compared exactly: no case folding, no flat
// "a.b" keys), an endpoint key in any spelling, a provider entry that does
// not choose a provider by name where it must, or a value of the wrong
// shape for its section. It needs no config: the worker runs it before the
// owner is asked, and the daemon again before it writes anything.
func CheckAgentConfig(changes map[string]any) error {
	if len(changes) == 0 {
		return fmt.Errorf("no changes")
	}
	var errs []string
	add := func(err error) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	for _, k := range sortedAnyKeys(changes) {
		v := changes[k]
		switch k {
		case "provider":
			m, ok := v.(map[string]any)
			if !ok || len(m) == 0 {
				add(fmt.Errorf(`provider: must be an object of the keys to change, like {"name": "ollama"} or {"model": "claude-sonnet-4-5"}`))
				continue
			}
			add(checkProviderEntry("provider", m, false))
		case "fallback":
			list, ok := v.([]any)
			if !ok {
				add(fmt.Errorf(`fallback: must be a list of the configured providers to fall back to, by name, like [{"name": "ollama"}] ([] for none)`))
				continue
			}
			for i, item := range list {
				key := fmt.Sprintf("fallback[%d]", i)
				m, ok := item.(map[string]any)
				if !ok {
					add(fmt.Errorf(`%s: must be an object naming a configured provider, like {"name": "ollama"}`, key))
					continue
				}
				add(checkProviderEntry(key, m, true))
			}
		default:
			add(checkSection(k, v))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// CheckProviderNames refuses a change that chooses a provider by a name the
// owner did not configure (provider.name, fallback[i].name), so the owner
// is never asked about one. configured is the names in the owner's config,
// which the daemon hands each turn's job; nil means not known here (the
// daemon checks again in any case).
func CheckProviderNames(changes map[string]any, configured []string) error {
	if configured == nil {
		return nil
	}
	var unknown []string
	check := func(v any) {
		if m, ok := v.(map[string]any); ok {
			if name, ok := m["name"].(string); ok && !slices.Contains(configured, name) {
				unknown = append(unknown, strconv.Quote(name))
			}
		}
	}
	check(changes["provider"])
	if list, ok := changes["fallback"].([]any); ok {
		for _, item := range list {
			check(item)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("no provider called %s is configured; the owner's providers are %s (adding one is the owner's: %s)",
			strings.Join(unknown, ", "), strings.Join(configured, ", "), OwnerConfigSet)
	}
	return nil
}

// checkProviderEntry checks the provider section or one fallback entry.
func checkProviderEntry(prefix string, m map[string]any, needName bool) error {
	var errs []string
	for _, k := range sortedAnyKeys(m) {
		key := prefix + "." + k
		switch {
		case endpointLike(k):
			errs = append(errs, endpointRefusal(key))
		case k == "name":
			if s, ok := m[k].(string); !ok || strings.TrimSpace(s) == "" {
				errs = append(errs, fmt.Sprintf("%s: must be the name of a provider the owner configured", key))
			}
		case slices.Contains(providerTuning, k):
			if _, ok := m[k].(map[string]any); ok {
				errs = append(errs, fmt.Sprintf("%s: must be a single value", key))
			} else if _, ok := m[k].([]any); ok {
				errs = append(errs, fmt.Sprintf("%s: must be a single value", key))
			}
		default:
			errs = append(errs, notAgentKey(key, false))
		}
	}
	if _, ok := m["name"]; needName && !ok && len(errs) == 0 {
		errs = append(errs, fmt.Sprintf(`%s: name the configured provider to fall back to, like {"name": "ollama"}; adding a provider is the owner's (%s fallback ...)`, prefix, OwnerConfigSet))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// checkSection checks a top-level key other than provider and fallback:
// an object whose keys are all in AgentConfigKeys, each a single value.
func checkSection(section string, v any) error {
	if endpointLike(section) {
		return fmt.Errorf("%s", endpointRefusal(section))
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 || !hasSection(section) {
		return fmt.Errorf("%s", notAgentKey(section, true))
	}
	var errs []string
	for _, k := range sortedAnyKeys(m) {
		key := section + "." + k
		switch m[k].(type) {
		case map[string]any, []any:
			errs = append(errs, notAgentKey(key, false))
			continue
		}
		if !slices.Contains(AgentConfigKeys, key) {
			errs = append(errs, notAgentKey(key, false))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// hasSection reports whether some agent key lives in section.
func hasSection(section string) bool {
	for _, k := range AgentConfigKeys {
		if strings.HasPrefix(k, section+".") {
			return true
		}
	}
	return false
}

// endpointLike reports whether key, in any spelling or as the last part of
// a flat "a.b" key, names an endpoint key or something close to one (a
// URL, a host, a key): those get the refusal that names the owner's
// command.
func endpointLike(key string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(key) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	k := b.String()
	for _, w := range []string{"kind", "url", "host", "apikey", "keyenv", "endpoint", "apibase"} {
		if strings.HasSuffix(k, w) {
			return true
		}
	}
	return false
}

func endpointRefusal(key string) string {
	return fmt.Sprintf(`%s: where the model's requests and API keys go (%s) is set only by the owner: %s %s VALUE, config.yaml or the settings API; you may switch among the providers the owner configured by name, like {"provider": {"name": "ollama"}}`,
		key, strings.Join(EndpointKeys, ", "), OwnerConfigSet, ownerKey(key))
}

// ownerKey is key as `shelldon config set` spells it: a flat key is kept,
// an unknown spelling of an endpoint key is shown as the real one.
func ownerKey(key string) string {
	i := strings.LastIndexByte(key, '.')
	if i < 0 {
		return key
	}
	last := strings.ToLower(key[i+1:])
	for _, e := range EndpointKeys {
		if strings.ReplaceAll(last, "_", "") == strings.ReplaceAll(e, "_", "") {
			return key[:i+1] + e
		}
	}
	return key
}

// notAgentKey refuses key; a top-level key with a dot in it is a flat
// "a.b" key, which the config would not read as nested.
func notAgentKey(key string, topLevel bool) string {
	hint := ""
	if topLevel && strings.Contains(key, ".") {
		hint = ` (and write nested keys, like {"agent": {"max_tool_calls": 8}})`
	}
	return fmt.Sprintf("%s: not a key the agent may change%s; only the owner may (%s KEY VALUE); the agent may change: %s",
		key, hint, OwnerConfigSet, strings.Join(AgentConfigKeys, ", "))
}

func sortedAnyKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
