package contracts

// LANHost is one entry of the owner's http.allow_hosts, as a turn's job
// carries it to the worker: host (a name, or an address of the owner's
// network) and/or cidr, and ports. The daemon has checked it; the worker
// parses it again (netguard.ParseLANRule) before its http clients use it.
// It comes from the owner's config only: the agent's update_config cannot
// name http.allow_hosts (AgentConfigKeys).
type LANHost struct {
	Host  string `json:"host,omitempty"`
	CIDR  string `json:"cidr,omitempty"`
	Ports []int  `json:"ports"`
}
