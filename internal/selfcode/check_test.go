package selfcode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: doctor's view of the tools directory. A consistent directory
// (including a removed tool and a quarantined one) has no problems; a tool
// with archived versions and none live, a staged version no request can
// approve, a version that does not load, a manifest that disagrees with
// its place and an unfinished change are each reported.
func TestCheck(t *testing.T) {
	t.Parallel()
	d := newDir(t)
	promote := func(name, which string) Manifest {
		m, err := d.Stage(name, Starlark, "def run():\n    return \""+which+"\"\n", "def test_a():\n    pass\n", Meta{Description: which}, "passed")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Promote(name, m.Hash, "owner"); err != nil {
			t.Fatal(err)
		}
		return m
	}
	promote("gone", "1")
	promote("gone", "2")
	if err := d.Remove("gone"); err != nil {
		t.Fatal(err)
	}
	promote("sick", "1")
	if err := d.Quarantine("sick"); err != nil {
		t.Fatal(err)
	}
	promote("fine", "1")
	waiting, err := d.Stage("fine", Starlark, "x", "y", Meta{}, "passed")
	if err != nil {
		t.Fatal(err)
	}
	requested := func(name, hash string) bool { return name == "fine" && hash == waiting.Hash }
	if p := d.Check(requested); len(p) != 0 {
		t.Fatalf("a consistent directory: %v", p)
	}
	if p := Check(filepath.Join(t.TempDir(), "none"), nil); len(p) != 0 {
		t.Fatalf("no directory: %v", p)
	}

	// Damage: lost's live version went missing (its old versions are
	// archived), fine's staged version has no request, broken's live code
	// changed, sick's manifest says live, and half has an unfinished change.
	promote("lost", "1")
	promote("lost", "2")
	if err := os.Rename(filepath.Join(d.root, "live", "lost"), filepath.Join(t.TempDir(), "x")); err != nil {
		t.Fatal(err)
	}
	promote("broken", "1")
	os.WriteFile(filepath.Join(d.root, "live", "broken", "tool.star"), []byte("def run():\n    return 0\n"), 0o600)
	q, _ := readManifest(d.path(StateQuarantined, "sick"))
	q.State = StateLive
	rewriteManifest(d.path(StateQuarantined, "sick"), q)
	promote("half", "1")
	if err := d.writeIntent(intent{Op: opPromote, Name: "half", From: "staged/half", Version: 2, Hash: "h", Old: 1}); err != nil {
		t.Fatal(err)
	}

	got := map[string]string{}
	for _, p := range d.Check(func(string, string) bool { return false }) {
		got[p.Tool] += p.What + "; "
	}
	for tool, want := range map[string]string{
		"lost":   "no version is live",
		"fine":   "no request for it is open",
		"broken": "does not load",
		"sick":   "its manifest says live",
		"half":   "unfinished",
	} {
		if !strings.Contains(got[tool], want) {
			t.Errorf("%s: %q, want %q", tool, got[tool], want)
		}
	}
	if len(got) != 5 {
		t.Errorf("reported %d tools: %v", len(got), got)
	}
}
