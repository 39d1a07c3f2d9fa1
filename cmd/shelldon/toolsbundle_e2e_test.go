package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// wordCountV2 is a second version of word_count: it says what it counted.
var (
	wordCountV2     = strings.Replace(wordCountStar, "return str(len(text.split()))", `return "words: " + str(len(text.split()))`, 1)
	wordCountV2Test = "def test_counts():\n    assert.eq(run(\"a b c\"), \"words: 3\")\n"
)

// bundleScript is a fake model that proposes word_count's version N when
// told "propose N", calls word_count when told "count ...", and echoes the
// tool results it gets.
func bundleScript(r brokertest.Recorded) brokertest.Reply {
	last := r.Request.Messages[len(r.Request.Messages)-1]
	if last.Role == contracts.RoleUser {
		if text, ok := strings.CutPrefix(last.Text, "count "); ok {
			args, _ := json.Marshal(map[string]string{"text": text})
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "c1", Name: "word_count", Arguments: string(args)}}}
		}
		code, test := wordCountStar, wordCountStarTest
		if last.Text == "propose 2" {
			code, test = wordCountV2, wordCountV2Test
		}
		args, _ := json.Marshal(map[string]string{"name": "word_count", "code": code, "test": test})
		return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "p1", Name: "propose_tool", Arguments: string(args)}}}
	}
	var parts []string
	for _, tr := range last.ToolResults {
		parts = append(parts, fmt.Sprintf("%s ok=%v %s", tr.Name, tr.OK, tr.Content))
	}
	return brokertest.Reply{Text: "RESULTS: " + strings.Join(parts, " | ")}
}

// promotion returns the pending promotion request of tool, id and card.
func promotion(t *testing.T, d *daemon, tool string) (id, summary string) {
	t.Helper()
	_, list := d.do(t, "GET", "/api/approvals", d.token, nil)
	for _, raw := range list["approvals"].([]any) {
		a := raw.(map[string]any)
		if a["kind"] == "promotion" && a["tool"] == tool {
			return fmt.Sprint(a["id"]), fmt.Sprint(a["summary"])
		}
	}
	t.Fatalf("no promotion of %s waits: %v", tool, list)
	return "", ""
}

// homeWithDaemon is a home whose commands find its daemon: it listens on
// an address of the config, and the API token is in .env.
func homeWithDaemon(t *testing.T, baseURL string) (string, *daemon) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	h := home(t, "anthropic", baseURL, fmt.Sprintf("server:\n  listen: %s\n", addr))
	f, err := os.OpenFile(filepath.Join(h, ".env"), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "SHELLDON_API_TOKEN="+testAPIToken)
	f.Close()
	return h, startServeAt(t, h, addr)
}

// TestToolTravelsAcrossHomes: a tool approved in two versions in home A is
// exported and imported into home B, where it runs through the gate and
// waits for the owner's approval, is not callable until approved, then
// works; B shows the imported history, and a rollback does not reach it.
func TestToolTravelsAcrossHomes(t *testing.T) {
	t.Parallel()
	srvA := brokertest.NewServer(t, "anthropic", bundleScript)
	hA := home(t, "anthropic", srvA.BaseURL(), "")
	dA := startServe(t, hA)
	for _, n := range []string{"1", "2"} {
		status, out := dA.do(t, "POST", "/api/chat", dA.token, map[string]string{"text": "propose " + n})
		if status != 200 || !strings.Contains(fmt.Sprint(out["reply"]), "propose_tool ok=true") {
			t.Fatalf("propose %s: %d %v", n, status, out["reply"])
		}
		id, _ := promotion(t, dA, "word_count")
		if status, out := dA.do(t, "POST", "/api/approvals/"+id, dA.token, map[string]bool{"approve": true}); status != 200 {
			t.Fatalf("approve %s: %d %v", n, status, out)
		}
	}
	if state, v := toolState(t, dA, "word_count"); state != "live" || v != 2 {
		t.Fatalf("in A: %q v%v", state, v)
	}

	file := filepath.Join(t.TempDir(), "word_count.json")
	stdout, stderr, code := run(t, hA, "", "tools", "export", "word_count", file)
	if code != 0 || !strings.Contains(stdout, "version 2 with 2 version(s)") {
		t.Fatalf("export: exit %d\n%s\n%s", code, stdout, stderr)
	}
	before, _ := os.ReadFile(file)
	if _, stderr, code := run(t, hA, "", "tools", "export", "word_count", file); code != 1 || !strings.Contains(stderr, "--force") {
		t.Fatalf("export over an existing file: exit %d %s", code, stderr)
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(before, after) {
		t.Fatal("the refused export changed the file")
	}
	if _, stderr, code := run(t, hA, "", "tools", "export", "word_count", file, "--force"); code != 0 {
		t.Fatalf("export --force: exit %d %s", code, stderr)
	}
	if _, stderr, code := run(t, hA, "", "tools", "export", "no_such_tool", file+".2"); code != 1 || !strings.Contains(stderr, "no self-coded tool called no_such_tool") {
		t.Fatalf("export of a missing tool: exit %d %s", code, stderr)
	}

	srvB := brokertest.NewServer(t, "anthropic", bundleScript)
	hB, dB := homeWithDaemon(t, srvB.BaseURL())
	stdout, stderr, code = run(t, hB, "", "tools", "import", file)
	if code != 0 || !strings.Contains(stdout, "The gate passed here. Nothing is live yet") {
		t.Fatalf("import: exit %d\n%s\n%s", code, stdout, stderr)
	}
	id, card := promotion(t, dB, "word_count")
	for _, want := range []string{"New tool: word_count (version 1, starlark)", "Imported from the bundle word_count.json",
		"version 2 there", "2 version(s), approved on the other machine, not here", "Gate: ", "PASS", "Capabilities: none",
		`words: `, "test_counts"} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q:\n%s", want, card)
		}
	}
	if state, _ := toolState(t, dB, "word_count"); state != "staged" {
		t.Fatalf("before approval the import is %q", state)
	}
	_, out := dB.do(t, "POST", "/api/chat", dB.token, map[string]string{"text": "count one two"})
	if reply := fmt.Sprint(out["reply"]); !strings.Contains(reply, "word_count ok=false") {
		t.Fatalf("the import was callable before approval: %s", reply)
	}
	if stdout, stderr, code := run(t, hB, "", "approvals", "approve", id); code != 0 || !strings.Contains(stdout, "is live") {
		t.Fatalf("approve: exit %d\n%s\n%s", code, stdout, stderr)
	}
	_, out = dB.do(t, "POST", "/api/chat", dB.token, map[string]string{"text": "count one two"})
	if reply := fmt.Sprint(out["reply"]); !strings.Contains(reply, "word_count ok=true words: 2") {
		t.Fatalf("calling the imported tool: %s", reply)
	}

	stdout, _, code = run(t, hB, "", "tools", "show", "word_count")
	for _, want := range []string{"Versions here", "v1 live, approved", ", imported,", "where it was version 2",
		"imported v1 starlark, approved there", "imported v2 starlark, approved there", "not here"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("tools show lacks %q (exit %d):\n%s", want, code, stdout)
		}
	}
	if _, stderr, code := run(t, hB, "", "tools", "rollback", "word_count"); code != 1 || !strings.Contains(stderr, "no earlier version") ||
		!strings.Contains(stderr, "another machine") {
		t.Fatalf("rollback to an imported version: exit %d %s", code, stderr)
	}
	if state, v := toolState(t, dB, "word_count"); state != "live" || v != 1 {
		t.Fatalf("after the refused rollback: %q v%v", state, v)
	}
	_, out = dB.do(t, "POST", "/api/chat", dB.token, map[string]string{"text": "count x y z"})
	if reply := fmt.Sprint(out["reply"]); !strings.Contains(reply, "word_count ok=true words: 3") {
		t.Fatalf("after the refused rollback: %s", reply)
	}

	// Imported again, it is a new version of the tool here, waiting for
	// approval like a model's new version; the live one stays.
	if _, stderr, code := run(t, hB, "", "tools", "import", file); code != 0 {
		t.Fatalf("second import: exit %d %s", code, stderr)
	}
	if _, card := promotion(t, dB, "word_count"); !strings.Contains(card, "New tool: word_count (version 2,") {
		t.Errorf("the second import's card:\n%s", card)
	}
	if state, v := toolState(t, dB, "word_count"); state != "live" || v != 1 {
		t.Fatalf("during the second import: %q v%v", state, v)
	}
}

// exportOf stages and approves a tool name in a scratch tools directory
// (as a home that wrote it would) and returns its bundle.
func exportOf(t *testing.T, name, code, test string) []byte {
	t.Helper()
	d, err := selfcode.Open(filepath.Join(t.TempDir(), "tools"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Stage(name, selfcode.Starlark, code, test, selfcode.Meta{}, "passed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Promote(name, m.Hash, "owner"); err != nil {
		t.Fatal(err)
	}
	_, data, _, err := d.Export(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestImportRefusesHostileBundles: a bundle that is not what it says is
// refused with a clear message and files nothing; one whose tool asks for
// a capability is filed with the capability on the card, and a tool whose
// test fails the gate here is refused.
func TestImportRefusesHostileBundles(t *testing.T) {
	t.Parallel()
	good := exportOf(t, "word_count", wordCountStar, wordCountStarTest)
	httpCode := strings.Replace(wordCountStar, "CAPABILITIES = {}", `CAPABILITIES = {"http": ["api.example.com"]}`, 1)
	cases := []struct {
		name string
		data []byte
		want string // in stderr; "" for an import that is filed
	}{
		{"tampered code", bytes.Replace(good, []byte("len(text.split())"), []byte("len(text)"), 1), "do not match its content hash"},
		{"tampered manifest", bytes.Replace(good, []byte(`"approved_by": "owner"`), []byte(`"approved_by": "root"`), 1), "does not match its hash"},
		{"oversized", append(bytes.Clone(good), bytes.Repeat([]byte(" "), selfcode.MaxBundle)...), "larger than"},
		{"bad name", exportOf(t, "read_file", wordCountStar, wordCountStarTest), "not a valid tool name"},
		{"bad JSON", good[:len(good)/2], "not a valid tool bundle"},
		{"unknown format version", bytes.Replace(good, []byte(`"format_version": 1`), []byte(`"format_version": 9`), 1), "format version 9"},
		{"deep JSON", bytes.Replace(good, []byte(`"params_schema": null`), []byte(`"params_schema": `+strings.Repeat("[", 64)+strings.Repeat("]", 64)), 1), "nested deeper"},
		{"failing test", exportOf(t, "word_count", wordCountStar, "def test_wrong():\n    assert.eq(run(\"a\"), \"7\")\n"), "failed the gate here; nothing was filed"},
		{"capabilities", exportOf(t, "word_count", httpCode, wordCountStarTest), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(tc.name, "failing") && tc.want != "" && bytes.Equal(tc.data, good) {
				t.Fatal("the case changed nothing")
			}
			h := home(t, "anthropic", "http://127.0.0.1:1", "")
			file := filepath.Join(t.TempDir(), "bundle.json")
			if err := os.WriteFile(file, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := run(t, h, "", "tools", "import", file)
			list, _, _ := run(t, h, "", "approvals", "list")
			if tc.want != "" {
				if code != 1 || !strings.Contains(stderr, tc.want) {
					t.Fatalf("import: exit %d, want 1 and %q\n%s\n%s", code, tc.want, stdout, stderr)
				}
				if strings.Contains(list, "word_count") || strings.Contains(list, "read_file") {
					t.Fatalf("a refused import was filed:\n%s", list)
				}
				if staged, _ := filepath.Glob(filepath.Join(h, "tools", "staged", "*")); len(staged) != 0 {
					t.Fatalf("a refused import was staged: %v", staged)
				}
				return
			}
			if code != 0 || !strings.Contains(stdout, `Capabilities: {"http":["api.example.com"]}`) {
				t.Fatalf("import: exit %d\n%s\n%s", code, stdout, stderr)
			}
			id := regexp.MustCompile(`request (\S+) waits`).FindStringSubmatch(stdout)
			if len(id) != 2 {
				t.Fatalf("no request id in:\n%s", stdout)
			}
			shown, _, _ := run(t, h, "", "approvals", "show", id[1])
			if !strings.Contains(shown, `api.example.com`) || !strings.Contains(shown, "Imported from the bundle bundle.json") {
				t.Fatalf("the card the owner decides on:\n%s", shown)
			}
		})
	}
}
