package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/transport/cli"
	"github.com/shelldon/shelldon/internal/worker/selftools"
)

// `shelldon tools export` and `import` carry a self-coded tool between
// homes in a bundle (selfcode.Bundle). An import never makes anything
// live: the bundle's current version runs through the gate here, in the
// same sandbox as a proposal's, and is filed as a promotion request the
// owner decides on like any other (core.ProposeImport).

func (e cmdEnv) toolsExportCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "export NAME FILE",
		Short: "Write a self-coded tool to a bundle file, to import it into another home",
		Long: "Write the self-coded tool NAME to FILE, a JSON bundle: its live version (code, test, manifest,\n" +
			"content hash) and the versions approved before it here, with when and by whom each was approved.\n" +
			"The file is written whole or not at all; an existing FILE is kept unless --force.\n\n" +
			"Example:\n  shelldon tools export word_count word_count.shelldon-tool.json\n" +
			"  # on the other machine:\n  shelldon tools import word_count.shelldon-tool.json",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := e.config()
			if err != nil {
				return err
			}
			dir, err := selfcode.Open(cfg.Path("tools"), nil)
			if err != nil {
				return err
			}
			name, file := args[0], args[1]
			b, data, omitted, err := dir.Export(name)
			switch {
			case errors.Is(err, selfcode.ErrNotFound):
				return exitError{code: exitFail, msg: "shelldon: no self-coded tool called " + inert.Name(name) + " (`shelldon tools list` lists them)"}
			case errors.Is(err, selfcode.ErrNoLive):
				return exitError{code: exitFail, msg: "shelldon: " + inert.Name(name) + " has no live version to export (restore it first)"}
			case err != nil:
				return err
			}
			if err := selfcode.WriteBundle(file, data, force); errors.Is(err, selfcode.ErrBundleExists) {
				return exitError{code: exitFail, msg: "shelldon: " + inert.Name(file) + " exists; --force replaces it"}
			} else if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Exported %s version %d with %d version(s) in all to %s (%d bytes, bundle hash %s).\n",
				inert.Name(b.Name), b.Current, len(b.Versions), inert.Name(file), len(data), b.Hash)
			if omitted > 0 {
				fmt.Fprintf(e.stdout, "The %d oldest version(s) were left out: a bundle holds at most %d versions and %d bytes.\n",
					omitted, selfcode.MaxBundleVersions, selfcode.MaxBundle)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace FILE if it exists")
	return cmd
}

func (e cmdEnv) toolsImportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE",
		Short: "Propose a tool from a bundle another home exported: it waits for your approval",
		Long: "Read the bundle FILE (`shelldon tools export` wrote it), check it (its size, the tool's name, every\n" +
			"version's content hash and the bundle's own), run its current version's test through the gate here,\n" +
			"in the same sandbox as a tool the model proposes, and file it for your approval like a proposal.\n" +
			"Nothing becomes live until you approve it (`shelldon approvals approve ID`, Telegram or the web).\n" +
			"A tool of the same name here gets it as a new version, replacing the live one once approved.\n" +
			"The bundle's older versions are kept as a record only: a rollback reaches only versions approved here.\n\n" +
			"Example:\n  shelldon tools import word_count.shelldon-tool.json\n  shelldon approvals approve ID",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.importTool(cmd.Context(), args[0])
		},
	}
}

// importTool reads, checks, gates and files the bundle at file.
func (e cmdEnv) importTool(ctx context.Context, file string) error {
	b, err := readBundleFile(file)
	if err != nil {
		return exitError{code: exitFail, msg: "shelldon: " + inert.Text(err.Error())}
	}
	cur, _ := b.Version(b.Current)
	a, err := e.open(ctx, ForTurns, slog.LevelError)
	if err != nil {
		return err
	}
	defer a.Close()
	exe, err := executable()
	if err != nil {
		return err
	}
	gate, err := runGate(ctx, a.Sandbox, selftools.Env{Binary: exe, AllowDegraded: a.Config.Sandbox.AllowDegraded}, b.Name, cur)
	if err != nil {
		return exitError{code: exitFail, msg: "shelldon: the gate could not run the bundle's test: " + inert.Text(err.Error()) + "; nothing was filed"}
	}
	if !gate.Passed {
		return exitError{code: exitFail, msg: "shelldon: the bundle's tool failed the gate here; nothing was filed:\n" + inert.Block(gate.Report, "  ")}
	}
	p := contracts.Proposal{Name: b.Name, Language: cur.Language, Code: cur.Code, Test: cur.Test,
		Description: gate.Description, Parameters: gate.Parameters, Capabilities: gate.Capabilities, Gate: gate.Report}
	v, err := a.Core.ProposeImport(ctx, cli.DefaultChat, p, b.Origin(filepath.Base(file)))
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "The gate passed here. Nothing is live yet: request %s waits for your approval (expires %s).\n%s\n\n",
		v.ID, v.ExpiresAt.Local().Format(time.DateTime), v.Summary)
	if !sameCapabilities(cur.Meta.Capabilities, gate.Capabilities) {
		fmt.Fprintln(e.stdout, "Note: the bundle's manifest lists other capabilities than its code declares; the request shows the code's.")
	}
	fmt.Fprintf(e.stdout, "Approve it with `shelldon approvals approve %s`, or deny it with `shelldon approvals deny %s`.\n", v.ID, v.ID)
	return nil
}

// readBundleFile opens file, which must be a regular file, and reads the
// bundle in it.
func readBundleFile(file string) (selfcode.Bundle, error) {
	f, err := os.Open(file)
	if err != nil {
		return selfcode.Bundle{}, fmt.Errorf("read the bundle: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return selfcode.Bundle{}, fmt.Errorf("read the bundle: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return selfcode.Bundle{}, fmt.Errorf("read the bundle: %s is not a regular file", file)
	}
	return selfcode.ReadBundle(f)
}

// runGate runs v's test through the gate, in the sandbox a proposal's gate
// runs in (selftools.GatePolicy), and returns its report.
func runGate(ctx context.Context, sb *sandbox.Runner, env selftools.Env, name string, v selfcode.BundleVersion) (selftools.GateResult, error) {
	if v.Language == selfcode.Python {
		if _, err := exec.LookPath("python3"); err != nil {
			return selftools.GateResult{}, errors.New("the tool is written in python and python3 is not installed here")
		}
	}
	req, err := json.Marshal(selftools.GateRequest{Name: name, Language: v.Language, Code: v.Code, Test: v.Test})
	if err != nil {
		return selftools.GateResult{}, err
	}
	pol := selftools.GatePolicy(env, v.Language)
	pol.Stdin = req
	res, err := sb.Run(ctx, pol)
	if err != nil {
		return selftools.GateResult{}, err
	}
	var g selftools.GateResult
	switch {
	case res.TimedOut:
		return g, fmt.Errorf("it did not finish within %s and was killed", pol.Timeout)
	case json.Unmarshal(res.Stdout, &g) != nil:
		return g, fmt.Errorf("it ended without a report (exit status %d, signal %q): %s", res.ExitCode, res.Signal,
			inert.Short(string(res.Stderr), 500))
	}
	return g, nil
}

// sameCapabilities reports whether two capability sets are the same,
// nil and empty alike.
func sameCapabilities(a, b map[string][]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// toolHistoryText is the part of `tools show` about versions: those this
// home keeps (which a rollback may reach, the live one aside) and, for each
// that came in a bundle, the bundle's record of its history, which was
// approved on the other machine only. shown is the version show printed,
// in state.
func toolHistoryText(shown core.ToolDetail, state string, versions []core.ToolDetail) string {
	var b strings.Builder
	if len(versions) > 0 {
		b.WriteString("Versions here (a rollback reaches the archived ones):\n")
		for _, v := range versions {
			approved := "not approved"
			if !v.ApprovedAt.IsZero() {
				approved = "approved " + v.ApprovedAt.UTC().Format("2006-01-02 15:04 UTC")
				if v.ApprovedBy != "" {
					approved += " by " + inert.Name(v.ApprovedBy)
				}
			}
			from := ""
			if v.Imported != nil {
				from = ", imported"
			}
			fmt.Fprintf(&b, "  v%d %s, %s%s, hash %s\n", v.Version, inert.Name(v.State), approved, from, inert.Short(v.Hash, 64))
		}
	}
	all := versions
	if state == selfcode.StateStaged {
		all = append(all[:len(all):len(all)], shown)
	}
	for _, v := range all {
		imp := v.Imported
		if imp == nil {
			continue
		}
		fmt.Fprintf(&b, "Version %d (%s) was imported from the bundle %s (exported %s, bundle hash %s), where it was version %d.\n",
			v.Version, inert.Name(v.State), inert.Name(imp.Bundle), imp.ExportedAt.UTC().Format("2006-01-02 15:04 UTC"),
			inert.Short(imp.BundleHash, 64), imp.SourceVersion)
		fmt.Fprintf(&b, "  Its history there (imported, approved on the other machine, not here; a rollback never reaches these):\n")
		for _, h := range imp.History {
			by := ""
			if h.ApprovedBy != "" {
				by = " by " + inert.Name(h.ApprovedBy)
			}
			fmt.Fprintf(&b, "  imported v%d %s, approved there %s%s, hash %s\n", h.Version, inert.Name(h.Language),
				h.ApprovedAt.UTC().Format("2006-01-02 15:04 UTC"), by, inert.Short(h.Hash, 64))
		}
	}
	return b.String()
}

// printToolHistory prints toolHistoryText for the tool show printed.
func printToolHistory(w io.Writer, r *core.Reader, shown core.ToolDetail, state string) error {
	versions, err := r.ToolVersions(shown.Name)
	if err != nil && !errors.Is(err, core.ErrNoSuchTool) {
		return err
	}
	_, err = io.WriteString(w, toolHistoryText(shown, state, versions))
	return err
}
