package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/transport/cli"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFail   = 1
	exitConfig = 2 // a bad config or bad command-line usage
)

// timeNow is the clock of the commands.
var timeNow = time.Now

// Main runs the shelldon command line and returns its exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	var homeFlag string
	root := &cobra.Command{
		Use:   "shelldon",
		Short: "A personal AI agent that grows its own toolbox",
		Long: "shelldon is a personal AI agent for one owner. It chats over the terminal and an HTTP API,\n" +
			"uses tools through each provider's native function calling, and keeps everything in\n" +
			"$SHELLDON_HOME (default ~/.shelldon). Start with `shelldon init`, then `shelldon chat`.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&homeFlag, "home", "", "shelldon's home directory (default $SHELLDON_HOME or ~/.shelldon)")
	home := func() (string, error) { return homeDir(homeFlag, environ) }
	env := cmdEnv{home: home, environ: environ, stdin: stdin, stdout: stdout, stderr: stderr}

	root.AddCommand(
		env.initCmd(),
		env.chatCmd(),
		env.serveCmd(),
		env.doctorCmd(),
		env.auditCmd(),
		env.approvalsCmd(),
		env.toolsCmd(),
		env.configCmd(),
		env.skillsCmd(),
		env.memoryCmd(),
		env.schedulesCmd(),
		env.usageCmd(),
		env.backupCmd(), env.restoreCmd(),
		env.serviceCmd(),
		versionCmd(stdout),
		completionCmd(stdout),
	)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ce *config.Error
	var ee exitError
	switch {
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintln(stderr, inert.Text(ee.msg))
		}
		return ee.code
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "shelldon: bad config: %s\n", inert.Text(err.Error()))
		return exitConfig
	case isUsage(err):
		fmt.Fprintf(stderr, "shelldon: %s\nRun 'shelldon --help' for usage.\n", inert.Text(err.Error()))
		return exitConfig
	default:
		// An error may quote what the model or a file holds.
		fmt.Fprintf(stderr, "shelldon: %s\n", inert.Text(err.Error()))
		return exitFail
	}
}

// exitError ends a command with a given status.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return fmt.Sprintf("exit %d: %s", e.code, e.msg) }

func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires ", "invalid argument", "flag needs"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// cmdEnv is what every subcommand gets from Main.
type cmdEnv struct {
	home    func() (string, error)
	environ []string
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
}

func (e cmdEnv) open(ctx context.Context, mode Mode, level slog.Level) (*App, error) {
	home, err := e.home()
	if err != nil {
		return nil, err
	}
	return OpenFor(ctx, mode, home, e.environ, e.stderr, level)
}

func (e cmdEnv) chatCmd() *cobra.Command {
	var message, chat string
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Chat with shelldon in the terminal",
		Long: "Chat with shelldon in the terminal: line editing and history, tool calls shown as they\n" +
			"happen; Ctrl-C cancels the running turn, Ctrl-D quits. It continues the conversation\n" +
			"\"" + cli.DefaultChat + "\" unless --chat names another.\n\n" +
			"With -m, answer one message and exit, for scripts: each run is a new conversation of its\n" +
			"own (no history shared with the interactive chat or another run) unless --chat names one.\n" +
			"The reply is on standard output, tool calls and errors on standard error. Exit status:\n" +
			"  0  the model answered\n" +
			"  1  the turn failed (the provider, or inside shelldon); the reason on stderr, nothing on stdout\n" +
			"  2  bad usage, a bad config, or a message that cannot start a turn (empty, too long)\n" +
			"  3  the turn stopped short (tool ceiling, time budget, Ctrl-C); stdout has what it had\n" +
			"  4  the turn waits for your decision on a request; stderr says how to decide",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Only errors reach the terminal: a failed model call already
			// shows in the reply, and warnings would break up the chat.
			a, err := e.open(cmd.Context(), ForDaemon, slog.LevelError)
			if err != nil {
				return err
			}
			defer a.Close()
			if err := harden(); err != nil {
				return err
			}
			setMemoryLimit(e.environ, a.Log)
			term := &cli.Terminal{
				Chat: a.Core, Decider: a.Core, ChatName: chat, In: e.stdin, Out: e.stdout, Err: e.stderr,
				HistoryFile: a.Config.Path(historyFile), Now: timeNow, Inbox: a,
			}
			if cmd.Flags().Changed("message") {
				a.OneShot()
				// Once has said what went wrong; the status tells a script.
				if code, _ := term.Once(cmd.Context(), message); code != cli.ExitAnswered {
					return exitError{code: code}
				}
				return nil
			}
			a.Warm() // from the second turn on, its worker waits while the owner types
			if err := term.Run(cmd.Context()); errors.Is(err, cli.ErrUndecided) {
				// Run has said what waits and how to decide it.
				return exitError{code: cli.ExitApproval}
			} else if err != nil {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&message, "message", "m", "", "send one message, print the reply and exit (a new conversation each run)")
	cmd.Flags().StringVar(&chat, "chat", "", "the conversation (default \""+cli.DefaultChat+"\" for the interactive chat, a new one for each -m)")
	return cmd
}

func (e cmdEnv) serveCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon: the HTTP API (and later the web UI and Telegram)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			a, err := e.open(ctx, ForDaemon, 0)
			if err != nil {
				return err
			}
			defer a.Close()
			if err := harden(); err != nil {
				return err
			}
			setMemoryLimit(e.environ, a.Log)
			d, err := NewDaemon(a, listen)
			if err != nil {
				return err
			}
			defer d.Close()
			return d.Run(ctx)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on (default server.listen, 127.0.0.1:7433)")
	return cmd
}

// wrapWords lays words out as lines of at most width bytes (a longer word
// alone), each behind indent, separated by ", ".
func wrapWords(words []string, indent string, width int) string {
	var b strings.Builder
	line := indent
	for i, w := range words {
		if i < len(words)-1 {
			w += ","
		}
		if line != indent && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += w
	}
	return b.String() + line
}

func (e cmdEnv) auditCmd() *cobra.Command {
	var limit int
	var before int64
	var chat, tool, kind, outcome string
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit trail of tool calls and requests, newest first",
		Long: "Show the audit trail, newest first. KIND is what a row records: tool_call (a tool ran;\n" +
			"OK is its result), tool_refused (a guard refused a RISKY call before asking you),\n" +
			"approval_requested|approved|denied|expired|executed (a request for you and each step\n" +
			"of it: a request filed is OK, its denial is not), and the changes of self-coded tools\n" +
			"(tool_*) and skills (skill_*).\n\n" +
			"--outcome shows only the rows that are OK (ok) or not (failed), --kind only one kind;\n" +
			"the filters combine. The kinds are:\n" + wrapWords(core.AuditKinds(), "  ", 88),
		Example: "  shelldon audit --kind approval_denied\n  shelldon audit --outcome failed --tool run_shell -n 50",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kind != "" && !core.ValidAuditKind(kind) {
				return usageError("--kind %s is not a kind: a kind is 1-64 lowercase letters, digits or _.- (such as tool_call)", inert.Name(kind))
			}
			if outcome != "" && outcome != core.AuditOK && outcome != core.AuditFailed {
				return usageError("--outcome %s: say %s or %s", inert.Name(outcome), core.AuditOK, core.AuditFailed)
			}
			a, err := e.open(cmd.Context(), ForReading, slog.LevelWarn)
			if err != nil {
				return err
			}
			defer a.Close()
			q := core.AuditQuery{Limit: limit, Chat: chat, Tool: tool, Kind: kind, Outcome: outcome, Before: before}
			entries, err := a.Reader.Audit(cmd.Context(), q)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			// KIND says what a row records, so OK reads against it: the
			// row of a request filed is OK beside the row of its denial.
			fmt.Fprintln(tw, "ID\tTIME\tCHAT\tTURN\tKIND\tTOOL\tOK\tDURATION\tARGS\tRESULT")
			// Every field is one cell of one line: a tool name the model
			// made up is quoted and escaped, never printed raw.
			for _, en := range entries {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%v\t%s\t%s\t%s\n", en.ID, en.At.Local().Format(time.DateTime), inert.Name(en.Chat), en.Turn,
					inert.Name(en.Kind), inert.Name(en.Tool), en.OK, en.Duration.Round(time.Millisecond), inert.Short(en.Args, 60), inert.Short(en.Summary, 60))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if n := len(entries); n > 0 && n == limit {
				// The command for the next page keeps the filters.
				next := fmt.Sprintf("shelldon audit -n %d", limit)
				for _, f := range [][2]string{{"chat", chat}, {"tool", tool}, {"kind", kind}, {"outcome", outcome}} {
					if f[1] != "" {
						next += " --" + f[0] + " " + inert.Name(f[1])
					}
				}
				fmt.Fprintf(e.stderr, "Older entries: %s --before %d\n", next, entries[n-1].ID)
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&limit, "limit", "n", 20, "how many entries (at most 1000)")
	cmd.Flags().Int64Var(&before, "before", 0, "only entries older than this ID (the next page)")
	cmd.Flags().StringVar(&chat, "chat", "", "only this conversation")
	cmd.Flags().StringVar(&tool, "tool", "", "only this tool")
	cmd.Flags().StringVar(&kind, "kind", "", "only this kind of row, such as tool_call or approval_denied (see above)")
	cmd.Flags().StringVar(&outcome, "outcome", "", "only the rows that are OK (ok) or not (failed)")
	return cmd
}
