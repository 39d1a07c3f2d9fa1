package app

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/peterh/liner"
	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/transport/cli"
)

// providerPresets are the choices `shelldon init` offers.
var providerPresets = map[string]struct{ kind, baseURL, model, keyEnv string }{
	"anthropic": {config.KindAnthropic, "https://api.anthropic.com", "claude-sonnet-4-5", "ANTHROPIC_API_KEY"},
	"openai":    {config.KindOpenAI, "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY"},
	"ollama":    {config.KindOpenAI, "http://127.0.0.1:11434/v1", "qwen2.5:3b", ""},
}

func (e cmdEnv) initCmd() *cobra.Command {
	var prov, model, baseURL, keyEnv string
	var force bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create shelldon's home with a commented config.yaml",
		Long: "Create shelldon's home (mode 0700) with a commented config.yaml, a workspace, and optionally\n" +
			"your API key in .env (mode 0600). Asks for the provider unless --provider is given.\n" +
			"Providers: anthropic, openai, ollama (or any OpenAI-compatible server with --base-url).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := e.home()
			if err != nil {
				return err
			}
			cfgPath := filepath.Join(home, "config.yaml")
			if _, err := os.Stat(cfgPath); err == nil && !force {
				return fmt.Errorf("%s already exists; edit it, or pass --force to overwrite it", cfgPath)
			}
			interactive := cli.IsTerminal(e.stdin)
			in := bufio.NewReader(e.stdin)
			if prov == "" {
				if !interactive {
					return errors.New("which provider? pass --provider anthropic|openai|ollama")
				}
				fmt.Fprint(e.stdout, "Provider [anthropic/openai/ollama] (anthropic): ")
				line, _ := in.ReadString('\n')
				prov = strings.ToLower(strings.TrimSpace(line))
				if prov == "" {
					prov = "anthropic"
				}
			}
			p, ok := providerPresets[prov]
			if !ok {
				return fmt.Errorf("unknown provider %q; choose anthropic, openai or ollama", prov)
			}
			if model == "" {
				model = p.model
			}
			if baseURL == "" {
				baseURL = p.baseURL
			}
			if !cmd.Flags().Changed("api-key-env") {
				keyEnv = p.keyEnv
			}
			// Everything is asked and checked before anything is written:
			// a refused flag or key leaves the home as it was.
			secrets := map[string]string{}
			askKey := keyEnv != "" && lookupEnv(e.environ, keyEnv) == ""
			if askKey && interactive {
				key, err := readSecret(fmt.Sprintf("Paste your %s (stored in %s/.env, mode 0600; empty to skip): ", keyEnv, home))
				if err != nil {
					return err
				}
				if key != "" {
					secrets[keyEnv] = key
				}
			}
			files, err := config.PrepareInit(home, e.environ, p.kind, model, baseURL, keyEnv, secrets)
			if err != nil {
				return fmt.Errorf("nothing written: %w", err)
			}
			if err := files.Write(workspaceDir); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Wrote %s (provider %s, model %s).\n", cfgPath, prov, model)
			switch {
			case len(secrets) > 0:
				fmt.Fprintf(e.stdout, "Saved %s in %s/.env.\n", keyEnv, home)
			case askKey:
				fmt.Fprintf(e.stdout, "Set %s in your environment or in %s/.env (mode 0600): shelldon config set-secret %s\n", keyEnv, home, keyEnv)
			}
			fmt.Fprintln(e.stdout, "Next: `shelldon doctor` checks the setup; `shelldon chat` starts a chat.")
			return nil
		},
	}
	cmd.Flags().StringVar(&prov, "provider", "", "anthropic, openai or ollama")
	cmd.Flags().StringVar(&model, "model", "", "model name (default per provider)")
	cmd.Flags().StringVar(&baseURL, "base-url", "", "API base URL (default per provider; any OpenAI-compatible server)")
	cmd.Flags().StringVar(&keyEnv, "api-key-env", "", "name of the variable that holds the API key")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing config.yaml")
	return cmd
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
