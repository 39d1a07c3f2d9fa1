package app

import (
	"fmt"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

// usageCmd is `shelldon usage`: what the model calls spent, read from the
// store (the usage ledger, priced at the prices in force), and the
// budgets' state. It only reads; the daemon need not run.
func (e cmdEnv) usageCmd() *cobra.Command {
	var (
		days int
		by   string
	)
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Show tokens and dollars spent by day, model or chat, and the budgets",
		Long: "Show what the model calls spent over the last days (today included): calls, input and\n" +
			"output tokens and dollars, by day, model, chat or origin (owner, or a kind of self-driven\n" +
			"turn such as schedule), in schedules.timezone's days, priced by budget.prices over the\n" +
			"shipped prices (a model without a price costs nothing); then the budgets (budget.*):\n" +
			"used, limit and when each resets. A spent budget stops self-driven turns; your own\n" +
			"turns still run, with a warning.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if days < 1 || days > core.MaxUsageDays {
				return exitError{code: exitConfig, msg: fmt.Sprintf("--days must be from 1 to %d", core.MaxUsageDays)}
			}
			a, err := e.open(cmd.Context(), ForReading, slog.LevelWarn)
			if err != nil {
				return err
			}
			defer a.Close()
			rep, err := a.Reader.Usage(cmd.Context(), a.current().Budgets(), days)
			if err != nil {
				return err
			}
			var lines []core.UsageLine
			switch by {
			case "day":
				lines = rep.Days
			case "model":
				lines = rep.Models
			case "chat":
				lines = rep.Chats
			case "origin":
				lines = rep.Origins
			default:
				return exitError{code: exitConfig, msg: fmt.Sprintf("--by must be day, model, chat or origin, not %s", inert.Name(by))}
			}
			fmt.Fprintf(e.stdout, "Usage over %d day(s), %s to %s (%s), by %s:\n", days,
				rep.From.Format("2006-01-02"), rep.To.AddDate(0, 0, -1).Format("2006-01-02"), rep.Zone, by)
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "%s\tCALLS\tINPUT\tOUTPUT\tUSD\n", strings.ToUpper(by))
			for _, l := range lines {
				key := inert.Name(l.Key)
				if l.Key == "" {
					key = "-"
				}
				usd := l.USD.String()
				if l.Unpriced {
					usd += " (no price)"
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", key, l.Calls, l.InputTokens, l.OutputTokens, usd)
			}
			t := rep.Total
			fmt.Fprintf(tw, "TOTAL\t%d\t%d\t%d\t%s\n", t.Calls, t.InputTokens, t.OutputTokens, t.USD)
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(e.stdout)
			tw = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "BUDGET\tUSED\tLIMIT\tPERIOD\tRESETS\tSTATE")
			for _, b := range rep.Budgets {
				used, limit := b.Used, b.Limit
				if b.Unit == "usd" {
					used = "$" + used
					if limit == "" {
						limit = "none"
					} else {
						limit = "$" + limit
					}
				}
				state := "ok"
				if b.Spent {
					state = "SPENT: self-driven turns stop"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", b.Name, used, limit, b.Period, b.ResetsAt.Format("2006-01-02 15:04 MST"), state)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().IntVar(&days, "days", 7, fmt.Sprintf("how many days, today included (1 to %d)", core.MaxUsageDays))
	cmd.Flags().StringVar(&by, "by", "day", "group by day, model, chat or origin")
	return cmd
}
