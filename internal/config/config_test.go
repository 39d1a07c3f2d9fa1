package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/shelldon/shelldon/internal/budget"
)

const (
	anthropicKey = "sk-ant-test-0123456789abcdef"
	openAIKey    = "sk-openai-test-0123456789abcdef"
)

// newHome makes a home holding files (name → content).
func newHome(t *testing.T, files map[string]string) string {
	t.Helper()
	home := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(home, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func load(t *testing.T, files map[string]string, environ ...string) (*Config, error) {
	t.Helper()
	return Load(newHome(t, files), environ)
}

func mustLoad(t *testing.T, files map[string]string, environ ...string) *Config {
	t.Helper()
	c, err := load(t, files, environ...)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

var ignoreUnexported = cmpopts.IgnoreUnexported(Config{})

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	common := func(home string) Config {
		var c Config
		c.Home = home
		c.Server.Listen = "127.0.0.1:7433"
		c.Server.SessionIdle = Duration(30 * 24 * time.Hour)
		c.Workspace = filepath.Join(home, "workspace")
		c.Approvals.TTL = Duration(time.Hour)
		c.Agent = AgentConfig{MaxToolCalls: 6, TurnBudget: Duration(25 * time.Second),
			Reserve: Duration(2 * time.Second), HistoryChars: 24000, Workers: 2, WarmWorker: new(true)}
		c.Telegram = TelegramConfig{TokenEnv: "TELEGRAM_BOT_TOKEN", APIBase: "https://api.telegram.org", WebhookSecretEnv: "TELEGRAM_WEBHOOK_SECRET"}
		c.Log.Level, c.Log.Format = "info", "text"
		c.Selfcode.Strikes = 3
		c.Sandbox.MinFreeDisk = 512 << 20
		c.Skills.MaxSkillBytes, c.Skills.MaxFileBytes = 256<<10, 1<<20
		c.Memory.ContextBytes = 2 << 10
		c.Budget = BudgetConfig{DailyTurns: 50, DailyUSD: 5 * budget.Dollar, MonthlyUSD: 50 * budget.Dollar, Weights: map[string]int{"schedule": 1}}
		return c
	}
	tests := []struct {
		name    string
		environ []string
		want    Provider
	}{
		{
			name:    "anthropic",
			environ: []string{"ANTHROPIC_API_KEY=" + anthropicKey},
			want: Provider{Name: "anthropic", Kind: "anthropic", BaseURL: "https://api.anthropic.com",
				Model: "claude-sonnet-4-5", APIKeyEnv: "ANTHROPIC_API_KEY", Stream: new(true),
				Timeout: Duration(time.Minute), MaxTokens: 4096},
		},
		{
			name:    "openai",
			environ: []string{"OPENAI_API_KEY=" + openAIKey},
			want: Provider{Name: "openai", Kind: "openai", BaseURL: "https://api.openai.com/v1",
				Model: "gpt-4o-mini", APIKeyEnv: "OPENAI_API_KEY", Stream: new(true),
				Timeout: Duration(time.Minute), MaxTokens: 4096},
		},
		{
			name:    "anthropic preferred over openai",
			environ: []string{"OPENAI_API_KEY=" + openAIKey, "ANTHROPIC_API_KEY=" + anthropicKey},
			want: Provider{Name: "anthropic", Kind: "anthropic", BaseURL: "https://api.anthropic.com",
				Model: "claude-sonnet-4-5", APIKeyEnv: "ANTHROPIC_API_KEY", Stream: new(true),
				Timeout: Duration(time.Minute), MaxTokens: 4096},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := newHome(t, nil)
			c, err := Load(home, tt.environ)
			if err != nil {
				t.Fatal(err)
			}
			want := common(home)
			want.Provider = tt.want
			if diff := cmp.Diff(want, *c, ignoreUnexported); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			if got := c.Providers(); len(got) != 1 || got[0].Name != tt.want.Name {
				t.Errorf("Providers() = %+v", got)
			}
		})
	}
}

func TestLoadOverlayMerge(t *testing.T) {
	t.Parallel()
	base := `
provider:
  kind: openai
  model: gpt-4o
  timeout: 30s
agent:
  max_tool_calls: 10
  workers: 3
telegram:
  allowed_users: [1, 2, 3]
fallback:
  - kind: anthropic
  - kind: openai
    base_url: http://localhost:11434/v1
`
	overlay := `
provider:
  model: gpt-4.1          # scalar: overlay wins
agent:
  turn_budget: 40s        # nested map: merges with base's agent
telegram:
  allowed_users: [9]      # list: replaces
fallback:
  - kind: openai
    base_url: http://127.0.0.1:8000/v1
    model: qwen
`
	c := mustLoad(t, map[string]string{FileConfig: base, FileOverlay: overlay},
		"OPENAI_API_KEY="+openAIKey, "ANTHROPIC_API_KEY="+anthropicKey)
	if c.Provider.Model != "gpt-4.1" || c.Provider.Kind != "openai" || c.Provider.Timeout.D() != 30*time.Second {
		t.Errorf("provider = %+v", c.Provider)
	}
	if c.Agent.MaxToolCalls != 10 || c.Agent.Workers != 3 || c.Agent.TurnBudget.D() != 40*time.Second {
		t.Errorf("agent = %+v", c.Agent)
	}
	if diff := cmp.Diff([]int64{9}, c.Telegram.AllowedUsers); diff != "" {
		t.Errorf("allowed_users (-want +got):\n%s", diff)
	}
	if len(c.Fallback) != 1 || c.Fallback[0].Model != "qwen" || c.Fallback[0].APIKeyEnv != "" {
		t.Errorf("fallback = %+v", c.Fallback)
	}
	var names []string
	for _, p := range c.Providers() {
		names = append(names, p.Model)
	}
	if diff := cmp.Diff([]string{"gpt-4.1", "qwen"}, names); diff != "" {
		t.Errorf("Providers() models (-want +got):\n%s", diff)
	}
}

func TestLoadOverlayOnly(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, map[string]string{FileOverlay: "log: {level: DEBUG, format: ' JSON'}\n"}, "OPENAI_API_KEY="+openAIKey)
	if c.Log.Level != "debug" || c.Log.Format != LogJSON || c.Provider.Kind != "openai" {
		t.Errorf("log.level = %q, log.format = %q, kind = %q", c.Log.Level, c.Log.Format, c.Provider.Kind)
	}
}

func TestLoadValues(t *testing.T) {
	t.Parallel()
	home := newHome(t, map[string]string{
		FileConfig: `
provider:
  kind: Anthropic
  base_url: https://proxy.example.com/anthropic/
  stream: false
server: {listen: ":8080"}
workspace: /srv/work
approvals: {ttl: 90s}
agent:
  reserve: 0s
  system_prompt: |
    Be brief.
`,
	})
	c, err := Load(home, []string{"ANTHROPIC_API_KEY=" + anthropicKey})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Provider
	if p.Kind != "anthropic" || p.BaseURL != "https://proxy.example.com/anthropic" || *p.Stream || p.APIKeyEnv != "ANTHROPIC_API_KEY" {
		t.Errorf("provider = %+v", p)
	}
	if c.Server.Listen != ":8080" || c.Workspace != "/srv/work" || c.Approvals.TTL.D() != 90*time.Second {
		t.Errorf("server %q workspace %q ttl %v", c.Server.Listen, c.Workspace, c.Approvals.TTL)
	}
	if c.Agent.Reserve != 0 || c.Agent.SystemPrompt != "Be brief.\n" {
		t.Errorf("agent = %+v", c.Agent)
	}
	if got, want := c.Path("x.db"), filepath.Join(home, "x.db"); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
}

func TestLoadWorkspace(t *testing.T) {
	t.Parallel()
	tests := []struct{ value, want string }{
		{"", "HOME/workspace"},
		{"ws", "HOME/ws"},
		{"../elsewhere", "HOME/../elsewhere"},
		{"~/agent-files", "/home/owner/agent-files"},
		{"/abs/dir/", "/abs/dir"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			t.Parallel()
			home := newHome(t, map[string]string{FileConfig: "workspace: " + yamlString(tt.value) + "\n"})
			c, err := Load(home, []string{"HOME=/home/owner", "OPENAI_API_KEY=x"})
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Clean(strings.Replace(tt.want, "HOME", home, 1))
			if c.Workspace != want {
				t.Errorf("workspace = %q, want %q", c.Workspace, want)
			}
		})
	}
}

func TestLoadKeyless(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, config string
		environ      []string
		wantKeyEnv   string
		wantKey      string
	}{
		{
			name:   "ollama with no key anywhere",
			config: "provider: {kind: openai, base_url: 'http://localhost:11434/v1', model: llama3.2}\n",
		},
		{
			name:    "ollama is not sent the OpenAI key by default",
			config:  "provider: {kind: openai, base_url: 'http://localhost:11434/v1', model: llama3.2}\n",
			environ: []string{"OPENAI_API_KEY=" + openAIKey},
		},
		{
			name:       "a compatible server with its key named",
			config:     "provider: {kind: openai, base_url: 'https://openrouter.ai/api/v1', api_key_env: OPENROUTER_KEY}\n",
			environ:    []string{"OPENROUTER_KEY=or-123456789"},
			wantKeyEnv: "OPENROUTER_KEY",
			wantKey:    "or-123456789",
		},
		{
			name:       "ollama as a fallback",
			config:     "fallback: [{kind: openai, base_url: 'http://pi.local:11434/v1'}]\n",
			environ:    []string{"ANTHROPIC_API_KEY=" + anthropicKey},
			wantKeyEnv: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, map[string]string{FileConfig: tt.config}, tt.environ...)
			p := c.Providers()[len(c.Providers())-1]
			if p.APIKeyEnv != tt.wantKeyEnv || c.APIKey(p) != tt.wantKey {
				t.Errorf("api_key_env = %q, key = %q; want %q, %q", p.APIKeyEnv, c.APIKey(p), tt.wantKeyEnv, tt.wantKey)
			}
		})
	}
}

func TestDotenvAndEnvironment(t *testing.T) {
	t.Parallel()
	env := "# secrets\n" +
		"export ANTHROPIC_API_KEY='sk-ant-from-dotenv'\n" +
		"OPENAI_API_KEY=sk-openai-from-dotenv\n" +
		"TELEGRAM_BOT_TOKEN=\"123:abc\"\n" +
		"SHELLDON_API_TOKEN=api-token-dotenv\n" +
		"OTHER=other-value # a comment\n"
	c := mustLoad(t, map[string]string{FileEnv: env}, "OPENAI_API_KEY="+openAIKey, "ANTHROPIC_API_KEY=")
	tests := []struct{ name, want string }{
		{"ANTHROPIC_API_KEY", "sk-ant-from-dotenv"}, // empty in the environment counts as unset
		{"OPENAI_API_KEY", openAIKey},               // the environment wins
		{"TELEGRAM_BOT_TOKEN", "123:abc"},
		{"OTHER", "other-value"},
		{"MISSING", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := c.Secret(tt.name); got != tt.want {
			t.Errorf("Secret(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if c.Provider.Kind != "anthropic" || c.APIKey(c.Provider) != "sk-ant-from-dotenv" {
		t.Errorf("provider %q key %q", c.Provider.Kind, c.APIKey(c.Provider))
	}
}

func TestSecrets(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, map[string]string{
		FileEnv:    "OPENAI_API_KEY=sk-openai-dotenv\nEXTRA=extra-secret\nOR_KEY=or-key-123\n",
		FileConfig: "fallback: [{kind: openai}, {kind: openai, base_url: 'https://openrouter.ai/api/v1', api_key_env: OR_KEY}]\n",
	},
		"ANTHROPIC_API_KEY="+anthropicKey, "OPENAI_API_KEY="+openAIKey,
		"TELEGRAM_BOT_TOKEN=tg-token", "SHELLDON_API_TOKEN=api-token", "PATH=/usr/bin")
	got := c.Secrets()
	want := []string{openAIKey, anthropicKey, "sk-openai-dotenv", "extra-secret", "or-key-123", "api-token", "tg-token"}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("Secrets() (-want +got):\n%s", diff)
	}
	for i := 1; i < len(got); i++ {
		if len(got[i]) > len(got[i-1]) {
			t.Errorf("Secrets() not longest first: %q", got)
		}
	}
}

func TestDefaultHome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		environ []string
		want    string
		wantErr bool
	}{
		{[]string{"SHELLDON_HOME=/srv/shelldon", "HOME=/home/u"}, "/srv/shelldon", false},
		{[]string{"SHELLDON_HOME=~/sh", "HOME=/home/u"}, "/home/u/sh", false},
		{[]string{"SHELLDON_HOME=", "HOME=/home/u"}, "/home/u/.shelldon", false},
		{[]string{"HOME=/home/u"}, "/home/u/.shelldon", false},
		{nil, "", true},
	}
	for _, tt := range tests {
		got, err := DefaultHome(tt.environ)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("DefaultHome(%q) = %q, %v; want %q", tt.environ, got, err, tt.want)
		}
	}
}

func TestByteSize(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want ByteSize
		str  string
	}{
		{"512MiB", 512 << 20, "512MiB"}, {"1GiB", 1 << 30, "1GiB"}, {"1g", 1 << 30, "1GiB"}, {" 64 k ", 64 << 10, "64KiB"},
		{"100MB", 100_000_000, "100000000"}, {"4096", 4096, "4KiB"}, {"0", 0, "0"}, {"1.5GiB", 3 << 29, "1536MiB"}, {"7b", 7, "7"},
	} {
		got, err := ParseByteSize(tt.in)
		if err != nil || got != tt.want || got.String() != tt.str {
			t.Errorf("ParseByteSize(%q) = %d (%s), %v; want %d (%s)", tt.in, got, got, err, tt.want, tt.str)
		}
	}
	for _, bad := range []string{"", "MiB", "-1MiB", "12 parsecs", "1e3", "0x10", "9999999TiB", "1..2G"} {
		if got, err := ParseByteSize(bad); err == nil {
			t.Errorf("ParseByteSize(%q) = %d, want an error", bad, got)
		}
	}
}

// TestMinFreeDisk: sandbox.min_free_disk defaults to 512MiB, takes sizes,
// and 0 turns the check off.
func TestMinFreeDisk(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		file string
		want ByteSize
	}{{"", 512 << 20}, {"sandbox:\n  min_free_disk: 2GiB\n", 2 << 30}, {"sandbox:\n  min_free_disk: 0\n", 0}} {
		files := map[string]string{}
		if tt.file != "" {
			files[FileConfig] = tt.file
		}
		c, err := Load(newHome(t, files), []string{"ANTHROPIC_API_KEY=" + anthropicKey})
		if err != nil {
			t.Fatal(err)
		}
		if c.Sandbox.MinFreeDisk != tt.want {
			t.Errorf("%q: min_free_disk = %s, want %s", tt.file, c.Sandbox.MinFreeDisk, tt.want)
		}
	}
}

func TestDuration(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{{time.Hour, "1h"}, {90 * time.Second, "1m30s"}, {25 * time.Second, "25s"}, {2 * time.Minute, "2m"}, {time.Hour + time.Second, "1h0m1s"}, {0, "0s"}} {
		if got := Duration(tt.d).String(); got != tt.want {
			t.Errorf("Duration(%v).String() = %q, want %q", tt.d, got, tt.want)
		}
		var back Duration
		if err := back.UnmarshalText([]byte(tt.want)); err != nil || back.D() != tt.d {
			t.Errorf("UnmarshalText(%q) = %v, %v", tt.want, back, err)
		}
	}
}

// TestLoadErrors checks that every error is an *Error naming the file (by
// its full path), the key and, where it has one, the line.
func TestLoadErrors(t *testing.T) {
	t.Parallel()
	keys := []string{"ANTHROPIC_API_KEY=" + anthropicKey, "OPENAI_API_KEY=" + openAIKey}
	tests := []struct {
		name    string
		files   map[string]string
		environ []string
		file    string // name in the home; "" for none
		key     string
		line    int
		msg     string // substring of Msg
		hidden  string // must not appear in the error
	}{
		{
			name:  "unknown key in config.yaml",
			files: map[string]string{FileConfig: "agent:\n  max_tool_cals: 3\n"},
			file:  FileConfig, key: "agent.max_tool_cals", line: 2, msg: `unknown key (did you mean "max_tool_calls"?)`,
		},
		{
			name:  "unknown key in the overlay",
			files: map[string]string{FileConfig: "log: {level: info}\n", FileOverlay: "\nbogus: 1\n"},
			file:  FileOverlay, key: "bogus", line: 2, msg: "unknown key",
		},
		{
			name:  "a key pasted into an unknown key is not echoed",
			files: map[string]string{FileConfig: "provider:\n  api_key: sk-ant-pasted-secret-value\n"},
			file:  FileConfig, key: "provider.api_key", line: 2, msg: "unknown key",
			hidden: "sk-ant-pasted-secret-value",
		},
		{
			name:  "bad duration in the overlay",
			files: map[string]string{FileConfig: "agent: {workers: 2}\n", FileOverlay: "agent:\n  turn_budget: abc\n"},
			file:  FileOverlay, key: "agent.turn_budget", line: 2, msg: `"abc" is not a duration (like "25s" or "1m")`,
		},
		{
			name:  "bad size",
			files: map[string]string{FileConfig: "sandbox:\n  min_free_disk: lots\n"},
			file:  FileConfig, key: "sandbox.min_free_disk", line: 2, msg: `"lots" is not a size`,
		},
		{
			name:  "duration out of bounds",
			files: map[string]string{FileConfig: "agent:\n  turn_budget: 1s\n"},
			file:  FileConfig, key: "agent.turn_budget", line: 2, msg: "1s is out of range: must be from 5s to 10m",
		},
		{
			name:  "explicit zero is out of bounds, not the default",
			files: map[string]string{FileConfig: "agent:\n  max_tool_calls: 0\n"},
			file:  FileConfig, key: "agent.max_tool_calls", line: 2, msg: "0 is out of range",
		},
		{
			name:  "reserve not shorter than the budget",
			files: map[string]string{FileConfig: "agent: {turn_budget: 10s, reserve: 10s}\n"},
			file:  FileConfig, key: "agent.reserve", line: 1, msg: "must be shorter than agent.turn_budget",
		},
		{
			name:  "not a number",
			files: map[string]string{FileConfig: "agent:\n  workers: many\n"},
			file:  FileConfig, key: "agent.workers", line: 2, msg: "must be a whole number",
		},
		{
			name:  "bad kind",
			files: map[string]string{FileConfig: "provider:\n  kind: gemini\n"},
			file:  FileConfig, key: "provider.kind", line: 2, msg: `"gemini" is not a provider kind (anthropic or openai)`,
		},
		{
			name:  "URL with userinfo is never echoed",
			files: map[string]string{FileConfig: "provider:\n  kind: openai\n  base_url: https://user:hunter2-password@example.com/v1\n"},
			file:  FileConfig, key: "provider.base_url", line: 3, msg: "must not hold a user name or password",
			hidden: "hunter2",
		},
		{
			name:  "URL not http",
			files: map[string]string{FileConfig: "provider: {kind: openai, base_url: 'ftp://example.com'}\n"},
			file:  FileConfig, key: "provider.base_url", line: 1, msg: `must be an http or https URL, not "ftp"`,
		},
		{
			name:  "URL relative",
			files: map[string]string{FileConfig: "provider: {kind: openai, base_url: 'localhost:11434/v1'}\n"},
			file:  FileConfig, key: "provider.base_url", line: 1, msg: "must be an http or https URL",
		},
		{
			name:  "URL with a query",
			files: map[string]string{FileConfig: "telegram: {api_base: 'https://tg.example.com/?x=1'}\n"},
			file:  FileConfig, key: "telegram.api_base", line: 1, msg: "must not have a query",
		},
		{
			name:  "bad listen",
			files: map[string]string{FileConfig: "server:\n  listen: localhost\n"},
			file:  FileConfig, key: "server.listen", line: 2, msg: `"localhost" is not a host:port address`,
		},
		{
			name:  "bad listen port",
			files: map[string]string{FileConfig: "server:\n  listen: 'localhost:99999'\n"},
			file:  FileConfig, key: "server.listen", line: 2, msg: "the port must be a number from 0 to 65535",
		},
		{
			name:  "allowed host with a port",
			files: map[string]string{FileConfig: "server:\n  allowed_hosts: [pi.local, 'pi.local:7433']\n"},
			file:  FileConfig, key: "server.allowed_hosts[1]", line: 2, msg: `"pi.local:7433" is not a host name or IP address`,
		},
		{
			name:  "allowed host as a URL",
			files: map[string]string{FileConfig: "server:\n  allowed_hosts:\n    - 'http://pi.local/'\n"},
			file:  FileConfig, key: "server.allowed_hosts[0]", line: 3, msg: "is not a host name or IP address",
		},
		{
			name:  "allowed host as a wildcard",
			files: map[string]string{FileConfig: "server:\n  allowed_hosts: ['*.local']\n"},
			file:  FileConfig, key: "server.allowed_hosts[0]", line: 2, msg: "is not a host name or IP address",
		},
		{
			name:  "a TLS certificate without its key",
			files: map[string]string{FileConfig: "server:\n  tls_cert: cert.pem\n"},
			file:  FileConfig, key: "server.tls_cert", line: 2, msg: "set both server.tls_cert and server.tls_key, or neither",
		},
		{
			name:  "a TLS key without its certificate",
			files: map[string]string{FileConfig: "server:\n  tls_key: key.pem\n"},
			file:  FileConfig, key: "server.tls_key", line: 2, msg: "set both server.tls_cert and server.tls_key, or neither",
		},
		{
			name:  "session idle too short",
			files: map[string]string{FileConfig: "server:\n  session_idle: 1m\n"},
			file:  FileConfig, key: "server.session_idle", line: 2, msg: "",
		},
		{
			name:  "YAML syntax error with its line",
			files: map[string]string{FileConfig: "provider:\n  kind: openai\n  model: [unclosed\nlog: {}\n"},
			file:  FileConfig, line: 2, msg: "YAML syntax: did not find expected ',' or ']'",
		},
		{
			name:  "YAML syntax error in the overlay",
			files: map[string]string{FileOverlay: "a: b\nc d\ne: f\n"},
			file:  FileOverlay, line: 2, msg: "YAML syntax: could not find expected ':'",
		},
		{
			name:  "a key set twice",
			files: map[string]string{FileConfig: "log:\n  level: info\n  level: debug\n"},
			file:  FileConfig, key: "log.level", line: 3, msg: "set twice (first on line 2)",
		},
		{
			name:  "top level not a mapping",
			files: map[string]string{FileConfig: "- a\n- b\n"},
			file:  FileConfig, line: 1, msg: "must be a mapping",
		},
		{
			name:  "a section that is not a mapping",
			files: map[string]string{FileConfig: "agent: 5\n"},
			file:  FileConfig, key: "agent", line: 1, msg: "must be a mapping",
		},
		{
			name:  "a list that is not a list",
			files: map[string]string{FileConfig: "telegram:\n  allowed_users: 12345\n"},
			file:  FileConfig, key: "telegram.allowed_users", line: 2, msg: "must be a list",
		},
		{
			name:  "allowed_users not ints",
			files: map[string]string{FileConfig: "telegram:\n  allowed_users:\n    - 1\n    - alice\n"},
			file:  FileConfig, key: "telegram.allowed_users[1]", line: 4, msg: "must be a whole number",
		},
		{
			name:  "allowed_users not positive",
			files: map[string]string{FileConfig: "telegram: {allowed_users: [-5]}\n"},
			file:  FileConfig, key: "telegram.allowed_users[0]", line: 1, msg: "is not a Telegram user id",
		},
		{
			name:  "bad log level",
			files: map[string]string{FileOverlay: "log:\n  level: loud\n"},
			file:  FileOverlay, key: "log.level", line: 2, msg: `"loud" is not a log level`,
		},
		{
			name:  "bad log format",
			files: map[string]string{FileConfig: "log:\n  level: info\n  format: logfmt\n"},
			file:  FileConfig, key: "log.format", line: 3, msg: `"logfmt" is not a log format (text or json)`,
		},
		{
			name:  "a fallback entry",
			files: map[string]string{FileConfig: "fallback:\n  - kind: openai\n  - kind: mistral\n"},
			file:  FileConfig, key: "fallback[1].kind", line: 3, msg: `"mistral" is not a provider kind`,
		},
		{
			name:  "a fallback entry's unknown key",
			files: map[string]string{FileConfig: "fallback:\n  - kind: openai\n    modle: x\n"},
			file:  FileConfig, key: "fallback[0].modle", line: 3, msg: `unknown key (did you mean "model"?)`,
		},
		{
			name:  "a fallback entry's duration",
			files: map[string]string{FileConfig: "fallback:\n  - kind: openai\n    timeout: 10\n"},
			file:  FileConfig, key: "fallback[0].timeout", line: 3, msg: `"10" is not a duration`,
		},
		{
			name:    "missing key",
			files:   map[string]string{FileConfig: "provider:\n  kind: openai\n"},
			environ: []string{"ANTHROPIC_API_KEY=" + anthropicKey},
			key:     "provider.api_key_env", msg: "OPENAI_API_KEY is not set in the environment or HOME/.env",
		},
		{
			name:    "named key missing",
			files:   map[string]string{FileConfig: "provider:\n  kind: anthropic\n  api_key_env: MY_KEY\n"},
			environ: []string{"ANTHROPIC_API_KEY=" + anthropicKey},
			file:    FileConfig, key: "provider.api_key_env", line: 3, msg: "MY_KEY is not set in the environment or HOME/.env",
		},
		{
			name:    "key pasted into api_key_env is never echoed",
			files:   map[string]string{FileConfig: "provider:\n  kind: anthropic\n  api_key_env: sk-ant-api03-xyz\n"},
			environ: []string{"ANTHROPIC_API_KEY=" + anthropicKey},
			file:    FileConfig, key: "provider.api_key_env", line: 3, msg: "must be the name of an environment variable",
			hidden: "sk-ant-api03-xyz",
		},
		{
			name:    "no provider at all",
			environ: []string{"HOME=/home/u"},
			key:     "provider.kind", msg: "run `shelldon init`",
		},
		{
			name:    "a secret is never quoted back",
			files:   map[string]string{FileEnv: "ANTHROPIC_API_KEY=sk-ant-leaky-1234\n", FileConfig: "provider:\n  kind: sk-ant-leaky-1234\n"},
			environ: []string{},
			file:    FileConfig, key: "provider.kind", line: 2, msg: "value hidden",
			hidden: "sk-ant-leaky-1234",
		},
		{
			name:  "invalid .env line names file and line, not the value",
			files: map[string]string{FileEnv: "# keys\nOK=1\nsk-ant-pasted-alone-9876\n"},
			file:  FileEnv, line: 3, msg: "expected KEY=VALUE",
			hidden: "sk-ant-pasted-alone-9876",
		},
		{
			name:  "unterminated quote in .env names the key, not the value",
			files: map[string]string{FileEnv: "ANTHROPIC_API_KEY=\"sk-ant-open-quote-4321\n"},
			file:  FileEnv, key: "ANTHROPIC_API_KEY", line: 1, msg: "no closing quote",
			hidden: "sk-ant-open-quote-4321",
		},
		{
			name:  "two YAML documents",
			files: map[string]string{FileConfig: "log: {level: info}\n---\nlog: {level: debug}\n"},
			file:  FileConfig, line: 2, msg: "more than one YAML document",
		},
		{
			name:  "merge keys",
			files: map[string]string{FileConfig: "log: &a {level: info}\nagent:\n  <<: *a\n"},
			file:  FileConfig, key: "agent.<<", line: 3, msg: "merge keys (<<) are not supported",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			environ := tt.environ
			if environ == nil {
				environ = keys
			}
			home := newHome(t, tt.files)
			_, err := Load(home, environ)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %q is not an *Error", err, err)
			}
			wantFile := ""
			if tt.file != "" {
				wantFile = filepath.Join(home, tt.file)
			}
			msg := strings.ReplaceAll(tt.msg, "HOME", home)
			if e.File != wantFile || e.Key != tt.key || e.Line != tt.line || !strings.Contains(e.Msg, msg) {
				t.Errorf("got %#v\nwant file %q key %q line %d msg containing %q", e, wantFile, tt.key, tt.line, msg)
			}
			if !strings.Contains(err.Error(), tt.key) || !strings.Contains(err.Error(), wantFile) {
				t.Errorf("Error() = %q does not name the file and key", err)
			}
			if tt.hidden != "" && strings.Contains(err.Error(), tt.hidden) {
				t.Errorf("Error() = %q shows %q", err, tt.hidden)
			}
		})
	}
}

func TestLoadCollectsErrors(t *testing.T) {
	t.Parallel()
	_, err := load(t, map[string]string{FileConfig: "agent: {workers: 0, max_tool_calls: 99}\nlog: {level: x}\n"},
		"OPENAI_API_KEY=k")
	var keys []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		keys = append(keys, e.(*Error).Key)
	}
	if diff := cmp.Diff([]string{"agent.max_tool_calls", "agent.workers", "log.level"}, keys); diff != "" {
		t.Errorf("error keys (-want +got):\n%s", diff)
	}
}

func TestErrorFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "/h/config.local.yaml", Key: "agent.turn_budget", Line: 3, Msg: "bad"}, "/h/config.local.yaml:3: agent.turn_budget: bad"},
		{Error{File: "/h/config.yaml", Key: "a", Msg: "bad"}, "/h/config.yaml: a: bad"},
		{Error{Key: "provider.api_key_env", Msg: "bad"}, "provider.api_key_env: bad"},
		{Error{File: "/h/.env", Line: 2, Msg: "bad"}, "/h/.env:2: bad"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestWriteFileAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ".env")
	for _, data := range []string{"first\n", "second\n"} {
		if err := WriteFileAtomic(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, %v", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x"), nil, 0o600); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}
