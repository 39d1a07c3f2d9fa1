package gitguard

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shelldon/shelldon/internal/lazy"
)

// A repository's configuration can name programs in many places (drivers
// for filters, merges and diffs, fsmonitor, pagers, editors, credential
// helpers, gpg, transports, hooks' directory, ...) and can include other
// files that name more. Rather than chase those names, a guarded git sees
// a copy of each repository configuration reduced to allowedConfig: the
// variables it needs to read the repository and to do the offered work,
// none of which names a program or a file whatever its value. ConfigView
// (view.go) finds the files; the sandbox shows git the copies in their
// place (sandbox.Cover).

var allowedConfigOnce lazy.Value[map[string]bool]

// allowedConfig are the variables kept: "section.key", or
// "section.*.key" for a variable with a subsection (any subsection).
// Section and key are lowercase, as git compares them.
func allowedConfig() map[string]bool {
	return allowedConfigOnce.Get(func() map[string]bool {
		return setOf(
			// Reading the repository.
			"core.repositoryformatversion", "core.bare", "core.filemode", "core.symlinks",
			"core.ignorecase", "core.precomposeunicode", "core.logallrefupdates",
			"core.autocrlf", "core.eol", "core.safecrlf", "core.checkstat", "core.trustctime",
			"core.quotepath", "core.abbrev", "core.commentchar", "core.whitespace",
			"core.sparsecheckout", "core.sparsecheckoutcone", "core.untrackedcache",
			"core.splitindex", "core.preloadindex", "core.bigfilethreshold", "core.compression",
			"core.loosecompression", "core.warnambiguousrefs", "core.protecthfs", "core.protectntfs",
			"core.multipackindex", "core.commitgraph",
			"index.version", "index.sparse", "index.skiphash",
			// Who commits, and the first branch.
			"user.name", "user.email", "user.useconfigonly", "author.name", "author.email",
			"committer.name", "committer.email", "init.defaultbranch",
			// Branches and what they track (remotes only as refspecs: no URL,
			// no transport, no helper).
			"branch.autosetupmerge", "branch.autosetuprebase", "branch.sort",
			"branch.*.remote", "branch.*.pushremote", "branch.*.merge", "branch.*.rebase",
			"branch.*.description", "remote.*.fetch", "checkout.defaultremote", "checkout.guess",
			// How the offered commands behave.
			"merge.ff", "merge.conflictstyle", "merge.renames", "merge.renamelimit",
			"merge.directoryrenames", "merge.log", "merge.stat", "merge.branchdesc",
			"merge.defaulttoupstream", "merge.autostash",
			"diff.renames", "diff.renamelimit", "diff.algorithm", "diff.indentheuristic",
			"diff.mnemonicprefix", "diff.noprefix", "diff.context", "diff.interhunkcontext",
			"diff.suppressblankempty", "diff.statgraphwidth", "diff.dirstat", "diff.relative",
			"status.showuntrackedfiles", "status.relativepaths", "status.short", "status.branch",
			"status.renames", "status.renamelimit", "status.aheadbehind", "status.showstash",
			"log.date", "log.decorate", "log.abbrevcommit", "log.follow", "log.showroot",
			"log.excludedecoration", "commit.cleanup", "commit.status", "commit.verbose",
			"tag.sort", "grep.linenumber", "grep.column", "grep.patterntype", "grep.extendedregexp",
			"grep.fullname", "blame.date", "blame.showemail", "blame.blankboundary", "blame.showroot",
			"blame.markunblamablelines", "blame.markignoredlines", "rerere.enabled", "rerere.autoupdate",
			"stash.showpatch", "stash.showstat", "stash.showincludeuntracked",
		)
	})
}

var knownExtensionsOnce lazy.Value[map[string]bool]

// knownExtensions are the repository format extensions git may need to
// read a repository correctly; none names a program. partialclone names a
// remote to fetch missing objects from: it is dropped (a guarded git has
// no network), so a missing object is an error rather than a fetch. An
// extension not listed here refuses the call: dropping it could make git
// misread the repository, keeping it could make a newer git run something.
func knownExtensions() map[string]bool {
	return knownExtensionsOnce.Get(func() map[string]bool {
		return map[string]bool{
			"objectformat": true, "compatobjectformat": true, "refstorage": true,
			"preciousobjects": true, "worktreeconfig": true, "partialclone": false,
		}
	})
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// configEntry is one variable of a configuration file as git's parser
// reads it: the full name, with section and key lowercased and the
// subsection (if any) as written, and the value. A bare "key" line has no
// value (git reads it as boolean true).
type configEntry struct {
	name     string
	value    string
	hasValue bool
}

// splitName splits a variable's full name as git does: the section up to
// the first dot, the key after the last, the subsection between (sub is
// false when there is none).
func splitName(name string) (section, subsection, key string, sub bool) {
	first, last := strings.IndexByte(name, '.'), strings.LastIndexByte(name, '.')
	if first < 0 {
		return "", "", name, false
	}
	if first == last {
		return name[:first], "", name[last+1:], false
	}
	return name[:first], name[first+1 : last], name[last+1:], true
}

// keep reports whether a guarded git may see e, or why the call must be
// refused.
func keep(e configEntry) (bool, error) {
	section, _, key, sub := splitName(e.name)
	if sub {
		return allowedConfig()[section+".*."+key], nil
	}
	if section == "extensions" {
		ok, known := knownExtensions()[key]
		if !known {
			return false, fmt.Errorf("the repository uses the format extension extensions.%s, which shelldon's git tool does not know", key)
		}
		return ok, nil
	}
	return allowedConfig()[e.name], nil
}

// sanitizeConfig returns the configuration file data reduced to the
// variables a guarded git may see, written afresh: nothing of the original
// text reaches git but allowed names and their values. Includes are
// dropped with everything else not allowed.
func sanitizeConfig(data []byte) ([]byte, error) {
	entries, err := parseConfig(data)
	if err != nil {
		return nil, err
	}
	kept := entries[:0]
	for _, e := range entries {
		ok, err := keep(e)
		if err != nil {
			return nil, err
		}
		if ok && !strings.ContainsAny(e.name, "\x00\n") && !strings.ContainsRune(e.value, 0) {
			kept = append(kept, e)
		}
	}
	return formatConfig(kept), nil
}

// formatConfig writes entries as a configuration file that git reads as
// exactly those entries: a section header whenever the section or
// subsection changes, each value quoted and escaped. Names must not hold
// NUL or newline, values not NUL.
func formatConfig(entries []configEntry) []byte {
	var b strings.Builder
	header := "\x00" // no header yet
	for _, e := range entries {
		section, subsection, key, sub := splitName(e.name)
		h := "[" + section + "]"
		if sub {
			h = "[" + section + ` "` + escapeConfig(subsection, false) + `"]`
		}
		if h != header {
			b.WriteString(h + "\n")
			header = h
		}
		b.WriteString("\t" + key)
		if e.hasValue {
			b.WriteString(` = "` + escapeConfig(e.value, true) + `"`)
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// escapeConfig escapes s for a quoted subsection or value.
func escapeConfig(s string, value bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case value && c == '\n':
			b.WriteString(`\n`)
		case value && c == '\t':
			b.WriteString(`\t`)
		case value && c == '\b':
			b.WriteString(`\b`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// errConfigSyntax is what parseConfig returns, wrapped with the line, for
// a file git itself would refuse.
var errConfigSyntax = errors.New("bad config syntax")

// parseConfig reads a configuration file the way git's config.c
// (git_parse_source) does, without following includes: they are variables
// like any other here.
func parseConfig(data []byte) ([]configEntry, error) {
	r := &configReader{data: data, line: 1}
	if len(data) > 0 && data[0] == 0xEF {
		// A UTF-8 byte order mark is skipped; a partial one is an error.
		if len(data) < 3 || data[1] != 0xBB || data[2] != 0xBF {
			return nil, r.fail()
		}
		r.pos = 3
	}
	var entries []configEntry
	stem := ""
	comment := false
	for {
		c := r.next()
		switch {
		case c == '\n':
			if r.eof {
				return entries, nil
			}
			comment = false
		case comment, isConfigSpace(c):
		case c == '#' || c == ';':
			comment = true
		case c == '[':
			s, ok := r.section()
			if !ok || s == "" {
				return nil, r.fail()
			}
			stem = s + "."
		case isAlpha(c):
			e, ok := r.variable(stem + string(lower(c)))
			if !ok {
				return nil, r.fail()
			}
			entries = append(entries, e)
		default:
			return nil, r.fail()
		}
	}
}

type configReader struct {
	data []byte
	pos  int
	eof  bool
	line int
}

func (r *configReader) fail() error {
	return fmt.Errorf("%w in line %d", errConfigSyntax, r.line)
}

// next returns the next byte, "\r\n" as '\n', and '\n' at the end of the
// data (setting eof), as git's get_next_char does.
func (r *configReader) next() byte {
	if r.pos >= len(r.data) {
		if !r.eof {
			r.eof = true
		}
		return '\n'
	}
	c := r.data[r.pos]
	r.pos++
	if c == '\r' && r.pos < len(r.data) && r.data[r.pos] == '\n' {
		r.pos++
		c = '\n'
	}
	if c == '\n' {
		r.line++
	}
	return c
}

// section reads a section header after its '[': "[name]", the old
// "[name.sub]" (all lowercased) or "[name "sub"]" (the subsection as
// written, with backslash taking the next character literally).
func (r *configReader) section() (string, bool) {
	var name []byte
	for {
		c := r.next()
		switch {
		case r.eof:
			return "", false
		case c == ']':
			return string(name), true
		case isConfigSpace(c):
			return r.subsection(name, c)
		case !isKeyChar(c) && c != '.':
			return "", false
		}
		name = append(name, lower(c))
	}
}

func (r *configReader) subsection(name []byte, c byte) (string, bool) {
	for {
		if c == '\n' {
			return "", false
		}
		if c = r.next(); !isConfigSpace(c) {
			break
		}
	}
	if c != '"' {
		return "", false
	}
	name = append(name, '.')
	for {
		c := r.next()
		if c == '\n' {
			return "", false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = r.next(); c == '\n' {
				return "", false
			}
		}
		name = append(name, c)
	}
	return string(name), r.next() == ']'
}

// variable reads the rest of a variable's name and its value, if any.
func (r *configReader) variable(name string) (configEntry, bool) {
	b := []byte(name)
	var c byte
	for {
		c = r.next()
		if r.eof || !isKeyChar(c) {
			break
		}
		b = append(b, lower(c))
	}
	for c == ' ' || c == '\t' {
		c = r.next()
	}
	if c == '\n' {
		return configEntry{name: string(b)}, true
	}
	if c != '=' {
		return configEntry{}, false
	}
	v, ok := r.value()
	return configEntry{name: string(b), value: v, hasValue: true}, ok
}

// value reads a value after its '=': quotes, escapes, comments, line
// continuations and runs of white space as git's parse_value reads them.
func (r *configReader) value() (string, bool) {
	var v []byte
	quote, comment, space := false, false, 0
	for {
		c := r.next()
		if c == '\n' {
			return string(v), !quote
		}
		if comment {
			continue
		}
		if isConfigSpace(c) && !quote {
			if len(v) > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			v = append(v, ' ')
		}
		switch c {
		case '\\':
			switch c = r.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
			v = append(v, c)
		case '"':
			quote = !quote
		default:
			v = append(v, c)
		}
	}
}

// git's own character classes (sane_ctype): ASCII only, and space is
// space, tab, newline and carriage return.
func isConfigSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isAlpha(c byte) bool       { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isKeyChar(c byte) bool     { return isAlpha(c) || '0' <= c && c <= '9' || c == '-' }

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
