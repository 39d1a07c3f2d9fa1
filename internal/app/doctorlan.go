package app

import (
	"fmt"

	"github.com/shelldon/shelldon/internal/config"
)

// checkLANHosts lists the hosts of the owner's network that http_get may
// reach (http.allow_hosts), as the config checked them (config.Load
// refuses loopback, link-local, metadata and public addresses, ranges
// wider than a /16, bad ports). It connects to none of them and looks no
// name up: a doctor run never sends a packet to the owner's network.
func (d *doctor) checkLANHosts(cfg *config.Config) {
	for _, line := range lanHostLines(cfg) {
		d.ok("lan host", line)
	}
}

// lanHostLines renders each rule of http.allow_hosts for doctor.
func lanHostLines(cfg *config.Config) []string {
	var out []string
	for _, r := range cfg.LAN() {
		out = append(out, fmt.Sprintf("%s: http_get may reach it, each call approved (http.allow_hosts; not contacted by doctor)", r))
	}
	return out
}
