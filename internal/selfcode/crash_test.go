package selfcode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The crash tests run a change of a tool's live version in a child process
// (this test binary again, TestCrashChild) that exits at a named step, then
// open the directory again as a restarted daemon would.
const (
	envCrashRoot = "SELFCODE_CRASH_ROOT" // the tools directory; set only in the child
	envCrashOp   = "SELFCODE_CRASH_OP"   // promote, restore or rollback
	envCrashStep = "SELFCODE_CRASH_STEP" // the step to die at
	envCrashHash = "SELFCODE_CRASH_HASH" // what the owner approved, for promote
	crashExit    = 77                    // the child died at the step
	ranExit      = 78                    // the child finished without reaching the step
)

// TestCrashChild is the child: it is skipped unless a crash test runs it.
func TestCrashChild(t *testing.T) {
	root := os.Getenv(envCrashRoot)
	if root == "" {
		t.Skip("the child of the crash tests")
	}
	d, err := Open(root, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	step := os.Getenv(envCrashStep)
	d.fault = func(s string) {
		if s == step {
			os.Exit(crashExit)
		}
	}
	switch os.Getenv(envCrashOp) {
	case opPromote:
		_, err = d.Promote("greet", os.Getenv(envCrashHash), "owner")
	case opRestore:
		err = d.Restore("greet")
	case opRollback:
		_, err = d.Rollback("greet")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(ranExit)
}

// crashAt runs op on the tools directory root in a child that dies at step.
func crashAt(t *testing.T, root, op, step, hash string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCrashRoot+"="+root, envCrashOp+"="+op, envCrashStep+"="+step, envCrashHash+"="+hash)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != crashExit {
		t.Fatalf("the child did not die at %s: %v\n%s", step, err, out)
	}
}

// stageVersion stages a version of greet whose code says which it is.
func stageVersion(t *testing.T, d *Dir, which string) Manifest {
	t.Helper()
	m, err := d.Stage("greet", Starlark, "def run():\n    return \""+which+"\"\n", "def test_a():\n    pass\n", Meta{Description: which}, "passed")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// layout is where each version of greet is, by state, and whether its
// manifest agrees; a version that does not load shows as "broken".
func layout(t *testing.T, root string) map[string][]string {
	t.Helper()
	d := &Dir{root: root}
	out := map[string][]string{}
	for _, v := range d.versions() {
		tool, err := loadDir(v.dir)
		desc := tool.Meta.Description
		switch {
		case err != nil:
			desc = "broken: " + err.Error()
		case tool.State != v.state:
			desc += " (manifest: " + tool.State + ")"
		}
		out[v.state] = append(out[v.state], desc)
	}
	for _, vs := range out {
		slices.Sort(vs)
	}
	return out
}

// TestSwapCrash: whatever step of a promotion, restore or rollback the
// process dies at, the restarted directory's Recover leaves exactly the
// new version live (the intent was written before the first move, so the
// change is finished), every other version where it was or archived,
// nothing half-written anywhere and nothing for Check to report; doctor's
// Check saw the interruption before recovery; and a next promotion works.
func TestSwapCrash(t *testing.T) {
	t.Parallel()
	type setup struct {
		op      string
		prepare func(t *testing.T, d *Dir) (hash string)
		want    map[string][]string // after recovery
	}
	setups := []setup{{
		op: opPromote,
		prepare: func(t *testing.T, d *Dir) string {
			old := stageVersion(t, d, "old")
			if _, err := d.Promote("greet", old.Hash, "owner"); err != nil {
				t.Fatal(err)
			}
			return stageVersion(t, d, "new").Hash
		},
		want: map[string][]string{StateLive: {"new"}, StateArchived: {"old"}},
	}, {
		op: opRestore,
		prepare: func(t *testing.T, d *Dir) string {
			q := stageVersion(t, d, "new")
			if _, err := d.Promote("greet", q.Hash, "owner"); err != nil {
				t.Fatal(err)
			}
			if err := d.Quarantine("greet"); err != nil {
				t.Fatal(err)
			}
			old := stageVersion(t, d, "old")
			if _, err := d.Promote("greet", old.Hash, "owner"); err != nil {
				t.Fatal(err)
			}
			return ""
		},
		want: map[string][]string{StateLive: {"new"}, StateArchived: {"old"}},
	}, {
		op: opRollback,
		prepare: func(t *testing.T, d *Dir) string {
			for _, which := range []string{"new", "old"} {
				m := stageVersion(t, d, which)
				if _, err := d.Promote("greet", m.Hash, "owner"); err != nil {
					t.Fatal(err)
				}
			}
			return ""
		},
		want: map[string][]string{StateLive: {"new"}, StateArchived: {"old"}},
	}}
	for _, s := range setups {
		for _, step := range swapSteps {
			t.Run(s.op+"/"+step, func(t *testing.T) {
				t.Parallel()
				root := filepath.Join(t.TempDir(), "tools")
				d, err := Open(root, nil)
				if err != nil {
					t.Fatal(err)
				}
				hash := s.prepare(t, d)
				crashAt(t, root, s.op, step, hash)
				if mid := step == stepArchived || step == stepMarked || step == stepStamped; mid != (len(layout(t, root)[StateLive]) == 0) {
					t.Errorf("dying at %s left live %v", step, layout(t, root)[StateLive])
				}

				// doctor, before the daemon starts again.
				problems := Check(root, nil)
				if unfinished := step != stepDone; unfinished != strings.Contains(fmt.Sprint(problems), "unfinished") {
					t.Errorf("Check after dying at %s: %v", step, problems)
				}

				// The restarted daemon.
				d2, err := Open(root, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := d2.Recover(); err != nil {
					t.Fatalf("Recover: %v", err)
				}
				if diff := cmp.Diff(s.want, layout(t, root)); diff != "" {
					t.Errorf("after recovery (-want +got):\n%s", diff)
				}
				live, err := d2.Load(StateLive, "greet")
				if err != nil {
					t.Fatalf("no loadable live version: %v", err)
				}
				if s.op == opPromote && (live.ApprovedBy != "owner" || live.ApprovedAt.IsZero()) {
					t.Errorf("the promoted version does not say who approved it: %+v", live.Manifest)
				}
				if p := d2.Check(nil); len(p) != 0 {
					t.Errorf("Check after recovery: %v", p)
				}
				// A next promotion behaves.
				next := stageVersion(t, d2, "next")
				if _, err := d2.Promote("greet", next.Hash, "owner"); err != nil {
					t.Fatalf("the next promotion: %v", err)
				}
				if got := layout(t, root)[StateLive]; !slices.Equal(got, []string{"next"}) {
					t.Errorf("live after the next promotion: %v", got)
				}
			})
		}
	}
}

// TestSwapCrashWithoutRecover: a daemon that never called Recover still
// finishes an interrupted promotion before the next change of that tool
// (here a new proposal of it), so the proposal cannot clobber the version
// the owner approved.
func TestSwapCrashWithoutRecover(t *testing.T) {
	t.Parallel()
	for _, step := range swapSteps[:len(swapSteps)-1] {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(t.TempDir(), "tools")
			d, _ := Open(root, nil)
			old := stageVersion(t, d, "old")
			if _, err := d.Promote("greet", old.Hash, "owner"); err != nil {
				t.Fatal(err)
			}
			crashAt(t, root, opPromote, step, stageVersion(t, d, "new").Hash)
			d2, _ := Open(root, nil)
			stageVersion(t, d2, "later")
			want := map[string][]string{StateLive: {"new"}, StateArchived: {"old"}, StateStaged: {"later"}}
			if diff := cmp.Diff(want, layout(t, root)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestSwapUndone: if the version an interrupted promotion was making live
// is gone by the restart, Recover puts the old version back live.
func TestSwapUndone(t *testing.T) {
	t.Parallel()
	for _, step := range []string{stepJournaled, stepArchived, stepMarked, stepStamped} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(t.TempDir(), "tools")
			d, _ := Open(root, nil)
			old := stageVersion(t, d, "old")
			if _, err := d.Promote("greet", old.Hash, "owner"); err != nil {
				t.Fatal(err)
			}
			crashAt(t, root, opPromote, step, stageVersion(t, d, "new").Hash)
			if err := os.RemoveAll(filepath.Join(root, "staged", "greet")); err != nil {
				t.Fatal(err)
			}
			d2, _ := Open(root, nil)
			done, err := d2.Recover()
			if err != nil || !strings.Contains(fmt.Sprint(done), "undone") {
				t.Fatalf("Recover: %v, %v", done, err)
			}
			if diff := cmp.Diff(map[string][]string{StateLive: {"old"}}, layout(t, root)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if p := d2.Check(nil); len(p) != 0 {
				t.Errorf("Check: %v", p)
			}
		})
	}
}

// TestPromoteMismatchChangesNothing: a promotion refused for its hash
// leaves no intent and the old version live.
func TestPromoteMismatchChangesNothing(t *testing.T) {
	t.Parallel()
	d := newDir(t)
	old := stageVersion(t, d, "old")
	if _, err := d.Promote("greet", old.Hash, "owner"); err != nil {
		t.Fatal(err)
	}
	stageVersion(t, d, "new")
	if _, err := d.Promote("greet", old.Hash, "owner"); !errors.Is(err, ErrMismatch) {
		t.Fatalf("promote with a stale hash: %v", err)
	}
	if diff := cmp.Diff(map[string][]string{StateLive: {"old"}, StateStaged: {"new"}}, layout(t, d.root)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if p := d.Check(nil); len(p) != 0 {
		t.Errorf("Check: %v", p)
	}
}
