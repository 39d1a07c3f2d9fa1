package gitguard

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestTablesWellFormed: no spec names an option twice, every refusal says
// why, and the options that run programs or write files are refused in
// every subcommand, abbreviated or not.
func TestTablesWellFormed(t *testing.T) {
	t.Parallel()
	all := map[string]*spec{}
	for name, s := range specs() {
		all[name] = s
	}
	for name, s := range stashSpecs() {
		all["stash "+name] = s
	}
	dangerous := []string{
		"upload-pack", "receive-pack", "exec", "exec-path", "ext-diff", "textconv", "output",
		"output-directory", "open-files-in-pager", "template", "separate-git-dir",
		"config", "git-dir", "work-tree", "gpg-sign", "pathspec-from-file", "help",
	}
	for name, s := range all {
		longs, shorts := map[string]bool{}, map[byte]bool{}
		for _, o := range s.opts {
			if o.long != "" {
				if longs[o.long] {
					t.Errorf("%s: --%s twice", name, o.long)
				}
				longs[o.long] = true
			}
			if o.short != 0 {
				if shorts[o.short] {
					t.Errorf("%s: -%c twice", name, o.short)
				}
				shorts[o.short] = true
			}
			if o.long == "" && o.short == 0 {
				t.Errorf("%s: an option without a name", name)
			}
		}
		for _, d := range dangerous {
			for n := 1; n <= len(d); n++ {
				full, e, err := s.ix.lookup(d[:n])
				if err == nil && full == d && !e.negated && e.opt.refuse == "" {
					t.Errorf("%s: --%s resolves to an allowed --%s", name, d[:n], d)
				}
			}
			if _, e, err := s.ix.lookup(d); err == nil && e.opt.refuse == "" && !e.negated {
				t.Errorf("%s: --%s is allowed", name, d)
			}
		}
	}
}

// completionHelper returns the long options git itself lists for a
// subcommand (parse-options' --git-completion-helper-all), without "--".
func completionHelper(t *testing.T, args ...string) []string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if out, err := exec.Command(git, "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	cmd := exec.Command(git, append(args, "--git-completion-helper-all")...)
	cmd.Dir = dir
	cmd.Env = Env(t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s --git-completion-helper-all: %v", strings.Join(args, " "), err)
	}
	var names []string
	for _, f := range strings.Fields(string(out)) {
		f = strings.TrimSuffix(strings.TrimPrefix(f, "--"), "=")
		if f != "" {
			names = append(names, f)
		}
	}
	return names
}

// handedOn are the options of the revision walk (revision.c) and of git
// diff itself, which parse-options does not list.
var handedOn = func() map[string]bool {
	m := map[string]bool{}
	for _, o := range append(append([]option{}, revOpts...), diffOwn...) {
		m[o.long] = true
	}
	return m
}()

// TestTablesCoverGit checks the tables against the installed git: every
// long option git accepts for a subcommand is known to Parse (allowed or
// refused), so an abbreviation is resolved against git's full list and an
// option added by a newer git is noticed here.
func TestTablesCoverGit(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{}
	for name, s := range specs() {
		if s.negatable {
			cases[name] = []string{name}
		}
	}
	for name, s := range stashSpecs() {
		if s.negatable {
			cases["stash "+name] = []string{"stash", name}
		}
	}
	// The diff machinery, as range-diff lists it (minus range-diff's own).
	cases["diff options"] = []string{"range-diff"}
	rangeDiffOwn := []string{"creation-factor", "no-creation-factor", "notes", "no-notes",
		"left-only", "no-left-only", "right-only", "no-right-only", "dual-color", "no-dual-color"}
	for name, args := range cases {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			ix := &index{}
			if name == "diff options" {
				ix = specs()["diff"].ix
			} else if s, ok := specs()[name]; ok {
				ix = s.ix
			} else {
				ix = stashSpecs()[strings.TrimPrefix(name, "stash ")].ix
			}
			known := completionHelper(t, args...)
			for _, o := range known {
				if name == "diff options" && slices.Contains(rangeDiffOwn, o) {
					continue
				}
				if _, ok := ix.long[o]; !ok {
					t.Errorf("git %s knows --%s; the table does not", name, o)
				}
			}
			// And the other way: an option the table allows is one git has.
			// A name Parse may emit that git does not know exactly must not
			// be a prefix of one it does, or git would expand it.
			for full, e := range ix.long {
				if (!e.negated && e.opt.refuse != "") || slices.Contains(known, full) {
					continue
				}
				for _, k := range known {
					if strings.HasPrefix(k, full) {
						t.Errorf("git %s: Parse may pass --%s, which git reads as an abbreviation of --%s", name, full, k)
					}
				}
				if e.negated {
					continue // git refuses it as unknown, if it does not know it
				}
				if handedOn[full] {
					continue // parsed by the revision walk, not parse-options
				}
				t.Errorf("the table of git %s allows --%s; git does not know it", name, full)
			}
		})
	}
}
