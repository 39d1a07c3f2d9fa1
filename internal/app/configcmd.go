package app

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/transport/cli"
)

func (e cmdEnv) configCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "The owner's settings and secrets"}
	setSecret := &cobra.Command{
		Use:   "set-secret NAME",
		Short: "Store a secret (an API key, the bot token) in .env, mode 0600",
		Long: "Store a secret in $SHELLDON_HOME/.env (mode 0600), replacing its old value. The value is read\n" +
			"from the terminal without echo (or from the first line of standard input), never from the\n" +
			"command line, so it stays out of shell history and process lists. It is never printed.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := e.home()
			if err != nil {
				return err
			}
			var value string
			if cli.IsTerminal(e.stdin) {
				if value, err = readSecret(fmt.Sprintf("Value of %s (not shown): ", args[0])); err != nil {
					return err
				}
			} else {
				line, _ := bufio.NewReader(e.stdin).ReadString('\n')
				value = strings.TrimRight(line, "\r\n")
			}
			// A running daemon writes it and applies it at once (the
			// settings API, which never echoes a value); with none, or a
			// config that does not load (so no daemon to find), it is
			// written here.
			err = errNoDaemon
			if cfg, cerr := config.Load(home, e.environ); cerr == nil {
				var answer struct{ Changed []string }
				err = callDaemon(cmd.Context(), cfg, http.MethodPost, "/api/settings", map[string]any{"secrets": map[string]string{args[0]: value}}, &answer)
			}
			name := inert.Name(args[0])
			switch {
			case errors.Is(err, errNoDaemon):
				if err := config.SetSecret(home, e.environ, args[0], value); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "Saved %s in %s/.env. A running daemon picks it up at the next settings change or restart.\n", name, inert.Line(home))
			case err != nil:
				return err
			default:
				fmt.Fprintf(e.stdout, "Saved %s in %s/.env and applied by the running daemon.\n", name, inert.Line(home))
				if args[0] == config.EnvAPIToken {
					fmt.Fprintln(e.stdout, "The daemon serves the API with the new token from now on; every browser signs in again.")
				}
			}
			return nil
		},
	}
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the effective config (secrets only as set or unset)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.config()
			if err != nil {
				return err
			}
			for _, line := range flatLines("", cfg.Effective()) {
				fmt.Fprintln(e.stdout, line)
			}
			for name, set := range cfg.SecretNames() {
				fmt.Fprintf(e.stdout, "secret %s: %s\n", name, map[bool]string{true: "set", false: "unset"}[set])
			}
			return nil
		},
	}
	cmd.AddCommand(setSecret, e.configSetCmd(), show, e.configUndoCmd("revert KEY...", "revert"), e.configUndoCmd("clear-secret NAME...", "clear"))
	return cmd
}

// configUndoCmd is `shelldon config revert KEY...` (keys out of
// config.local.yaml, so config.yaml's value or the default applies again)
// or `shelldon config clear-secret NAME...` (variables out of .env), the
// settings page's Revert and Clear buttons: through a running daemon's
// settings API when there is one, else checked and written here.
func (e cmdEnv) configUndoCmd(use, what string) *cobra.Command {
	short, long := "Take keys out of config.local.yaml: config.yaml's value (or the default) applies again",
		"Take each KEY (dotted, as `shelldon config show` prints it; a list is reverted whole) out of\n"+
			"$SHELLDON_HOME/config.local.yaml, where update_config, the settings page and `shelldon config set`\n"+
			"write, after checking that the config is still valid; nothing is written otherwise.\n\n"+
			"Example:\n  shelldon config revert provider.model agent.turn_budget"
	if what == "clear" {
		short, long = "Remove secrets from .env",
			"Remove each variable NAME from $SHELLDON_HOME/.env, after checking that the config still loads\n"+
				"without it (the key a provider of the chain uses cannot be cleared: switch the provider first).\n"+
				"A variable set in shelldon's process environment cannot be cleared here.\n\n"+
				"Example:\n  shelldon config clear-secret GROQ_API_KEY"
	}
	return &cobra.Command{
		Use: use, Short: short, Long: long,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := e.home()
			if err != nil {
				return err
			}
			cfg, err := config.Load(home, e.environ)
			if err != nil {
				return fmt.Errorf("nothing changed: the current config does not load (fix it in config.yaml or config.local.yaml, or see shelldon doctor):\n%w", err)
			}
			ch, body := config.SettingsChange{Revert: args}, map[string]any{"revert": args}
			if what == "clear" {
				ch, body = config.SettingsChange{Clear: args}, map[string]any{"clear_secrets": args}
			}
			// Checked here first, so that a refusal reads the same with a
			// daemon or without.
			o, err := config.PrepareSettings(home, e.environ, ch)
			if err != nil {
				return fmt.Errorf("nothing changed:\n%w", err)
			}
			if _, err := buildProviders(o.After); err != nil {
				return fmt.Errorf("nothing changed: the config would be unusable:\n%w", err)
			}
			var answer struct{ Changed []string }
			err = callDaemon(cmd.Context(), cfg, http.MethodPost, "/api/settings", body, &answer)
			applied := "Applied by the running daemon."
			switch {
			case errors.Is(err, errNoDaemon):
				if err := o.Write(); err != nil {
					return err
				}
				answer.Changed = o.Diff()
				for _, name := range ch.Clear {
					answer.Changed = append(answer.Changed, "secret "+name+": cleared")
				}
				applied = "Written. Restart a running daemon (shelldon serve) to apply it."
			case err != nil:
				return err
			}
			for _, l := range answer.Changed {
				fmt.Fprintln(e.stdout, inert.Line(l))
			}
			fmt.Fprintln(e.stdout, applied)
			return nil
		},
	}
}

// configSetCmd is `shelldon config set KEY VALUE`: the owner's way to set
// any key, endpoints included (the agent's update_config may not), through
// the settings API's validated path (config.PrepareOverlay).
func (e cmdEnv) configSetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set a config key in config.local.yaml, validated first",
		Long: "Set one config key in $SHELLDON_HOME/config.local.yaml (mode 0600; config.yaml is never\n" +
			"rewritten), after checking that the whole config is still valid; nothing is written otherwise.\n" +
			"KEY is dotted; an element of a list is named by its index, one past the end appends one.\n" +
			"VALUE is a YAML value; \"null\" restores the default. Where the model's requests and keys go\n" +
			"(kind, base_url, api_key_env, the fallback list) is yours alone: the agent can only choose\n" +
			"among the providers you configured. Keys themselves go in .env: shelldon config set-secret.\n\n" +
			"Examples:\n" +
			"  shelldon config set provider.base_url https://api.anthropic.com\n" +
			"  shelldon config set provider.api_key_env ANTHROPIC_API_KEY\n" +
			"  shelldon config set fallback[0].base_url http://127.0.0.1:11434/v1\n" +
			"  shelldon config set fallback[1] '{name: groq, kind: openai, base_url: https://api.groq.com/openai/v1, model: llama-3.3-70b-versatile, api_key_env: GROQ_API_KEY}'\n" +
			"  shelldon config set agent.turn_budget 40s",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := e.home()
			if err != nil {
				return err
			}
			cfg, err := config.Load(home, e.environ)
			if err != nil {
				return fmt.Errorf("nothing changed: the current config does not load (fix it in config.yaml or config.local.yaml, or see shelldon doctor):\n%w", err)
			}
			changes, err := config.SettingChange(cfg, args[0], args[1])
			if err != nil {
				return err
			}
			o, err := config.PrepareOverlay(home, e.environ, changes)
			if err != nil {
				return fmt.Errorf("nothing changed: %s would make the config invalid:\n%w", args[0], err)
			}
			diff := o.Diff()
			if len(diff) == 0 {
				fmt.Fprintf(e.stdout, "Nothing changed: %s already has that value.\n", args[0])
				return nil
			}
			// What serve would build from it: a chain it refuses is
			// never written.
			if _, err := buildProviders(o.After); err != nil {
				return fmt.Errorf("nothing changed: %s would make the config unusable:\n%w", args[0], err)
			}
			// A running daemon applies it at once (the settings API);
			// with none, it is written here for the next start.
			applied := "Written to " + o.Before.Path(config.FileOverlay) + ". Restart a running daemon (shelldon serve) to apply it."
			var answer struct{ Changed []string }
			err = callDaemon(cmd.Context(), cfg, http.MethodPost, "/api/settings", map[string]any{"config": changes}, &answer)
			switch {
			case errors.Is(err, errNoDaemon):
				if err := o.Write(); err != nil {
					return err
				}
			case err != nil:
				return err
			default:
				applied = "Written to " + o.Before.Path(config.FileOverlay) + " and applied by the running daemon."
			}
			for _, l := range diff {
				fmt.Fprintln(e.stdout, inert.Line(l))
				if key, change, _ := strings.Cut(l, ": "); strings.HasSuffix(key, "base_url") {
					_, after, _ := strings.Cut(change, " -> ")
					fmt.Fprintln(e.stdout, inert.Line("  host: "+config.DescribeHost(after)))
				}
			}
			fmt.Fprintln(e.stdout, applied)
			return nil
		},
	}
}

func flatLines(prefix string, m map[string]any) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := m[k].(map[string]any); ok && len(sub) > 0 {
			out = append(out, flatLines(key, sub)...)
			continue
		}
		out = append(out, fmt.Sprintf("%s: %v", key, m[k]))
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
