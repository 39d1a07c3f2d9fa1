package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/schedule"
	"github.com/shelldon/shelldon/internal/transport/web"
)

func (e cmdEnv) schedulesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedules",
		Short: "The schedules: prompts shelldon runs as turns at set times",
		Long: "A schedule runs a prompt as a turn of its own at set times (a cron expression, or every 30m).\n" +
			"The agent proposes one with its schedule tool and you approve it (approvals approve ID), seeing\n" +
			"the next runs. `shelldon serve` runs them: in schedules.timezone, never in schedules.quiet_hours\n" +
			"(a run due then runs when they end), once and late after downtime. Results go to your Telegram\n" +
			"chat, else to the inbox (`schedules inbox`, shown when `shelldon chat` starts, GET /api/inbox).",
	}
	// read opens what the reading commands need: the store, no daemon.
	read := func(ctx context.Context) (*App, error) { return e.open(ctx, ForReading, slog.LevelWarn) }
	list := &cobra.Command{
		Use: "list", Short: "List the schedules and when each runs next", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := read(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			views, err := a.Schedules(cmd.Context())
			if err != nil {
				return err
			}
			if len(views) == 0 {
				fmt.Fprintln(e.stdout, "No schedules. The agent proposes one with its schedule tool; you approve it.")
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATE\tWHEN\tZONE\tNEXT RUN\tLAST RUN\tLAST OUTCOME\tPROMPT")
			for _, v := range views {
				loc := zoneOrLocal(v.Timezone)
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, v.State, inert.Line(v.When), inert.Line(v.Timezone),
					when(v.NextRun, loc), when(v.LastRunAt, loc), inert.Short(v.LastOutcome, 40), inert.Short(v.Prompt, 50))
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use: "show ID", Short: "Show a schedule: its prompt in full and its next runs", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := scheduleArg(args[0])
			if err != nil {
				return err
			}
			a, err := read(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			d := a.schedules()
			sc, err := d.st.Schedule(cmd.Context(), id)
			if err != nil {
				return exitError{code: exitFail, msg: fmt.Sprintf("shelldon: no schedule %d", id)}
			}
			v := d.view(sc)
			loc := zoneOrLocal(v.Timezone)
			fmt.Fprintf(e.stdout, "Schedule %d (%s)\nWhen: %s (%s)\n", v.ID, v.State, inert.Line(v.When), inert.Line(v.Timezone))
			fmt.Fprintf(e.stdout, "Asked for in: %s; runs as the conversation %s\n", inert.Name(v.Chat), v.RunsIn)
			fmt.Fprintf(e.stdout, "Approved by: %s, %s\n", inert.Name(v.ApprovedBy), v.CreatedAt.In(loc).Format(cardTime))
			if !v.LastRunAt.IsZero() {
				fmt.Fprintf(e.stdout, "Last run: %s: %s\n", v.LastRunAt.In(loc).Format(cardTime), inert.Line(v.LastOutcome))
			}
			if spec, err := schedule.Parse(sc.When); err == nil && v.State == "active" && !sc.NextDue.IsZero() {
				q, qloc := quietOf(d.cfg())
				var runs []string
				for _, r := range upcoming(spec, sc.NextDue, sc.CreatedAt, loc, q, qloc, 3) {
					runs = append(runs, schedule.PlanRun(r.At, d.now(), q, qloc).At.In(loc).Format(cardTime))
				}
				fmt.Fprintf(e.stdout, "Next runs: %s\n", joinRuns(runs))
			}
			fmt.Fprintf(e.stdout, "Prompt (%s bytes):\n%s\n", inert.Count(len(v.Prompt)), inert.Block(v.Prompt, "  | "))
			return nil
		},
	}
	// pause, resume and remove go through a running daemon
	// (POST /api/schedules/ID/ACTION), which wakes its scheduler; with none
	// running they are done here.
	action := func(act string) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			id, err := scheduleArg(args[0])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			cfg, err := e.config()
			if err != nil {
				return err
			}
			var answer struct{ Schedule core.ScheduleView }
			err = callDaemon(ctx, cfg, http.MethodPost, "/api/schedules/"+strconv.FormatInt(id, 10)+"/"+act, struct{}{}, &answer)
			if errors.Is(err, errNoDaemon) {
				a, oerr := read(ctx)
				if oerr != nil {
					return oerr
				}
				defer a.Close()
				answer.Schedule, err = a.ScheduleAction(ctx, id, act, "cli")
				if errors.Is(err, web.ErrNoSchedule) || errors.Is(err, web.ErrScheduleRefused) {
					return exitError{code: exitFail, msg: "shelldon: " + err.Error()}
				}
			}
			if err != nil {
				return err
			}
			v := answer.Schedule
			msg := fmt.Sprintf("Schedule %d is %s.", v.ID, v.State)
			if !v.NextRun.IsZero() {
				msg += " Next run: " + v.NextRun.In(zoneOrLocal(v.Timezone)).Format(cardTime) + "."
			}
			fmt.Fprintln(e.stdout, msg)
			return nil
		}
	}
	pause := &cobra.Command{Use: "pause ID", Short: "Pause a schedule: it does not run until you resume it", Args: cobra.ExactArgs(1), RunE: action(web.SchedulePause)}
	resume := &cobra.Command{Use: "resume ID", Short: "Resume a paused schedule from its next time (what it missed does not run)", Args: cobra.ExactArgs(1), RunE: action(web.ScheduleResume)}
	remove := &cobra.Command{Use: "remove ID", Short: "Remove a schedule for good", Args: cobra.ExactArgs(1), RunE: action(web.ScheduleRemove)}
	var all bool
	inbox := &cobra.Command{
		Use: "inbox", Short: "Show what scheduled runs said that you have not read, and mark it read", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := read(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			items, err := a.Inbox(cmd.Context(), !all)
			if err != nil {
				return err
			}
			if len(items) == 0 {
				fmt.Fprintln(e.stdout, "The inbox is empty.")
				return nil
			}
			for _, it := range items {
				fmt.Fprintf(e.stdout, "[%d] %s, schedule %d, turn %d\n%s\n\n", it.ID, it.CreatedAt.Local().Format(cardTime), it.Schedule, it.Turn, inert.Block(it.Text, "  | "))
			}
			_, err = a.MarkInboxRead(cmd.Context(), items[len(items)-1].ID)
			return err
		},
	}
	inbox.Flags().BoolVar(&all, "all", false, "show the items already read too (the newest 100)")
	cmd.AddCommand(list, show, pause, resume, remove, inbox)
	return cmd
}

// scheduleArg reads a schedule's id from the command line.
func scheduleArg(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, exitError{code: exitConfig, msg: fmt.Sprintf("shelldon: %s is not a schedule's id (a number; shelldon schedules list)", inert.Name(s))}
	}
	return id, nil
}

// zoneOrLocal is a schedule's zone by name, the system's when unknown.
func zoneOrLocal(name string) *time.Location {
	if loc, err := loadZone(name); err == nil {
		return loc
	}
	return time.Local
}

// when is t in loc for a list, "-" for none.
func when(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(loc).Format("Mon 2 Jan 15:04 MST")
}

func joinRuns(runs []string) string {
	if len(runs) == 0 {
		return "none"
	}
	out := runs[0]
	for _, r := range runs[1:] {
		out += "; " + r
	}
	return out
}
