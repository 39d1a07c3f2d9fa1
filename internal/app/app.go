// Package app wires shelldon together: it loads the config, opens the store,
// builds the broker's provider chain and the core, and holds the command
// line. It is the only package that sees both the core and the broker.
package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/shelldon/shelldon/internal/broker"
	"github.com/shelldon/shelldon/internal/broker/anthropic"
	"github.com/shelldon/shelldon/internal/broker/openai"
	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/childproc"
	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/hidden"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/redact"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/skill"
)

// File names inside the home.
const (
	dbFile       = "shelldon.db"
	tokenFile    = "api_token"
	historyFile  = "chat_history"
	workspaceDir = "workspace"
)

// App is a running shelldon: config, store, providers and core.
type App struct {
	Config    *config.Config
	Store     *store.Store
	Core      *core.Core   // nil in an App opened ForReading
	Reader    *core.Reader // core's read side, in every mode
	Log       *slog.Logger
	Redactor  *liveRedactor
	Providers []provider.Provider
	Sandbox   *sandbox.Runner
	Tier      sandbox.Tier

	environ  []string
	model    *liveModel
	skillLib *skill.Library    // the skills: in the daemon, the library its turns and promotions use
	warm     *core.WarmSpawner // the worker started ahead (agent.warm_worker), or nil
	// background is the work the App started that Close waits for (the
	// python gate's cache); bgMu guards adding to it against Close.
	background sync.WaitGroup
	bgMu       sync.Mutex
	closing    bool
	oneShot    bool       // OneShot: no background work
	cfgMu      sync.Mutex // guards Config and Providers across live reloads
	// settingsMu serializes the changes to the owner's files (the
	// settings API, an approved update_config): each is prepared from
	// the files and written whole, one at a time.
	settingsMu sync.Mutex
	// gitMu serializes the daemon's use of its git mirrors (gitmirror.go):
	// each use rewrites a mirror's configuration first.
	gitMu sync.Mutex
	// exe is the shelldon binary the sandbox helper and git's relay run
	// from (gitremote.Jail).
	exe       string
	onToken   func(token string) // the API takes a new token (OnAPIToken)
	sched     *scheduleDesk      // the schedules (schedules.go), made once by schedules()
	schedOnce sync.Once
}

// Mode says what a command needs of the App.
type Mode int

const (
	// ForDaemon is everything, and the daemon's duties at start: turns a
	// crash left running are closed (serve, and chat, which is its own
	// daemon).
	ForDaemon Mode = iota
	// ForTurns is everything a turn needs, without recovering turns: a
	// command that runs turns beside a daemon (approvals approve) must not
	// close the daemon's turns in flight.
	ForTurns
	// ForReading is the config, the store and core's read side over the
	// tools (App.Reader; App.Core is nil): no sandbox probe, no provider,
	// no recovery, no turns. It is what the commands that only read
	// (audit, approvals list and show, tools list and show) open, so they
	// are quick and never touch the daemon's work.
	ForReading
)

// executable is the shelldon binary the sandbox helper and the workers run
// as; tests that run turns in-process point it at a binary built without
// the race detector (testbin), whose shadow memory does not fit under a
// worker's limits.
var executable = core.Executable

// Open loads the config of home and starts everything a turn needs, as a
// daemon does (ForDaemon).
func Open(ctx context.Context, home string, environ []string, logw io.Writer, level slog.Level) (*App, error) {
	return OpenFor(ctx, ForDaemon, home, environ, logw, level)
}

// OpenFor loads the config of home and opens what mode needs.
func OpenFor(ctx context.Context, mode Mode, home string, environ []string, logw io.Writer, level slog.Level) (*App, error) {
	cfg, err := config.Load(home, environ)
	if err != nil {
		return nil, err
	}
	red := &liveRedactor{}
	red.set(redact.New(cfg.Secrets()...))
	if level == 0 {
		level = parseLevel(cfg.Log.Level)
	}
	log := slog.New(newLogHandler(logw, cfg.Log.Format, level, red))
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return nil, fmt.Errorf("create home %s: %w", cfg.Home, err)
	}
	if err := os.MkdirAll(cfg.Workspace, 0o700); err != nil {
		return nil, fmt.Errorf("create workspace %s: %w", cfg.Workspace, err)
	}
	if mode != ForReading {
		if err := checkWorkspaceReach(cfg); err != nil {
			return nil, err
		}
	}
	st, err := store.Open(ctx, cfg.Path(dbFile))
	if err != nil {
		return nil, err
	}
	if mode == ForDaemon {
		if n, err := st.RecoverRunning(ctx, timeNow()); err != nil {
			st.Close()
			return nil, err
		} else if n > 0 {
			log.Warn("turns interrupted by a crash were closed", "count", n)
		}
	}
	if mode == ForReading {
		return openReading(cfg, st, log, red, environ)
	}
	providers, err := buildProviders(cfg)
	if err != nil {
		st.Close()
		return nil, err
	}
	model := &liveModel{}
	model.set(broker.NewChain(providers, broker.Options{Logger: log}))
	exe, err := executable()
	if err != nil {
		st.Close()
		return nil, err
	}
	runner, err := sandbox.NewRunner(exe)
	if err != nil {
		st.Close()
		return nil, err
	}
	tier := runner.Probe(ctx)
	reportTier(log, tier, cfg.Sandbox.AllowDegraded)
	a := &App{Store: st, Log: log, Redactor: red, Sandbox: runner, Tier: tier, environ: environ, model: model, exe: exe}
	a.setConfig(cfg, providers)
	tools, skills, err := openLibraries(cfg)
	if err != nil {
		st.Close()
		return nil, err
	}
	a.skillLib = skills
	pyCache := a.pyGateCache(cfg)
	readOnly := []string{tools.LiveDir(), pyCache}
	if mirrors, err := ensureGitMirrors(cfg); err == nil { // gitmirror.go
		readOnly = append(readOnly, mirrors)
	} else {
		log.Warn("git fetch, pull and push are unavailable", "err", err)
	}
	var spawner core.Spawner = &core.SandboxSpawner{Runner: runner, Path: exe, Args: childproc.WorkerArgs,
		Env: core.WorkerEnv(environ), Workspace: cfg.Workspace, ReadOnly: readOnly, Logger: log}
	if runtime.GOOS != "linux" {
		log.Warn("no sandbox on " + runtime.GOOS + ": each turn's worker runs as a plain child process, and tools that run model-chosen code refuse to run")
		spawner = &core.ExecSpawner{Path: exe, Args: childproc.WorkerArgs, Env: core.WorkerEnv(environ), Logger: log}
	}
	if mode == ForDaemon && pyCache != "" {
		spawner = a.buildPyGateOnFirstSpawn(ctx, spawner, pyCache)
	}
	if mode == ForDaemon && *cfg.Agent.WarmWorker {
		// It starts nothing ahead until Warm (after harden).
		a.warm = &core.WarmSpawner{Spawner: spawner, Logger: log}
		spawner = a.warm
	}
	c, err := core.New(core.Options{
		Store:   st,
		Model:   model,
		Spawner: spawner,
		Limits: contracts.Limits{
			MaxToolCalls: cfg.Agent.MaxToolCalls,
			Budget:       cfg.Agent.TurnBudget.D(),
			Reserve:      cfg.Agent.Reserve.D(),
			MaxTokens:    cfg.Provider.MaxTokens,
		},
		HistoryChars:  cfg.Agent.HistoryChars,
		ApprovalTTL:   cfg.Approvals.TTL.D(),
		AllowDegraded: cfg.Sandbox.AllowDegraded,
		MinFreeDisk:   uint64(cfg.Sandbox.MinFreeDisk),
		MemoryBytes:   int(cfg.Memory.ContextBytes),
		Describe:      describer{workspace: cfg.Workspace, home: cfg.Home, environ: environ, lan: a.lan, remotes: a.remotes, git: a.sandboxGit}.describe,
		Configure:     a.configure,
		Schedules:     a.schedules(),
		Tools:         tools,
		PyGateCache:   pyCache,
		Skills:        skillStore{lib: skills, log: log},
		SandboxLayers: tier.InPlace(),
		Strikes:       cfg.Selfcode.Strikes,
		Budget:        new(cfg.Budgets()),
		Providers:     providerNames(cfg),
		LANHosts:      cfg.LANHosts(),
		GitRemotes:    gitRemotes(cfg),
		GitFetch:      a.gitFetch,
		GitPush:       a.gitPush,
		OnNetwork:     a.onNetwork,
		System:        cfg.Agent.SystemPrompt,
		Workspace:     cfg.Workspace,
		Workers:       cfg.Agent.Workers,
		Redact:        func(s string) string { return red.get().JSONArgs(s) },
		Logger:        log,
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	a.Core, a.Reader = c, c.Reader
	if mode == ForDaemon {
		if n, err := reviewAgentSkills(ctx, cfg, c, skills); err != nil {
			log.Error("review the skills the agent wrote", "err", err)
		} else if n > 0 {
			log.Warn("skills the agent wrote before its drafts needed your approval are waiting for it (shelldon approvals list)", "count", n)
		}
	}
	return a, nil
}

// pyGateCache is the directory of the Python gate's compiled scripts
// (toolbox.BuildPyGateCache), which every sandbox sees read-only; "" when
// it cannot be made. The directory is made here; a daemon builds the cache
// when it starts its first worker (buildPyGateOnFirstSpawn).
func (a *App) pyGateCache(cfg *config.Config) string {
	dir := cfg.Path(filepath.Join("cache", "pygate"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		a.Log.Warn("the python gate's cache", "err", err)
		return ""
	}
	return dir
}

// openLibraries opens the self-coded tools' directory and the skills.
func openLibraries(cfg *config.Config) (*selfcode.Dir, *skill.Library, error) {
	tools, err := selfcode.Open(cfg.Path("tools"), nil)
	if err != nil {
		return nil, nil, err
	}
	skills, err := openSkills(cfg)
	if err != nil {
		return nil, nil, err
	}
	return tools, skills, nil
}

// openSkills opens the home's skills and the bundled ones, within the
// owner's limits (skills.max_skill_bytes, skills.max_file_bytes).
func openSkills(cfg *config.Config) (*skill.Library, error) {
	return skill.OpenWith(cfg.Path("skills"), bundled(), skill.Limits{
		SkillBytes: int64(cfg.Skills.MaxSkillBytes),
		FileBytes:  int64(cfg.Skills.MaxFileBytes),
	})
}

// openReading finishes an App opened ForReading: core's read side over the
// store, the tools and the skills, with no model and no worker.
func openReading(cfg *config.Config, st *store.Store, log *slog.Logger, red *liveRedactor, environ []string) (*App, error) {
	a := &App{Store: st, Log: log, Redactor: red, environ: environ}
	a.setConfig(cfg, nil)
	tools, skills, err := openLibraries(cfg)
	if err != nil {
		st.Close()
		return nil, err
	}
	a.skillLib = skills
	r, err := core.NewReader(core.Options{
		Store: st, Tools: tools, Skills: skillStore{lib: skills, log: log}, ApprovalTTL: cfg.Approvals.TTL.D(), Strikes: cfg.Selfcode.Strikes,
		Redact: func(s string) string { return red.get().JSONArgs(s) },
		Logger: log,
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	a.Reader = r
	return a, nil
}

// reportTier logs what the sandbox achieved on this kernel, loudly when a
// required layer is missing.
func reportTier(log *slog.Logger, tier sandbox.Tier, allowDegraded bool) {
	switch {
	case tier.Full():
		log.Info("sandbox", "tier", tier.String())
	case allowDegraded:
		log.Error("SANDBOX DEGRADED: code the model chooses will run with fewer layers than required, because sandbox.allow_degraded is true",
			"tier", tier.String())
	default:
		log.Warn("sandbox degraded: run_shell, git, the gate and self-coded tools will refuse to run (set sandbox.allow_degraded: true to allow them)",
			"tier", tier.String())
	}
}

// Close releases what Open took.
func (a *App) Close() error {
	a.bgMu.Lock()
	a.closing = true
	a.bgMu.Unlock()
	a.background.Wait()
	if a.Core != nil {
		a.Core.Close()
	}
	a.stopWarm()
	return a.Store.Close()
}

// Warm starts keeping the next turn's worker started ahead, from the next
// turn on, when agent.warm_worker is on: the daemon calls it once it is
// hardened and ready to serve; a command that runs one turn never does.
func (a *App) Warm() {
	if a.warm != nil {
		a.warm.Warm()
	}
}

// stopWarm kills the worker waiting, if any, and starts no more.
func (a *App) stopWarm() {
	if a.warm != nil {
		a.warm.Close()
	}
}

// buildProviders makes one adapter per configured provider, in order, for
// a config the owner wrote (at start, doctor, the settings API): each key
// is bound where that config points it.
func buildProviders(cfg *config.Config) ([]provider.Provider, error) {
	keys, err := keyBinding(cfg)
	if err != nil {
		return nil, err
	}
	return buildBoundProviders(cfg, keys)
}

// keyBinding is where each key of owner may go: the well-known variables
// to their provider's host, and every (api_key_env, base_url) pair owner's
// chain names. owner must be a config the owner wrote, or one loaded
// before an agent's change, never the change itself (see App.configure).
func keyBinding(owner *config.Config) (*provider.KeyBinding, error) {
	keys := &provider.KeyBinding{}
	for _, p := range owner.Providers() {
		if err := keys.Bind(p.APIKeyEnv, p.BaseURL); err != nil {
			return nil, fmt.Errorf("provider %q: %w", p.Name, err)
		}
	}
	return keys, nil
}

// buildBoundProviders makes one adapter per provider of cfg, in order; the
// broker sends each key only to the origins keys binds it to, and a
// provider whose base_url is not one of them is refused here already.
func buildBoundProviders(cfg *config.Config, keys *provider.KeyBinding) ([]provider.Provider, error) {
	var out []provider.Provider
	for _, p := range cfg.Providers() {
		key := cfg.APIKey(p)
		if key != "" && !keys.Allows(p.APIKeyEnv, p.BaseURL) {
			return nil, fmt.Errorf("provider %q: the key in %s is not sent to %s, which the owner's config does not pair with it; the owner sets that with %s",
				p.Name, p.APIKeyEnv, config.DescribeHost(p.BaseURL), contracts.OwnerConfigSet)
		}
		pc := provider.Config{
			Name: p.Name, Kind: p.Kind, BaseURL: p.BaseURL, Model: p.Model, APIKey: key,
			KeyOrigins: keys.Origins(p.APIKeyEnv),
			Stream:     p.Stream == nil || *p.Stream, Timeout: p.Timeout.D(), MaxTokens: p.MaxTokens,
		}
		switch p.Kind {
		case config.KindAnthropic:
			out = append(out, anthropic.New(pc))
		case config.KindOpenAI:
			out = append(out, openai.New(pc))
		default:
			return nil, fmt.Errorf("provider %q: unknown kind %q", p.Name, p.Kind)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no provider configured")
	}
	return out, nil
}

// APIToken returns the bearer token of the HTTP API: SHELLDON_API_TOKEN when
// set, else the token file in home, generated (mode 0600) on first use.
func APIToken(cfg *config.Config) (token, source string, err error) {
	if t := cfg.Secret("SHELLDON_API_TOKEN"); t != "" {
		return t, "SHELLDON_API_TOKEN", nil
	}
	path := cfg.Path(tokenFile)
	if data, err := os.ReadFile(path); err == nil {
		if t := strings.TrimSpace(string(data)); t != "" {
			return t, path, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", "", fmt.Errorf("read API token: %w", err)
	}
	var b [32]byte
	rand.Read(b[:])
	t := hex.EncodeToString(b[:])
	if err := config.WriteFileAtomic(path, []byte(t+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("write API token: %w", err)
	}
	return t, path, nil
}

func parseLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// redactingHandler removes secrets from every log message and attribute,
// and makes them inert for the terminal or journal that shows the log.
// slog's text handler already quotes a message or value that holds a
// control, bidirectional, zero-width or other non-printing character or
// invalid UTF-8, and escapes those (strconv.Quote); what it passes raw are
// the invisible characters Unicode counts as printable (the Hangul
// fillers, the combining grapheme joiner), so a value holding one is
// escaped whole here (inertLog). The JSON handler escapes less, so under it
// inertJSON (logformat.go) escapes more.
type redactingHandler struct {
	slog.Handler
	red   *liveRedactor
	inert func(string) string // inertLog, or inertJSON under the JSON handler
}

func (h *redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	nr := slog.NewRecord(r.Time, r.Level, h.inert(h.red.get().String(r.Message)), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(h.redactAttr(a))
		return true
	})
	return h.Handler.Handle(ctx, nr)
}

func (h *redactingHandler) redactAttr(a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	switch a.Value.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.inert(h.red.get().String(a.Value.String())))
	case slog.KindGroup:
		attrs := a.Value.Group()
		out := make([]any, len(attrs))
		for i, g := range attrs {
			out[i] = h.redactAttr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		return slog.String(a.Key, h.inert(h.red.get().String(fmt.Sprint(a.Value.Any()))))
	}
	return a
}

// inertLog escapes s whole (inert.Line) when it holds a character that
// hides text and that slog's text handler would print raw; anything else
// slog quotes and escapes itself.
func inertLog(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsPrint(r) && hidden.Describe(r) != "" }) {
		return inert.Line(s)
	}
	return s
}

func (h *redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = h.redactAttr(a)
	}
	return &redactingHandler{Handler: h.Handler.WithAttrs(out), red: h.red, inert: h.inert}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{Handler: h.Handler.WithGroup(name), red: h.red, inert: h.inert}
}

// homeDir resolves the home from a flag value or the environment.
func homeDir(flag string, environ []string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	return config.DefaultHome(environ)
}

// liveRedactor is the redactor in force; a config change that brings new
// secrets swaps it.
type liveRedactor struct {
	p atomic.Pointer[redact.Redactor]
}

func (l *liveRedactor) set(r *redact.Redactor) { l.p.Store(r) }
func (l *liveRedactor) get() *redact.Redactor  { return l.p.Load() }
