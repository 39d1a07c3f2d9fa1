package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/shelldon/shelldon/internal/core/approvals"
	"github.com/shelldon/shelldon/internal/gitguard"
	"github.com/shelldon/shelldon/internal/gitremote"
)

// Bounds of a push card: the commits listed per ref, the diffstat lines,
// the bytes of each line (a subject is the model's text).
const (
	pushCardCommits = 20
	pushCardStat    = 30
	pushCardLine    = 160
)

// pushCard is what a push would send, from the commits the call is bound
// to (approvals.BindingOf: resolved in the workspace when it was checked;
// these and nothing else leave): per ref, the commit, the commits the
// remote does not have as far as the daemon's mirror knows (subjects), and
// a diffstat. Subjects and file names are the model's text: each line is
// bounded here and escaped by the card (approvals.Escape).
func (d describer) pushCard(ctx context.Context, nc gitguard.NetCommand) []string {
	commits, err := gitguard.ParsePushBinding(nc, approvals.BindingOf(ctx))
	if err != nil {
		return []string{"Would be refused: " + err.Error()}
	}
	mirror := filepath.Join(gitMirrors(d.home), nc.Remote.Name+".git")
	lines := []string{"Only the commits named here leave: one made after this card is not pushed"}
	for i, ref := range nc.Refs {
		dst := gitguard.PushDst(ref)
		if ref.Delete {
			continue
		}
		lines = append(lines, fmt.Sprintf("Pushes commit %s to %s", commits[i], dst))
		if d.git == nil {
			lines = append(lines, "shelldon cannot list the commits here (no sandbox): deny this request unless you know them")
			continue
		}
		base, _ := gitremote.Local(ctx, mirror, "rev-parse", "--verify", "--quiet", dst+"^{commit}")
		var not []string
		if gitguard.IsObjectName(base) {
			not = []string{base}
		} else if heads, err := gitremote.Local(ctx, mirror, "for-each-ref", "--count=100", "--format=%(objectname)", "refs/heads/"); err == nil && heads != "" {
			not = strings.Fields(heads)
		}
		args := []string{"--format=%h %s", fmt.Sprintf("--max-count=%d", pushCardCommits+1), commits[i]}
		if len(not) > 0 {
			args = append(append(args, "--not"), not...)
		}
		out, err := d.git(ctx, gitguard.Argv(gitguard.Command{Sub: "log", Args: append(args, "--")}), mirror)
		if err != nil {
			lines = append(lines, "shelldon could not list the commits that would leave ("+bound(err.Error())+"): deny this request")
			continue
		}
		log := nonEmpty(strings.Split(out, "\n"))
		switch {
		case len(log) == 0:
			lines = append(lines, "Nothing new: the remote's "+dst+" already has this commit, as shelldon last saw it")
		case len(not) == 0:
			lines = append(lines, "The remote's branches are not known here (fetch first to see only what is new); the newest commits of what leaves:")
		case !gitguard.IsObjectName(base):
			lines = append(lines, "New to the remote ("+dst+" is new there), newest first:")
		default:
			lines = append(lines, "New on the remote's "+dst+", newest first:")
		}
		for j, l := range log {
			if j == pushCardCommits {
				lines = append(lines, "  … and more")
				break
			}
			lines = append(lines, "  "+bound(l))
		}
		if !gitguard.IsObjectName(base) || len(log) == 0 {
			continue
		}
		stat, err := d.git(ctx, gitguard.Argv(gitguard.Command{Sub: "diff", Args: []string{"--stat=120", base, commits[i], "--"}}), mirror)
		if err != nil {
			continue
		}
		st := nonEmpty(strings.Split(stat, "\n"))
		lines = append(lines, "Changes:")
		for j, l := range st {
			if j == pushCardStat && j < len(st)-1 {
				lines = append(lines, fmt.Sprintf("  … %d more lines; %s", len(st)-j-1, bound(strings.TrimSpace(st[len(st)-1]))))
				break
			}
			lines = append(lines, "  "+bound(strings.TrimSpace(l)))
		}
	}
	return lines
}

func bound(s string) string { return approvals.Bound(s, pushCardLine) }

func nonEmpty(ls []string) []string {
	var out []string
	for _, l := range ls {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
