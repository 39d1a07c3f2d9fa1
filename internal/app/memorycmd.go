package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

// memoryCmd is `shelldon memory`: the owner's view of the facts the agent
// remembered, and the owner's edits and forgets. Listing and showing read
// the store; edit and forget go through a running daemon (PATCH and
// DELETE /api/memory/ID), else are done here. Every fact is text the
// model wrote: it is shown inert.
func (e cmdEnv) memoryCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "The facts shelldon remembered: list, show, edit and forget them",
		Long: "The facts shelldon remembered (remember), each with where and when it was said. The ones\n" +
			"most relevant to your message go into each turn's prompt as quoted data (memory.context_bytes).\n" +
			"Forget removes a fact for good: from the memory and its index, and from every later prompt;\n" +
			"the audit keeps its number and a hash of its text, and the chat where it was said keeps its history.",
	}
	var (
		query  string
		limit  int
		before int64
	)
	list := &cobra.Command{
		Use: "list", Short: "List the facts, newest first, or search them (--query)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := e.open(cmd.Context(), ForReading, slog.LevelError)
			if err != nil {
				return err
			}
			defer a.Close()
			facts, err := a.Reader.Memories(cmd.Context(), core.FactQuery{Query: query, Limit: limit, Before: before})
			if err != nil {
				return err
			}
			if len(facts) == 0 {
				fmt.Fprintln(e.stdout, "No facts.")
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTORED\tCHAT\tTURN\tFACT")
			for _, f := range facts {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", f.ID, f.CreatedAt.Local().Format(time.DateOnly), orDash(inert.Name(f.Chat)),
					dash(int(f.Turn)), inert.Short(f.Text, 80))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if n := len(facts); query == "" && n > 0 && n == limit {
				fmt.Fprintf(e.stderr, "Older facts: shelldon memory list --before %d\n", facts[n-1].ID)
			}
			return nil
		},
	}
	list.Flags().StringVarP(&query, "query", "q", "", "only the facts holding any of these words, best match first")
	list.Flags().IntVarP(&limit, "limit", "n", 50, "how many facts (at most 1000)")
	list.Flags().Int64Var(&before, "before", 0, "only facts older than this ID (the next page)")

	show := &cobra.Command{
		Use: "show ID", Short: "Show a fact in full, with where and when it was said", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseFactID(args[0])
			if err != nil {
				return err
			}
			a, err := e.open(cmd.Context(), ForReading, slog.LevelError)
			if err != nil {
				return err
			}
			defer a.Close()
			f, err := a.Reader.Memory(cmd.Context(), id)
			if err != nil {
				return factFailure(err)
			}
			e.printFact(f)
			return nil
		},
	}
	edit := &cobra.Command{
		Use: "edit ID TEXT...", Short: "Replace a fact's text (the old text is gone, as if forgotten)", Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseFactID(args[0])
			if err != nil {
				return err
			}
			text := strings.Join(args[1:], " ")
			msg, err := e.changeFact(cmd.Context(), http.MethodPatch, id, map[string]string{"text": text},
				func(r *core.Reader) (string, error) {
					f, err := r.EditMemory(cmd.Context(), id, text, "cli")
					return fmt.Sprintf("Fact #%d is changed.", f.ID), err
				})
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, inert.Text(msg))
			return nil
		},
	}
	forget := &cobra.Command{
		Use: "forget ID", Short: "Forget a fact for good (the audit keeps its number and a hash)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseFactID(args[0])
			if err != nil {
				return err
			}
			msg, err := e.changeFact(cmd.Context(), http.MethodDelete, id, struct{}{},
				func(r *core.Reader) (string, error) {
					_, err := r.ForgetMemory(cmd.Context(), id, "cli")
					return fmt.Sprintf("Fact #%d is forgotten.", id), err
				})
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, inert.Text(msg))
			return nil
		},
	}
	cmd.AddCommand(list, show, edit, forget)
	return cmd
}

// changeFact asks the home's running daemon to change fact id (method on
// /api/memory/ID with body), else does it here with local, and returns
// what to tell the owner.
func (e cmdEnv) changeFact(ctx context.Context, method string, id int64, body any, local func(*core.Reader) (string, error)) (string, error) {
	cfg, err := e.config()
	if err != nil {
		return "", err
	}
	var answer struct{ Message string }
	err = callDaemon(ctx, cfg, method, "/api/memory/"+strconv.FormatInt(id, 10), body, &answer)
	if !errors.Is(err, errNoDaemon) {
		return answer.Message, err
	}
	a, err := e.open(ctx, ForReading, slog.LevelError)
	if err != nil {
		return "", err
	}
	defer a.Close()
	msg, err := local(a.Reader)
	if err != nil {
		return "", factFailure(err)
	}
	return msg, nil
}

// printFact shows one fact: its fields one line each, its text behind a
// gutter.
func (e cmdEnv) printFact(f core.Fact) {
	fmt.Fprintf(e.stdout, "Fact #%d\nStored: %s in chat %s, turn %d\nChanged: %s\nText (%s characters):\n%s\n",
		f.ID, f.CreatedAt.Local().Format(time.DateTime), inert.Name(f.Chat), f.Turn, f.UpdatedAt.Local().Format(time.DateTime),
		inert.Count(len([]rune(f.Text))), inert.Block(f.Text, "  "))
}

// parseFactID reads a fact's id as the owner typed it ("12" or "#12").
func parseFactID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
	if err != nil || id < 1 {
		return 0, exitError{code: exitConfig, msg: "shelldon: " + inert.Name(s) + " is not a fact's number (`shelldon memory list` shows them)"}
	}
	return id, nil
}

// factFailure is the owner's error for a refused memory command.
func factFailure(err error) error {
	switch {
	case errors.Is(err, core.ErrNoSuchFact):
		return exitError{code: exitFail, msg: "shelldon: " + inert.Line(err.Error()) + " (`shelldon memory list` lists them)"}
	case errors.Is(err, core.ErrBadInput):
		return exitError{code: exitFail, msg: "shelldon: " + inert.Line(err.Error())}
	}
	return err
}
