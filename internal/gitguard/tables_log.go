package gitguard

import "strings"

// The options of git's diff machinery (diff.c, git 2.39), shared by diff,
// log, show and stash show. git parses them without abbreviations; Parse
// spells abbreviations out all the same, so git sees a full name.
var diffOpts = []option{
	fl("patch", 'p'), fl("no-patch", 's'), fl("", 'u'), opt("unified", 'U', plain),
	fl("function-context", 'W'), fl("no-function-context", 0),
	fl("raw", 0), fl("patch-with-raw", 0), fl("patch-with-stat", 0),
	fl("numstat", 0), fl("shortstat", 0),
	opt("dirstat", 'X', plain), fl("cumulative", 0), opt("dirstat-by-file", 0, plain),
	fl("check", 0), fl("summary", 0), fl("name-only", 0), fl("name-status", 0),
	opt("stat", 0, plain), req("stat-width", 0, plain), req("stat-name-width", 0, plain),
	req("stat-graph-width", 0, plain), req("stat-count", 0, plain),
	fl("compact-summary", 0), fl("no-compact-summary", 0), fl("binary", 0),
	fl("full-index", 0), fl("no-full-index", 0),
	opt("color", 0, plain), fl("no-color", 0), req("ws-error-highlight", 0, plain),
	fl("", 'z'), opt("abbrev", 0, plain), fl("no-abbrev", 0),
	req("src-prefix", 0, plain), req("dst-prefix", 0, plain), req("line-prefix", 0, plain),
	fl("no-prefix", 0), req("inter-hunk-context", 0, plain),
	req("output-indicator-new", 0, plain), req("output-indicator-old", 0, plain),
	req("output-indicator-context", 0, plain),
	// Renames.
	opt("break-rewrites", 'B', plain), opt("find-renames", 'M', plain),
	fl("irreversible-delete", 'D'), opt("find-copies", 'C', plain),
	fl("find-copies-harder", 0), fl("no-find-copies-harder", 0), fl("no-renames", 0),
	fl("rename-empty", 0), fl("no-rename-empty", 0), fl("follow", 0), fl("no-follow", 0),
	req("", 'l', plain),
	// Algorithms.
	fl("minimal", 0), fl("no-minimal", 0), fl("ignore-all-space", 'w'),
	fl("ignore-space-change", 'b'), fl("ignore-space-at-eol", 0), fl("ignore-cr-at-eol", 0),
	fl("ignore-blank-lines", 0), req("ignore-matching-lines", 'I', plain),
	fl("no-ignore-matching-lines", 0),
	fl("indent-heuristic", 0), fl("no-indent-heuristic", 0), fl("patience", 0),
	fl("histogram", 0), req("diff-algorithm", 0, plain), req("anchored", 0, plain),
	opt("word-diff", 0, plain), req("word-diff-regex", 0, plain), opt("color-words", 0, plain),
	opt("color-moved", 0, plain), fl("no-color-moved", 0),
	req("color-moved-ws", 0, plain), fl("no-color-moved-ws", 0),
	// The rest.
	opt("relative", 0, file), fl("no-relative", 0), fl("text", 'a'), fl("no-text", 0),
	fl("", 'R'), fl("exit-code", 0), fl("no-exit-code", 0),
	no("ext-diff", 0, flag, whyRuns), fl("no-ext-diff", 0),
	no("textconv", 0, flag, whyRuns), fl("no-textconv", 0),
	opt("ignore-submodules", 0, plain), no("submodule", 0, optional, whySubmod),
	fl("ita-invisible-in-index", 0), fl("ita-visible-in-index", 0),
	req("", 'S', plain), req("", 'G', plain), fl("pickaxe-all", 0), fl("pickaxe-regex", 0),
	req("", 'O', file), req("rotate-to", 0, file), req("skip-to", 0, file),
	req("find-object", 0, plain), req("diff-filter", 0, plain),
	no("output", 0, required, whyWrites),
}

// The options of git's revision walk and of log and show themselves
// (revision.c, builtin/log.c).
var revOpts = []option{
	// Limiting.
	req("max-count", 'n', plain), req("skip", 0, plain),
	req("since", 0, plain), req("after", 0, plain), req("since-as-filter", 0, plain),
	req("until", 0, plain), req("before", 0, plain),
	req("author", 0, plain), req("committer", 0, plain),
	req("grep-reflog", 0, plain), req("grep", 0, plain), fl("all-match", 0), fl("invert-grep", 0),
	fl("regexp-ignore-case", 'i'), fl("basic-regexp", 0), fl("extended-regexp", 'E'),
	fl("fixed-strings", 'F'), fl("perl-regexp", 'P'),
	fl("remove-empty", 0), fl("merges", 0), fl("no-merges", 0),
	req("min-parents", 0, plain), req("max-parents", 0, plain),
	fl("no-min-parents", 0), fl("no-max-parents", 0),
	fl("first-parent", 0), fl("exclude-first-parent-only", 0), fl("not", 0),
	fl("all", 0), opt("branches", 0, plain), opt("tags", 0, plain), opt("remotes", 0, plain),
	req("glob", 0, plain), req("exclude", 0, plain), req("exclude-hidden", 0, plain),
	fl("reflog", 0), fl("single-worktree", 0), fl("ignore-missing", 0), fl("bisect", 0),
	no("alternate-refs", 0, flag, "it runs core.alternateRefsCommand"),
	no("stdin", 0, flag, "it reads revisions from standard input, which is empty"),
	fl("cherry-mark", 0), fl("cherry-pick", 0), fl("left-only", 0), fl("right-only", 0),
	fl("cherry", 0), fl("walk-reflogs", 'g'), fl("merge", 0), fl("boundary", 0),
	// History simplification and order.
	fl("simplify-by-decoration", 0), fl("show-pulls", 0), fl("full-history", 0),
	fl("dense", 0), fl("sparse", 0), fl("simplify-merges", 0), opt("ancestry-path", 0, rev),
	fl("date-order", 0), fl("author-date-order", 0), fl("topo-order", 0), fl("reverse", 0),
	opt("no-walk", 0, plain), fl("do-walk", 0),
	// Formatting.
	opt("pretty", 0, plain), req("format", 0, plain), fl("abbrev-commit", 0),
	fl("no-abbrev-commit", 0), fl("oneline", 0), req("encoding", 0, plain),
	opt("expand-tabs", 0, plain), fl("no-expand-tabs", 0),
	opt("notes", 0, plain), fl("no-notes", 0), opt("show-notes", 0, plain),
	fl("standard-notes", 0), fl("no-standard-notes", 0),
	no("show-signature", 0, flag, whySign),
	fl("relative-date", 0), req("date", 0, plain), fl("parents", 0), fl("children", 0),
	fl("left-right", 0), fl("graph", 0), opt("show-linear-break", 0, plain),
	// Diffs of merges.
	fl("", 'm'), fl("", 'c'), fl("cc", 0), fl("combined-all-paths", 0),
	// A literal rather than req(...).check(...): a method call would make
	// revOpts package init work (see lazy.go).
	option{long: "diff-merges", arity: required, kind: plain, valid: noRemerge}, fl("no-diff-merges", 0),
	no("remerge-diff", 0, flag, whyDiffMrg), fl("", 't'), fl("", 'r'),
	// builtin/log.c.
	fl("full-diff", 0), fl("log-size", 0), fl("quiet", 'q'), fl("no-quiet", 0), fl("source", 0),
	fl("use-mailmap", 0), fl("mailmap", 0), fl("no-use-mailmap", 0), fl("no-mailmap", 0),
	opt("decorate", 0, plain), fl("no-decorate", 0), fl("clear-decorations", 0),
	req("decorate-refs", 0, plain), req("decorate-refs-exclude", 0, plain),
	req("", 'L', lineRange),
}

// diffOwn are git diff's own: what to compare.
var diffOwn = []option{
	fl("cached", 0), fl("staged", 0), fl("merge-base", 0), fl("quiet", 0), fl("no-quiet", 0),
	no("no-index", 0, flag, whyOutside),
	fl("base", '1'), fl("ours", '2'), fl("theirs", '3'), fl("", '0'),
	fl("", 'c'), fl("cc", 0),
}

func noRemerge(v string) error {
	if v == "remerge" || v == "r" {
		return refusef("remerge: %s", whyDiffMrg)
	}
	return nil
}

// merge combines option lists: an option of over replaces the option of
// base with the same long name, and takes its short letter.
func merge(base []option, over ...option) []option {
	longs, shorts := map[string]bool{}, map[byte]bool{}
	for _, o := range over {
		if o.long != "" {
			longs[o.long] = true
		}
		if o.short != 0 {
			shorts[o.short] = true
		}
	}
	var out []option
	for _, o := range base {
		if o.long != "" && longs[o.long] {
			continue
		}
		if shorts[o.short] {
			if o.long == "" {
				continue
			}
			o.short = 0
		}
		out = append(out, o)
	}
	return append(out, over...)
}

// strategies are git's built-in merge strategies; any other name runs a
// program called git-merge-<name>.
func strategy(v string) error {
	switch v {
	case "ort", "recursive", "resolve", "octopus", "ours", "subtree":
		return nil
	}
	return refusef("only the built-in strategies (ort, recursive, resolve, octopus, ours, subtree) are offered: another name runs a program called git-merge-<name>")
}

func chmodValue(v string) error {
	if v == "+x" || v == "-x" {
		return nil
	}
	return refusef(`"+x" or "-x"`)
}

// logSpec is the spec of log and show (and stash list, which runs log).
func logSpec() *spec {
	return &spec{
		opts:   merge(diffOpts, revOpts...),
		number: true,
		pos:    revsPaths,
		extra:  []string{"--no-ext-diff", "--no-textconv"},
	}
}

// stashShowOpts: git stash show parses -u and --only-untracked first, then
// hands the rest to the diff machinery.
var stashShowOpts = []option{
	fl("include-untracked", 'u'), fl("no-include-untracked", 0), fl("only-untracked", 0),
}

// hasOption reports whether any word before "--" is an option.
func hasOption(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			return true
		}
	}
	return false
}
