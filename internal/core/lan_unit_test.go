package core_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
)

// TestJobCarriesTheOwnersLANHosts: each turn's job carries the owner's
// http.allow_hosts as the core was given them, and a change of config
// (Tune) reaches the next turn, removal included.
func TestJobCarriesTheOwnersLANHosts(t *testing.T) {
	bubble(t, func(t *testing.T) {
		first := []contracts.LANHost{{Host: "192.168.1.10", Ports: []int{8123}}}
		u := newUnit(t, func(o *core.Options) { o.LANHosts = first })
		turn := func() contracts.Job {
			u.model.Script(coretest.Reply("hi"))
			if _, err := u.core.Send(context.Background(), "c", "hello", core.Events{}); err != nil {
				t.Fatal(err)
			}
			jobs := u.sp.Jobs()
			return jobs[len(jobs)-1]
		}
		if diff := cmp.Diff(first, turn().LANHosts); diff != "" {
			t.Errorf("first job (-want +got):\n%s", diff)
		}
		second := []contracts.LANHost{{Host: "nas.lan", CIDR: "192.168.1.20", Ports: []int{5000}}}
		u.core.Tune(core.Tuning{LANHosts: second})
		if diff := cmp.Diff(second, turn().LANHosts); diff != "" {
			t.Errorf("after Tune (-want +got):\n%s", diff)
		}
		u.core.Tune(core.Tuning{})
		if got := turn().LANHosts; got != nil {
			t.Errorf("after the list was removed: %+v", got)
		}
	})
}
