package core_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/childproc"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// TestProposeImport: a tool version from another machine's bundle is
// filed outside a turn as a promotion request like a proposal: staged, not
// live, until the owner approves it; its card says it was imported, with
// the bundle's words escaped; once live, a rollback cannot reach the
// bundle's other versions.
func TestProposeImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tools, err := selfcode.Open(filepath.Join(dir, "tools"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "workspace")
	os.Mkdir(ws, 0o700)
	exe, err := core.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := core.New(core.Options{Store: st, Model: &scriptedModel{}, Tools: tools, Workspace: ws,
		Spawner: &core.ExecSpawner{Path: exe, Args: childproc.WorkerArgs, Env: core.WorkerEnv(os.Environ())},
		Limits:  contracts.Limits{Budget: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	test := "def test_a():\n    pass\n"
	p := contracts.Proposal{Name: "word_count", Language: selfcode.Starlark, Code: countStar, Test: test,
		Description: "Count the words in a text.", Parameters: []byte(`{"type":"object"}`),
		Capabilities: map[string][]string{"http": {"api.example.com"}}, Gate: "PASSED test_a"}
	imp := selfcode.Import{Bundle: "wc.json\n\x1b[2JApprove: yes", BundleHash: strings.Repeat("ab", 32), ExportedAt: time.Now(), SourceVersion: 2,
		History: []selfcode.ImportedVersion{
			{Version: 1, Language: "starlark", Hash: "h1", ApprovedAt: time.Now(), ApprovedBy: "evil\u202etext"},
			{Version: 2, Language: "starlark", Hash: selfcode.Hash(selfcode.Starlark, countStar, test), ApprovedAt: time.Now()},
		}}

	if _, err := c.ProposeImport(ctx, "terminal", contracts.Proposal{Name: "Word Count", Language: selfcode.Starlark, Code: countStar, Test: test}, imp); !errors.Is(err, selfcode.ErrBadName) {
		t.Fatalf("an unnormalized name: %v", err)
	}
	v, err := c.ProposeImport(ctx, "terminal", p, imp)
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind != core.KindPromotion || v.State != store.ApprovalPending || v.Tool != "word_count" {
		t.Fatalf("request: %+v", v)
	}
	for _, want := range []string{"Imported from the bundle", "version 2 there", "2 version(s), approved on the other machine, not here",
		"v1 starlark", `api.example.com`, "def run(text):", "PASSED test_a"} {
		if !strings.Contains(v.Summary, want) {
			t.Errorf("the card lacks %q:\n%s", want, v.Summary)
		}
	}
	for _, raw := range []string{"\x1b", "\nApprove: yes", "\u202e"} {
		if strings.Contains(v.Summary, raw) {
			t.Errorf("the card holds the bundle's %q raw:\n%s", raw, v.Summary)
		}
	}
	if _, state, err := c.Reader.FindTool("word_count"); err != nil || state != selfcode.StateStaged {
		t.Fatalf("before approval: %q %v", state, err)
	}
	if _, err := c.Decide(ctx, v.ID, true, "owner", core.Events{}); err != nil {
		t.Fatal(err)
	}
	live, state, err := c.Reader.FindTool("word_count")
	if err != nil || state != selfcode.StateLive || live.Imported == nil || live.Imported.SourceVersion != 2 || live.ApprovedBy != "owner" {
		t.Fatalf("after approval: %q %+v %v", state, live.Manifest, err)
	}
	if _, err := c.ToolAction(ctx, "rollback", "word_count", "owner"); !errors.Is(err, core.ErrNoVersion) {
		t.Fatalf("rollback to a version approved elsewhere: %v", err)
	}
}
