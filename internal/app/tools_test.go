package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// runTools runs `shelldon tools ARGS...` in home and returns its output
// and exit status.
func runTools(t *testing.T, home string, environ []string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(append([]string{"--home", home, "tools"}, args...), strings.NewReader(""), &out, &errOut, environ)
	return out.String(), errOut.String(), code
}

// TestToolsShowBuiltins: `tools show` shows every tool `tools list` lists,
// built-ins too: the catalogue's tier, where it runs and summary, and what
// the model is told of it, its description file and parameter schema.
func TestToolsShowBuiltins(t *testing.T) {
	t.Parallel()
	home, environ := testHome(t)
	for _, b := range contracts.BuiltinTools() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := runTools(t, home, environ, "show", b.Name)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			desc, err := os.ReadFile(filepath.Join("..", "..", b.DescriptionFile))
			if err != nil {
				t.Fatal(err)
			}
			firstLine, _, _ := strings.Cut(strings.TrimSpace(string(desc)), "\n")
			want := []string{b.Name + " (built-in)", "Tier: " + string(b.Tier) + " (", runsText[b.Runs], "Summary: " + b.Summary,
				"Parameters: {", "Description (what the model reads):\n  " + firstLine}
			for _, p := range b.Params {
				want = append(want, `"`+p+`":`)
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("the output lacks %q:\n%s", w, out)
				}
			}
			if runsText[b.Runs] == "" || tierText[b.Tier] == "" {
				t.Errorf("no words for runs %q or tier %q", b.Runs, b.Tier)
			}
		})
	}
}

// TestToolsShowSelfCoded: a self-coded tool's capabilities read as a
// sorted list, "none" when it has none, and what the model wrote in them
// is shown inert; a name that is no tool is an error.
func TestToolsShowSelfCoded(t *testing.T) {
	t.Parallel()
	home, environ := testHome(t)
	dir, err := selfcode.Open(filepath.Join(home, "tools"), nil)
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	code := "def run(text):\n    return text\n"
	test := "def test_run():\n    assert run('a') == 'a'\n"
	stage := func(name string, caps map[string][]string) {
		t.Helper()
		if _, err := dir.Stage(name, selfcode.Starlark, code, test, selfcode.Meta{Description: "Echo the text.", ParamsSchema: schema, Capabilities: caps}, "passed"); err != nil {
			t.Fatal(err)
		}
	}
	stage("plain_echo", nil)
	stage("web_echo", map[string][]string{
		"http":              {"b.example.org", "a.example.com", "evil.example, fake.example"},
		"\x1b[31mzz\nGate:": {"x\ny"},
		"empty":             {},
	})

	out, errOut, status := runTools(t, home, environ, "show", "plain_echo")
	if status != 0 {
		t.Fatalf("exit %d: %s", status, errOut)
	}
	if !strings.Contains(out, "\nCapabilities: none\n") || strings.Contains(out, "map[") {
		t.Errorf("a tool without capabilities:\n%s", out)
	}
	for _, w := range []string{"plain_echo version 1 (starlark, staged)", "Tier: free, runs in a sandbox of its own"} {
		if !strings.Contains(out, w) {
			t.Errorf("the output lacks %q:\n%s", w, out)
		}
	}

	out, errOut, status = runTools(t, home, environ, "show", "web_echo")
	if status != 0 {
		t.Fatalf("exit %d: %s", status, errOut)
	}
	want := "\nCapabilities:\n" +
		`  "\x1b[31mzz\nGate:": "x\ny"` + "\n" +
		"  empty: (no value)\n" +
		`  http: b.example.org, a.example.com, "evil.example, fake.example"` + "\n" +
		"Hash: "
	if !strings.Contains(out, want) {
		t.Errorf("the capabilities are not\n%s\nin\n%s", want, out)
	}
	if strings.Contains(out, "\x1b") || strings.Count(out, "\nGate:") != 1 {
		t.Errorf("a capability's text reached the terminal as is:\n%q", out)
	}

	_, errOut, status = runTools(t, home, environ, "show", "no_such_tool")
	if status == 0 || !strings.Contains(errOut, "no tool called no_such_tool") {
		t.Errorf("an unknown tool: exit %d, %q", status, errOut)
	}
}
