package config

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults and bounds. A key absent from both files (or null) gets its
// default; a key set explicitly, even to zero, must be within bounds.
const (
	defaultAnthropicURL   = "https://api.anthropic.com"
	defaultOpenAIURL      = "https://api.openai.com/v1"
	defaultAnthropicModel = "claude-sonnet-4-5"
	defaultOpenAIModel    = "gpt-4o-mini"
	defaultAnthropicKey   = "ANTHROPIC_API_KEY"
	defaultOpenAIKey      = "OPENAI_API_KEY"
	defaultTimeout        = 60 * time.Second
	defaultMaxTokens      = 4096
	defaultListen         = "127.0.0.1:7433"
	defaultWorkspace      = "workspace"
	defaultTTL            = time.Hour
	defaultSessionIdle    = 30 * 24 * time.Hour
	defaultMaxToolCalls   = 6
	defaultTurnBudget     = 25 * time.Second
	defaultReserve        = 2 * time.Second
	defaultHistoryChars   = 24000
	defaultWorkers        = 2
	defaultTelegramToken  = "TELEGRAM_BOT_TOKEN"
	defaultTelegramAPI    = "https://api.telegram.org"
	defaultLogLevel       = "info"
	defaultMinFreeDisk    = 512 << 20
	defaultMaxSkillBytes  = 256 << 10 // skill.DefaultMaxSkillBytes
	defaultMaxFileBytes   = 1 << 20   // skill.DefaultMaxFileBytes
	openAIHost            = "api.openai.com"
)

var (
	logLevels  = []string{"debug", "info", "warn", "error"}
	logFormats = []string{LogText, LogJSON}
)

// complete applies defaults and validates, returning every problem found.
func (c *Config) complete() []error {
	var errs []error
	add := func(e *Error) {
		if e != nil {
			errs = append(errs, e)
		}
	}

	for _, e := range c.completeProvider(&c.Provider, "provider") {
		add(e)
	}
	for i := range c.Fallback {
		for _, e := range c.completeProvider(&c.Fallback[i], fmt.Sprintf("fallback[%d]", i)) {
			add(e)
		}
	}

	if c.Server.Listen == "" {
		c.Server.Listen = defaultListen
	}
	add(c.checkListen("server.listen", c.Server.Listen))
	for i, h := range c.Server.AllowedHosts {
		key := fmt.Sprintf("server.allowed_hosts[%d]", i)
		if n, ok := HostName(h); ok {
			c.Server.AllowedHosts[i] = n
		} else {
			add(c.errAt(key, "%s is not a host name or IP address (like pi.local or 192.168.1.20, without a port or scheme)", c.show(h)))
		}
	}
	add(c.durationIn("server.session_idle", &c.Server.SessionIdle, defaultSessionIdle, 10*time.Minute, 8760*time.Hour))
	switch srv := &c.Server; {
	case (srv.TLSCert == "") != (srv.TLSKey == ""):
		set, unset := "server.tls_cert", "server.tls_key"
		if srv.TLSCert == "" {
			set, unset = unset, set
		}
		add(c.errAt(set, "is set but %s is not: set both server.tls_cert and server.tls_key, or neither", unset))
	case srv.TLSCert != "":
		for _, p := range []*string{&srv.TLSCert, &srv.TLSKey} {
			*p = expandTilde(*p, c.env["HOME"])
			if !filepath.IsAbs(*p) {
				*p = filepath.Join(c.Home, *p)
			}
			*p = filepath.Clean(*p)
		}
	}

	if c.Workspace == "" {
		c.Workspace = defaultWorkspace
	}
	c.Workspace = expandTilde(c.Workspace, c.env["HOME"])
	if !filepath.IsAbs(c.Workspace) {
		c.Workspace = filepath.Join(c.Home, c.Workspace)
	}
	c.Workspace = filepath.Clean(c.Workspace)

	add(c.durationIn("approvals.ttl", &c.Approvals.TTL, defaultTTL, 10*time.Second, 30*24*time.Hour))

	a := &c.Agent
	add(c.intIn("agent.max_tool_calls", &a.MaxToolCalls, defaultMaxToolCalls, 1, 50))
	budgetErr := c.durationIn("agent.turn_budget", &a.TurnBudget, defaultTurnBudget, 5*time.Second, 10*time.Minute)
	add(budgetErr)
	add(c.durationIn("agent.reserve", &a.Reserve, defaultReserve, 0, 10*time.Minute))
	if budgetErr == nil && a.Reserve >= a.TurnBudget {
		add(c.errAt("agent.reserve", "%s must be shorter than agent.turn_budget (%s)", a.Reserve, a.TurnBudget))
	}
	add(c.intIn("agent.history_chars", &a.HistoryChars, defaultHistoryChars, 1000, 1_000_000))
	add(c.intIn("agent.workers", &a.Workers, defaultWorkers, 1, 16))
	if a.WarmWorker == nil {
		a.WarmWorker = new(true)
	}
	add(c.intIn("selfcode.strikes", &c.Selfcode.Strikes, 3, 1, 100))
	if c.Sandbox.MinFreeDisk == 0 && !c.set("sandbox.min_free_disk") {
		c.Sandbox.MinFreeDisk = defaultMinFreeDisk
	}
	add(c.sizeIn("skills.max_skill_bytes", &c.Skills.MaxSkillBytes, defaultMaxSkillBytes, 1<<10, 4<<20))
	add(c.sizeIn("skills.max_file_bytes", &c.Skills.MaxFileBytes, defaultMaxFileBytes, 1<<10, 16<<20))
	add(c.completeMemory())

	t := &c.Telegram
	if t.TokenEnv == "" {
		t.TokenEnv = defaultTelegramToken
	}
	add(c.checkEnvName("telegram.token_env", t.TokenEnv))
	if t.APIBase == "" {
		t.APIBase = defaultTelegramAPI
	}
	if _, e := c.checkURL("telegram.api_base", t.APIBase); e != nil {
		add(e)
	} else {
		t.APIBase = strings.TrimRight(t.APIBase, "/")
	}
	if t.WebhookSecretEnv == "" {
		t.WebhookSecretEnv = "TELEGRAM_WEBHOOK_SECRET"
	}
	add(c.checkEnvName("telegram.webhook_secret_env", t.WebhookSecretEnv))
	if t.WebhookURL != "" {
		if _, e := c.checkURL("telegram.webhook_url", t.WebhookURL); e != nil {
			add(e)
		}
	}
	for i, id := range t.AllowedUsers {
		if id <= 0 {
			add(c.errAt(fmt.Sprintf("telegram.allowed_users[%d]", i), "%d is not a Telegram user id (a positive number)", id))
		}
	}

	for _, e := range c.completeBudget() {
		add(e)
	}
	for _, e := range c.completeGit() {
		add(e)
	}
	for _, e := range c.completeHTTP() {
		add(e)
	}

	c.Log.Level = strings.ToLower(strings.TrimSpace(c.Log.Level))
	if c.Log.Level == "" {
		c.Log.Level = defaultLogLevel
	}
	if !slices.Contains(logLevels, c.Log.Level) {
		add(c.errAt("log.level", "%s is not a log level (debug, info, warn or error)", c.show(c.Log.Level)))
	}
	c.Log.Format = strings.ToLower(strings.TrimSpace(c.Log.Format))
	if c.Log.Format == "" {
		c.Log.Format = LogText
	}
	if !slices.Contains(logFormats, c.Log.Format) {
		add(c.errAt("log.format", "%s is not a log format (text or json)", c.show(c.Log.Format)))
	}
	return errs
}

// completeProvider applies a provider's defaults and validates it; key is
// "provider" or "fallback[i]".
func (c *Config) completeProvider(p *Provider, key string) []*Error {
	k := func(name string) string { return key + "." + name }
	var errs []*Error
	add := func(e *Error) {
		if e != nil {
			errs = append(errs, e)
		}
	}

	p.Kind = strings.ToLower(strings.TrimSpace(p.Kind))
	switch p.Kind {
	case "":
		switch {
		case c.Secret(defaultAnthropicKey) != "":
			p.Kind = KindAnthropic
		case c.Secret(defaultOpenAIKey) != "":
			p.Kind = KindOpenAI
		default:
			return []*Error{c.errAt(k("kind"), "not set, and neither %s nor %s is in the environment or %s: run `shelldon init`, or set one of them",
				defaultAnthropicKey, defaultOpenAIKey, c.Path(FileEnv))}
		}
	case KindAnthropic, KindOpenAI:
	default:
		return []*Error{c.errAt(k("kind"), "%s is not a provider kind (anthropic or openai)", c.show(p.Kind))}
	}
	anthropic := p.Kind == KindAnthropic

	if p.BaseURL == "" {
		p.BaseURL = pick(anthropic, defaultAnthropicURL, defaultOpenAIURL)
	}
	u, e := c.checkURL(k("base_url"), p.BaseURL)
	add(e)
	if e == nil {
		p.BaseURL = strings.TrimRight(p.BaseURL, "/")
	}

	if p.Model == "" {
		p.Model = pick(anthropic, defaultAnthropicModel, defaultOpenAIModel)
	}

	// An OpenAI-compatible server on another host (Ollama, vLLM, LM Studio)
	// may need no key; it gets one only if api_key_env names it, so that the
	// OpenAI key is never sent to another host by default.
	keyless := !anthropic && u != nil && !strings.EqualFold(u.Hostname(), openAIHost)
	if p.APIKeyEnv == "" && !keyless {
		p.APIKeyEnv = pick(anthropic, defaultAnthropicKey, defaultOpenAIKey)
	}
	if p.APIKeyEnv != "" {
		if e := c.checkEnvName(k("api_key_env"), p.APIKeyEnv); e != nil {
			add(e)
		} else if !c.forAgent && !c.keysUnset && c.Secret(p.APIKeyEnv) == "" {
			// Not for the agent: whether a variable is set is the owner's
			// business, and the answer would be an oracle on it.
			add(c.errAt(k("api_key_env"), "%s is not set in the environment or %s", p.APIKeyEnv, c.Path(FileEnv)))
		}
	}

	if p.Stream == nil {
		p.Stream = new(true)
	}
	add(c.durationIn(k("timeout"), &p.Timeout, defaultTimeout, time.Second, 30*time.Minute))
	add(c.intIn(k("max_tokens"), &p.MaxTokens, defaultMaxTokens, 1, 1_000_000))
	if p.Name == "" {
		p.Name = p.Kind
	}
	return errs
}

// set reports whether key was given a value in a file.
func (c *Config) set(key string) bool {
	_, ok := c.locs[key]
	return ok
}

func (c *Config) intIn(key string, v *int, def, lo, hi int) *Error {
	if *v == 0 && !c.set(key) {
		*v = def
		return nil
	}
	if *v < lo || *v > hi {
		return c.errAt(key, "%d is out of range: must be from %d to %d", *v, lo, hi)
	}
	return nil
}

func (c *Config) durationIn(key string, v *Duration, def, lo, hi time.Duration) *Error {
	if *v == 0 && !c.set(key) {
		*v = Duration(def)
		return nil
	}
	if v.D() < lo || v.D() > hi {
		return c.errAt(key, "%s is out of range: must be from %s to %s", *v, Duration(lo), Duration(hi))
	}
	return nil
}

func (c *Config) sizeIn(key string, v *ByteSize, def, lo, hi ByteSize) *Error {
	if *v == 0 && !c.set(key) {
		*v = def
		return nil
	}
	if *v < lo || *v > hi {
		return c.errAt(key, "%s is out of range: must be from %s to %s", *v, lo, hi)
	}
	return nil
}

// checkURL checks that s is an absolute http(s) URL with a host and no
// user name, password, query or fragment. It never quotes s: a URL with a
// password in it is a secret.
func (c *Config) checkURL(key, s string) (*url.URL, *Error) {
	u, err := url.Parse(s)
	switch {
	case err != nil || !u.IsAbs():
		return nil, c.errAt(key, "must be an absolute URL (like https://example.com/v1)")
	case u.User != nil:
		return nil, c.errAt(key, "must not hold a user name or password: put the key in %s and name its variable in api_key_env", c.Path(FileEnv))
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, c.errAt(key, "must be an http or https URL, not %s", c.show(u.Scheme))
	case u.Host == "" || u.Hostname() == "":
		return nil, c.errAt(key, "must name a host (like https://example.com/v1)")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, c.errAt(key, "must not have a query (?...) or fragment (#...)")
	}
	return u, nil
}

func (c *Config) checkListen(key, s string) *Error {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return c.errAt(key, "%s is not a host:port address (like 127.0.0.1:7433 or :7433)", c.show(s))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return c.errAt(key, "%s: the port must be a number from 0 to 65535", c.show(s))
	}
	return nil
}

// checkEnvName checks that s names a variable. It never quotes s: a common
// mistake is to paste the key itself here.
func (c *Config) checkEnvName(key, s string) *Error {
	if validEnvName(s) {
		return nil
	}
	return c.errAt(key, "must be the name of an environment variable (like %s), not a value: put the value itself in %s",
		pick(strings.HasPrefix(key, "telegram."), defaultTelegramToken, defaultAnthropicKey), c.Path(FileEnv))
}

func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}
