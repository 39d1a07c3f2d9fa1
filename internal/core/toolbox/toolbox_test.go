package toolbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/core/toolbox"
	"github.com/shelldon/shelldon/internal/selfcode"
)

const code = `DESCRIPTION = "Count the words in a text."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
CAPABILITIES = {}

def run(text):
    return str(len(text.split()))
`

const test = "def test_counts():\n    assert.eq(run(\"a b\"), \"2\")\n"

// trail is a Recorder that keeps the kinds of the rows, with the tool.
type trail struct {
	mu    sync.Mutex
	kinds []string
}

// Entry is the row as given (the desk writes it with its decision).
func (r *trail) Entry(e store.AuditEntry) store.AuditEntry {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	return e
}

func (r *trail) Record(_ context.Context, e store.AuditEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kinds = append(r.kinds, e.Kind+":"+e.Tool)
}

func (r *trail) Kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.kinds)
}

// newToolbox returns a toolbox over a real tools directory and store in
// t.TempDir().
func newToolbox(t *testing.T, strikes int) (*toolbox.Toolbox, *selfcode.Dir, *store.Store, *trail) {
	t.Helper()
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
	tr := &trail{}
	return toolbox.New(toolbox.Options{Dir: tools, Store: st, Strikes: strikes, Audit: tr}), tools, st, tr
}

func proposal(name, src string) contracts.Proposal {
	return contracts.Proposal{Name: name, Language: selfcode.Starlark, Code: src, Test: test,
		Description: "Count the words in a text.", Parameters: []byte(`{"type":"object"}`), Gate: "passed"}
}

// promotion is the request core files for s, approved by the owner.
func promotion(s toolbox.Staged) store.Approval {
	return store.Approval{ID: "req", Kind: toolbox.KindPromotion, Chat: "c", Tool: s.Manifest.Name,
		Args: s.Args, ArgsHash: s.Manifest.Hash, State: store.ApprovalApproved, DecidedBy: "owner"}
}

func names(list []contracts.SelfTool) []string {
	var out []string
	for _, st := range list {
		out = append(out, st.Name)
	}
	return out
}

// TestPromote: a staged tool goes live with the hash the owner saw, and
// the next discovery offers it.
func TestPromote(t *testing.T) {
	t.Parallel()
	tb, tools, _, tr := newToolbox(t, 0)
	s, err := tb.Stage(proposal("word_count", code))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"word_count","version":1}`; s.Args != want || s.Manifest.Hash != selfcode.Hash(selfcode.Starlark, code, test) {
		t.Errorf("staged %+v", s)
	}
	if got := tb.Discover(); len(got) != 0 {
		t.Errorf("a staged tool was discovered: %v", names(got))
	}
	m, outcome, err := tb.Promote(context.Background(), promotion(s))
	if err != nil || outcome != "promoted v1" || m.Version != 1 {
		t.Fatalf("Promote: %+v, %q, %v", m, outcome, err)
	}
	if live, err := tools.Load(selfcode.StateLive, "word_count"); err != nil || live.ApprovedBy != "owner" {
		t.Errorf("live: %+v, %v", live.Manifest, err)
	}
	if got := names(tb.Discover()); !slices.Equal(got, []string{"word_count"}) {
		t.Errorf("discovered %v after the promotion", got)
	}
	if diff := cmp.Diff([]string{"tool_promoted:word_count"}, tr.Kinds()); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
}

// TestPromoteChangedHashIsRefused: if the staged content is not the one
// the owner approved, nothing goes live.
func TestPromoteChangedHashIsRefused(t *testing.T) {
	t.Parallel()
	other := strings.Replace(code, "len(text.split())", "len(text.split()) + 1", 1)
	for name, change := range map[string]func(t *testing.T, tb *toolbox.Toolbox, tools *selfcode.Dir){
		"proposed again": func(t *testing.T, tb *toolbox.Toolbox, _ *selfcode.Dir) {
			if _, err := tb.Stage(proposal("word_count", other)); err != nil {
				t.Fatal(err)
			}
		},
		"edited on disk": func(t *testing.T, _ *toolbox.Toolbox, tools *selfcode.Dir) {
			path := filepath.Join(tools.VersionDir(selfcode.StateStaged, "word_count"), "tool.star")
			if err := os.WriteFile(path, []byte(other), 0o600); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tb, tools, _, _ := newToolbox(t, 0)
			s, err := tb.Stage(proposal("word_count", code))
			if err != nil {
				t.Fatal(err)
			}
			change(t, tb, tools)
			_, outcome, err := tb.Promote(context.Background(), promotion(s))
			if !errors.Is(err, selfcode.ErrMismatch) || !strings.HasPrefix(outcome, "not promoted: ") {
				t.Fatalf("promoting changed code: %q, %v", outcome, err)
			}
			if _, err := tools.Load(selfcode.StateLive, "word_count"); !errors.Is(err, selfcode.ErrNotFound) {
				t.Errorf("something went live: %v", err)
			}
			if got := tb.Discover(); len(got) != 0 {
				t.Errorf("discovered %v", names(got))
			}
		})
	}
}

// TestStrikesQuarantine: each failed call of an offered self-coded tool is
// a strike; at the threshold the version is quarantined, the note for the
// turn says so, and discovery no longer offers it. A tool the turn was not
// offered as self-coded takes no strike.
func TestStrikesQuarantine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tb, tools, st, tr := newToolbox(t, 2)
	s, err := tb.Stage(proposal("flaky", code))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tb.Promote(ctx, promotion(s)); err != nil {
		t.Fatal(err)
	}
	job := contracts.Job{Chat: "c", Turn: 7, SelfTools: tb.Discover()}
	fail := func(tool string) string {
		return tb.Strike(ctx, job, contracts.ToolEvent{Tool: tool, Phase: contracts.PhaseEnd, Summary: "boom"})
	}
	if note := fail("echo"); note != "" {
		t.Errorf("a built-in's failure: note %q", note)
	}
	if note := fail("flaky"); note != "" {
		t.Errorf("first strike: note %q", note)
	}
	if n, _ := st.Strikes(ctx, "flaky", 1); n != 1 {
		t.Errorf("%d strikes after one failure", n)
	}
	note := fail("flaky")
	if want := "Note from shelldon: the tool flaky (version 1) failed 2 times and was quarantined; `shelldon tools restore flaky` brings it back."; note != want {
		t.Errorf("second strike: note %q, want %q", note, want)
	}
	if _, err := tools.Load(selfcode.StateQuarantined, "flaky"); err != nil {
		t.Errorf("not quarantined: %v", err)
	}
	if got := tb.Discover(); len(got) != 0 {
		t.Errorf("a quarantined tool was discovered: %v", names(got))
	}
	want := []string{"tool_promoted:flaky", "tool_strike:flaky", "tool_strike:flaky", "tool_quarantined:flaky"}
	if diff := cmp.Diff(want, tr.Kinds()); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	if _, err := tb.Action(ctx, "restore", "flaky", "owner"); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.Strikes(ctx, "flaky", 1); n != 0 {
		t.Errorf("%d strikes after the restore", n)
	}
}

// TestDiscoveryInvalidated: the owner's commands change what the next
// discovery offers at once.
func TestDiscoveryInvalidated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tb, _, _, _ := newToolbox(t, 0)
	s, err := tb.Stage(proposal("word_count", code))
	if err != nil {
		t.Fatal(err)
	}
	if got := tb.Discover(); len(got) != 0 {
		t.Fatalf("discovered %v before the promotion", names(got))
	}
	if _, _, err := tb.Promote(ctx, promotion(s)); err != nil {
		t.Fatal(err)
	}
	if got := names(tb.Discover()); !slices.Equal(got, []string{"word_count"}) {
		t.Fatalf("discovered %v after the promotion", got)
	}
	for _, step := range []struct {
		action string
		want   []string
	}{
		{"quarantine", nil},
		{"restore", []string{"word_count"}},
		{"remove", nil},
	} {
		if _, err := tb.Action(ctx, step.action, "word_count", "owner"); err != nil {
			t.Fatalf("%s: %v", step.action, err)
		}
		if got := names(tb.Discover()); !slices.Equal(got, step.want) {
			t.Errorf("after %s: discovered %v, want %v", step.action, got, step.want)
		}
	}
}

// TestDisabled: without a tools directory nothing is staged, found or
// discovered, and the list holds the built-ins only.
func TestDisabled(t *testing.T) {
	t.Parallel()
	tb := toolbox.New(toolbox.Options{})
	if _, err := tb.Stage(proposal("word_count", code)); !errors.Is(err, toolbox.ErrDisabled) {
		t.Errorf("Stage: %v", err)
	}
	if _, _, err := tb.Find("word_count"); !errors.Is(err, selfcode.ErrNotFound) {
		t.Errorf("Find: %v", err)
	}
	if got := tb.Discover(); got != nil {
		t.Errorf("Discover: %v", got)
	}
	list, err := tb.Tools(context.Background())
	if err != nil || len(list) != len(contracts.BuiltinTools()) {
		t.Errorf("Tools: %d, %v", len(list), err)
	}
}
