package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/transport/cli"
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
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Tier, t.Runs, t.Source, t.State,
					dash(t.Version), orDash(t.Language), dash(t.Strikes))
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
				return exitError{code: exitFail, msg: "shelldon: no tool called " + args[0]}
			case err != nil:
				return err
			}
			fmt.Fprintf(e.stdout, "%s version %d (%s, %s)\nDescription: %s\nParameters: %s\nCapabilities: %v\nHash: %s\nGate: %s\n--- code ---\n%s\n--- test ---\n%s\n",
				t.Name, t.Version, t.Language, state, cli.Sanitize(t.Meta.Description), t.Meta.ParamsSchema,
				t.Meta.Capabilities, t.Hash, cli.Sanitize(t.Gate), cli.Sanitize(t.Code), cli.Sanitize(t.Test))
			return nil
		}),
	}
	decide := func(approve bool) func(context.Context, *App, []string) error {
		return func(ctx context.Context, a *App, args []string) error {
			pending, err := a.Reader.Approvals(ctx)
			if err != nil {
				return err
			}
			for _, p := range pending {
				if p.Kind == core.KindPromotion && p.Tool == args[0] {
					out, err := a.Core.Decide(ctx, p.ID, approve, "cli", core.Events{})
					if err != nil {
						return err
					}
					fmt.Fprintln(e.stdout, out.Reply)
					return nil
				}
			}
			return exitError{code: exitFail, msg: "shelldon: no proposed tool called " + args[0] + " is waiting"}
		}
	}
	action := func(name string) func(context.Context, *App, []string) error {
		return func(ctx context.Context, a *App, args []string) error {
			msg, err := a.Core.ToolAction(ctx, name, args[0], "cli")
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, msg)
			return nil
		}
	}
	cmd.AddCommand(list, show,
		&cobra.Command{Use: "approve NAME", Short: "Approve a proposed tool: it becomes live", Args: cobra.ExactArgs(1), RunE: withCore(ForTurns, decide(true))},
		&cobra.Command{Use: "deny NAME", Short: "Deny a proposed tool: it is discarded", Args: cobra.ExactArgs(1), RunE: withCore(ForTurns, decide(false))},
		&cobra.Command{Use: "quarantine NAME", Short: "Take a live tool out of use", Args: cobra.ExactArgs(1), RunE: withCore(ForTurns, action("quarantine"))},
		&cobra.Command{Use: "restore NAME", Short: "Put a quarantined tool back, strikes cleared", Args: cobra.ExactArgs(1), RunE: withCore(ForTurns, action("restore"))},
		&cobra.Command{Use: "rollback NAME", Short: "Go back to the tool's previous version", Args: cobra.ExactArgs(1), RunE: withCore(ForTurns, action("rollback"))},
		&cobra.Command{Use: "remove NAME", Short: "Remove a tool (its versions stay in the archive)", Args: cobra.ExactArgs(1), RunE: withCore(ForTurns, action("remove"))},
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
