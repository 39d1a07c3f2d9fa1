package app

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/transport/cli"
)

func (e cmdEnv) approvalsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List, show, approve or deny the requests waiting for you",
		Long: "RISKY tool calls (write_file, run_shell, http_get, git) wait for your decision.\n" +
			"A decision is used once; approving runs exactly the call shown, then the turn goes on.",
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the pending requests",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := e.open(cmd.Context(), ForReading, slog.LevelError)
			if err != nil {
				return err
			}
			defer a.Close()
			if _, err := a.Reader.ExpireApprovals(cmd.Context()); err != nil {
				return err
			}
			views, err := a.Reader.Approvals(cmd.Context())
			if err != nil {
				return err
			}
			if len(views) == 0 {
				fmt.Fprintln(e.stdout, "No requests are waiting.")
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTOOL\tCHAT\tEXPIRES\tSUMMARY")
			for _, v := range views {
				first, _, _ := strings.Cut(strings.TrimPrefix(v.Summary, "Tool: "+v.Tool+"\n"), "\n")
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.ID, v.Tool, v.Chat, v.ExpiresAt.Local().Format(time.DateTime), clip(strings.TrimSpace(first), 60))
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show one request as the owner must read it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := e.open(cmd.Context(), ForReading, slog.LevelError)
			if err != nil {
				return err
			}
			defer a.Close()
			v, err := a.Reader.Approval(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Request %s (%s), %s, expires %s\n%s\n", v.ID, v.Kind, v.State,
				v.ExpiresAt.Local().Format(time.DateTime), cli.Sanitize(v.Summary))
			return nil
		},
	}
	decide := func(approve bool) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			a, err := e.open(cmd.Context(), ForTurns, slog.LevelError)
			if err != nil {
				return err
			}
			defer a.Close()
			if err := harden(); err != nil {
				return err
			}
			out, err := a.Core.Decide(cmd.Context(), args[0], approve, "cli", core.Events{})
			switch {
			case errors.Is(err, core.ErrUnknownApproval), errors.Is(err, core.ErrAlreadyDecided), errors.Is(err, core.ErrApprovalExpired):
				return exitError{code: exitFail, msg: "shelldon: " + err.Error()}
			case err != nil && out.Turn == 0:
				return err
			}
			fmt.Fprintln(e.stdout, cli.Sanitize(out.Reply))
			return err
		}
	}
	approve := &cobra.Command{Use: "approve ID", Short: "Approve a request: run exactly that call once, then go on", Args: cobra.ExactArgs(1), RunE: decide(true)}
	deny := &cobra.Command{Use: "deny ID", Short: "Deny a request: the model is told \"denied by owner\"", Args: cobra.ExactArgs(1), RunE: decide(false)}
	cmd.AddCommand(list, show, approve, deny)
	return cmd
}
