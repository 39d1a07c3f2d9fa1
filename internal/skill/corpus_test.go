package skill

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The corpus (testdata/corpus) holds SKILL.md files in the shapes public
// skills take, written for these tests: valid/ ones the Agent Skills
// specification accepts, invalid/ ones it refuses.
const (
	validCorpus   = "testdata/corpus/valid"
	invalidCorpus = "testdata/corpus/invalid"
)

// longest is the folder and name of 64 characters in the corpus.
const longest = "the-longest-name-the-agent-skills-specification-allows-is-this-1"

// corpusWant is what a valid corpus skill loads as; Body is checked by
// bodyHas and bodyMin instead.
type corpusWant struct {
	skill   Skill
	bodyHas string // a piece of the body
	bodyMin int    // bytes the body has at least
}

func validWants() map[string]corpusWant {
	return map[string]corpusWant{
		"ledger-reconcile": {skill: Skill{Name: "ledger-reconcile", License: "MIT",
			Description: "Reconcile the monthly bank export against the ledger, account by account. " +
				"Use when the owner asks to reconcile, close the month or check the books."},
			bodyHas: "## Account 1001: bank transfers", bodyMin: 60 << 10},
		"minimal-skill": {skill: Skill{Name: "minimal-skill",
			Description: "A skill with nothing but its name and what it is for."}},
		"folded-summary": {skill: Skill{Name: "folded-summary",
			Description: "Summarize a long document into five bullet points. Use when the owner shares a report, " +
				"a paper or a long email and asks what it says."},
			bodyHas: "Read the whole document first"},
		"literal-steps": {skill: Skill{Name: "literal-steps",
			Description: "Plan a trip itinerary.\nUse when the owner names a destination and dates."},
			bodyHas: "1. Ask for the budget.\n2. Propose"},
		"folded-strip": {skill: Skill{Name: "folded-strip", Metadata: map[string]string{"author": "shelldon-tests"},
			Description: "Draft a polite reply to a customer complaint, acknowledging the problem and proposing a fix."},
			bodyHas: "under 150 words"},
		"literal-strip": {skill: Skill{Name: "literal-strip",
			Description: "Convert a recipe between metric and imperial units.\nUse when the owner pastes a recipe."},
			bodyHas: "nearest 5"},
		"bom-notes": {skill: Skill{Name: "bom-notes",
			Description: "Tidy meeting notes saved by an editor that writes a byte-order mark."},
			bodyHas: "Group the notes by speaker."},
		"crlf-notes": {skill: Skill{Name: "crlf-notes",
			Description: "Turn a list of chores into a weekly rota, written on a Windows machine."},
			bodyHas: "# Rota\n\nGive each person"},
		"form-filler": {skill: Skill{Name: "form-filler",
			Description: "Fill in PDF and paper-style forms from what the owner already told you. " +
				"Use when the owner sends a form to complete.",
			License:       "Apache-2.0. LICENSE.txt has the full terms",
			Compatibility: "Needs python3 with the pypdf package; no network access.",
			Metadata:      map[string]string{"author": "shelldon-tests", "version": "2.1"},
			AllowedTools:  "Read Bash(python3:*)",
			Files:         []string{"LICENSE.txt", "forms/fields/schema.json", "forms/intake.md", "reference.md", "scripts/fill_form.py"}},
			bodyHas: "scripts/fill_form.py"},
		"tool-list": {skill: Skill{Name: "tool-list",
			Description:  "Check a repository's open pull requests: which wait for review, which fail.",
			AllowedTools: "Bash(git status:*) Read",
			Metadata:     map[string]string{"version": "1.0", "reviewed": "yes"}},
			bodyHas: "oldest first"},
		"client-keys": {skill: Skill{Name: "client-keys",
			Description: "Explain a shell command the owner pastes, flag by flag.",
			Extra: "user-invocable: true\nargument-hint: '[command]'\nclient-options:\n  mode: inline\n" +
				"  triggers:\n    - explain\n    - what does\n"},
			bodyHas: "on its own line"},
		longest: {skill: Skill{Name: longest,
			Description: string([]rune("Ça commence ici: " + strings.Repeat("une description très longue, ", 40))[:MaxDescription-1]) + "."},
			bodyHas: "At the limits."},
		"comments-quotes": {skill: Skill{Name: "comments-quotes",
			Description: `It's for text with "quotes": colons, # hashes and all.`},
			bodyHas: "```\n\tindented with a tab\n```"},
	}
}

// checkCorpusSkill compares a loaded skill with what the corpus promises.
func checkCorpusSkill(t *testing.T, got Skill, want corpusWant, source string) {
	t.Helper()
	w := want.skill
	w.Source = source
	if source == SourceOwner {
		w.Version = 1
	}
	if diff := cmp.Diff(w, got, cmpopts.IgnoreFields(Skill{}, "Body")); diff != "" {
		t.Errorf("%s (-want +got):\n%s", w.Name, diff)
	}
	if !strings.Contains(got.Body, want.bodyHas) || len(got.Body) < want.bodyMin {
		t.Errorf("%s: body of %d bytes lacks %q (or is under %d bytes)", w.Name, len(got.Body), want.bodyHas, want.bodyMin)
	}
	if (want.bodyHas == "") != (got.Body == "") {
		t.Errorf("%s: body %q", w.Name, got.Body)
	}
	again, err := Parse(Format(got))
	if err != nil {
		t.Fatalf("%s: Parse(Format): %v", w.Name, err)
	}
	if diff := cmp.Diff(got, again, cmpopts.IgnoreFields(Skill{}, "Files", "Source", "Version")); diff != "" {
		t.Errorf("%s: round trip (-loaded +again):\n%s", w.Name, diff)
	}
}

// TestCorpusValid: every valid shape loads through the library, as the
// owner's skill and as a bundled one, with the expected frontmatter.
func TestCorpusValid(t *testing.T) {
	t.Parallel()
	wants := validWants()
	entries, err := os.ReadDir(validCorpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(wants) {
		t.Fatalf("the corpus has %d skills; the test expects %d", len(entries), len(wants))
	}

	t.Run("owner", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "skills")
		if err := os.CopyFS(dir, os.DirFS(validCorpus)); err != nil {
			t.Fatal(err)
		}
		l, err := Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		list, problems, err := l.List()
		if err != nil || len(problems) > 0 {
			t.Fatalf("List: %v\n%s", err, joinErrs(problems))
		}
		if len(list) != len(wants) {
			t.Fatalf("List gives %d skills; want %d: %v", len(list), len(wants), names(list))
		}
		for _, s := range list {
			want, ok := wants[s.Name]
			if !ok {
				t.Errorf("unexpected skill %q", s.Name)
				continue
			}
			checkCorpusSkill(t, s, want, SourceOwner)
			got, err := l.Get(s.Name)
			if err != nil || !cmp.Equal(s, got) {
				t.Errorf("Get(%q) = %+v, %v; List gave %+v", s.Name, got, err, s)
			}
		}
		if catalog := l.Catalog(1 << 20); !strings.Contains(catalog, `- literal-steps: "Plan a trip itinerary. Use when`) {
			t.Errorf("the catalog does not put a literal description on one line:\n%s", catalog)
		}
	})

	t.Run("bundled", func(t *testing.T) {
		t.Parallel()
		l, err := Open(t.TempDir(), os.DirFS(validCorpus))
		if err != nil {
			t.Fatalf("Open with the corpus bundled: %v", err)
		}
		for name, want := range wants {
			got, err := l.Get(name)
			if err != nil {
				t.Errorf("Get(%q): %v", name, err)
				continue
			}
			checkCorpusSkill(t, got, want, SourceBundled)
		}
	})
}

// TestCorpusChange: the library's tighter rules for what it writes apply
// to the parts given, not to what a skill already holds: a long body is
// kept through a change of the description, and a literal description
// through a change of the body.
func TestCorpusChange(t *testing.T) {
	t.Parallel()
	l, _ := open(t, os.DirFS(validCorpus))
	before, err := l.Get("ledger-reconcile")
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Update("ledger-reconcile", "Reconcile the bank export against the ledger.", "")
	if err != nil {
		t.Fatalf("Update of the description of a skill with a long body: %v", err)
	}
	if s.Body != before.Body || s.Source != SourceOwner || s.License != "MIT" {
		t.Fatalf("the update changed the body or lost the license: %d bytes, %+v", len(s.Body), s.License)
	}
	s, err = l.Update("client-keys", "", "Explain each flag, then the whole command.")
	if err != nil {
		t.Fatalf("Update of a skill with keys the specification does not define: %v", err)
	}
	if want := validWants()["client-keys"].skill.Extra; s.Extra != want {
		t.Fatalf("the update lost the other keys: %q; want %q", s.Extra, want)
	}
	s, err = l.Update("literal-steps", "", "Ask for the budget first.")
	if err != nil || s.Description != validWants()["literal-steps"].skill.Description {
		t.Fatalf("Update of the body of a skill with a literal description: %+v %v", s, err)
	}
	if _, err := l.Update("literal-steps", "", strings.Repeat("a", MaxDraftBody+1)); err == nil ||
		!strings.Contains(err.Error(), "a body written through shelldon is at most 16,384 (16 KiB)") {
		t.Fatalf("a body over MaxDraftBody written through the library: %v", err)
	}
}

// invalidWants maps each invalid corpus skill to the rule its error names.
var invalidWants = map[string]string{
	"description-too-long":     "line 3: the description is 1,187 characters; the Agent Skills specification allows at most 1,024",
	"my-skill":                 `line 2: name "My_Skill" may contain only lowercase letters, digits and hyphens (the Agent Skills specification: a-z, 0-9, -); 'M' is not one`,
	"leading-hyphen":           `line 2: name "-leading-hyphen" must not start or end with a hyphen (the Agent Skills specification)`,
	"trailing-hyphen":          `line 2: name "trailing-hyphen-" must not start or end with a hyphen (the Agent Skills specification)`,
	"double-hyphen":            `line 2: name "double--hyphen" must not contain consecutive hyphens "--" (the Agent Skills specification)`,
	"name-mismatch":            `name-mismatch/SKILL.md: line 2: name "another-name" does not match its folder "name-mismatch"; the Agent Skills specification requires the name to match the folder`,
	"missing-name":             "line 1: the frontmatter has no name; the Agent Skills specification requires name and description",
	"missing-description":      "line 1: the frontmatter has no description; the Agent Skills specification requires name and description",
	"empty-description":        "line 3: the description is empty; the Agent Skills specification requires 1 to 1,024 characters",
	"null-description":         "line 3: the description is empty; the Agent Skills specification requires 1 to 1,024 characters",
	"blank-folded-description": "line 3: the description is empty",
	"not-frontmatter":          `line 1: SKILL.md must start with a "---" line that opens the YAML frontmatter`,
	"late-frontmatter":         `line 1: SKILL.md must start with a "---" line`,
	"unterminated":             `line 1: the frontmatter opened here is never closed by a "---" line`,
	"compatibility-too-long":   "line 4: compatibility is 659 characters; the Agent Skills specification allows at most 500",
	"nested-metadata":          "line 6: metadata.author must be text, not a list or a map: metadata maps text keys to text values (the Agent Skills specification)",
	"metadata-list":            "line 5: metadata must be a map from text keys to text values (the Agent Skills specification)",
}

// TestCorpusInvalid: every invalid shape is refused, as the owner's skill
// (left out of List with its problem, an error from Get) and as a bundled
// one (Open fails), the error naming the rule.
func TestCorpusInvalid(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(invalidCorpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(invalidWants) {
		t.Fatalf("the corpus has %d invalid skills; the test expects %d", len(entries), len(invalidWants))
	}
	dir := filepath.Join(t.TempDir(), "skills")
	if err := os.CopyFS(dir, os.DirFS(invalidCorpus)); err != nil {
		t.Fatal(err)
	}
	l, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, problems, err := l.List()
	if err != nil || len(list) > 0 {
		t.Fatalf("List: %v %v", names(list), err)
	}
	all := joinErrs(problems)
	for name, want := range invalidWants {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			prefix := name + "/SKILL.md: "
			if !strings.Contains(all, prefix+strings.TrimPrefix(want, prefix)) {
				t.Errorf("List problems lack %q:\n%s", want, all)
			}
			if _, err := l.Get(name); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Get error %v; want it to contain %q", err, want)
			}
			data, err := os.ReadFile(filepath.Join(invalidCorpus, name, skillFile))
			if err != nil {
				t.Fatal(err)
			}
			bundled := fstest.MapFS{name + "/" + skillFile: {Data: data}}
			if _, err := Open(t.TempDir(), bundled); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Open with it bundled: %v; want an error containing %q", err, want)
			}
		})
	}
}

// TestHostile: inputs made to hurt are refused with the rule named, in
// bounded time and memory.
func TestHostile(t *testing.T) {
	t.Parallel()
	front := func(name, more string) string {
		return "---\nname: " + name + "\ndescription: d\n" + more + "---\nBody.\n"
	}
	var manyKeys strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&manyKeys, "  key-%05d: a value\n", i)
	}
	nested := func(levels int) string {
		return strings.Repeat("[", levels) + "1" + strings.Repeat("]", levels)
	}
	tests := []struct {
		name, doc, want string
	}{
		{"over-the-cap", front("over-the-cap", "") + strings.Repeat("Step.\n", 300<<10/6),
			"over-the-cap/SKILL.md is 300 KiB; the limit (skills.max_skill_bytes) is 256 KiB"},
		{"nul-bytes", front("nul-bytes", "") + "a\x00b\n", "line 6:2: the control character U+0000"},
		{"nul-in-frontmatter", "---\nname: nul-in-frontmatter\x00\ndescription: d\n---\n", "line 2:25: the control character U+0000"},
		{"huge-frontmatter", front("huge-frontmatter", "metadata:\n"+manyKeys.String()),
			"line 2: the frontmatter is 82 KiB; shelldon reads at most 64 KiB of it (a resource limit)"},
		{"yaml-bomb", front("yaml-bomb", "metadata:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"+
			"  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n  c: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"),
			"line 5: metadata.a: YAML anchors (&a) are not allowed in a skill"},
		{"bomb-in-other-keys", front("bomb-in-other-keys", "x: &x [a, a, a]\ny: [*x, *x, *x]\n"),
			"line 4: x: YAML anchors (&x) are not allowed in a skill"},
		{"alias-of-a-key", front("alias-of-a-key", "x: 1\ny: *x\n"), "the frontmatter is not valid YAML: unknown anchor 'x'"},
		{"deep-nesting", front("deep-nesting", "x: "+nested(MaxNesting+1)+"\n"),
			"line 4: x is nested more than 10 levels deep; shelldon reads no deeper (a resource limit)"},
		{"deeper-than-yaml-reads", front("deeper-than-yaml-reads", "x: "+nested(20000)+"\n"),
			"the frontmatter is not valid YAML: exceeded max depth of 10000"},
		{"deep-metadata", front("deep-metadata", "metadata:\n  a: "+nested(50)+"\n"),
			"line 5: metadata.a must be text, not a list or a map"},
		{"tag-in-other-keys", front("tag-in-other-keys", "x: !!binary aGVsbG8=\n"), "line 4: x: YAML tags (!!binary) are not allowed in a skill"},
		{"python-tag", front("python-tag", "x: !!python/object/apply:os.system [ls]\n"), "YAML tags (!!python/object/apply:os.system)"},
		{"merge-in-other-keys", front("merge-in-other-keys", "x:\n  <<: {a: 1}\n"), "line 5: YAML merge keys (<<) are not allowed in a skill"},
		{"complex-key", front("complex-key", "x:\n  ? [a, b]\n  : 1\n"), "line 5: a key must be plain text, not a list or a map"},
		{"hidden-key", front("hidden-key", "x\u200b: 1\n"), "line 4:2: the zero-width character ZERO WIDTH SPACE U+200B"},
		{"lone-carriage-return", front("lone-carriage-return", "") + "a\rb\n", "line 6:2: the control character U+000D"},
		{"invalid-utf8", front("invalid-utf8", "") + "caf\xe9\n", "line 6:4: invalid UTF-8 (byte 0xe9)"},
		{"bidi-description", "---\nname: bidi-description\ndescription: safe \u202eevil\n---\n",
			"line 3:19: the bidirectional control RIGHT-TO-LEFT OVERRIDE U+202E"},
		{"second-document", front("second-document", "...\n--- {x: 1}\n"), "a second YAML document in the frontmatter"},
		{"name-not-text", "---\nname: [name-not-text]\ndescription: d\n---\n", "line 2: name must be text, not a list or a map"},
	}
	if _, err := Parse([]byte(front("deep-enough", "x: "+nested(MaxNesting)+"\n"))); err != nil {
		t.Errorf("a value nested %d levels deep: %v", MaxNesting, err)
	}
	dir := filepath.Join(t.TempDir(), "skills")
	for _, tt := range tests {
		write(t, filepath.Join(dir, tt.name, skillFile), tt.doc)
	}
	l, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := l.Get(tt.name); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Get error %v;\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// TestLimits: the size limits are resource guards the app sets; a zero
// field takes the default, and errors name the setting to raise.
func TestLimits(t *testing.T) {
	t.Parallel()
	if got := (Limits{}).withDefaults(); got != (Limits{SkillBytes: 256 << 10, FileBytes: 1 << 20}) {
		t.Fatalf("defaults %+v", got)
	}
	big := "---\nname: big\ndescription: d\n---\n" + strings.Repeat("Step.\n", 300<<10/6)
	dir := filepath.Join(t.TempDir(), "skills")
	write(t, filepath.Join(dir, "big", skillFile), big)
	if err := os.CopyFS(dir, os.DirFS(validCorpus)); err != nil {
		t.Fatal(err)
	}

	l, err := OpenWith(dir, nil, Limits{SkillBytes: 512 << 10, FileBytes: 16})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Limits(); got != (Limits{SkillBytes: 512 << 10, FileBytes: 16}) {
		t.Fatalf("Limits() = %+v", got)
	}
	if s, err := l.Get("big"); err != nil || len(s.Body) < 300<<10-10 {
		t.Fatalf("a SKILL.md of 300 KiB under a limit of 512 KiB: %v", err)
	}
	_, _, notes, err := l.Files("form-filler")
	if err != nil {
		t.Fatal(err)
	}
	all := joinErrs(notes)
	for _, want := range []string{
		"form-filler/reference.md is 68 bytes; the limit (skills.max_file_bytes) is 16 bytes: not listed",
		"form-filler/forms/intake.md is 27 bytes; the limit (skills.max_file_bytes) is 16 bytes: not listed",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
	if _, err := l.ReadFile("form-filler", "reference.md", 0, 100); err == nil ||
		!strings.Contains(err.Error(), "form-filler/reference.md is 68 bytes; the limit (skills.max_file_bytes) is 16 bytes: not listed") {
		t.Errorf("a file over the limit was read: %v", err)
	}

	small, err := OpenWith(dir, nil, Limits{SkillBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := small.Get("ledger-reconcile"); err == nil ||
		!strings.Contains(err.Error(), "ledger-reconcile/SKILL.md is 61 KiB; the limit (skills.max_skill_bytes) is 4 KiB") {
		t.Fatalf("a SKILL.md over a limit of 4 KiB: %v", err)
	}
	if _, err := small.Create("grown", "d", strings.Repeat("Step.\n", 1000)); err == nil ||
		!strings.Contains(err.Error(), "SKILL.md is 5.9 KiB; the limit (skills.max_skill_bytes) is 4 KiB") {
		t.Fatalf("a created SKILL.md over the limit: %v", err)
	}

	bundled := fstest.MapFS{"big/" + skillFile: {Data: []byte(big)}}
	if _, err := Open(t.TempDir(), bundled); err == nil ||
		!strings.Contains(err.Error(), "big/SKILL.md: SKILL.md is 300 KiB; the limit (skills.max_skill_bytes) is 256 KiB") {
		t.Fatalf("a bundled SKILL.md over the limit: %v", err)
	}
	if _, err := OpenWith(t.TempDir(), bundled, Limits{SkillBytes: 1 << 20}); err != nil {
		t.Fatalf("a bundled SKILL.md under a raised limit: %v", err)
	}
	if _, err := fs.Stat(bundled, "big/"+skillFile); err != nil {
		t.Fatal(err)
	}
}

// TestSizes: sizes read as a person would write them, exact near a limit.
func TestSizes(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{
		0: "0 bytes", 900: "900 bytes", 1024: "1 KiB", 1536: "1.5 KiB", 300 << 10: "300 KiB", 300<<10 + 200: "300 KiB",
		1 << 20: "1 MiB", 3<<19 + 1: "1.5 MiB", 12345678: "12 MiB",
	} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q; want %q", n, got, want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1187: "1,187", 1234567: "1,234,567", -1024: "-1,024"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q; want %q", n, got, want)
		}
	}
	lim := sizeLimit{256 << 10, ConfigMaxSkillBytes}
	if got := lim.over("SKILL.md", 256<<10+1).Error(); got != "SKILL.md is 262,145 bytes; the limit (skills.max_skill_bytes) is 262,144 bytes" {
		t.Errorf("just over: %s", got)
	}
}
