package gitguard

import (
	"sort"
	"strings"
)

// arity says whether and how an option takes a value.
type arity uint8

const (
	flag     arity = iota // no value
	required              // --x=v, --x v, -xv or -x v
	optional              // only stuck: --x=v or -xv
	lastArg               // like required, but as the last word it takes no value (branch --merged)
)

// kind says how an option's value (or a positional word) is checked.
type kind uint8

const (
	plain     kind = iota // free text: messages, patterns, formats, numbers
	file                  // a file name git opens: PathCheck
	rev                   // a revision: the path of rev:path is checked
	lineRange             // log -L <range>:<file>: the file is checked
)

// option is one option of a subcommand as git knows it. An option with a
// refusal is listed all the same, so that an abbreviation of it is
// recognised and refused rather than taken for another option.
type option struct {
	long   string // without the leading "--"; "" when there is none
	short  byte   // 0 when there is none
	arity  arity
	kind   kind
	refuse string             // why the option is refused; "" when allowed
	valid  func(string) error // an extra check of the value, if any
	noneg  bool               // git has no --no-<long> for it (PARSE_OPT_NONEG)
}

// Constructors keep the tables readable.
func fl(long string, short byte) option { return option{long: long, short: short} }
func req(long string, short byte, k kind) option {
	return option{long: long, short: short, arity: required, kind: k}
}
func opt(long string, short byte, k kind) option {
	return option{long: long, short: short, arity: optional, kind: k}
}
func lastarg(long string, k kind) option {
	return option{long: long, arity: lastArg, kind: k}
}
func no(long string, short byte, a arity, why string) option {
	return option{long: long, short: short, arity: a, refuse: why}
}
func (o option) check(f func(string) error) option { o.valid = f; return o }
func (o option) nonNeg() option                    { o.noneg = true; return o }

// Reasons, shared by the tables.
const (
	whyRuns     = "it runs a program of the repository's or the model's choosing"
	whyWrites   = "it writes a file outside git's normal operation"
	whyEditor   = "it needs an editor or an interactive terminal, and there is none"
	whySign     = "signing and verifying run gpg, which the git tool does not offer"
	whyPathFile = "it reads pathspecs from a file, which bypasses the path checks; name the paths instead"
	whyOutside  = "it reads files outside the repository's control (the workspace's denied files included)"
	whyGlobal   = "global options are set by shelldon itself, never by the model"
	whySubmod   = "submodules are not supported by the git tool"
	whyRemote   = "remote-tracking configuration is not supported by the git tool"
	whyUntrack  = "it reaches untracked and ignored files, the workspace's denied files included"
	whyDiffMrg  = "it re-runs merges, which may start configured merge drivers"
	whyConfig   = "it rewrites the repository's configuration, which the git tool shows git read-only; use git branch <new> <old>, then delete the old branch"
)

// universal are refused everywhere: their names (and so abbreviations of
// them) are recognised in every subcommand that does not define the name
// itself.
var universal = []option{
	no("upload-pack", 0, required, whyRuns),
	no("receive-pack", 0, required, whyRuns),
	no("exec", 0, required, whyRuns),
	no("exec-path", 0, optional, whyGlobal),
	no("ext-diff", 0, flag, whyRuns),
	no("textconv", 0, flag, whyRuns),
	no("output", 0, required, whyWrites),
	no("output-directory", 0, required, whyWrites),
	no("open-files-in-pager", 0, optional, whyRuns),
	no("template", 0, required, "it copies hooks or reads a file chosen by the model"),
	no("separate-git-dir", 0, required, whyWrites),
	no("config", 0, required, whyGlobal),
	no("config-env", 0, required, whyGlobal),
	no("git-dir", 0, required, whyGlobal),
	no("work-tree", 0, required, whyGlobal),
	no("namespace", 0, required, whyGlobal),
	no("super-prefix", 0, required, whyGlobal),
	no("gpg-sign", 0, optional, whySign),
	no("sign", 0, flag, whySign),
	no("pathspec-from-file", 0, required, whyPathFile),
	no("recurse-submodules", 0, optional, whySubmod),
	no("help", 0, flag, "it starts a manual viewer or a browser"),
}

// positional says what the words that are not options are.
type positional uint8

const (
	none      positional = iota // there are none
	paths                       // pathspecs and file operands
	revs                        // revisions and names (branches, tags, stashes), never paths
	revsPaths                   // revisions, then paths: git decides which each word is
)

// spec is what Parse knows about one subcommand.
type spec struct {
	opts []option
	// negatable: the subcommand parses its options with git's
	// parse-options, which accepts --no-<name> for every option (and
	// <name> for an option called no-<name>).
	negatable bool
	number    bool   // -<n> is an option (log: --max-count, grep: --context)
	nodash    string // one-character words that are options (grep's "(" and ")")
	pos       positional
	// pattern: the first positional word is a pattern, not a revision or
	// a path, unless a pattern option (patternOpts) came first; and
	// options end there (grep parses with STOP_AT_NON_OPTION).
	pattern     bool
	patternOpts string // short letters that give a pattern (grep's -e and -f)
	// extra are daemon-owned options Argv puts right after the subcommand.
	extra []string

	ix *index
}

// entry is one name an option answers to.
type entry struct {
	opt     *option
	negated bool // --no-<long>: a flag that undoes the option
}

// index maps every long name (negations included) and short letter of a
// subcommand to its option.
type index struct {
	long  map[string]entry
	names []string // sorted keys of long
	short map[byte]*option
}

func buildIndex(s *spec) *index {
	ix := &index{long: map[string]entry{}, short: map[byte]*option{}}
	for i := range s.opts {
		o := &s.opts[i]
		if o.long != "" {
			ix.long[o.long] = entry{opt: o}
		}
		if o.short != 0 {
			ix.short[o.short] = o
		}
	}
	if s.negatable {
		for i := range s.opts {
			o := &s.opts[i]
			if o.long == "" || o.noneg {
				continue
			}
			var name string
			if rest, ok := strings.CutPrefix(o.long, "no-"); ok {
				name = rest
			} else {
				name = "no-" + o.long
			}
			if _, ok := ix.long[name]; !ok {
				ix.long[name] = entry{opt: o, negated: true}
			}
		}
	}
	for i := range universal {
		o := &universal[i]
		if _, ok := ix.long[o.long]; !ok {
			ix.long[o.long] = entry{opt: o}
		}
	}
	for name := range ix.long {
		ix.names = append(ix.names, name)
	}
	sort.Strings(ix.names)
	return ix
}

// lookup resolves a long option name as git's parse-options does: an exact
// name wins; otherwise a unique prefix of the names (negations included)
// stands for that option; several are ambiguous. It returns the full name.
func (ix *index) lookup(name string) (full string, e entry, err error) {
	if e, ok := ix.long[name]; ok {
		return name, e, nil
	}
	i := sort.SearchStrings(ix.names, name)
	var found []string
	seen := map[entry]bool{}
	for ; i < len(ix.names) && strings.HasPrefix(ix.names[i], name); i++ {
		c := ix.long[ix.names[i]]
		if !seen[c] {
			seen[c] = true
			found = append(found, ix.names[i])
		}
	}
	switch len(found) {
	case 0:
		return "", entry{}, refusef("unknown option --%s", name)
	case 1:
		return found[0], ix.long[found[0]], nil
	}
	if len(found) > 6 {
		found = append(found[:6], "...")
	}
	return "", entry{}, refusef("--%s is ambiguous (it could be --%s); spell the option out", name, strings.Join(found, ", --"))
}
