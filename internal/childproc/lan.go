package childproc

import (
	"fmt"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/netguard"
)

// lanOf parses the owner's http.allow_hosts from the job the daemon wrote
// (it checked them when it loaded the config); an entry that does not
// parse here means the two disagree, and the turn fails rather than
// guess.
func lanOf(hosts []contracts.LANHost) (netguard.LAN, error) {
	var lan netguard.LAN
	for i, h := range hosts {
		r, err := netguard.ParseLANRule(h.Host, h.CIDR, h.Ports)
		if err != nil {
			return nil, fmt.Errorf("http.allow_hosts[%d] in the job: %w", i, err)
		}
		lan = append(lan, r)
	}
	return lan, nil
}
