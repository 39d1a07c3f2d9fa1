package app

import (
	"bufio"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/config"
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
			if err := config.SetSecret(home, args[0], value); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Saved %s in %s/.env. A running daemon picks it up at the next settings change or restart.\n", args[0], home)
			return nil
		},
	}
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the effective config (secrets only as set or unset)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := e.home()
			if err != nil {
				return err
			}
			cfg, err := config.Load(home, e.environ)
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
	cmd.AddCommand(setSecret, show)
	return cmd
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
