package config

import (
	"fmt"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/netguard"
)

// HTTPConfig is http_get's reach into the owner's own network (http.*):
// the owner's alone (contracts.AgentConfigKeys does not hold it, so the
// agent's update_config cannot add a host).
type HTTPConfig struct {
	// AllowHosts lists the hosts of the owner's network (private ranges)
	// that an approved http_get, or a self-coded tool granted the host,
	// may reach, each on its ports. Empty: none (every private range is
	// refused). See netguard.LANRule for what each entry unlocks.
	AllowHosts []LANHost `yaml:"allow_hosts"`
}

// LANHost is one entry of http.allow_hosts: host (a name, or an address
// of the owner's network) and/or cidr, and ports.
//
//	{host: 192.168.1.10, ports: [8123]}                  an address
//	{cidr: 10.0.0.0/24, ports: [80, 443]}                a range, /16 or narrower (IPv6 /48)
//	{host: nas.lan, cidr: 192.168.1.20, ports: [5000]}   a name, and where it may resolve
type LANHost struct {
	Host  string `yaml:"host"`
	CIDR  string `yaml:"cidr"`
	Ports []int  `yaml:"ports"`
}

// maxAllowHosts bounds http.allow_hosts.
const maxAllowHosts = 64

// completeHTTP validates http.allow_hosts (netguard.ParseLANRule: no
// loopback, link-local, metadata or public address, no range wider than
// a /16, ports in 1-65535) and writes each entry in its canonical form.
func (c *Config) completeHTTP() []*Error {
	var errs []*Error
	hosts := c.HTTP.AllowHosts
	if len(hosts) > maxAllowHosts {
		return []*Error{c.errAt("http.allow_hosts", "lists %d hosts; the limit is %d", len(hosts), maxAllowHosts)}
	}
	for i, h := range hosts {
		key := fmt.Sprintf("http.allow_hosts[%d]", i)
		r, err := netguard.ParseLANRule(h.Host, h.CIDR, h.Ports)
		if err != nil {
			errs = append(errs, c.errAt(key, "%s", err.Error()))
			continue
		}
		hosts[i] = lanHostOf(r)
	}
	return errs
}

// lanHostOf is r as an entry, in canonical form.
func lanHostOf(r netguard.LANRule) LANHost {
	h := LANHost{Ports: make([]int, len(r.Ports))}
	for i, p := range r.Ports {
		h.Ports[i] = int(p)
	}
	switch {
	case r.Name != "":
		h.Host, h.CIDR = r.Name, prefixString(r)
	case r.Prefix.IsSingleIP():
		h.Host = r.Prefix.Addr().String()
	default:
		h.CIDR = r.Prefix.String()
	}
	return h
}

func prefixString(r netguard.LANRule) string {
	if r.Prefix.IsSingleIP() {
		return r.Prefix.Addr().String()
	}
	return r.Prefix.String()
}

// LAN returns http.allow_hosts as netguard's rules. Load has checked each
// entry, so none is dropped.
func (c *Config) LAN() netguard.LAN {
	var lan netguard.LAN
	for _, h := range c.HTTP.AllowHosts {
		if r, err := netguard.ParseLANRule(h.Host, h.CIDR, h.Ports); err == nil {
			lan = append(lan, r)
		}
	}
	return lan
}

// LANHosts returns http.allow_hosts for a turn's job (contracts.Job), which
// the worker parses again (netguard.ParseLANRule) into its http clients.
func (c *Config) LANHosts() []contracts.LANHost {
	var out []contracts.LANHost
	for _, h := range c.HTTP.AllowHosts {
		out = append(out, contracts.LANHost{Host: h.Host, CIDR: h.CIDR, Ports: append([]int(nil), h.Ports...)})
	}
	return out
}

// httpKeysDoc is the http section of config.yaml as init writes it.
func httpKeysDoc() string {
	return `
# Hosts on your own network (a NAS, a home-automation server) that http_get
# may reach, each call approved by you; every other private address stays
# refused, and loopback, link-local and cloud metadata addresses are never
# reachable. The approval card says when a URL is on your network. An entry
# is an address, a range (/16 or narrower), or a name with the addresses it
# may resolve to, each with its ports:
#   - host: 192.168.1.10
#     ports: [8123]
#   - cidr: 10.0.0.0/24
#     ports: [80, 443]
#   - host: nas.lan
#     cidr: 192.168.1.20
#     ports: [5000]
# Only a URL written with that address or name reaches it; self-coded tools
# may be granted a listed name in CAPABILITIES. Only you can change this.
http:
  #allow_hosts: []
`
}
