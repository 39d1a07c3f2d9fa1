package worker

import (
	"context"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
)

// TestRehearse: a worker whose job is not there yet rehearses the turn:
// it builds the tools against the scratch directory, derives the schema of
// the tool the made-up answer calls, runs no tool and reaches no daemon,
// and releases what the tools hold. One whose job is there does nothing,
// and one whose job comes during it stops at the next step.
func TestRehearse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		arrivesAt int // the arrived call that first says yes; 0: never
		built     bool
		resolved  bool
	}{
		{"the job is there", 1, false, false},
		{"the job comes after the first step", 2, false, false},
		{"the job comes after the tools are built", 3, true, false},
		{"no job while it runs", 0, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var tool *Tool
			built, released := 0, 0
			build := func(job contracts.Job, d Daemon) (*Registry, func(), error) {
				built++
				if job.Workspace != dir {
					t.Errorf("tools built against %q, want %q", job.Workspace, dir)
				}
				if _, err := d.Skill(context.Background(), contracts.SkillRequest{Name: "x"}); err == nil {
					t.Error("the rehearsal's daemon answered")
				}
				var err error
				tool, err = NewTool("echo", "echoes", contracts.TierFree, func(context.Context, echoIn) (string, error) {
					t.Error("a rehearsal ran a tool")
					return "", nil
				})
				if err != nil {
					return nil, nil, err
				}
				reg := NewRegistry()
				return reg, func() { released++ }, reg.Add(tool)
			}
			asked := 0
			Rehearse(build, nil, dir, func() bool {
				asked++
				return asked == tc.arrivesAt || (tc.arrivesAt > 0 && asked > tc.arrivesAt)
			})
			if got := built == 1; got != tc.built || built > 1 {
				t.Errorf("built %d times, want built: %v", built, tc.built)
			}
			if released != built {
				t.Errorf("released %d times, built %d", released, built)
			}
			if got := tool != nil && tool.Schema != nil; got != tc.resolved {
				t.Errorf("the called tool's schema derived: %v, want %v", got, tc.resolved)
			}
			if tc.arrivesAt > 0 && asked != tc.arrivesAt {
				t.Errorf("arrived asked %d times after the job came at %d", asked, tc.arrivesAt)
			}
		})
	}
}
