package core_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
)

// TestJobCarriesTheOwnersGitRemotes: each turn's job carries the owner's
// git.remotes as the core was given them, and a change of config (Tune)
// reaches the next turn, removal included.
func TestJobCarriesTheOwnersGitRemotes(t *testing.T) {
	bubble(t, func(t *testing.T) {
		first := []contracts.GitRemote{{Name: "origin", Scheme: "https", Host: "git.example"}}
		u := newUnit(t, func(o *core.Options) { o.GitRemotes = first })
		turn := func() contracts.Job {
			u.model.Script(coretest.Reply("hi"))
			if _, err := u.core.Send(context.Background(), "c", "hello", core.Events{}); err != nil {
				t.Fatal(err)
			}
			jobs := u.sp.Jobs()
			return jobs[len(jobs)-1]
		}
		if diff := cmp.Diff(first, turn().GitRemotes); diff != "" {
			t.Errorf("first job (-want +got):\n%s", diff)
		}
		second := []contracts.GitRemote{{Name: "nas", Scheme: "ssh", Host: "nas.lan:2222", AllowForce: true}}
		u.core.Tune(core.Tuning{GitRemotes: second})
		if diff := cmp.Diff(second, turn().GitRemotes); diff != "" {
			t.Errorf("after Tune (-want +got):\n%s", diff)
		}
		u.core.Tune(core.Tuning{})
		if got := turn().GitRemotes; got != nil {
			t.Errorf("after the list was removed: %+v", got)
		}
	})
}
