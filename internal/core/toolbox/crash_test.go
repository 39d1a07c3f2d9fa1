package toolbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/core/approvals"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/core/toolbox"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// The crash tests of a promotion decided on the desk: a child process (this
// test binary again, TestPromotionCrashChild) approves the request and dies
// at a named point between the desk and the toolbox; the test then starts
// again as the daemon does and recovers.
const (
	envHome   = "TOOLBOX_CRASH_HOME" // set only in the child
	envPoint  = "TOOLBOX_CRASH_POINT"
	envID     = "TOOLBOX_CRASH_ID"
	crashExit = 77
)

// The points a child dies at.
const (
	// The desk claimed the request (approved -> running); the toolbox has
	// not begun.
	pointClaimed = "claimed"
	// The toolbox promoted the tool; the desk has not recorded it (the
	// request is still running).
	pointPromoted = "promoted"
)

// promoter is the toolbox as the desk's Promoter (as core adapts it), dying
// at a point when told to.
type promoter struct {
	t   *toolbox.Toolbox
	die string
}

var _ approvals.Promoter = promoter{}

func (p promoter) Promote(ctx context.Context, a store.Approval) (string, string, error) {
	if p.die == pointClaimed {
		os.Exit(crashExit)
	}
	m, outcome, err := p.t.Promote(ctx, a)
	if p.die == pointPromoted {
		os.Exit(crashExit)
	}
	return fmt.Sprintf("v%d is live", m.Version), outcome, err
}
func (p promoter) Deny(ctx context.Context, a store.Approval)  { p.t.Deny(ctx, a) }
func (p promoter) Discard(_ context.Context, a store.Approval) { p.t.Discard(a.Tool) }
func (p promoter) Promoted(a store.Approval) string            { return p.t.Promoted(a) }

// noTurns is the turn engine of a desk that holds only promotions: never
// called.
type noTurns struct{ approvals.Turns }

// daemon is what a (re)started daemon holds: the store, the tools
// directory, the toolbox and the desk.
type daemon struct {
	st   *store.Store
	dir  *selfcode.Dir
	tb   *toolbox.Toolbox
	desk *approvals.Desk
}

func start(t testing.TB, home, die string) daemon {
	st, err := store.Open(context.Background(), filepath.Join(home, "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := selfcode.Open(filepath.Join(home, "tools"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := &trail{}
	tb := toolbox.New(toolbox.Options{Dir: dir, Store: st, Audit: tr})
	desk, err := approvals.New(approvals.Options{Store: st, Audit: tr,
		Promoters: map[string]approvals.Promoter{toolbox.KindPromotion: promoter{t: tb, die: die}}})
	if err != nil {
		t.Fatal(err)
	}
	return daemon{st: st, dir: dir, tb: tb, desk: desk}
}

// propose stages src as a version of "count" and files its request.
func (d daemon) propose(t testing.TB, src string) (approvals.View, toolbox.Staged) {
	p := proposal("count", src)
	s, err := d.tb.Stage(p)
	if err != nil {
		t.Fatal(err)
	}
	v, err := d.desk.Propose(context.Background(), "c", 1, s.Manifest, s.Args, p)
	if err != nil {
		t.Fatal(err)
	}
	return v, s
}

// TestPromotionCrashChild is the child: skipped unless a crash test runs it.
func TestPromotionCrashChild(t *testing.T) {
	home := os.Getenv(envHome)
	if home == "" {
		t.Skip("the child of the promotion crash tests")
	}
	d := start(t, home, os.Getenv(envPoint))
	_, err := d.desk.Decide(context.Background(), os.Getenv(envID), true, "owner", noTurns{})
	fmt.Fprintln(os.Stderr, "the child did not die:", err)
	os.Exit(1)
}

// TestPromotionCrash: whether the process dies after the desk claimed the
// approved request or after the toolbox promoted the tool and before the
// desk recorded it, the restarted daemon (with or without the toolbox's
// Recover before the desk's) ends with the approved version live, the old
// one archived, the request done and saying so, nothing for doctor to
// report, and a next proposal promotable.
func TestPromotionCrash(t *testing.T) {
	t.Parallel()
	for _, point := range []string{pointClaimed, pointPromoted} {
		for _, toolboxRecover := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/toolbox-recover=%v", point, toolboxRecover), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				home := t.TempDir()
				d := start(t, home, "")
				old, _ := d.propose(t, code)
				if _, err := d.desk.Decide(ctx, old.ID, true, "owner", noTurns{}); err != nil {
					t.Fatal(err)
				}
				req, staged := d.propose(t, code+"# v2\n")
				d.st.Close()

				cmd := exec.Command(os.Args[0], "-test.run=^TestPromotionCrashChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), envHome+"="+home, envPoint+"="+point, envID+"="+req.ID)
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != crashExit {
					t.Fatalf("the child did not die at %s: %v\n%s", point, err, out)
				}

				d = start(t, home, "")
				defer d.st.Close()
				if a, _ := d.st.Approval(ctx, req.ID); a.State != store.ApprovalRunning {
					t.Fatalf("after the crash the request is %s, want running", a.State)
				}
				if toolboxRecover {
					if err := d.tb.Recover(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := d.desk.Recover(ctx, noTurns{}); err != nil {
					t.Fatal(err)
				}
				a, err := d.st.Approval(ctx, req.ID)
				if err != nil || a.State != store.ApprovalDone || !strings.HasPrefix(a.Outcome, "promoted v2") {
					t.Fatalf("the request after recovery: %s %q %v", a.State, a.Outcome, err)
				}
				live, err := d.dir.Load(selfcode.StateLive, "count")
				if err != nil || live.Hash != staged.Manifest.Hash || live.ApprovedBy != "owner" {
					t.Fatalf("live after recovery: %+v %v", live.Manifest, err)
				}
				if _, err := d.dir.Load(selfcode.StateStaged, "count"); !errors.Is(err, selfcode.ErrNotFound) {
					t.Errorf("still staged: %v", err)
				}
				if p, err := toolbox.Check(ctx, filepath.Join(home, "tools"), d.st); err != nil || len(p) != 0 {
					t.Errorf("doctor: %v %v", p, err)
				}
				next, s3 := d.propose(t, code+"# v3\n")
				if _, err := d.desk.Decide(ctx, next.ID, true, "owner", noTurns{}); err != nil {
					t.Fatalf("the next promotion: %v", err)
				}
				if live, _ := d.dir.Load(selfcode.StateLive, "count"); live.Hash != s3.Manifest.Hash {
					t.Errorf("the next promotion is not live: v%d", live.Version)
				}
			})
		}
	}
}

// TestCheckStagedWithoutRequest: doctor reports a staged version that no
// open request can approve (its proposal's request was never filed, or is
// closed), and not one whose request is pending.
func TestCheckStagedWithoutRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	d := start(t, home, "")
	defer d.st.Close()
	d.propose(t, code)
	root := filepath.Join(home, "tools")
	if p, err := toolbox.Check(ctx, root, d.st); err != nil || len(p) != 0 {
		t.Fatalf("a pending proposal: %v %v", p, err)
	}
	if _, err := d.tb.Stage(proposal("count", code+"# unfiled\n")); err != nil {
		t.Fatal(err)
	}
	p, err := toolbox.Check(ctx, root, d.st)
	if err != nil || len(p) != 1 || !strings.Contains(p[0].What, "no request") {
		t.Fatalf("an unfiled proposal: %v %v", p, err)
	}
}
