package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/skill"
	"github.com/shelldon/shelldon/internal/transport/web"
)

func (e cmdEnv) skillsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "The skills: written procedures shelldon follows",
		Long: "Skills are procedures over existing tools (SKILL.md files). Bundled skills are read-only;\n" +
			"yours live in $SHELLDON_HOME/skills. What the agent writes is a draft, in no prompt until you\n" +
			"approve it (skills approve NAME, or approvals approve ID); each approved change keeps the previous version.",
	}
	lib := func() (*skill.Library, error) {
		cfg, err := e.config()
		if err != nil {
			return nil, err
		}
		return openSkills(cfg)
	}
	list := &cobra.Command{
		Use: "list", Short: "List the skills, and the drafts waiting for your approval", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := lib()
			if err != nil {
				return err
			}
			skills, problems, err := l.List()
			if err != nil {
				return err
			}
			drafts := draftNames(l)
			waiting := len(drafts)
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSOURCE\tVERSION\tDRAFT\tDESCRIPTION")
			for _, s := range skills {
				mark := "-"
				if drafts[s.Name] {
					mark = "waiting"
					delete(drafts, s.Name)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", inert.Name(s.Name), s.Source, dash(s.Version), mark, inert.Short(s.Description, 70))
			}
			for _, name := range slices.Sorted(maps.Keys(drafts)) {
				fmt.Fprintf(tw, "%s\t-\t-\twaiting\t(new; not in use until you approve it)\n", inert.Name(name))
			}
			tw.Flush()
			for _, p := range problems {
				fmt.Fprintf(e.stderr, "skipped: %s\n", inert.Line(p.Error()))
			}
			if waiting > 0 {
				fmt.Fprintln(e.stderr, "A waiting draft is in no prompt until you approve it: shelldon skills show NAME, then shelldon approvals list.")
			}
			return nil
		},
	}
	show := &cobra.Command{
		Use: "show NAME", Short: "Show a skill, and a draft of it waiting for your approval", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := lib()
			if err != nil {
				return err
			}
			s, files, notes, err := l.Files(args[0])
			d, derr := l.Drafted(args[0])
			switch {
			case err != nil && derr != nil:
				return err
			case err != nil && !errors.Is(err, skill.ErrNotFound):
				fmt.Fprintf(e.stderr, "The skill in use could not be read: %s\n", inert.Text(err.Error()))
			case err == nil:
				fmt.Fprintf(e.stdout, "%s (%s, version %d, in use)\n%s\n\n%s\n", inert.Name(s.Name), s.Source, s.Version, inert.Line(s.Description), inert.Block(s.Body, ""))
				showFiles(e.stdout, files[1:], notes)
				if n, last := l.Uses(s.Name); n > 0 {
					fmt.Fprintf(e.stdout, "\nLoaded by the agent %s, last %s.\n", times(n), last.Local().Format("2 January 2006 15:04 MST"))
				}
				if v := l.Versions(s.Name); len(v) > 0 {
					fmt.Fprintf(e.stdout, "\nEarlier versions kept: %v\n", v)
				}
			}
			if derr == nil {
				showDraft(e.stdout, d, err == nil)
			}
			return nil
		},
	}
	// rollback and remove go through a running daemon
	// (POST /api/skills/NAME/ACTION), else are done here.
	action := func(act string) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			if err := skill.ValidName(args[0]); err != nil {
				return fmt.Errorf("skill: %w", err)
			}
			ctx := cmd.Context()
			cfg, err := e.config()
			if err != nil {
				return err
			}
			var answer struct{ Message string }
			err = callDaemon(ctx, cfg, http.MethodPost, "/api/skills/"+url.PathEscape(args[0])+"/"+act, struct{}{}, &answer)
			if errors.Is(err, errNoDaemon) {
				a, oerr := e.open(ctx, ForReading, slog.LevelError)
				if oerr != nil {
					return oerr
				}
				defer a.Close()
				answer.Message, err = a.SkillAction(ctx, act, args[0], "cli")
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, inert.Text(answer.Message))
			return nil
		}
	}
	rollback := &cobra.Command{Use: "rollback NAME", Short: "Go back to the skill's previous version", Args: cobra.ExactArgs(1), RunE: action(web.SkillRollback)}
	remove := &cobra.Command{Use: "remove NAME", Short: "Remove your copy of a skill (a bundled one shows again)", Args: cobra.ExactArgs(1), RunE: action(web.SkillRemove)}
	decide := func(approve bool) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			return e.decideProposal(cmd.Context(), core.KindSkill, args[0], approve)
		}
	}
	approve := &cobra.Command{Use: "approve NAME", Short: "Approve the waiting draft of a skill: it is in use from the next turn", Args: cobra.ExactArgs(1), RunE: decide(true)}
	deny := &cobra.Command{Use: "deny NAME", Short: "Deny the waiting draft of a skill: it is discarded", Args: cobra.ExactArgs(1), RunE: decide(false)}
	cmd.AddCommand(list, show, approve, deny, rollback, remove)
	return cmd
}

// showFiles prints the files beside a SKILL.md with their sizes, and what
// beside it the agent cannot read and why, every name inert.
func showFiles(w io.Writer, files []skill.File, notes []error) {
	if len(files) > 0 {
		fmt.Fprintln(w, "\nFiles beside it (the agent reads them with read_skill_file, as text; shelldon never runs them):")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, f := range files {
			fmt.Fprintf(tw, "  %s\t%s bytes\n", inert.Line(f.Path), inert.Count(int(f.Size)))
		}
		tw.Flush()
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nNot listed (the agent cannot read them):")
		for _, n := range notes {
			fmt.Fprintf(w, "  %s\n", inert.Line(n.Error()))
		}
	}
}

// times is "once", "twice" or "n times".
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return inert.Count(n) + " times"
}

// showDraft prints a skill draft waiting for the owner's approval: labelled
// as not in use, its whole SKILL.md escaped (behind a gutter no line of it
// can forge).
func showDraft(w io.Writer, d skill.Draft, afterLive bool) {
	if afterLive {
		fmt.Fprintln(w)
	}
	what := "a change of it"
	if d.New {
		what = "a new skill"
	}
	fmt.Fprintf(w, "Draft waiting for your approval (%s; NOT in use: in no prompt and use_skill cannot load it until you approve):\n", what)
	fmt.Fprintf(w, "%s, content hash %s, %s bytes (shelldon approvals list shows its request)\n%s\n",
		inert.Name(d.Name), inert.Line(d.Hash), inert.Count(len(d.Data)), inert.Block(string(d.Data), "  | "))
}

// draftNames are the skills with a draft waiting for the owner.
func draftNames(l *skill.Library) map[string]bool {
	names := map[string]bool{}
	for _, n := range l.Drafts() {
		names[n] = true
	}
	return names
}
