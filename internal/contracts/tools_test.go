package contracts

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the module's root, where the catalogue's files and the docs are.
const root = "../.."

// TestBuiltinToolsContract pins the catalogue to DESIGN section 3: the
// built-in names, parameter names and tiers are a contract the owner's
// habits, docs and tests depend on. Changing one is changing this table.
func TestBuiltinToolsContract(t *testing.T) {
	t.Parallel()
	want := []struct {
		name   string
		tier   Tier
		params []string
	}{
		{"get_time", TierFree, nil},
		{"read_file", TierFree, []string{"path"}},
		{"list_dir", TierFree, []string{"path"}},
		{"eval", TierFree, []string{"code"}},
		{"about", TierFree, []string{"topic"}},
		{"propose_tool", TierFree, []string{"name", "code", "test", "language"}},
		{"find_tools", TierFree, []string{"query"}},
		{"list_skills", TierFree, nil},
		{"use_skill", TierFree, []string{"name"}},
		{"read_skill_file", TierFree, []string{"skill", "path", "offset"}},
		{"create_skill", TierFree, []string{"name", "description", "body"}},
		{"update_skill", TierFree, []string{"name", "description", "body"}},
		{"remember", TierFree, []string{"fact"}},
		{"recall", TierFree, []string{"query", "limit"}},
		{"write_file", TierRisky, []string{"path", "content"}},
		{"run_shell", TierRisky, []string{"command"}},
		{"http_get", TierRisky, []string{"url"}},
		{"git", TierRisky, []string{"args"}},
		{"update_config", TierRisky, []string{"changes"}},
		{"schedule", TierRisky, []string{"when", "prompt"}},
	}
	got := BuiltinTools()
	if len(got) != len(want) {
		t.Fatalf("the catalogue has %d tools, the contract %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.Tier != w.tier || !slices.Equal(g.Params, w.params) {
			t.Errorf("tool %d = %s %s %v; the contract says %s %s %v", i, g.Name, g.Tier, g.Params, w.name, w.tier, w.params)
		}
	}
}

func TestBuiltinToolsWellFormed(t *testing.T) {
	t.Parallel()
	ident := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	seen := map[string]bool{}
	for _, b := range BuiltinTools() {
		t.Run(b.Name, func(t *testing.T) {
			if !ident.MatchString(b.Name) || seen[b.Name] {
				t.Errorf("name %q is not a new identifier", b.Name)
			}
			seen[b.Name] = true
			if b.Tier != TierFree && b.Tier != TierRisky {
				t.Errorf("tier %q", b.Tier)
			}
			switch b.Runs {
			case RunsWorker, RunsChild, RunsSandbox, RunsDaemon:
			default:
				t.Errorf("runs %q", b.Runs)
			}
			if b.Summary == "" || strings.ContainsAny(b.Summary, "|\n") {
				t.Errorf("summary %q: want one line without |, for the README's table", b.Summary)
			}
			for _, p := range b.Params {
				if !ident.MatchString(p) {
					t.Errorf("parameter %q", p)
				}
			}
			if filepath.Ext(b.DescriptionFile) != ".md" {
				t.Errorf("description file %q is not a .md", b.DescriptionFile)
			}
			if data, err := os.ReadFile(filepath.Join(root, b.DescriptionFile)); err != nil || len(strings.TrimSpace(string(data))) < 50 {
				t.Errorf("description file %s: %d bytes, %v", b.DescriptionFile, len(data), err)
			}
			if got, ok := Builtin(b.Name); !ok || !reflect.DeepEqual(got, b) {
				t.Errorf("Builtin(%q) = %+v, %v", b.Name, got, ok)
			}
		})
	}
	if _, ok := Builtin("word_count"); ok {
		t.Error("Builtin found a tool the catalogue lacks")
	}
	// Each call is a fresh copy: a caller cannot change the catalogue.
	first := BuiltinTools()
	first[0].Name, first[0].Tier = "changed", TierRisky
	first[1].Params[0] = "changed"
	if again := BuiltinTools(); again[0].Name != ToolGetTime || again[0].Tier != TierFree || again[1].Params[0] != "path" {
		t.Errorf("changing a returned catalogue changed the next one: %+v", again[:2])
	}
}

// docEntry is a tool as a document lists it.
type docEntry struct {
	name, tier, runs, summary string
	params                    []string
}

// signature parses name(p1, p2).
func signature(s string) (name string, params []string, ok bool) {
	m := regexp.MustCompile(`^([a-z_]+)\(([^()]*)\)$`).FindStringSubmatch(s)
	if m == nil {
		return "", nil, false
	}
	for _, p := range strings.Split(m[2], ",") {
		if p = strings.TrimSpace(p); p != "" {
			params = append(params, p)
		}
	}
	return m[1], params, true
}

// readmeTools parses the table under the README's "## Tools":
// | `name(params)` | TIER | runs | summary |
func readmeTools(t *testing.T, text string) []docEntry {
	_, after, ok := strings.Cut(text, "\n## Tools\n")
	if !ok {
		t.Fatal("README.md has no ## Tools section")
	}
	var out []docEntry
	rows := 0
	for _, line := range strings.Split(strings.TrimLeft(after, "\n"), "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if rows++; rows <= 2 { // the header and the separator
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			t.Errorf("README.md row %q: %d cells, want 4", line, len(cells))
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		name, params, ok := signature(strings.Trim(cells[0], "`"))
		if !ok {
			t.Errorf("README.md row %q: the first cell is not `name(params)`", line)
			continue
		}
		out = append(out, docEntry{name: name, params: params, tier: cells[1], runs: cells[2], summary: cells[3]})
	}
	return out
}

// aboutTools parses the list under about.md's "## tools":
// - `name(params)` (TIER, runs): summary.
func aboutTools(t *testing.T, text string) []docEntry {
	_, after, ok := strings.Cut(text, "\n## tools\n")
	if !ok {
		t.Fatal("about.md has no ## tools section")
	}
	after, _, _ = strings.Cut(after, "\n## ")
	entry := regexp.MustCompile("^- `([^`]+)` \\(([A-Z]+), ([a-z]+)\\): (.+)$")
	var out []docEntry
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "- ") {
			continue
		}
		m := entry.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("about.md line %q is not - `name(params)` (TIER, runs): summary", line)
			continue
		}
		name, params, ok := signature(m[1])
		if !ok {
			t.Errorf("about.md line %q: %q is not name(params)", line, m[1])
			continue
		}
		out = append(out, docEntry{name: name, params: params, tier: m[2], runs: m[3]})
	}
	return out
}

// TestDocsListTheCatalogue: the README's tools table and about.md's tools
// topic list every tool of the catalogue, with its parameters, tier and
// where it runs (the README with its summary too), and no other tool.
func TestDocsListTheCatalogue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file        string
		parse       func(*testing.T, string) []docEntry
		withSummary bool
	}{
		{"README.md", readmeTools, true},
		{"internal/worker/builtin/about.md", aboutTools, false},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(root, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			listed := map[string]docEntry{}
			for _, e := range tc.parse(t, string(data)) {
				if _, dup := listed[e.name]; dup {
					t.Errorf("%s lists %s twice", tc.file, e.name)
				}
				listed[e.name] = e
				b, ok := Builtin(e.name)
				if !ok {
					t.Errorf("%s lists %s, which the catalogue lacks", tc.file, e.name)
					continue
				}
				if e.tier != strings.ToUpper(string(b.Tier)) || e.runs != string(b.Runs) || !slices.Equal(e.params, b.Params) {
					t.Errorf("%s lists %s(%s) %s %s; the catalogue says %s(%s) %s %s", tc.file,
						e.name, strings.Join(e.params, ", "), e.tier, e.runs,
						b.Name, strings.Join(b.Params, ", "), strings.ToUpper(string(b.Tier)), b.Runs)
				}
				if tc.withSummary && e.summary != b.Summary {
					t.Errorf("%s: %s does %q; the catalogue says %q", tc.file, e.name, e.summary, b.Summary)
				}
			}
			for _, b := range BuiltinTools() {
				if _, ok := listed[b.Name]; !ok {
					t.Errorf("%s does not list %s", tc.file, b.Name)
				}
			}
		})
	}
}
