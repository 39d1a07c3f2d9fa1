package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/peterh/liner"
	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/transport/cli"
)

// providerPresets are the choices `shelldon init` offers.
var providerPresets = map[string]struct{ kind, baseURL, model, keyEnv string }{
	"anthropic": {config.KindAnthropic, "https://api.anthropic.com", "claude-sonnet-4-5", "ANTHROPIC_API_KEY"},
	"openai":    {config.KindOpenAI, "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY"},
	"ollama":    {config.KindOpenAI, "http://127.0.0.1:11434/v1", "qwen2.5:3b", ""},
}

// initFlags are the flags of `shelldon init`.
type initFlags struct {
	provider, model, baseURL, keyEnv string
	keyEnvSet                        bool // --api-key-env was given, maybe empty
	noKey, noTest, force             bool
}

func (e cmdEnv) initCmd() *cobra.Command {
	var f initFlags
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create shelldon's home with a commented config.yaml, and test the provider",
		Long: "Create shelldon's home (mode 0700) with a commented config.yaml, a workspace, and optionally\n" +
			"your API key in .env (mode 0600), then test the provider with one short request.\n" +
			"On a terminal it asks what the flags leave open; otherwise it takes the defaults (the provider\n" +
			"whose key is in the environment, else anthropic) and says how to add a missing key.\n" +
			"Providers: anthropic, openai, ollama, or any OpenAI-compatible server (vLLM, llama.cpp,\n" +
			"LM Studio) with --provider openai --base-url. A server on this machine (localhost, 127.0.0.1,\n" +
			"::1) gets no key unless --api-key-env names one; --no-key says so for any other.",
		Example: "  shelldon init\n" +
			"  shelldon init --provider anthropic\n" +
			"  shelldon init --provider ollama --model llama3.2\n" +
			"  shelldon init --provider openai --base-url http://127.0.0.1:8080/v1 --model local",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := e.home()
			if err != nil {
				return err
			}
			f.keyEnvSet = cmd.Flags().Changed("api-key-env")
			s := &initSession{
				home: home, environ: e.environ, out: e.stdout, sh: shelldonFor(home, e.environ),
				interactive: cli.IsTerminal(e.stdin), in: bufio.NewReader(e.stdin), readSecret: readSecret,
			}
			return s.run(cmd.Context(), f)
		},
	}
	cmd.Flags().StringVar(&f.provider, "provider", "", "anthropic, openai or ollama (default: the one whose key is set, else anthropic)")
	cmd.Flags().StringVar(&f.model, "model", "", "model name (default per provider)")
	cmd.Flags().StringVar(&f.baseURL, "base-url", "", "API base URL (default per provider; any OpenAI-compatible server, like http://127.0.0.1:8080/v1)")
	cmd.Flags().StringVar(&f.keyEnv, "api-key-env", "", "name of the variable that holds the API key")
	cmd.Flags().BoolVar(&f.noKey, "no-key", false, "the server needs no API key (a local or private OpenAI-compatible server)")
	cmd.Flags().BoolVar(&f.noTest, "no-test", false, "do not test the provider with a short request")
	cmd.Flags().BoolVar(&f.force, "force", false, "overwrite an existing config.yaml")
	return cmd
}

// initSession is one run of `shelldon init`.
type initSession struct {
	home    string
	environ []string
	out     io.Writer
	sh      string // the command line that runs shelldon on this home

	// interactive: ask what the flags leave open, reading lines from in and
	// the key with readSecret; else take the defaults.
	interactive bool
	in          *bufio.Reader
	readSecret  func(prompt string) (string, error)
}

// usageError ends init with the status of bad command-line usage.
func usageError(format string, args ...any) error {
	return exitError{code: exitConfig, msg: "shelldon: " + fmt.Sprintf(format, args...)}
}

func (s *initSession) run(ctx context.Context, f initFlags) error {
	cfgPath := filepath.Join(s.home, config.FileConfig)
	if _, err := os.Stat(cfgPath); err == nil && !f.force {
		return fmt.Errorf("%s already exists; edit it, or pass --force to overwrite it", cfgPath)
	}
	if f.noKey && f.keyEnv != "" {
		return usageError("--no-key and --api-key-env %s contradict each other: pass one of them", inert.Name(f.keyEnv))
	}
	prov, err := s.chooseProvider(f.provider)
	if err != nil {
		return err
	}
	p := providerPresets[prov]
	baseURL, model := f.baseURL, f.model
	if baseURL == "" {
		baseURL = p.baseURL
		if p.kind == config.KindOpenAI {
			if baseURL, err = s.ask("Base URL of the server (for any OpenAI-compatible one, like http://127.0.0.1:8080/v1)", p.baseURL, checkBaseURL); err != nil {
				return err
			}
		}
	}
	if model == "" {
		if model, err = s.ask("Model", p.model, nil); err != nil {
			return err
		}
	}
	keyEnv, err := s.chooseKeyEnv(f, prov, baseURL)
	if err != nil {
		return err
	}

	// Everything is asked and checked before anything is written: a
	// refused flag or key leaves the home as it was.
	files, err := config.PrepareInit(s.home, s.environ, p.kind, model, baseURL, keyEnv, nil)
	if err != nil {
		return fmt.Errorf("nothing written: %w", err)
	}
	pc := files.Config().Provider
	if keyEnv == "" && pc.APIKeyEnv != "" && (f.noKey || f.keyEnvSet) {
		return usageError("nothing written: %s at %s always needs a key (in %s)", pc.Kind, config.DescribeHost(pc.BaseURL), pc.APIKeyEnv)
	}
	missing := pc.APIKeyEnv != "" && files.Config().Secret(pc.APIKeyEnv) == ""
	saved := false
	if missing && s.interactive {
		key, err := s.readSecret(fmt.Sprintf("Paste your %s (stored in %s/.env, mode 0600; empty to skip): ", pc.APIKeyEnv, s.home))
		if err != nil {
			return err
		}
		if key != "" {
			if files, err = config.PrepareInit(s.home, s.environ, p.kind, model, baseURL, keyEnv, map[string]string{pc.APIKeyEnv: key}); err != nil {
				return fmt.Errorf("nothing written: %w", err)
			}
			missing, saved = false, true
		}
	}
	if err := files.Write(workspaceDir); err != nil {
		return err
	}

	fmt.Fprintf(s.out, "Wrote %s (provider %s, model %s at %s).\n", cfgPath, prov, inert.Name(pc.Model), pc.BaseURL)
	if _, err := os.Stat(filepath.Join(s.home, config.FileOverlay)); err == nil {
		fmt.Fprintf(s.out, "Note: %s exists; its settings win over config.yaml.\n", filepath.Join(s.home, config.FileOverlay))
	}
	switch {
	case saved:
		fmt.Fprintf(s.out, "Saved %s in %s/.env (mode 0600).\n", pc.APIKeyEnv, s.home)
	case pc.APIKeyEnv == "":
		fmt.Fprintf(s.out, "No API key: the server at %s is used without one.\n", hostPort(pc.BaseURL))
	case missing:
		s.sayAddKey(pc, prov)
	}
	switch {
	case f.noTest:
		fmt.Fprintf(s.out, "Not tested (--no-test): `%s doctor` checks the provider.\n", s.sh)
	case missing:
		fmt.Fprintf(s.out, "Not tested without the key: once it is stored, `%s doctor` checks the provider.\n", s.sh)
	default:
		s.testProvider(ctx)
	}
	fmt.Fprintf(s.out, "Next: `%s chat` starts a chat; `%s doctor` checks the whole setup.\n", s.sh, s.sh)
	return nil
}

// chooseProvider is the provider named by the flag, else asked for on a
// terminal, else the one whose key is in the environment, else anthropic.
func (s *initSession) chooseProvider(flag string) (string, error) {
	if flag != "" {
		prov := strings.ToLower(strings.TrimSpace(flag))
		if _, ok := providerPresets[prov]; !ok {
			return "", usageError("unknown provider %s; choose anthropic, openai or ollama (ollama and openai with --base-url cover any OpenAI-compatible server)", inert.Name(flag))
		}
		return prov, nil
	}
	def, why := "anthropic", "no --provider given and neither ANTHROPIC_API_KEY nor OPENAI_API_KEY is set"
	for _, name := range []string{"anthropic", "openai"} {
		if env := providerPresets[name].keyEnv; lookupEnv(s.environ, env) != "" {
			def, why = name, env+" is set"
			break
		}
	}
	if s.interactive {
		prov, err := s.ask("Provider: anthropic, openai (or any OpenAI-compatible server), ollama", def, func(v string) string {
			if _, ok := providerPresets[strings.ToLower(v)]; !ok {
				return "choose anthropic, openai or ollama"
			}
			return ""
		})
		return strings.ToLower(prov), err
	}
	fmt.Fprintf(s.out, "Provider %s: %s (another: `%s init --force --provider anthropic|openai|ollama`).\n", def, why, s.sh)
	return def, nil
}

// chooseKeyEnv is the variable that holds the key, "" for none: none with
// --no-key; the flag's; none for a server on this machine; the preset's,
// unless the owner, asked on a terminal, says the server needs none.
func (s *initSession) chooseKeyEnv(f initFlags, prov, baseURL string) (string, error) {
	p := providerPresets[prov]
	switch {
	case f.noKey:
		return "", nil
	case f.keyEnvSet:
		return f.keyEnv, nil
	case p.kind != config.KindOpenAI || p.keyEnv == "":
		return p.keyEnv, nil
	case isLoopback(baseURL):
		return "", nil
	case !s.interactive || sameHost(baseURL, p.baseURL):
		return p.keyEnv, nil
	}
	need, err := s.ask(fmt.Sprintf("Does the server at %s need an API key? [y/n]", hostPort(baseURL)), "y", func(v string) string {
		if v = strings.ToLower(v); v != "y" && v != "yes" && v != "n" && v != "no" {
			return "answer y or n"
		}
		return ""
	})
	if err != nil || strings.HasPrefix(strings.ToLower(need), "n") {
		return "", err
	}
	return p.keyEnv, nil
}

// sayAddKey tells the owner how to add the missing key of pc.
func (s *initSession) sayAddKey(pc config.Provider, prov string) {
	env := filepath.Join(s.home, config.FileEnv)
	fmt.Fprintf(s.out, "%s is not set. Store your key with\n    %s config set-secret %s\n", pc.APIKeyEnv, s.sh, pc.APIKeyEnv)
	fmt.Fprintf(s.out, "  (it asks for the key, or reads it from standard input), or add the line\n    %s=<your key>\n  to %s (mode 0600), or set %s in the environment.\n",
		pc.APIKeyEnv, env, pc.APIKeyEnv)
	if pc.Kind == config.KindOpenAI && !sameHost(pc.BaseURL, providerPresets["openai"].baseURL) {
		fmt.Fprintf(s.out, "If the server needs no key, run init again with --force --no-key.\n")
	}
}

// testProvider sends the written config's provider the test request and
// says how it went: the reply, or the failure with what to do about it.
// A failure does not fail init: the config is written.
func (s *initSession) testProvider(ctx context.Context) {
	fail := func(err error, fix string) {
		fmt.Fprintf(s.out, "✗ The test request failed: %s\n", inert.Line(err.Error()))
		if fix != "" {
			fmt.Fprintf(s.out, "  %s\n", fix)
		}
		fmt.Fprintf(s.out, "  The config is written; after the fix, `%s doctor` checks again (or `%s init --force` starts over).\n", s.sh, s.sh)
	}
	cfg, err := config.Load(s.home, s.environ)
	if err != nil {
		fail(err, "")
		return
	}
	providers, err := buildProviders(cfg)
	if err != nil {
		fail(err, "")
		return
	}
	pc := cfg.Providers()[0]
	fmt.Fprintf(s.out, "Testing the provider with one short request to %s (--no-test skips this)...\n", hostPort(pc.BaseURL))
	tctx, cancel := context.WithTimeout(ctx, turnTimeout(pc))
	defer cancel()
	start := time.Now()
	reply, err := testTurn(tctx, providers[0])
	if err != nil {
		fail(err, providerFix(ctx, cfg, pc, err, s.sh))
		return
	}
	if reply == "" {
		reply = "(an empty reply)"
	}
	fmt.Fprintf(s.out, "✓ %s answered in %s: %s\n", inert.Name(pc.Model), time.Since(start).Round(time.Millisecond), inert.Short(reply, 60))
}

// ask asks on the terminal for a value, showing def, which an empty
// answer (or the end of input) keeps; check, if set, says what is wrong
// with an answer ("" for nothing), and the question is asked again, three
// times at most. Off a terminal it is def.
func (s *initSession) ask(question, def string, check func(string) string) (string, error) {
	if !s.interactive {
		return def, nil
	}
	for range 3 {
		fmt.Fprintf(s.out, "%s [%s]: ", question, def)
		line, err := s.in.ReadString('\n')
		v := strings.TrimSpace(line)
		if v == "" {
			if err != nil {
				fmt.Fprintln(s.out)
			}
			return def, nil
		}
		problem := ""
		if check != nil {
			problem = check(v)
		}
		if problem == "" {
			return v, nil
		}
		fmt.Fprintf(s.out, "%s: %s\n", inert.Short(v, 60), problem)
		if err != nil {
			break
		}
	}
	return "", usageError("nothing written: no usable answer to %q", question)
}

// checkBaseURL says what is wrong with a base URL typed at the prompt ("",
// nothing): the config checks the rest.
func checkBaseURL(v string) string {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "not an http or https URL (like http://127.0.0.1:8080/v1)"
	}
	return ""
}

// sameHost reports whether two URLs name the same host.
func sameHost(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	return errA == nil && errB == nil && strings.EqualFold(ua.Hostname(), ub.Hostname())
}

// shelldonFor is the command line that runs shelldon on home: "shelldon"
// when home is the default one, else with --home.
func shelldonFor(home string, environ []string) string {
	if def, err := config.DefaultHome(environ); err == nil && filepath.Clean(def) == filepath.Clean(home) {
		return "shelldon"
	}
	return "shelldon --home " + shellQuote(home)
}

// shellQuote quotes s for a POSIX shell, when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func lookupEnv(environ []string, name string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// readSecret reads a line from the terminal without echoing it.
func readSecret(prompt string) (string, error) {
	ln := liner.NewLiner()
	defer ln.Close()
	s, err := ln.PasswordPrompt(prompt)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read secret: %w", err)
	}
	return strings.TrimSpace(s), nil
}
