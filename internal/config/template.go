package config

import (
	"fmt"
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"
)

// InitTemplate returns the config.yaml that `shelldon init` writes: every
// key documented with its default, commented out as "#key: default", and
// the provider's kind, model, base_url and api_key_env set to the given
// values (each left commented out at its default when empty).
func InitTemplate(kind, model, baseURL, apiKeyEnv string) []byte {
	kind = strings.ToLower(strings.TrimSpace(kind))
	def := struct{ url, model, key string }{}
	switch kind {
	case KindAnthropic:
		def.url, def.model, def.key = defaultAnthropicURL, defaultAnthropicModel, defaultAnthropicKey
	case KindOpenAI:
		def.url, def.model, def.key = defaultOpenAIURL, defaultOpenAIModel, defaultOpenAIKey
		if u, err := url.Parse(baseURL); baseURL != "" && err == nil && !strings.EqualFold(u.Hostname(), openAIHost) {
			def.key = "" // a local OpenAI-compatible server needs no key by default
		}
	}
	r := strings.NewReplacer(
		"{{name}}", setting("name", "", kind),
		"{{kind}}", setting("kind", kind, ""),
		"{{base_url}}", setting("base_url", baseURL, def.url),
		"{{model}}", setting("model", model, def.model),
		"{{api_key_env}}", setting("api_key_env", apiKeyEnv, def.key),
		"{{timeout}}", Duration(defaultTimeout).String(),
		"{{max_tokens}}", fmt.Sprint(defaultMaxTokens),
		"{{listen}}", defaultListen,
		"{{session_idle}}", Duration(defaultSessionIdle).String(),
		"{{workspace}}", defaultWorkspace,
		"{{ttl}}", Duration(defaultTTL).String(),
		"{{max_tool_calls}}", fmt.Sprint(defaultMaxToolCalls),
		"{{turn_budget}}", Duration(defaultTurnBudget).String(),
		"{{reserve}}", Duration(defaultReserve).String(),
		"{{history_chars}}", fmt.Sprint(defaultHistoryChars),
		"{{workers}}", fmt.Sprint(defaultWorkers),
		"{{token_env}}", defaultTelegramToken,
		"{{api_base}}", defaultTelegramAPI,
		"{{max_skill_bytes}}", ByteSize(defaultMaxSkillBytes).String(),
		"{{max_file_bytes}}", ByteSize(defaultMaxFileBytes).String(),
		"{{level}}", defaultLogLevel,
		"{{log_format}}", LogText,
		"{{env}}", FileEnv,
		"{{memory}}", memoryKeysDoc(),
		"{{budget}}", budgetKeysDoc(),
		"{{git}}", gitKeysDoc(),
		"{{http}}", httpKeysDoc(),
	)
	return []byte(r.Replace(initTemplate))
}

// setting renders "key: value" when value is given, else the commented-out
// default "#key: def".
func setting(key, value, def string) string {
	if value != "" {
		return key + ": " + yamlString(value)
	}
	return "#" + key + ": " + yamlString(def)
}

// yamlString renders s as a YAML scalar that reads back as the string s.
func yamlString(s string) string {
	out, err := yaml.Marshal(s)
	if err == nil && strings.Count(string(out), "\n") == 1 {
		return strings.TrimSuffix(string(out), "\n")
	}
	out, _ = yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Value: s})
	return strings.TrimSuffix(string(out), "\n")
}

// initTemplate is the commented config.yaml. Documentation lines start with
// "# "; a commented-out setting is "#key: default", so that removing the '#'
// sets it (the tests do exactly that to check the documented defaults).
const initTemplate = `# shelldon configuration.
#
# This file lives in the shelldon home ($SHELLDON_HOME, default ~/.shelldon).
# A line like "#key: value" shows a setting at its default: remove the '#'
# to change it. The agent may write changes to config.local.yaml beside this
# file; keys set there win over this file (maps merge, lists replace).
#
# Secrets never go in this file. Put API keys and tokens in {{env}} (mode 0600)
# or the environment, and name their variables here.
# Durations are Go duration strings: "90s", "25s", "1h", "1h30m".

# The model provider.
provider:
  # A name for logs and messages. Default: the kind.
  {{name}}
  # The wire format: "anthropic" (the Anthropic Messages API) or "openai"
  # (OpenAI Chat Completions, also spoken by Ollama, vLLM, LM Studio and
  # other OpenAI-compatible servers). Default: anthropic when ANTHROPIC_API_KEY
  # is set, else openai when OPENAI_API_KEY is.
  {{kind}}
  # The API's base URL. shelldon appends /v1/messages (anthropic) or
  # /chat/completions (openai). Default: https://api.anthropic.com for
  # anthropic, https://api.openai.com/v1 for openai. A local Ollama is
  # http://localhost:11434/v1.
  {{base_url}}
  # The model, as the provider spells it. Default: claude-sonnet-4-5 for
  # anthropic, gpt-4o-mini for openai.
  {{model}}
  # The name of the variable, in the environment or {{env}}, that holds the
  # API key. Default: ANTHROPIC_API_KEY for anthropic, OPENAI_API_KEY for
  # api.openai.com. An openai-kind server on another host gets no key unless
  # this names one.
  {{api_key_env}}
  # Stream the reply as it is generated.
  #stream: true
  # Time limit for one HTTP attempt.
  #timeout: {{timeout}}
  # Most tokens the model may write in one reply.
  #max_tokens: {{max_tokens}}

# Providers tried in order when the one above fails. Each entry takes the
# same keys as provider; for example, a local model as a last resort:
#
#   fallback:
#     - kind: openai
#       base_url: http://localhost:11434/v1
#       model: llama3.2
#fallback: []

# The HTTP API and web UI (bearer token from SHELLDON_API_TOKEN, else a
# generated token file in the home).
server:
  # Address to listen on, host:port. Keep it on localhost unless a TLS proxy
  # sits in front.
  #listen: {{listen}}
  # The names you reach shelldon by, besides localhost and the listen
  # address: host names or IP addresses, no port, like [pi.local]. A
  # request naming any other host is refused, so a web page that re-points
  # a name of its own at this machine (DNS rebinding) cannot talk to it.
  #allowed_hosts: []
  # How long a web login lasts unused, 10m to 8760h.
  #session_idle: {{session_idle}}
  # A certificate and its key (PEM files, absolute or relative to this
  # home): with both, the daemon serves HTTPS. Needed, unless a TLS proxy
  # sits in front, when listen is not on localhost: the token and the
  # web login's cookie would cross the network in the clear.
  #tls_cert: ""
  #tls_key: ""

# The only directory the file tools can read and write. A relative path is
# relative to the shelldon home; "~/" means your home directory.
#workspace: {{workspace}}

# Requests that wait for your decision (tool calls, new tools).
approvals:
  # How long a request waits before it expires, 10s to 720h.
  #ttl: {{ttl}}

# Bounds on one turn of the agent.
agent:
  # Most tool calls the model may make in one turn, 1 to 50.
  #max_tool_calls: {{max_tool_calls}}
  # Wall-clock time for one turn, 5s to 10m.
  #turn_budget: {{turn_budget}}
  # Time kept back from turn_budget for the final answer.
  #reserve: {{reserve}}
  # How much of the conversation (in characters) the model sees,
  # 1000 to 1000000.
  #history_chars: {{history_chars}}
  # Extra instructions added to the system prompt.
  #system_prompt: ""
  # Turns that may run at the same time, 1 to 16.
  #workers: {{workers}}
  # Keep the next turn's worker started ahead (its sandbox built, holding
  # no turn data), so a turn does not wait for it; costs one idle process
  # (about 2.5 MB of its own memory, 12 MB resident with the binary's pages).
  # Turn off on a tight board.
  #warm_worker: true

# Telegram, on when the token variable is set.
telegram:
  # The name of the variable, in the environment or {{env}}, that holds the
  # bot token from @BotFather.
  #token_env: {{token_env}}
  # The Bot API server.
  #api_base: {{api_base}}
  # Telegram user ids allowed to talk to shelldon; nobody else gets an
  # answer. For example:
  #   allowed_users: [123456789]
  #allowed_users: []
  # Long polling by default. For a webhook instead, the public HTTPS URL
  # Telegram posts to (served at /telegram/webhook), and the variable that
  # holds its secret token.
  #webhook_url: ""
  #webhook_secret_env: TELEGRAM_WEBHOOK_SECRET

# The sandbox around shell commands, git, the self-coding gate and
# self-coded tools (namespaces, seccomp, rlimits, Landlock where present).
sandbox:
  # Run them even when the kernel lacks a required layer (user, mount, PID or
  # network namespaces, seccomp). Off: they refuse to run. On: they run with
  # what the kernel has, and shelldon says so at every start and in doctor.
  #allow_degraded: false
  # Free space a shell command or git must leave on the workspace's file
  # system. Checked before a command starts and at least every 250 ms while
  # it runs; below it the command is stopped and you are told. 0 turns the
  # check off. Sizes like 512MiB, 1GiB.
  #min_free_disk: 512MiB

# Tools shelldon writes for itself (propose_tool).
selfcode:
  # Failed calls (error, timeout, limit) after which a tool version is
  # quarantined until you restore it, 1 to 100.
  #strikes: 3

# Skills: procedures in SKILL.md folders, bundled and yours in skills/ beside
# this file. These sizes guard what shelldon reads of them (they are not
# rules of the format); only you set them, and they apply from the next
# start. Sizes like 256KiB, 1MiB.
skills:
  # The largest SKILL.md read, 1KiB to 4MiB.
  #max_skill_bytes: {{max_skill_bytes}}
  # The largest file beside a SKILL.md that is listed and read
  # (read_skill_file), 1KiB to 16MiB.
  #max_file_bytes: {{max_file_bytes}}
{{memory}}{{budget}}{{git}}{{http}}
log:
  # debug, info, warn or error.
  #level: {{level}}
  # text (key=value pairs) or json (one JSON object a line, for a log
  # collector). The log goes to standard error (the journal under systemd).
  #format: {{log_format}}
`
