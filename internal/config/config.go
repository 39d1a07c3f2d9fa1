// Package config loads shelldon's home: config.yaml, the config.local.yaml
// overlay the agent may write, and the .env secrets file. Every problem it
// reports is an *Error naming the file, the dotted key and, where known, the
// line; no error ever carries the value of a secret. The owner changes any
// key (PrepareOverlay, SettingChange); the agent's changes go through
// PrepareAgentOverlay, which never lets it name an endpoint and never
// answers anything that depends on the owner's secrets.
package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// File names inside the home.
const (
	FileConfig  = "config.yaml"
	FileOverlay = "config.local.yaml"
	FileEnv     = ".env"
)

// Environment variables with a meaning of their own.
const (
	EnvHome     = "SHELLDON_HOME"
	EnvAPIToken = "SHELLDON_API_TOKEN"
)

// MinAPIToken is the shortest bearer token the HTTP API accepts in
// SHELLDON_API_TOKEN.
const MinAPIToken = 16

// Provider kinds: the two wire formats shelldon speaks.
const (
	KindAnthropic = "anthropic"
	KindOpenAI    = "openai" // also every OpenAI-compatible server (Ollama, vLLM, LM Studio)
)

// Provider is one model endpoint.
type Provider struct {
	Name      string   `yaml:"name"`        // for logs and messages; default: the kind
	Kind      string   `yaml:"kind"`        // KindAnthropic or KindOpenAI
	BaseURL   string   `yaml:"base_url"`    // absolute http(s) URL, no trailing slash
	Model     string   `yaml:"model"`       // as the provider spells it
	APIKeyEnv string   `yaml:"api_key_env"` // variable holding the key; "" for a keyless local server
	Stream    *bool    `yaml:"stream"`      // never nil after Load; default true
	Timeout   Duration `yaml:"timeout"`     // per HTTP attempt; default 60s
	MaxTokens int      `yaml:"max_tokens"`  // default 4096
}

// ServerConfig is the HTTP API and web UI.
type ServerConfig struct {
	Listen string `yaml:"listen"` // host:port; default 127.0.0.1:7433
	// AllowedHosts are the names, besides loopback's and the listen
	// address's own, that a request's Host header may carry: the names
	// the owner reaches the daemon by. Any other Host is refused, which
	// stops a DNS-rebinding page from talking to the daemon.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// SessionIdle is how long a web login lasts unused; default 720h
	// (30 days), 10m to 8760h.
	SessionIdle Duration `yaml:"session_idle"`
	// TLSCert and TLSKey are PEM files (absolute, or relative to the
	// home): set both, and the daemon serves HTTPS.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
}

// ApprovalsConfig governs pending owner decisions.
type ApprovalsConfig struct {
	TTL Duration `yaml:"ttl"` // how long a request waits; default 1h
}

// AgentConfig bounds one turn.
type AgentConfig struct {
	MaxToolCalls int      `yaml:"max_tool_calls"` // default 6, 1..50
	TurnBudget   Duration `yaml:"turn_budget"`    // default 25s, 5s..10m
	Reserve      Duration `yaml:"reserve"`        // kept back for the final answer; default 2s
	HistoryChars int      `yaml:"history_chars"`  // default 24000
	SystemPrompt string   `yaml:"system_prompt"`  // optional extra instructions
	Workers      int      `yaml:"workers"`        // concurrent turns; default 2
	// WarmWorker keeps the next turn's worker started ahead of need (one
	// idle process); the owner's key, never the agent's. Never nil after
	// Load; default true.
	WarmWorker *bool `yaml:"warm_worker"`
}

// TelegramConfig is the Telegram transport, on when the token is set.
type TelegramConfig struct {
	TokenEnv     string  `yaml:"token_env"` // default TELEGRAM_BOT_TOKEN
	APIBase      string  `yaml:"api_base"`  // default https://api.telegram.org
	AllowedUsers []int64 `yaml:"allowed_users"`
	// WebhookURL switches from long polling to a webhook: the public HTTPS
	// URL Telegram posts to, served by `shelldon serve` at /telegram/webhook.
	WebhookURL string `yaml:"webhook_url"`
	// WebhookSecretEnv names the variable holding the webhook's secret
	// token; default TELEGRAM_WEBHOOK_SECRET.
	WebhookSecretEnv string `yaml:"webhook_secret_env"`
}

// SandboxConfig governs the containment of code shelldon did not write.
type SandboxConfig struct {
	// AllowDegraded lets run_shell, git, the gate and self-coded tools run
	// when the kernel lacks a required sandbox layer. Off by default; when
	// on, it is reported loudly at startup and by doctor.
	AllowDegraded bool `yaml:"allow_degraded"`
	// MinFreeDisk is the free space a sandboxed command must leave on the
	// workspace's file system: checked before the command starts and at
	// least every 250 ms while it runs; below it the command is stopped.
	// Default 512MiB; 0 turns the check off.
	MinFreeDisk ByteSize `yaml:"min_free_disk"`
}

// SelfcodeConfig governs the tools the agent writes for itself.
type SelfcodeConfig struct {
	// Strikes is how many failed calls quarantine a tool version; default 3.
	Strikes int `yaml:"strikes"`
}

// SkillsConfig bounds what shelldon reads of the skills (SKILL.md folders
// in <home>/skills and the bundled ones): resource guards, not format
// rules, and the owner's alone (the agent's update_config cannot change
// them). Read when the skills are opened, at start.
type SkillsConfig struct {
	// MaxSkillBytes is the largest SKILL.md read; default 256KiB, 1KiB to
	// 4MiB.
	MaxSkillBytes ByteSize `yaml:"max_skill_bytes"`
	// MaxFileBytes is the largest file beside a SKILL.md that is listed and
	// read (read_skill_file); default 1MiB, 1KiB to 16MiB.
	MaxFileBytes ByteSize `yaml:"max_file_bytes"`
}

// LogConfig is the daemon's log.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug|info|warn|error; default info
	Format string `yaml:"format"` // text|json; default text (LogText, LogJSON)
}

// The log formats: slog's key=value text, or one JSON object a line for a
// log collector.
const (
	LogText = "text"
	LogJSON = "json"
)

// Config is the loaded, defaulted and validated configuration.
type Config struct {
	Home      string          `yaml:"-"` // absolute
	Provider  Provider        `yaml:"provider"`
	Fallback  []Provider      `yaml:"fallback"` // tried in order after Provider
	Server    ServerConfig    `yaml:"server"`
	Workspace string          `yaml:"workspace"` // absolute after Load; default <home>/workspace
	Approvals ApprovalsConfig `yaml:"approvals"`
	Agent     AgentConfig     `yaml:"agent"`
	Telegram  TelegramConfig  `yaml:"telegram"`
	Sandbox   SandboxConfig   `yaml:"sandbox"`
	Selfcode  SelfcodeConfig  `yaml:"selfcode"`
	Skills    SkillsConfig    `yaml:"skills"`
	Memory    MemoryConfig    `yaml:"memory"`    // memory.go
	Budget    BudgetConfig    `yaml:"budget"`    // budget.go
	Schedules SchedulesConfig `yaml:"schedules"` // budget.go
	Log       LogConfig       `yaml:"log"`
	Git       GitConfig       `yaml:"git"`  // git.go
	HTTP      HTTPConfig      `yaml:"http"` // http.go

	env    map[string]string // the process environment, first mention wins
	dotenv map[string]string // home/.env
	locs   map[string]location
	// forAgent marks a config loaded to check a change the agent proposed:
	// nothing about it may depend on the owner's secrets, so whether a key
	// variable is set is not checked and no value is compared with a
	// secret (see loadForAgent).
	forAgent bool
	// keysUnset: whether a provider's key variable is set is not checked
	// (candidate.keysUnset).
	keysUnset bool
}

// location is where a key was set.
type location struct {
	file string
	line int
}

// DefaultHome returns $SHELLDON_HOME, else ~/.shelldon, read from environ.
func DefaultHome(environ []string) (string, error) {
	env := envMap(environ)
	if h := env[EnvHome]; h != "" {
		return filepath.Abs(expandTilde(h, env["HOME"]))
	}
	if h := env["HOME"]; h != "" {
		return filepath.Join(h, ".shelldon"), nil
	}
	return "", errors.New("config: cannot find the shelldon home: set SHELLDON_HOME or HOME")
}

// Load reads the home's config.yaml, config.local.yaml and .env (each
// optional), merges the two YAML files (the overlay wins; maps merge, lists
// and scalars replace), decodes strictly, applies defaults and validates.
// The process environment in environ wins over .env.
func Load(home string, environ []string) (*Config, error) {
	return loadWith(home, environ, candidate{})
}

// candidate is the content of files of the home that are about to be
// written, read in place of what is on disk, so that a change is validated
// as a whole before anything is written. A nil field reads the file.
type candidate struct {
	config  []byte // config.yaml (init)
	overlay []byte // config.local.yaml
	env     []byte // .env
	// forAgent loads the config as Config.forAgent says.
	forAgent bool
	// keysUnset loads the config without checking that each provider's
	// key variable is set (init, before the owner has given the key).
	keysUnset bool
}

// loadWith is Load, with the files of cand read in place of the home's.
func loadWith(home string, environ []string, cand candidate) (*Config, error) {
	home, err := filepath.Abs(home)
	if err != nil {
		return nil, fmt.Errorf("config: home: %w", err)
	}
	c := &Config{Home: home, env: envMap(environ), locs: map[string]location{}, forAgent: cand.forAgent, keysUnset: cand.keysUnset}

	envPath := c.Path(FileEnv)
	if data, ok, err := readCandidate(envPath, cand.env); err != nil {
		return nil, err
	} else if ok {
		if c.dotenv, err = parseDotenv(envPath, data); err != nil {
			return nil, err
		}
	}

	src := sources{}
	var merged *yaml.Node
	for _, f := range []struct {
		name string
		cand []byte
	}{{FileConfig, cand.config}, {FileOverlay, cand.overlay}} {
		path := c.Path(f.name)
		data, ok, err := readCandidate(path, f.cand)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		n, err := src.parse(path, data)
		if err != nil {
			return nil, err
		}
		merged = src.merge(merged, n)
	}
	if merged != nil {
		d := &decoder{src: src, locs: c.locs, show: c.show}
		d.decode(merged, reflect.ValueOf(c).Elem(), "")
		if len(d.errs) > 0 {
			return nil, errors.Join(d.errs...)
		}
	}

	if errs := c.complete(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// readCandidate is data when it is not nil (a file about to be written),
// else the file at path (readOptional).
func readCandidate(path string, data []byte) ([]byte, bool, error) {
	if data != nil {
		if len(data) > maxFile {
			return nil, false, &Error{File: path, Msg: fmt.Sprintf("would be larger than %s", ByteSize(maxFile))}
		}
		return data, true, nil
	}
	return readOptional(path)
}

// Path returns name inside the home.
func (c *Config) Path(name string) string { return filepath.Join(c.Home, name) }

// Secret returns the variable name from the process environment, else from
// .env, else "". An empty value counts as unset.
func (c *Config) Secret(name string) string {
	if name == "" {
		return ""
	}
	if v := c.env[name]; v != "" {
		return v
	}
	return c.dotenv[name]
}

// APIKey returns p's key, or "" for a keyless provider.
func (c *Config) APIKey(p Provider) string { return c.Secret(p.APIKeyEnv) }

// Providers returns the provider, then the fallback chain, in order.
func (c *Config) Providers() []Provider {
	return append([]Provider{c.Provider}, c.Fallback...)
}

// Secrets returns every secret value loaded, for redaction: each provider's
// API key, the Telegram token, SHELLDON_API_TOKEN and every value in .env
// (both the file's value and the one in effect). Non-empty, deduplicated,
// longest first so that a redactor replaces a longer secret before a
// shorter one it contains.
func (c *Config) Secrets() []string {
	var out []string
	add := func(v string) {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, p := range c.Providers() {
		add(c.APIKey(p))
	}
	add(c.Secret(c.Telegram.TokenEnv))
	add(c.Secret(EnvAPIToken))
	for _, k := range sortedKeys(c.dotenv) {
		add(c.dotenv[k])
		add(c.Secret(k))
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// envMap turns KEY=VALUE entries into a map; the first mention of a key
// wins, as with os.Getenv.
func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, dup := m[k]; !dup {
			m[k] = v
		}
	}
	return m
}

// expandTilde expands a leading "~/" (or a lone "~") to home.
func expandTilde(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
