package contracts

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// AgentConfigKeys are the config keys the agent may propose to change with
// update_config (the owner approves each diff). Everything else (the
// workspace, the server, the sandbox, Telegram) is the owner's alone.
var AgentConfigKeys = []string{
	"provider", "fallback", "agent.max_tool_calls", "agent.turn_budget", "agent.reserve",
	"agent.history_chars", "agent.system_prompt", "agent.workers", "approvals.ttl", "log.level",
	"selfcode.strikes",
}

// keyEnvRe is what an api_key_env the agent proposes must look like: a
// variable meant for a model API key, never shelldon's, Telegram's or any
// other secret.
var keyEnvRe = regexp.MustCompile(`^[A-Z][A-Z0-9_]*_API_KEY$`)

// CheckAgentConfig refuses config changes outside AgentConfigKeys, and key
// variables that do not look like a model API key.
func CheckAgentConfig(changes map[string]any) error {
	if len(changes) == 0 {
		return fmt.Errorf("no changes")
	}
	var bad []string
	var walk func(prefix string, v any) error
	walk = func(key string, v any) error {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, sub := range m {
				if err := walk(joinKey(key, k), sub); err != nil {
					return err
				}
			}
			return nil
		}
		if list, ok := v.([]any); ok && key == "fallback" {
			for i, item := range list {
				if m, ok := item.(map[string]any); ok {
					for k, sub := range m {
						if err := walk(fmt.Sprintf("fallback[%d].%s", i, k), sub); err != nil {
							return err
						}
					}
				}
			}
		}
		if !allowedKey(key) {
			bad = append(bad, key)
		}
		if strings.HasSuffix(key, "api_key_env") {
			if s, ok := v.(string); !ok || (s != "" && !keyEnvRe.MatchString(s)) {
				return fmt.Errorf("%s: %v is not the name of a model API key variable (like ANTHROPIC_API_KEY)", key, v)
			}
		}
		return nil
	}
	for k, v := range changes {
		if err := walk(k, v); err != nil {
			return err
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("only the owner may change %s; the agent may change: %s", strings.Join(bad, ", "), strings.Join(AgentConfigKeys, ", "))
	}
	return nil
}

func joinKey(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func allowedKey(key string) bool {
	for _, a := range AgentConfigKeys {
		if key == a || strings.HasPrefix(key, a+".") || strings.HasPrefix(key, a+"[") {
			return true
		}
	}
	return false
}
