package gitguard

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

var fuzzSeeds = []string{
	"status", "git log --oneline -n 5", `commit -am "msg"`, "show HEAD:.env",
	"log --upload-pa=touch /tmp/x", "grep -pO foo", "diff --no-index /etc/passwd /dev/null",
	"add -- ':!x'", `commit -m 'it'\''s' -- a`, "stash show -p stash@{0}",
	"grep -- -x -- y", "log -L:a:b:c", "branch --merged", "tag -n5 -l 'v*'",
	"-c core.pager=sh log", `log "$(id)"`, "log -5 --format=%h", "checkout -b x main -- y",
	"grep -e a --and '(' -e b ')' HEAD -- src", "show HEAD^{/fix: x}:y", "commit -m -x",
}

// FuzzSplit: Split never panics, never yields a control character, and
// what Render shows splits back into the same words.
func FuzzSplit(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		words, err := Split(in)
		if err != nil {
			return
		}
		shown := []string{"x"}
		printable := true
		for _, w := range words {
			for _, r := range w {
				if r != '\t' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)) {
					t.Fatalf("Split(%q) yields %q with a control character", in, w)
				}
				if r == '\t' || !unicode.IsPrint(r) || unicode.Is(unicode.Cf, r) {
					printable = false
				}
			}
			shown = append(shown, quote(w))
		}
		if !printable {
			return // shown as $'...', which is for reading, not for Split
		}
		again, err := Split(strings.Join(shown, " "))
		if err != nil {
			t.Fatalf("Split(%q) of the quoted words of %q: %v", strings.Join(shown, " "), in, err)
		}
		if diff := cmp.Diff(append([]string{"x"}, words...), again); diff != "" {
			t.Fatalf("quoting %q does not round-trip (-want +got):\n%s", in, diff)
		}
	})
}

// FuzzParse: Parse never panics; a command it accepts parses to itself
// again, carries no refused or abbreviated option, and names only paths
// that pass the check.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		words, err := Split(in)
		if err != nil {
			return
		}
		cmd, err := Parse(words, fakeCheck)
		if err != nil {
			return
		}
		again, err := Parse(append([]string{cmd.Sub}, cmd.Args...), fakeCheck)
		if err != nil {
			t.Fatalf("Parse(%q) accepted as %s, which is then refused: %v", in, Render(cmd), err)
		}
		if diff := cmp.Diff(cmd, again, cmpEmpty); diff != "" {
			t.Fatalf("Parse(%q) is not idempotent (-first +again):\n%s", in, diff)
		}
		if err := acceptedOptionsOnly(cmd); err != "" {
			t.Fatalf("Parse(%q) = %s: %s", in, Render(cmd), err)
		}
		for _, p := range cmd.Paths {
			if fakeCheck(p) != nil {
				t.Fatalf("Parse(%q) lists %q, which the check refuses", in, p)
			}
		}
		argv := Argv(cmd)
		if argv[0] != "git" || argv[len(prefix)+1] != cmd.Sub {
			t.Fatalf("Argv(%q) = %q", in, argv)
		}
	})
}

// acceptedOptionsOnly checks the option words of an accepted command
// independently of the parser: every long option is spelled in full and
// allowed, every short option stands alone (or holds the value of an
// option that takes one).
func acceptedOptionsOnly(cmd Command) string {
	sp, args := specs()[cmd.Sub], cmd.Args
	if cmd.Sub == "stash" {
		sp, args = stashSpecs()[args[0]], args[1:]
	}
	for i, w := range args {
		if w == "--" {
			return ""
		}
		if len(w) < 2 || w[0] != '-' {
			continue
		}
		if i > 0 && isValueTaker(sp, args[i-1]) {
			continue
		}
		if w[1] == '-' {
			name, _, _ := strings.Cut(w[2:], "=")
			e, ok := sp.ix.long[name]
			if !ok {
				return "--" + name + " is not a full option name"
			}
			if !e.negated && e.opt.refuse != "" {
				return "--" + name + " is refused"
			}
			continue
		}
		if sp.number && allDigits(w[1:]) {
			continue
		}
		o := sp.ix.short[w[1]]
		if o == nil || o.refuse != "" {
			return w + " is not an allowed short option"
		}
		if len(w) > 2 && o.arity == flag {
			return w + " is a cluster"
		}
		if len(w) > 2 && (o.arity == required || o.arity == lastArg) && (o.long != "" || w[2] != '-') {
			return w + " holds a value that should be separate"
		}
	}
	return ""
}

// isValueTaker reports whether word is a short option that takes the
// next word as its value.
func isValueTaker(sp *spec, word string) bool {
	if len(word) != 2 || word[0] != '-' || word[1] == '-' {
		return false
	}
	o := sp.ix.short[word[1]]
	return o != nil && (o.arity == required || o.arity == lastArg)
}
