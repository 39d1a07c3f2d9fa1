package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
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
				first, _, _ := strings.Cut(strings.TrimPrefix(v.Summary, "Tool: "+inert.Name(v.Tool)+"\n"), "\n")
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", inert.Name(v.ID), inert.Name(v.Tool), inert.Name(v.Chat),
					v.ExpiresAt.Local().Format(time.DateTime), inert.Short(strings.TrimSpace(first), 60))
			}
			return tw.Flush()
		},
	}
	var full bool
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show one request as the owner must read it (--full: every byte of its arguments)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := e.open(cmd.Context(), ForReading, slog.LevelError)
			if err != nil {
				return err
			}
			defer a.Close()
			v, err := a.Reader.Approval(cmd.Context(), args[0])
			if errors.Is(err, core.ErrUnknownApproval) {
				return exitError{code: exitFail, msg: "shelldon: no request " + inert.Name(args[0])}
			}
			if err != nil {
				return err
			}
			showApproval(e.stdout, v, full)
			return nil
		},
	}
	show.Flags().BoolVar(&full, "full", false, "print every argument whole, however long (escaped; a multi-line value as an indented block)")
	decide := func(approve bool) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error { return e.decide(cmd.Context(), args[0], approve) }
	}
	approve := &cobra.Command{Use: "approve ID", Short: "Approve a request: run exactly that call once, then go on", Args: cobra.ExactArgs(1), RunE: decide(true)}
	deny := &cobra.Command{Use: "deny ID", Short: "Deny a request: the model is told \"denied by owner\"", Args: cobra.ExactArgs(1), RunE: decide(false)}
	cmd.AddCommand(list, show, approve, deny)
	return cmd
}

// showApproval prints a request: the daemon's rendering (escaped again at
// this sink) and, with full, every argument whole; without, a plain note
// when the rendering cut an argument.
func showApproval(w io.Writer, v core.ApprovalView, full bool) {
	fmt.Fprintf(w, "Request %s (%s), %s, expires %s\n%s\n", inert.Name(v.ID), inert.Name(v.Kind), inert.Name(v.State),
		v.ExpiresAt.Local().Format(time.DateTime), inert.Text(v.Summary))
	if v.Kind == core.KindPromotion || v.Kind == core.KindSkill || v.Arguments == "" {
		return // the rendering holds all of it
	}
	whole := inert.Args(v.Arguments, 0, "")
	switch {
	case full:
		fmt.Fprintf(w, "\nEvery argument, whole (%s bytes of JSON):\n%s", inert.Count(len(v.Arguments)), whole)
	case !strings.Contains(v.Summary, strings.TrimSuffix(whole, "\n")):
		fmt.Fprintf(w, "\nPart of an argument is not shown above: shelldon approvals show %s --full shows every byte.\n", inert.Name(v.ID))
	}
}

// decide decides request id as the owner at the terminal: through the
// home's running daemon, which carries it out, or, with none running, here
// (this process runs the call and holds its lease).
func (e cmdEnv) decide(ctx context.Context, id string, approve bool) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	out, err := decideViaDaemon(ctx, cfg, id, approve)
	if errors.Is(err, errNoDaemon) {
		out, err = e.decideHere(ctx, id, approve)
	}
	if err != nil && out.Turn == 0 {
		return err
	}
	fmt.Fprintln(e.stdout, inert.Text(out.Reply))
	return err
}

// decideHere decides and carries out request id in this process.
func (e cmdEnv) decideHere(ctx context.Context, id string, approve bool) (core.Outcome, error) {
	a, err := e.open(ctx, ForTurns, slog.LevelError)
	if err != nil {
		return core.Outcome{}, err
	}
	defer a.Close()
	if err := harden(); err != nil {
		return core.Outcome{}, err
	}
	out, err := a.Core.Decide(ctx, id, approve, "cli", core.Events{})
	if err != nil && out.Turn == 0 {
		return out, decisionError(err)
	}
	return out, err
}

// decideProposal decides, as the owner at the terminal, the waiting
// proposal of kind (core.KindPromotion, core.KindSkill) for name.
func (e cmdEnv) decideProposal(ctx context.Context, kind, name string, approve bool) error {
	a, err := e.open(ctx, ForReading, slog.LevelError)
	if err != nil {
		return err
	}
	pending, err := a.Reader.Approvals(ctx)
	a.Close()
	if err != nil {
		return err
	}
	for _, p := range pending {
		if p.Kind == kind && p.Tool == name {
			return e.decide(ctx, p.ID, approve)
		}
	}
	what := "proposed tool"
	if kind == core.KindSkill {
		what = "draft of a skill"
	}
	return exitError{code: exitFail, msg: "shelldon: no " + what + " called " + inert.Name(name) + " is waiting"}
}

// decisionError is a decision that was refused (unknown, already decided,
// expired, or no longer possible, with the reason) as the owner's failure
// at the terminal; any other error is the system's.
func decisionError(err error) error {
	for _, refused := range []error{core.ErrUnknownApproval, core.ErrAlreadyDecided, core.ErrApprovalExpired, core.ErrStaleApproval} {
		if errors.Is(err, refused) {
			return exitError{code: exitFail, msg: "shelldon: " + inert.Text(err.Error())}
		}
	}
	return err
}
