package childproc

import (
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
)

// TestLanOf: the worker parses the job's http.allow_hosts again, and a
// turn whose list does not parse fails instead of reaching further than
// the owner's config says.
func TestLanOf(t *testing.T) {
	t.Parallel()
	lan, err := lanOf([]contracts.LANHost{{Host: "192.168.1.10", Ports: []int{8123}}, {Host: "nas.lan", CIDR: "192.168.1.20", Ports: []int{5000}}})
	if err != nil || len(lan) != 2 || lan[1].Name != "nas.lan" {
		t.Fatalf("lanOf = %+v, %v", lan, err)
	}
	if lan, err := lanOf(nil); err != nil || lan != nil {
		t.Errorf("lanOf(nil) = %+v, %v", lan, err)
	}
	for _, bad := range []contracts.LANHost{
		{Host: "169.254.169.254", Ports: []int{80}},
		{Host: "127.0.0.1", Ports: []int{80}},
		{CIDR: "10.0.0.0/8", Ports: []int{80}},
		{Host: "192.168.1.10"},
	} {
		if _, err := lanOf([]contracts.LANHost{bad}); err == nil || !strings.Contains(err.Error(), "http.allow_hosts[0]") {
			t.Errorf("lanOf(%+v) = %v, want an error", bad, err)
		}
	}
}
