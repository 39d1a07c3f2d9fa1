package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

func (e cmdEnv) toolsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "The tools shelldon has, and the ones it wrote for itself",
		Long: "List the built-in and self-coded tools; show a self-coded tool's code, test and gate report;\n" +
			"approve or deny a proposed tool; quarantine, restore, roll back or remove a live one.",
	}
	// Listing and showing only read; a decision on a promotion may resume
	// the turn that proposed it.
	withCore := func(mode Mode, run func(ctx context.Context, a *App, args []string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			a, err := e.open(cmd.Context(), mode, slog.LevelError)
			if err != nil {
				return err
			}
			defer a.Close()
			return run(cmd.Context(), a, args)
		}
	}
	list := &cobra.Command{
		Use: "list", Short: "List every tool with its tier, where it runs, its source and state", Args: cobra.NoArgs,
		RunE: withCore(ForReading, func(ctx context.Context, a *App, _ []string) error {
			tools, err := a.Reader.Tools(ctx)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTIER\tRUNS\tSOURCE\tSTATE\tVERSION\tLANGUAGE\tSTRIKES")
			for _, t := range tools {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", inert.Name(t.Name), t.Tier, t.Runs, t.Source, inert.Name(t.State),
					dash(t.Version), orDash(inert.Short(t.Language, 20)), dash(t.Strikes))
			}
			return tw.Flush()
		}),
	}
	show := &cobra.Command{
		Use: "show NAME", Short: "Show a self-coded tool: manifest, code, test and gate report", Args: cobra.ExactArgs(1),
		RunE: withCore(ForReading, func(ctx context.Context, a *App, args []string) error {
			t, state, err := a.Reader.FindTool(args[0])
			switch {
			case errors.Is(err, core.ErrNoSuchTool):
				return exitError{code: exitFail, msg: "shelldon: no tool called " + inert.Name(args[0])}
			case err != nil:
				return err
			}
			// One-line fields escaped as one line; the gate report, code
			// and test keep their lines.
			fmt.Fprintf(e.stdout, "%s version %d (%s, %s)\nDescription: %s\nParameters: %s\nCapabilities: %s\nHash: %s\nGate:\n%s\n--- code (%s bytes) ---\n%s\n--- test (%s bytes) ---\n%s\n",
				inert.Name(t.Name), t.Version, inert.Name(t.Language), inert.Name(state), inert.Line(t.Meta.Description), inert.Line(compactJSON(t.Meta.ParamsSchema)),
				inert.Line(fmt.Sprint(t.Meta.Capabilities)), inert.Line(t.Hash), inert.Block(t.Gate, "  "),
				inert.Count(len(t.Code)), inert.Block(t.Code, ""), inert.Count(len(t.Test)), inert.Block(t.Test, ""))
			return nil
		}),
	}
	decide := func(approve bool) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			return e.decideProposal(cmd.Context(), core.KindPromotion, args[0], approve)
		}
	}
	// An action goes through a running daemon (POST /api/tools/NAME/ACTION),
	// else is done here.
	action := func(name string) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := e.config()
			if err != nil {
				return err
			}
			var answer struct{ Message string }
			err = callDaemon(ctx, cfg, http.MethodPost, "/api/tools/"+url.PathEscape(args[0])+"/"+name, struct{}{}, &answer)
			if errors.Is(err, errNoDaemon) {
				a, oerr := e.open(ctx, ForTurns, slog.LevelError)
				if oerr != nil {
					return oerr
				}
				defer a.Close()
				answer.Message, err = a.Core.ToolAction(ctx, name, args[0], "cli")
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, inert.Text(answer.Message))
			return nil
		}
	}
	cmd.AddCommand(list, show,
		&cobra.Command{Use: "approve NAME", Short: "Approve a proposed tool: it becomes live", Args: cobra.ExactArgs(1), RunE: decide(true)},
		&cobra.Command{Use: "deny NAME", Short: "Deny a proposed tool: it is discarded", Args: cobra.ExactArgs(1), RunE: decide(false)},
		&cobra.Command{Use: "quarantine NAME", Short: "Take a live tool out of use", Args: cobra.ExactArgs(1), RunE: action("quarantine")},
		&cobra.Command{Use: "restore NAME", Short: "Put a quarantined tool back, strikes cleared", Args: cobra.ExactArgs(1), RunE: action("restore")},
		&cobra.Command{Use: "rollback NAME", Short: "Go back to the tool's previous version", Args: cobra.ExactArgs(1), RunE: action("rollback")},
		&cobra.Command{Use: "remove NAME", Short: "Remove a tool (its versions stay in the archive)", Args: cobra.ExactArgs(1), RunE: action("remove")},
	)
	return cmd
}

func dash(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// compactJSON is raw JSON on one line, or raw itself when it is not JSON.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
