package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/worker/builtin"
	"github.com/shelldon/shelldon/internal/worker/memorytools"
	"github.com/shelldon/shelldon/internal/worker/risky"
	"github.com/shelldon/shelldon/internal/worker/scheduletools"
	"github.com/shelldon/shelldon/internal/worker/selftools"
	"github.com/shelldon/shelldon/internal/worker/skilltools"
	"github.com/shelldon/shelldon/internal/workspace"
)

func (e cmdEnv) toolsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "The tools shelldon has, and the ones it wrote for itself",
		Long: "List the built-in and self-coded tools; show one (a built-in's description and parameters,\n" +
			"a self-coded tool's code, test and gate report);\n" +
			"approve or deny a proposed tool; quarantine, restore, roll back or remove a live one;\n" +
			"export one to a bundle and import a bundle from another home (it waits for your approval).",
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
		Use: "show NAME", Short: "Show a tool: a built-in's tier, where it runs, parameters and description; a self-coded one's manifest, code, test and gate report",
		Args: cobra.ExactArgs(1),
		RunE: withCore(ForReading, func(ctx context.Context, a *App, args []string) error {
			if b, ok := contracts.Builtin(args[0]); ok {
				return e.showBuiltin(b)
			}
			t, state, err := a.Reader.FindTool(args[0])
			switch {
			case errors.Is(err, core.ErrNoSuchTool):
				return exitError{code: exitFail, msg: "shelldon: no tool called " + inert.Name(args[0]) + " (`shelldon tools list` lists them)"}
			case err != nil:
				return err
			}
			// One-line fields escaped as one line; the gate report, code
			// and test keep their lines.
			fmt.Fprintf(e.stdout, "%s version %d (%s, %s)\nTier: %s, runs %s\nDescription: %s\nParameters: %s\n%sHash: %s\nGate:\n%s\n--- code (%s bytes) ---\n%s\n--- test (%s bytes) ---\n%s\n",
				inert.Name(t.Name), t.Version, inert.Name(t.Language), inert.Name(state),
				contracts.TierFree, runsText[contracts.RunsSandbox], inert.Line(t.Meta.Description), inert.Line(compactJSON(t.Meta.ParamsSchema)),
				capabilitiesText(t.Meta.Capabilities), inert.Line(t.Hash), inert.Block(t.Gate, "  "),
				inert.Count(len(t.Code)), inert.Block(t.Code, ""), inert.Count(len(t.Test)), inert.Block(t.Test, ""))
			return printToolHistory(e.stdout, a.Reader, t, state)
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
		e.toolsExportCmd(), e.toolsImportCmd(),
	)
	return cmd
}

// runsText says where a tool of each contracts.Runs does its work.
var runsText = map[contracts.Runs]string{
	contracts.RunsWorker:  "in the turn's worker (itself sandboxed)",
	contracts.RunsChild:   "in a memory-limited child of the worker, without its network",
	contracts.RunsSandbox: "in a sandbox of its own for each call (namespaces, seccomp, no network)",
	contracts.RunsDaemon:  "in the daemon, at the worker's request",
}

// tierText says what a tier means for the owner.
var tierText = map[contracts.Tier]string{
	contracts.TierFree:  "runs without asking",
	contracts.TierRisky: "each call waits for your approval",
}

// showBuiltin prints a built-in tool: the catalogue's entry and what the
// model is told of it (its description and parameter schema).
func (e cmdEnv) showBuiltin(b contracts.BuiltinTool) error {
	specs, err := builtinSpecs()
	if err != nil {
		return err
	}
	spec, ok := specs[b.Name]
	if !ok {
		return fmt.Errorf("tools: the built-in tool %s is catalogued but not built", b.Name)
	}
	lines := strings.Split(strings.TrimRight(inert.Text(spec.Description), "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	fmt.Fprintf(e.stdout, "%s (built-in)\nTier: %s (%s), runs %s\nSummary: %s\nParameters: %s\nDescription (what the model reads):\n%s\n",
		inert.Name(b.Name), b.Tier, tierText[b.Tier], runsText[b.Runs], inert.Line(b.Summary),
		inert.Line(compactJSON(spec.Parameters)), strings.Join(lines, "\n"))
	return nil
}

// builtinSpecs is what the model is told of each built-in tool, by name:
// the specs of the registry a worker builds (childproc's buildTools), made
// here only to be read, over stand-ins that no tool reaches since none
// is run.
func builtinSpecs() (map[string]contracts.ToolSpec, error) {
	reg := worker.NewRegistry()
	ws := &workspace.Root{}
	if err := errors.Join(
		builtin.Register(reg, builtin.Env{Workspace: ws}),
		risky.Register(reg, risky.Env{Workspace: ws, Sandbox: noSandbox{}}),
		skilltools.Register(reg, nil),
		memorytools.Register(reg, nil),
		scheduletools.Register(reg, nil),
		selftools.Register(reg, selftools.Env{Search: true}),
	); err != nil {
		return nil, fmt.Errorf("tools: build the built-in tools: %w", err)
	}
	out := map[string]contracts.ToolSpec{}
	for _, spec := range reg.Specs() {
		out[spec.Name] = spec
	}
	return out, nil
}

// noSandbox stands in for the sandbox in builtinSpecs' registry.
type noSandbox struct{}

func (noSandbox) Run(context.Context, sandbox.Policy) (sandbox.Result, error) {
	return sandbox.Result{}, errors.New("not a sandbox: the tool was built only to be shown")
}

// capabilitiesText is the "Capabilities:" lines of a self-coded tool:
// "none", or one line per capability, sorted, with its values. The model
// wrote them: each is shown as a name (inert.Name), quoted when it is not
// a plain one, so that no value passes for two or for another line.
func capabilitiesText(caps map[string][]string) string {
	if len(caps) == 0 {
		return "Capabilities: none\n"
	}
	var b strings.Builder
	b.WriteString("Capabilities:\n")
	for _, k := range slices.Sorted(maps.Keys(caps)) {
		vals := make([]string, len(caps[k]))
		for i, v := range caps[k] {
			vals[i] = inert.Name(v)
		}
		list := strings.Join(vals, ", ")
		if list == "" {
			list = "(no value)"
		}
		fmt.Fprintf(&b, "  %s: %s\n", inert.Name(k), list)
	}
	return b.String()
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
