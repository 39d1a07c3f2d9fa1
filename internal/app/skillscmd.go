package app

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/skill"
	"github.com/shelldon/shelldon/internal/transport/cli"
)

func (e cmdEnv) skillsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "The skills: written procedures shelldon follows",
		Long: "Skills are procedures over existing tools (SKILL.md files). Bundled skills are read-only;\n" +
			"yours live in $SHELLDON_HOME/skills, and each update the agent makes keeps the previous version.",
	}
	lib := func() (*skill.Library, error) {
		home, err := e.home()
		if err != nil {
			return nil, err
		}
		return skill.Open(home+"/skills", bundled())
	}
	list := &cobra.Command{
		Use: "list", Short: "List the skills", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := lib()
			if err != nil {
				return err
			}
			skills, problems, err := l.List()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSOURCE\tVERSION\tDESCRIPTION")
			for _, s := range skills {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Source, dash(s.Version), clip(s.Description, 70))
			}
			tw.Flush()
			for _, p := range problems {
				fmt.Fprintf(e.stderr, "skipped: %v\n", p)
			}
			return nil
		},
	}
	show := &cobra.Command{
		Use: "show NAME", Short: "Show a skill", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := lib()
			if err != nil {
				return err
			}
			s, err := l.Get(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s (%s, version %d)\n%s\n\n%s\n", s.Name, s.Source, s.Version, cli.Sanitize(s.Description), cli.Sanitize(s.Body))
			if v := l.Versions(s.Name); len(v) > 0 {
				fmt.Fprintf(e.stdout, "\nEarlier versions kept: %v\n", v)
			}
			return nil
		},
	}
	rollback := &cobra.Command{
		Use: "rollback NAME", Short: "Go back to the skill's previous version", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := lib()
			if err != nil {
				return err
			}
			s, err := l.Rollback(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s is back at version %d.\n", s.Name, s.Version)
			return nil
		},
	}
	remove := &cobra.Command{
		Use: "remove NAME", Short: "Remove your copy of a skill (a bundled one shows again)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := lib()
			if err != nil {
				return err
			}
			if err := l.Remove(args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Removed %s (kept aside in skills/.removed).\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(list, show, rollback, remove)
	return cmd
}
