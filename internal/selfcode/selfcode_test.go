package selfcode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
)

const code1 = `DESCRIPTION = "v1"
PARAMS_SCHEMA = {"type": "object"}
CAPABILITIES = {}
def run():
    return "one"
`

func newDir(t *testing.T) *Dir {
	t.Helper()
	d, err := Open(filepath.Join(t.TempDir(), "tools"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	ok := map[string]string{"Word Count": "word_count", "usd-to-inr": "usd_to_inr", "a1.b": "a1_b"}
	for in, want := range ok {
		if got, err := Normalize(in); err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "1abc", "../x", "a/b", "read_file", "eval", "def", "import", "print",
		"ünïcode", "x\u202ey", "a;b", "propose_tool", "http", string(make([]byte, 60))} {
		if got, err := Normalize(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("Normalize(%q) = %q, %v; want ErrBadName", bad, got, err)
		}
	}
}

// TestBuiltinNamesAreReserved: no self-coded tool takes the name of a
// built-in of the catalogue, in any spelling Normalize folds to it.
func TestBuiltinNamesAreReserved(t *testing.T) {
	t.Parallel()
	for _, b := range contracts.BuiltinTools() {
		for _, spelling := range []string{b.Name, strings.ToUpper(b.Name), strings.ReplaceAll(b.Name, "_", "-"),
			" " + strings.ReplaceAll(b.Name, "_", " ") + " "} {
			if got, err := Normalize(spelling); !errors.Is(err, ErrBadName) {
				t.Errorf("Normalize(%q) = %q, %v; %s is a built-in", spelling, got, err, b.Name)
			}
		}
	}
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	d := newDir(t)
	m1, err := d.Stage("greet", Starlark, code1, "def test_a():\n    pass\n", Meta{Description: "v1"}, "passed")
	if err != nil || m1.Version != 1 || m1.State != StateStaged {
		t.Fatalf("stage: %+v %v", m1, err)
	}
	// A stale staged copy is replaced by a new proposal.
	m1b, err := d.Stage("greet", Starlark, code1+"# again\n", "def test_a():\n    pass\n", Meta{}, "passed")
	if err != nil || m1b.Version != 1 || m1b.Hash == m1.Hash {
		t.Fatalf("restage: %+v %v", m1b, err)
	}
	if _, err := d.Promote("greet", m1.Hash, "owner"); !errors.Is(err, ErrMismatch) {
		t.Fatalf("promoting with the stale hash: %v", err)
	}
	live, err := d.Promote("greet", m1b.Hash, "owner")
	if err != nil || live.State != StateLive || live.ApprovedBy != "owner" {
		t.Fatalf("promote: %+v %v", live, err)
	}
	if _, err := d.Load(StateStaged, "greet"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the staged copy is still there: %v", err)
	}
	// Version 2 replaces it; version 1 is archived; rollback brings it back.
	m2, _ := d.Stage("greet", Starlark, "v2", "t2", Meta{}, "passed")
	if m2.Version != 2 {
		t.Fatalf("second version = %d", m2.Version)
	}
	if _, err := d.Promote("greet", m2.Hash, "owner"); err != nil {
		t.Fatal(err)
	}
	if cur, _ := d.Load(StateLive, "greet"); cur.Version != 2 {
		t.Fatalf("live version %d", cur.Version)
	}
	back, err := d.Rollback("greet")
	if err != nil || back.Version != 1 {
		t.Fatalf("rollback: %+v %v", back, err)
	}
	if cur, _ := d.Load(StateLive, "greet"); cur.Version != 1 || cur.Code != code1+"# again\n" {
		t.Fatalf("after rollback: %+v", cur.Manifest)
	}
	// Quarantine and restore.
	if err := d.Quarantine("greet"); err != nil {
		t.Fatal(err)
	}
	if list, _ := d.List(StateLive); len(list) != 0 {
		t.Errorf("a quarantined tool is still live: %+v", list)
	}
	if err := d.Restore("greet"); err != nil {
		t.Fatal(err)
	}
	if list, _ := d.List(StateLive); len(list) != 1 {
		t.Errorf("restore: %+v", list)
	}
	// The next version number never reuses an archived one.
	m3, _ := d.Stage("greet", Starlark, "v3", "t3", Meta{}, "passed")
	if m3.Version != 3 {
		t.Errorf("third version = %d", m3.Version)
	}
	if err := d.Remove("greet"); err != nil {
		t.Fatal(err)
	}
	if list, _ := d.List(StateLive); len(list) != 0 {
		t.Errorf("removed tool still live")
	}
	if err := d.Remove("greet"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second remove: %v", err)
	}
}

func TestTamperedToolRefused(t *testing.T) {
	t.Parallel()
	d := newDir(t)
	m, _ := d.Stage("calc", Python, "def run():\n    return 1\n", "def test_x():\n    pass\n", Meta{}, "passed")
	if _, err := d.Promote("calc", m.Hash, "o"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d.LiveDir(), "calc", "calc.py"), []byte("import os\n"), 0o600)
	if _, err := d.Load(StateLive, "calc"); !errors.Is(err, ErrMismatch) {
		t.Fatalf("a tool changed on disk loaded: %v", err)
	}
}

func TestStageRefusals(t *testing.T) {
	t.Parallel()
	d := newDir(t)
	if _, err := d.Stage("big", Starlark, string(make([]byte, MaxSource+1)), "", Meta{}, ""); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversize: %v", err)
	}
	if _, err := d.Stage("x", "ruby", "", "", Meta{}, ""); err == nil {
		t.Error("unknown language accepted")
	}
}

// FuzzIsIdent: the hand-written identifier check is the regexp it replaced.
func FuzzIsIdent(f *testing.F) {
	re := regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)
	for _, s := range []string{"", "a", "word_count", "Word", "1a", "a-b", "é", strings.Repeat("a", 48), strings.Repeat("a", 49), "a\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isIdent(s), re.MatchString(s); got != want {
			t.Errorf("isIdent(%q) = %v, the regexp says %v", s, got, want)
		}
	})
}

// TestVersions: every kept version, oldest first, the live or quarantined
// one last; a staged proposal is not one; a name that is a path has none.
func TestVersions(t *testing.T) {
	t.Parallel()
	d := newDir(t)
	for i, code := range []string{"v1", "v2"} {
		m, err := d.Stage("greet", Starlark, code, "t", Meta{}, "passed")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Promote("greet", m.Hash, "owner"); err != nil || m.Version != i+1 {
			t.Fatalf("promote %d: %v", m.Version, err)
		}
	}
	if _, err := d.Stage("greet", Starlark, "v3", "t", Meta{}, "passed"); err != nil {
		t.Fatal(err)
	}
	versions := func() []string {
		t.Helper()
		vs, err := d.Versions("greet")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, v := range vs {
			out = append(out, fmt.Sprintf("%d:%s:%s", v.Version, v.State, v.Code))
		}
		return out
	}
	if got, want := strings.Join(versions(), " "), "1:archived:v1 2:live:v2"; got != want {
		t.Errorf("versions %q, want %q", got, want)
	}
	if err := d.Quarantine("greet"); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(versions(), " "), "1:archived:v1 2:quarantined:v2"; got != want {
		t.Errorf("versions %q, want %q", got, want)
	}
	for _, name := range []string{"../greet", "greet/..", "/etc", ".", "..", "", "nope", ".tmp"} {
		if vs, err := d.Versions(name); !errors.Is(err, ErrNotFound) || len(vs) != 0 {
			t.Errorf("Versions(%q) = %d versions, %v", name, len(vs), err)
		}
	}
}
