package core_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/childproc"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/selfcode"
)

const countStar = `DESCRIPTION = "Count the words in a text."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
CAPABILITIES = {}

def run(text):
    return str(len(text.split()))
`

// TestToolsListWhatTheWorkerOffers: core.Tools, the one list the owner's
// commands, the API and Telegram show, holds every built-in of the
// catalogue with its tier and where it runs, and every self-coded tool
// with its state; and the tools a real worker offers the model are
// exactly the live ones of that list.
func TestToolsListWhatTheWorkerOffers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tools, err := selfcode.Open(filepath.Join(dir, "tools"), nil)
	if err != nil {
		t.Fatal(err)
	}
	stage := func(name string) selfcode.Manifest {
		m, err := tools.Stage(name, selfcode.Starlark, countStar, "def test_a():\n    pass\n",
			selfcode.Meta{Description: "Count the words in a text.", ParamsSchema: []byte(`{"type":"object"}`)}, "passed")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	promote := func(name string) {
		if _, err := tools.Promote(name, stage(name).Hash, "owner"); err != nil {
			t.Fatal(err)
		}
	}
	promote("word_count")
	stage("shout")
	promote("flaky")
	if err := tools.Quarantine("flaky"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddStrike(context.Background(), "flaky", 1, "failed", time.Now()); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "workspace")
	os.Mkdir(ws, 0o700)
	exe, err := core.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m := &scriptedModel{}
	c, err := core.New(core.Options{Store: st, Model: m, Tools: tools, Workspace: ws,
		Spawner: &core.ExecSpawner{Path: exe, Args: childproc.WorkerArgs, Env: core.WorkerEnv(os.Environ())},
		Limits:  contracts.Limits{Budget: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}

	list, err := c.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var want []core.ToolView
	for _, b := range contracts.BuiltinTools() {
		want = append(want, core.ToolView{Name: b.Name, Tier: string(b.Tier), Runs: string(b.Runs),
			Source: core.SourceBuiltin, State: selfcode.StateLive, Summary: b.Summary})
	}
	self := func(name, state string, strikes int) core.ToolView {
		return core.ToolView{Name: name, Tier: "free", Runs: "sandbox", Source: core.SourceSelf, State: state,
			Version: 1, Language: selfcode.Starlark, Strikes: strikes}
	}
	want = append(want, self("word_count", selfcode.StateLive, 0), self("shout", selfcode.StateStaged, 0),
		self("flaky", selfcode.StateQuarantined, 1))
	if diff := cmp.Diff(want, list, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Hash" }, cmp.Ignore())); diff != "" {
		t.Errorf("core.Tools (-want +got):\n%s", diff)
	}
	for _, v := range list {
		if v.Source == core.SourceSelf && len(v.Hash) != 64 {
			t.Errorf("%s: hash %q", v.Name, v.Hash)
		}
	}

	if _, err := c.Send(context.Background(), "c", "hi", core.Events{}); err != nil {
		t.Fatal(err)
	}
	var offered, live []string
	for _, spec := range m.reqs[0].Tools {
		offered = append(offered, spec.Name)
	}
	for _, v := range list {
		// find_tools is offered only with more self-coded tools than a turn offers.
		if v.State == selfcode.StateLive && v.Name != contracts.ToolFindTools {
			live = append(live, v.Name)
		}
	}
	slices.Sort(offered)
	slices.Sort(live)
	if diff := cmp.Diff(live, offered); diff != "" {
		t.Errorf("the model was offered (+) what core.Tools lists as live (-):\n%s", diff)
	}
}
