package gitguard

import (
	"sort"
	"strings"

	"github.com/shelldon/shelldon/internal/lazy"
)

var specsOnce lazy.Value[map[string]*spec]

// The subcommands offered and their options, as git 2.39 knows them
// (`git <sub> -h`, `git <sub> --git-completion-helper-all`). Options git
// has that are not listed here are refused as unknown; refused options are
// listed so that their abbreviations are recognised.
// specs are built on first use, not at the start of every shelldon process.
func specs() map[string]*spec { return specsOnce.Get(buildSpecTable) }

func buildSpecTable() map[string]*spec {
	return buildSpecs(map[string]*spec{
		// Reading.
		"status": {negatable: true, pos: paths, opts: []option{
			fl("verbose", 'v'), fl("short", 's'), fl("branch", 'b'), fl("show-stash", 0),
			fl("ahead-behind", 0), opt("porcelain", 0, plain), fl("long", 0), fl("null", 'z'),
			opt("untracked-files", 'u', plain), opt("ignored", 0, plain),
			opt("ignore-submodules", 0, plain), fl("renames", 0), fl("no-renames", 0),
			opt("find-renames", 'M', plain), no("column", 0, optional, "column output is not offered"),
		}},
		"log":  logSpec(),
		"show": logSpec(),
		"diff": {
			opts:  merge(diffOpts, diffOwn...),
			pos:   revsPaths,
			extra: diffExtra,
		},
		"grep": {negatable: true, number: true, nodash: "()", pos: revsPaths, pattern: true, patternOpts: "ef",
			extra: []string{"--no-textconv"},
			opts: []option{
				fl("cached", 0), fl("index", 0), no("no-index", 0, flag, whyOutside),
				no("untracked", 0, flag, whyUntrack), no("exclude-standard", 0, flag, whyUntrack),
				fl("invert-match", 'v'), fl("ignore-case", 'i'), fl("word-regexp", 'w'),
				fl("text", 'a'), fl("", 'I'), no("textconv", 0, flag, whyRuns),
				fl("recursive", 'r'), req("max-depth", 0, plain),
				fl("extended-regexp", 'E'), fl("basic-regexp", 'G'), fl("fixed-strings", 'F'),
				fl("perl-regexp", 'P'), fl("line-number", 'n'), fl("column", 0), fl("", 'h'), fl("", 'H'),
				fl("full-name", 0), fl("files-with-matches", 'l'), fl("name-only", 0),
				fl("files-without-match", 'L'), fl("null", 'z'), fl("only-matching", 'o'),
				fl("count", 'c'), opt("color", 0, plain), fl("break", 0), fl("heading", 0),
				req("context", 'C', plain), req("before-context", 'B', plain),
				req("after-context", 'A', plain), req("threads", 0, plain),
				fl("show-function", 'p'), fl("function-context", 'W'),
				req("", 'f', file), req("", 'e', plain), fl("and", 0), fl("or", 0), fl("not", 0),
				fl("quiet", 'q'), fl("all-match", 0), req("max-count", 'm', plain),
				no("open-files-in-pager", 'O', optional, whyRuns),
				no("ext-grep", 0, flag, whyRuns), noSubmodules,
			}},
		"ls-files": {negatable: true, pos: paths, opts: []option{
			noSubmodules,
			fl("", 'z'), fl("", 't'), fl("", 'v'), fl("", 'f'), fl("cached", 'c'),
			fl("deleted", 'd'), fl("modified", 'm'), fl("others", 'o'), fl("ignored", 'i'),
			fl("stage", 's'), fl("killed", 'k'), fl("directory", 0), fl("eol", 0),
			fl("empty-directory", 0), fl("unmerged", 'u'), fl("resolve-undo", 0),
			req("exclude", 'x', plain).nonNeg(), req("exclude-from", 'X', file).nonNeg(),
			req("exclude-per-directory", 0, file), fl("exclude-standard", 0),
			fl("full-name", 0), fl("error-unmatch", 0), req("with-tree", 0, rev),
			opt("abbrev", 0, plain), fl("debug", 0), fl("deduplicate", 0), fl("sparse", 0),
			req("format", 0, plain),
		}},
		"blame": {negatable: true, pos: revsPaths, extra: []string{"--no-textconv"}, opts: []option{
			fl("incremental", 0), fl("", 'b'), fl("root", 0), fl("show-stats", 0),
			fl("progress", 0), fl("score-debug", 0), fl("show-name", 'f'), fl("show-number", 'n'),
			fl("porcelain", 'p'), fl("line-porcelain", 0), fl("", 'c'), fl("", 't'), fl("", 'l'),
			fl("", 's'), fl("show-email", 'e'), fl("", 'w'), req("ignore-rev", 0, rev),
			req("ignore-revs-file", 0, file), fl("color-lines", 0), fl("color-by-age", 0),
			fl("minimal", 0), req("", 'S', file), req("contents", 0, file),
			opt("", 'C', plain), opt("", 'M', plain), req("", 'L', plain), opt("abbrev", 0, plain),
			fl("reverse", 0), fl("first-parent", 0), no("textconv", 0, flag, whyRuns),
		}},
		"shortlog": {negatable: true, pos: revsPaths, opts: []option{
			fl("committer", 'c'), fl("numbered", 'n'), fl("summary", 's'), fl("email", 'e'),
			opt("", 'w', plain), req("group", 0, plain),
			// Handed on to the revision walk.
			req("max-count", 0, plain), req("skip", 0, plain), req("since", 0, plain),
			req("after", 0, plain), req("until", 0, plain), req("before", 0, plain),
			req("author", 0, plain), req("grep", 0, plain), fl("merges", 0), fl("no-merges", 0),
			fl("first-parent", 0), fl("all", 0), opt("branches", 0, plain), opt("tags", 0, plain),
			fl("not", 0),
		}},
		"describe": {negatable: true, pos: revs, opts: []option{
			fl("contains", 0), fl("debug", 0), fl("all", 0), fl("tags", 0), fl("long", 0),
			fl("first-parent", 0), opt("abbrev", 0, plain), fl("exact-match", 0),
			req("candidates", 0, plain), req("match", 0, plain), req("exclude", 0, plain),
			fl("always", 0), opt("dirty", 0, plain), opt("broken", 0, plain),
		}},
		"rev-parse": {pos: revsPaths, opts: []option{
			fl("verify", 0), fl("quiet", 'q'), opt("short", 0, plain), opt("abbrev-ref", 0, plain),
			fl("symbolic", 0), fl("symbolic-full-name", 0), fl("show-toplevel", 0),
			fl("show-prefix", 0), fl("show-cdup", 0), fl("is-inside-work-tree", 0),
			fl("is-inside-git-dir", 0), fl("is-bare-repository", 0),
			fl("is-shallow-repository", 0), fl("absolute-git-dir", 0), fl("git-common-dir", 0),
			fl("all", 0), opt("branches", 0, plain), opt("tags", 0, plain), fl("not", 0),
			fl("revs-only", 0), fl("no-revs", 0), fl("flags", 0), fl("no-flags", 0), fl("sq", 0),
			opt("show-object-format", 0, plain),
			no("git-path", 0, required, "it names files inside .git"),
			no("resolve-git-dir", 0, required, "it probes paths outside the workspace"),
			no("parseopt", 0, flag, "it is for scripts"), no("sq-quote", 0, flag, "it is for scripts"),
			no("local-env-vars", 0, flag, "it is for scripts"),
			no("prefix", 0, required, "it changes how paths are read"),
			no("default", 0, required, "it is for scripts"),
			no("shared-index-path", 0, flag, "it names files inside .git"),
			no("show-superproject-working-tree", 0, flag, whySubmod),
		}},

		// Writing, locally.
		"add": {negatable: true, pos: paths, opts: []option{
			fl("dry-run", 'n'), fl("verbose", 'v'), no("interactive", 'i', flag, whyEditor),
			no("patch", 'p', flag, whyEditor), no("edit", 'e', flag, whyEditor),
			no("force", 'f', flag, "it adds ignored files, and ignore rules are how credential files stay out of the repository"),
			fl("update", 'u'), fl("renormalize", 0), fl("intent-to-add", 'N'), fl("all", 'A'),
			fl("ignore-removal", 0), fl("refresh", 0), fl("ignore-errors", 0),
			fl("ignore-missing", 0), fl("sparse", 0), req("chmod", 0, plain).check(chmodValue),
			fl("warn-embedded-repo", 0),
			no("pathspec-from-file", 0, required, whyPathFile), no("pathspec-file-nul", 0, flag, whyPathFile),
		}},
		"rm": {negatable: true, pos: paths, opts: []option{
			fl("dry-run", 'n'), fl("quiet", 'q'), fl("cached", 0), fl("force", 'f'), fl("", 'r'),
			fl("ignore-unmatch", 0), fl("sparse", 0),
			no("pathspec-from-file", 0, required, whyPathFile), no("pathspec-file-nul", 0, flag, whyPathFile),
		}},
		"mv": {negatable: true, pos: paths, opts: []option{
			fl("verbose", 'v'), fl("dry-run", 'n'), fl("force", 'f'), fl("", 'k'), fl("sparse", 0),
		}},
		"commit": {negatable: true, pos: paths, opts: []option{
			fl("quiet", 'q'), fl("verbose", 'v'), req("file", 'F', file), req("author", 0, plain),
			req("date", 0, plain), req("message", 'm', plain),
			no("reedit-message", 'c', required, whyEditor), req("reuse-message", 'C', rev),
			req("fixup", 0, plain), req("squash", 0, rev), fl("reset-author", 0),
			no("trailer", 0, required, "it runs the trailer commands of the repository's configuration; write trailers into the message"),
			fl("signoff", 's'), no("template", 't', required, whyEditor),
			no("edit", 'e', flag, whyEditor), req("cleanup", 0, plain), fl("status", 0),
			no("gpg-sign", 'S', optional, whySign), fl("all", 'a'), fl("include", 'i'),
			no("interactive", 0, flag, whyEditor), no("patch", 'p', flag, whyEditor),
			fl("only", 'o'), fl("no-verify", 'n'), fl("dry-run", 0), fl("short", 0),
			fl("branch", 0), fl("ahead-behind", 0), fl("porcelain", 0), fl("long", 0),
			fl("null", 'z'), fl("amend", 0), fl("no-post-rewrite", 0),
			opt("untracked-files", 'u', plain), fl("allow-empty", 0), fl("allow-empty-message", 0),
			no("pathspec-from-file", 0, required, whyPathFile), no("pathspec-file-nul", 0, flag, whyPathFile),
		}},
		"restore": {negatable: true, pos: paths, opts: []option{
			noSubmodules,
			req("source", 's', rev), fl("staged", 'S'), fl("worktree", 'W'),
			fl("ignore-unmerged", 0), fl("overlay", 0), fl("quiet", 'q'), fl("progress", 0),
			fl("merge", 'm'), req("conflict", 0, plain), fl("ours", '2'), fl("theirs", '3'),
			no("patch", 'p', flag, whyEditor), fl("ignore-skip-worktree-bits", 0),
			no("pathspec-from-file", 0, required, whyPathFile), no("pathspec-file-nul", 0, flag, whyPathFile),
		}},
		"reset": {negatable: true, pos: revsPaths, opts: []option{
			noSubmodules,
			fl("quiet", 'q'), fl("no-refresh", 0), fl("mixed", 0), fl("soft", 0), fl("hard", 0),
			fl("merge", 0), fl("keep", 0), no("patch", 'p', flag, whyEditor),
			fl("intent-to-add", 'N'),
			no("pathspec-from-file", 0, required, whyPathFile), no("pathspec-file-nul", 0, flag, whyPathFile),
		}},
		"branch": {negatable: true, pos: revs, opts: []option{
			noSubmodules,
			fl("verbose", 'v'), fl("quiet", 'q'), no("track", 't', optional, whyRemote),
			no("set-upstream", 0, flag, whyRemote), no("set-upstream-to", 'u', required, whyRemote),
			no("unset-upstream", 0, flag, whyRemote), opt("color", 0, plain), fl("remotes", 'r'),
			lastarg("contains", rev), lastarg("no-contains", rev), lastarg("with", rev),
			lastarg("without", rev), opt("abbrev", 0, plain), fl("all", 'a'), fl("delete", 'd'),
			fl("", 'D'), no("move", 'm', flag, whyConfig), no("", 'M', flag, whyConfig),
			no("copy", 'c', flag, whyConfig), no("", 'C', flag, whyConfig),
			fl("list", 'l'), fl("show-current", 0), fl("create-reflog", 0),
			no("edit-description", 0, flag, whyEditor), fl("force", 'f'),
			lastarg("merged", rev), lastarg("no-merged", rev),
			no("column", 0, optional, "column output is not offered"), req("sort", 0, plain),
			lastarg("points-at", rev), fl("ignore-case", 'i'), req("format", 0, plain),
		}},
		"switch": {negatable: true, pos: revs, opts: []option{
			noSubmodules,
			req("create", 'c', plain), req("force-create", 'C', plain), fl("guess", 0),
			fl("discard-changes", 0), fl("quiet", 'q'), fl("progress", 0), fl("merge", 'm'),
			req("conflict", 0, plain), fl("detach", 'd'), no("track", 't', optional, whyRemote),
			fl("force", 'f'), req("orphan", 0, plain), fl("overwrite-ignore", 0),
			fl("ignore-other-worktrees", 0),
		}},
		"checkout": {negatable: true, pos: revsPaths, opts: []option{
			noSubmodules,
			req("", 'b', plain), req("", 'B', plain), fl("", 'l'), fl("guess", 0), fl("overlay", 0),
			fl("quiet", 'q'), fl("progress", 0), fl("merge", 'm'), req("conflict", 0, plain),
			fl("detach", 'd'), no("track", 't', optional, whyRemote), fl("force", 'f'),
			req("orphan", 0, plain), fl("overwrite-ignore", 0), fl("ignore-other-worktrees", 0),
			fl("ours", '2'), fl("theirs", '3'), no("patch", 'p', flag, whyEditor),
			fl("ignore-skip-worktree-bits", 0),
			no("pathspec-from-file", 0, required, whyPathFile), no("pathspec-file-nul", 0, flag, whyPathFile),
		}},
		"init": {negatable: true, pos: none, opts: []option{
			no("template", 0, required, "a template directory can carry hooks"),
			no("bare", 0, flag, "it would make the workspace a bare repository"),
			no("shared", 0, optional, "it changes the repository's permissions"),
			fl("quiet", 'q'), no("separate-git-dir", 0, required, whyWrites),
			req("initial-branch", 'b', plain), req("object-format", 0, plain),
		}},
		"tag": {negatable: true, pos: revs, opts: []option{
			fl("list", 'l'), opt("", 'n', plain), fl("delete", 'd'), no("verify", 'v', flag, whySign),
			fl("annotate", 'a'), req("message", 'm', plain), req("file", 'F', file),
			no("edit", 'e', flag, whyEditor), no("sign", 's', flag, whySign),
			req("cleanup", 0, plain), no("local-user", 'u', required, whySign), fl("force", 'f'),
			fl("create-reflog", 0), no("column", 0, optional, "column output is not offered"),
			lastarg("contains", rev), lastarg("no-contains", rev), lastarg("with", rev),
			lastarg("without", rev), lastarg("merged", rev), lastarg("no-merged", rev),
			req("sort", 0, plain), lastarg("points-at", rev), req("format", 0, plain),
			opt("color", 0, plain), fl("ignore-case", 'i'),
		}},
		"merge": {negatable: true, pos: revs, opts: []option{
			fl("", 'n'), fl("stat", 0), fl("summary", 0), opt("log", 0, plain), fl("squash", 0),
			fl("commit", 0), no("edit", 'e', flag, whyEditor), req("cleanup", 0, plain),
			fl("ff", 0), fl("ff-only", 0), fl("rerere-autoupdate", 0),
			no("verify-signatures", 0, flag, whySign), req("strategy", 's', plain).check(strategy),
			req("strategy-option", 'X', plain), req("message", 'm', plain), req("file", 'F', file),
			req("into-name", 0, plain), fl("verbose", 'v'), fl("quiet", 'q'), fl("abort", 0),
			fl("quit", 0), fl("continue", 0), fl("allow-unrelated-histories", 0),
			fl("progress", 0), no("gpg-sign", 'S', optional, whySign), fl("autostash", 0),
			fl("overwrite-ignore", 0), fl("signoff", 0), fl("no-verify", 0), fl("verify", 0),
		}},
		"cherry-pick": {negatable: true, pos: revs, opts: append(pickOpts(),
			fl("", 'x'), fl("ff", 0), fl("allow-empty", 0), fl("allow-empty-message", 0),
			fl("keep-redundant-commits", 0),
		)},
		"revert": {negatable: true, pos: revs, opts: append(pickOpts(), fl("reference", 0))},
		"stash":  {}, // see stashSpecs
	})
}

// diffExtra are the daemon-owned options of git diff. --dense is a
// revision-walk option that a diff inside a repository ignores; it is here
// because git diff outside a repository silently becomes
// "git diff --no-index", which would read two workspace directories in
// full, denied files included, and --no-index refuses --dense.
var diffExtra = []string{"--no-ext-diff", "--no-textconv", "--dense"}

// noSubmodules is listed where git has --recurse-submodules, so that its
// negation is known too.
var noSubmodules = no("recurse-submodules", 0, optional, whySubmod)

// pickOpts are the options cherry-pick and revert share.
func pickOpts() []option {
	return []option{
		fl("quit", 0), fl("continue", 0), fl("abort", 0), fl("skip", 0),
		req("cleanup", 0, plain), fl("no-commit", 'n'), no("edit", 'e', flag, whyEditor),
		fl("signoff", 's'), req("mainline", 'm', plain), fl("rerere-autoupdate", 0),
		req("strategy", 0, plain).check(strategy), req("strategy-option", 'X', plain),
		no("gpg-sign", 'S', optional, whySign),
	}
}

var stashSpecsOnce lazy.Value[map[string]*spec]

// stashSpecs are the stash subcommands offered.
func stashSpecs() map[string]*spec { return stashSpecsOnce.Get(buildStashSpecTable) }

func buildStashSpecTable() map[string]*spec {
	return buildSpecs(map[string]*spec{
		"push": {negatable: true, pos: paths, opts: []option{
			no("patch", 'p', flag, whyEditor), fl("keep-index", 'k'), fl("include-untracked", 'u'),
			no("all", 'a', flag, "it stashes ignored files too, credential files among them"),
			fl("quiet", 'q'), req("message", 'm', plain), fl("staged", 'S'),
			no("pathspec-from-file", 0, required, whyPathFile), no("pathspec-file-nul", 0, flag, whyPathFile),
		}},
		"pop":   {negatable: true, pos: revs, opts: []option{fl("index", 0), fl("quiet", 'q')}},
		"apply": {negatable: true, pos: revs, opts: []option{fl("index", 0), fl("quiet", 'q')}},
		"drop":  {negatable: true, pos: revs, opts: []option{fl("quiet", 'q')}},
		"list":  logSpec(),
		"show": {
			opts:  merge(diffOpts, stashShowOpts...),
			pos:   revs,
			extra: []string{"--no-ext-diff", "--no-textconv"},
		},
		"branch": {pos: revs},
		"clear":  {pos: none},
	})
}

var stashNamesOnce lazy.Value[[]string]

func stashNames() []string {
	return stashNamesOnce.Get(func() []string { return sortedKeys(stashSpecs()) })
}

var refusedStashOnce lazy.Value[map[string]string]

// refusedStash are the stash subcommands refused, with why.
func refusedStash() map[string]string {
	return refusedStashOnce.Get(func() map[string]string {
		return map[string]string{
			"save":   "it is deprecated; use git stash push -m <message>",
			"create": "it is plumbing for scripts",
			"store":  "it is plumbing for scripts",
		}
	})
}

var refusedSubsOnce lazy.Value[map[string]string]

// refusedSubs are the git subcommands refused, with why.
func refusedSubs() map[string]string {
	return refusedSubsOnce.Get(func() map[string]string {
		return map[string]string{
			"clone":           "it talks to the network and runs transports",
			"fetch":           "it talks to the network and runs transports",
			"pull":            "it talks to the network and runs transports",
			"push":            "it talks to the network and runs transports",
			"ls-remote":       "it talks to the network",
			"remote":          "remotes are network configuration",
			"submodule":       "submodules fetch and run other repositories' configuration",
			"archive":         "it writes files and talks to remotes (--remote, --exec)",
			"bundle":          "it reads and writes bundle files",
			"daemon":          "it serves repositories on the network",
			"instaweb":        "it starts a web server",
			"send-email":      "it sends mail",
			"request-pull":    "it talks to remotes",
			"imap-send":       "it talks to a mail server",
			"credential":      "it handles credentials",
			"config":          "configuration is shelldon's, not the model's",
			"bisect":          "bisect run executes programs",
			"rebase":          "rebase --exec runs programs, and interactive rebase needs an editor",
			"am":              "it reads mailboxes from files and runs hooks",
			"apply":           "it reads patch files and can write outside the index",
			"format-patch":    "it writes files",
			"filter-branch":   "it runs shell snippets",
			"difftool":        "it runs external diff programs",
			"mergetool":       "it runs external merge programs",
			"worktree":        "it creates working trees outside the workspace",
			"gc":              "it is slow on small machines and runs repack and prune",
			"maintenance":     "it registers scheduled jobs",
			"fsck":            "it is slow on small machines and not needed",
			"notes":           "it is not needed and its editor needs a terminal",
			"replace":         "replacement objects can make one file look like another",
			"clean":           "it deletes untracked files; use run_shell if that is meant",
			"reflog":          "it is not offered",
			"help":            "it starts a manual viewer or a browser",
			"svn":             "it talks to other version control systems",
			"p4":              "it talks to other version control systems",
			"cvsimport":       "it talks to other version control systems",
			"cvsserver":       "it serves repositories",
			"fast-import":     "it is plumbing",
			"fast-export":     "it is plumbing",
			"cat-file":        "plumbing; use git show",
			"hash-object":     "plumbing",
			"update-ref":      "plumbing",
			"update-index":    "plumbing",
			"upload-pack":     "it serves repositories",
			"receive-pack":    "it serves repositories and runs hooks",
			"var":             "it is for scripts",
			"sparse-checkout": "it is not offered",
			"web--browse":     "it starts a browser",
		}
	})
}

func offered() string {
	return strings.Join(sortedKeys(specs()), ", ")
}

func sortedKeys(m map[string]*spec) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// buildSpecs indexes each spec's options. It runs once, on first use; the
// specs are read-only after it.
func buildSpecs(m map[string]*spec) map[string]*spec {
	for _, s := range m {
		s.ix = buildIndex(s)
	}
	return m
}
