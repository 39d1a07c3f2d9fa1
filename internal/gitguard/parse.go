package gitguard

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// PathCheck checks one path the model named, relative to the workspace
// root (the repository's top level): a pathspec, a file operand, the path
// of a rev:path, or a file an option reads. It is supplied by the caller:
// workspace resolution (no escape by "..", absolute names or symlinks) and
// the credential deny list. It must accept names that do not exist, since
// git also names files of other commits. A nil PathCheck checks nothing.
type PathCheck func(path string) error

// Command is a git command line that passed Parse.
type Command struct {
	// Sub is the subcommand ("status", "log", ...).
	Sub string
	// Args are the words after the subcommand, normalised: abbreviated
	// long options are spelled out, a long option's value is joined with
	// "=", clusters of short options are split one letter a word, and for
	// stash the stash subcommand is always named first.
	Args []string
	// Paths are the pathspecs and file operands found, the path parts of
	// rev:path words and the files options read, each as given, each
	// passed to PathCheck. Words that git may take for a revision or a
	// path were checked as both but are not listed.
	Paths []string
}

// parser holds the state of one Parse.
type parser struct {
	sp          *spec
	check       PathCheck
	args        []string
	paths       []string
	cmd         string // "log", "stash push": for messages
	dashdash    bool   // "--" seen: every word after it is positional
	npos        int    // positional words seen
	patGiven    bool   // a pattern option (-e/-f) was given
	patternNext bool   // the next word is grep's pattern
}

// Parse checks argv (the words of Split) against the allowlists of this
// package and returns the normalised command. See the package doc for what
// is allowed and why. Every error wraps ErrRefused, or the error of check
// for a path it refused.
func Parse(argv []string, check PathCheck) (Command, error) {
	cmd, err := parse(argv, check)
	if err != nil {
		return Command{}, fmt.Errorf("git: %w", err)
	}
	return cmd, nil
}

func parse(argv []string, check PathCheck) (Command, error) {
	if len(argv) > maxWords {
		return Command{}, refusef("%d words; at most %d", len(argv), maxWords)
	}
	if len(argv) == 0 {
		return Command{}, refusef("no subcommand given; offered: %s", offered())
	}
	for _, w := range argv {
		if err := checkWord(w); err != nil {
			return Command{}, err
		}
	}
	sub, rest := argv[0], argv[1:]
	if strings.HasPrefix(sub, "-") {
		name, _, _ := strings.Cut(sub, "=")
		return Command{}, refusef("%s before the subcommand is a global option; %s", name, whyGlobal)
	}
	sp, ok := specs()[sub]
	if !ok {
		if why, ok := refusedSubs()[sub]; ok {
			return Command{}, refusef("git %s is not offered: %s", sub, why)
		}
		return Command{}, refusef("git %s is not offered; offered: %s", sub, offered())
	}
	var lead []string
	if sub == "stash" {
		name := "push" // git stash, git stash -m x and git stash -- paths all push
		if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			name, rest = rest[0], rest[1:]
		}
		if why, ok := refusedStash()[name]; ok {
			return Command{}, refusef("git stash %s is not offered: %s", name, why)
		}
		if sp, ok = stashSpecs()[name]; !ok {
			return Command{}, refusef("git stash %s is not offered; offered: %s", name, strings.Join(stashNames(), ", "))
		}
		lead = []string{name}
	}
	p := &parser{sp: sp, check: check, args: lead, cmd: strings.Join(append([]string{sub}, lead...), " ")}
	if err := p.run(rest); err != nil {
		return Command{}, err
	}
	return Command{Sub: sub, Args: p.args, Paths: p.paths}, nil
}

// checkWord refuses a word git should never see: NUL, line breaks and other
// control characters, invalid UTF-8.
func checkWord(w string) error {
	if !utf8.ValidString(w) {
		return refusef("%q is not valid UTF-8", w)
	}
	for i, r := range w {
		if r != '\t' {
			if err := checkControl(r, i); err != nil {
				return fmt.Errorf("in %q: %w", w, err)
			}
		}
	}
	return nil
}

func (p *parser) emit(words ...string) { p.args = append(p.args, words...) }

func (p *parser) run(words []string) error {
	sp := p.sp
	for i := 0; i < len(words); i++ {
		w := words[i]
		// git grep stops parsing options at its first positional word.
		stopped := sp.pattern && p.npos > 0
		switch {
		case p.patternNext:
			// grep -- <pattern>: whatever follows the "--" is the pattern.
			p.patternNext = false
			p.npos++
			p.emit(w)
		case p.dashdash:
			if err := p.positional(w); err != nil {
				return err
			}
		case w == "--":
			p.emit(w)
			if sp.pattern && !p.patGiven && p.npos == 0 {
				p.patternNext = true // a later "--" starts the paths
				continue
			}
			if sp.pos == none {
				return refusef("git %s takes no arguments", p.cmd)
			}
			p.dashdash = true
		case len(w) == 1 && sp.nodash != "" && strings.Contains(sp.nodash, w) && !stopped:
			p.emit(w)
		case len(w) > 1 && w[0] == '-':
			if stopped {
				return refusef("%s after %q: git %s takes its options before the pattern and the revisions (give them first; -e <pattern> names a pattern that starts with -)", w, p.args[len(p.args)-1], p.cmd)
			}
			var err error
			if w[1] == '-' {
				i, err = p.long(words, i)
			} else {
				i, err = p.short(words, i)
			}
			if err != nil {
				return err
			}
		default:
			if err := p.positional(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// long handles "--name", "--name=value" and "--name value" at words[i] and
// returns the index of the last word it used.
func (p *parser) long(words []string, i int) (int, error) {
	w := words[i]
	name, value, hasValue := strings.Cut(w[2:], "=")
	if name == "" {
		return i, refusef("%q is not an option", w)
	}
	full, e, err := p.sp.ix.lookup(name)
	if err != nil {
		return i, err
	}
	spelled := "--" + full
	if full != name {
		spelled = fmt.Sprintf("--%s (short for --%s)", name, full)
	}
	o := e.opt
	if e.negated {
		if hasValue {
			return i, refusef("%s takes no value", spelled)
		}
		p.emit("--" + full)
		return i, nil
	}
	if o.refuse != "" {
		return i, refusef("%s is refused: %s", spelled, o.refuse)
	}
	switch o.arity {
	case flag:
		if hasValue {
			return i, refusef("%s takes no value", spelled)
		}
	case required, lastArg:
		if !hasValue {
			if i+1 >= len(words) {
				if o.arity == lastArg {
					p.emit("--" + full)
					return i, nil
				}
				return i, refusef("%s needs a value", spelled)
			}
			i++
			value, hasValue = words[i], true
		}
	}
	if !hasValue {
		p.emit("--" + full)
		return i, nil
	}
	if err := p.value(o, spelled, value); err != nil {
		return i, err
	}
	p.emit("--" + full + "=" + value)
	return i, nil
}

// short handles a cluster of short options at words[i] ("-v", "-am msg",
// "-n5", "-5") and returns the index of the last word it used.
func (p *parser) short(words []string, i int) (int, error) {
	w := words[i]
	if p.sp.number && allDigits(w[1:]) {
		p.emit(w)
		return i, nil
	}
	for j := 1; j < len(w); j++ {
		c := w[j]
		o := p.sp.ix.short[c]
		if o == nil {
			r, _ := utf8.DecodeRuneInString(w[j:])
			return i, refusef("unknown option -%c (in %q)", r, w)
		}
		spelled := "-" + string(c)
		if o.long != "" {
			spelled += " (--" + o.long + ")"
		}
		if o.refuse != "" {
			return i, refusef("%s is refused: %s", spelled, o.refuse)
		}
		if strings.IndexByte(p.sp.patternOpts, c) >= 0 {
			p.patGiven = true
		}
		rest := w[j+1:]
		switch o.arity {
		case flag:
			p.emit("-" + string(c))
			continue
		case optional:
			if rest != "" {
				if err := p.value(o, spelled, rest); err != nil {
					return i, err
				}
			}
			p.emit("-" + string(c) + rest)
			return i, nil
		}
		value := rest
		if rest == "" {
			if i+1 >= len(words) {
				if o.arity == lastArg {
					p.emit("-" + string(c))
					return i, nil
				}
				return i, refusef("%s needs a value", spelled)
			}
			i++
			value = words[i]
		}
		if err := p.value(o, spelled, value); err != nil {
			return i, err
		}
		switch {
		case !strings.HasPrefix(value, "-"):
			p.emit("-"+string(c), value)
		case o.long != "":
			// A value that looks like an option is joined to the
			// option, so that no reader takes it for one.
			p.emit("--" + o.long + "=" + value)
		default:
			p.emit("-" + string(c) + value)
		}
		return i, nil
	}
	return i, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// value checks an option's value by its kind.
func (p *parser) value(o *option, spelled, v string) error {
	var err error
	switch o.kind {
	case file:
		err = p.file(v)
	case rev:
		err = p.rev(v)
	case lineRange:
		err = p.lineRange(v)
	}
	if err == nil && o.valid != nil {
		err = o.valid(v)
	}
	if err != nil {
		return fmt.Errorf("the value of %s: %w", spelled, err)
	}
	return nil
}

// positional checks a word that is not an option.
func (p *parser) positional(w string) error {
	sp := p.sp
	isPattern := sp.pattern && p.npos == 0 && !p.patGiven
	p.npos++
	p.emit(w)
	if isPattern {
		return nil // the pattern of git grep: text, not a path
	}
	switch {
	case sp.pos == none:
		return refusef("git %s takes no arguments, but %q was given", p.cmd, w)
	case sp.pos == paths || (p.dashdash && sp.pos == revsPaths):
		return p.pathspec(w)
	case sp.pos == revs:
		return p.rev(w)
	}
	// A revision or a path: git tries the revision first and takes a word
	// that is none for a path. Check it as both.
	if err := p.rev(w); err != nil {
		return err
	}
	if strings.HasPrefix(w, ":") {
		return nil // an index path (:path, :2:path), checked above
	}
	return p.checkOnly(w)
}

// pathspec checks a word git takes for a pathspec.
func (p *parser) pathspec(w string) error {
	if w == "" {
		return refusef("an empty path")
	}
	if strings.HasPrefix(w, ":") {
		return refusef("%q: pathspec magic (a leading \":\") is not supported; name the paths plainly", w)
	}
	return p.file(w)
}

// file checks a file name git opens and lists it in Paths.
func (p *parser) file(name string) error {
	if err := p.checkOnly(name); err != nil {
		return err
	}
	p.paths = append(p.paths, name)
	return nil
}

// checkOnly checks a name without listing it.
func (p *parser) checkOnly(name string) error {
	if name == "" {
		return refusef("an empty path")
	}
	for _, c := range strings.Split(name, "/") {
		if strings.EqualFold(c, ".git") {
			return refusef("%q: the files inside .git are git's own; the git tool does not name them", name)
		}
	}
	if p.check == nil {
		return nil
	}
	if err := p.check(name); err != nil {
		return fmt.Errorf("path %q: %w", name, err)
	}
	return nil
}

// rev checks a revision: the path of "<rev>:<path>", ":<path>" and
// ":<stage>:<path>" is checked like a file; ":/<text>" (the commit whose
// message matches) and pathspec magic are refused.
func (p *parser) rev(w string) error {
	if w == "" {
		return refusef("an empty revision")
	}
	if rest, ok := strings.CutPrefix(w, ":"); ok {
		if rest == "" || strings.ContainsRune("/(!^", rune(rest[0])) {
			return refusef("%q: a leading \":\" with %q (a message search or pathspec magic) is not supported", w, w[:min(len(w), 2)])
		}
		if len(rest) >= 2 && rest[0] >= '0' && rest[0] <= '3' && rest[1] == ':' {
			rest = rest[2:]
		}
		return p.file(rest)
	}
	// The first ':' outside braces (HEAD@{10:00}, HEAD^{/fix: x}) ends the
	// revision, as in git's get_oid_with_context.
	depth := 0
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ':':
			if depth == 0 {
				if path := w[i+1:]; path != "" {
					return p.file(path)
				}
				return nil // <rev>: is the top-level tree
			}
		}
	}
	return nil
}

// lineRange checks the file of log -L "<start>,<end>:<file>" or
// ":<funcname>:<file>". Since a function name may hold a ':' itself, the
// text after every ':' is checked as a file; the last is listed.
func (p *parser) lineRange(v string) error {
	last := ""
	for i := 0; i < len(v); i++ {
		if v[i] != ':' || i+1 == len(v) {
			continue
		}
		last = v[i+1:]
		if err := p.checkOnly(last); err != nil {
			return err
		}
	}
	if last != "" {
		p.paths = append(p.paths, last)
	}
	return nil
}
