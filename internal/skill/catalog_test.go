package skill

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCatalogPrefersUseAndRecency: when the skills do not all fit, the
// catalog keeps those used most and most lately, shows them by name, and
// says how many it left out; uses are recorded per skill, bundled ones
// too, and survive a new Library.
func TestCatalogPrefersUseAndRecency(t *testing.T) {
	t.Parallel()
	l, dir := open(t, bundledFS())
	clock := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return clock }
	for _, n := range []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"} {
		if _, err := l.Create(n, "The skill "+n+", with a description of some length.", "b"); err != nil {
			t.Fatal(err)
		}
	}
	use := func(name string, times int, ago time.Duration) {
		t.Helper()
		at := clock
		l.now = func() time.Time { return at.Add(-ago) }
		for range times {
			if err := l.Used(name); err != nil {
				t.Fatal(err)
			}
		}
		l.now = func() time.Time { return clock }
	}
	use("foxtrot", 1, time.Hour)         // once, just now
	use("echo", 3, 24*time.Hour)         // three times yesterday: ahead of foxtrot
	use("delta", 10, 120*24*time.Hour)   // often, but four months ago: 10/2^8.6, behind foxtrot
	use("summarize", 1, 48*time.Hour)    // a bundled skill
	use("charlie", 1, 365*24*time.Hour)  // once, a year ago: still ahead of the never used
	use("no-such-skill", 5, time.Minute) // recorded, never shown

	list, _, _ := l.List()
	var order []string
	for _, s := range rank(list, l.usage(), clock) {
		order = append(order, s.Name)
	}
	want := []string{"echo", "foxtrot", "summarize", "delta", "charlie", "alpha", "bravo", "greet"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Fatalf("rank (-want +got):\n%s", diff)
	}

	line := func(name string) string {
		s, err := l.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		return catalogLine(s)
	}
	// Room for the three most used and the note: shown by name.
	budget := len(line("echo") + line("foxtrot") + line("summarize") + omitted(5))
	got := l.Catalog(budget)
	if wantCat := line("echo") + line("foxtrot") + line("summarize") + omitted(5); got != wantCat {
		t.Errorf("Catalog(%d) =\n%s\nwant\n%s", budget, got, wantCat)
	}
	if !strings.HasSuffix(got, "(5 more skills not shown; list_skills lists them all)\n") {
		t.Errorf("no note of the skills left out:\n%s", got)
	}
	// All of them fit: every skill, by name, no note.
	if all := l.Catalog(1 << 20); strings.Contains(all, "not shown") || strings.Count(all, "\n") != 8 ||
		!strings.HasPrefix(all, line("alpha")) {
		t.Errorf("Catalog of all:\n%s", all)
	}

	// The record is one hidden file in the skills folder, read again by a
	// new Library, and no skill.
	data, err := os.ReadFile(filepath.Join(dir, usageFile))
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]usage
	if err := json.Unmarshal(data, &rec); err != nil || rec["delta"].Uses != 10 || rec["summarize"].Uses != 1 {
		t.Fatalf("record %s: %v", data, err)
	}
	again, err := Open(dir, bundledFS())
	if err != nil {
		t.Fatal(err)
	}
	if n, last := again.Uses("echo"); n != 3 || !last.Equal(clock.Add(-24*time.Hour)) {
		t.Errorf("echo: %d uses, last %v", n, last)
	}
	if list, problems, _ := again.List(); len(list) != 8 || len(problems) != 0 {
		t.Errorf("the record shows in the list: %v %v", names(list), problems)
	}
}

// TestUsageRecordIsRobust: a record that does not decode, is a link or is
// too large is started again; uses recorded at once are all counted.
func TestUsageRecordIsRobust(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]func(dir string){
		"garbage": func(dir string) { write(t, filepath.Join(dir, usageFile), "{not json") },
		"a link": func(dir string) {
			outside := filepath.Join(t.TempDir(), "outside.json")
			write(t, outside, `{"greet": {"uses": 1000, "last": "2025-01-01T00:00:00Z"}}`)
			if err := os.Symlink(outside, filepath.Join(dir, usageFile)); err != nil {
				t.Fatal(err)
			}
		},
		"bad names": func(dir string) {
			write(t, filepath.Join(dir, usageFile), `{"../x": {"uses": 1}, "greet": {"uses": -4}}`)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l, dir := open(t, bundledFS())
			setup(dir)
			if n, _ := l.Uses("greet"); n != 0 {
				t.Errorf("greet: %d uses from a record that is not one", n)
			}
			if err := l.Used("greet"); err != nil {
				t.Fatal(err)
			}
			if n, _ := l.Uses("greet"); n != 1 {
				t.Errorf("greet: %d uses after one", n)
			}
			if fi, err := os.Lstat(filepath.Join(dir, usageFile)); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("the record is not a regular file: %v", err)
			}
		})
	}

	l, _ := open(t, bundledFS())
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if err := l.Used("summarize"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n, _ := l.Uses("summarize"); n != 20 {
		t.Errorf("20 uses at once counted %d", n)
	}
	if err := l.Used("../escape"); err == nil {
		t.Error("a use of an invalid name was recorded")
	}
}

// TestListReportsOnlyRealProblems: a skills folder that is also a git
// checkout, with the library's own bookkeeping, stray files and folders
// and files beside a SKILL.md that are not listed, has no problem; a
// folder meant as a skill that does not load is one problem, once.
func TestListReportsOnlyRealProblems(t *testing.T) {
	t.Parallel()
	l, dir := open(t, bundledFS())
	if _, err := l.Create("good", "Fine.", "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Update("good", "Finer.", ""); err != nil { // a version in .versions
		t.Fatal(err)
	}
	if _, err := l.Create("gone", "Removed.", "b"); err != nil {
		t.Fatal(err)
	}
	if err := l.Remove("gone"); err != nil { // a folder in .removed
		t.Fatal(err)
	}
	if _, err := l.Stage(true, "waiting", "A draft.", "b"); err != nil { // .staged
		t.Fatal(err)
	}
	if err := l.Used("good"); err != nil {
		t.Fatal(err)
	}
	for p, data := range map[string]string{
		"README.md":                   "# My skills",
		"LICENSE":                     "MIT",
		".gitignore":                  "*.tmp",
		".git/HEAD":                   "ref: refs/heads/main",
		".git/objects/ab/cdef":        "x",
		"docs/index.md":               "no SKILL.md here",
		"node_modules/left-pad/x.js":  "module.exports = 1",
		"My Notes/todo.md":            "not a skill folder, and not meant as one",
		"good/README.md":              "listed beside SKILL.md",
		"good/.git/config":            "hidden",
		"good/deep/a/b/c/too-deep.md": "not listed, not a problem",
		"good/server.pem":             "denied, not listed, not a problem",
	} {
		write(t, filepath.Join(dir, filepath.FromSlash(p)), data)
	}
	for i := range MaxFiles + 3 {
		write(t, filepath.Join(dir, "good", "refs", fmt.Sprintf("%02d.md", i)), "r")
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "good", "etc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "linked-empty")); err != nil {
		t.Fatal(err)
	}

	list, problems, err := l.List()
	if err != nil || len(problems) != 0 {
		t.Fatalf("problems with no broken skill (%v):\n%s", err, joinErrs(problems))
	}
	if diff := cmp.Diff([]string{"good@owner", "greet@bundled", "summarize@bundled"}, names(list)); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}

	for _, tt := range []struct {
		name, file, data, want string
	}{
		{"broken", "broken/SKILL.md", "---\nname: broken\n---\n", "broken/SKILL.md: line 1: the frontmatter has no description"},
		{"wrong case", "lower/skill.md", skillDoc("lower", "d", "b"), "lower/skill.md: the file must be named SKILL.md (in capitals)"},
		{"a name unlike a skill's", "Big Skill/SKILL.md", skillDoc("big-skill", "d", "b"), `"Big Skill": not a skill folder`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, dir := open(t, bundledFS())
			write(t, filepath.Join(dir, "README.md"), "# My skills")
			write(t, filepath.Join(dir, "docs", "index.md"), "no SKILL.md")
			write(t, filepath.Join(dir, filepath.FromSlash(tt.file)), tt.data)
			_, problems, _ := l.List()
			if len(problems) != 1 || !strings.HasPrefix(problems[0].Error(), tt.want) {
				t.Fatalf("problems:\n%s\nwant exactly one, starting %q", joinErrs(problems), tt.want)
			}
		})
	}
}
