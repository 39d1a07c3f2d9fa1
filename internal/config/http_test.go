package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shelldon/shelldon/internal/contracts"
)

// TestHTTPAllowHosts: http.allow_hosts takes addresses, ranges and names
// pinned to addresses of the owner's network, writes each in its
// canonical form, and refuses what can never be reached, naming the entry.
func TestHTTPAllowHosts(t *testing.T) {
	t.Parallel()
	env := "ANTHROPIC_API_KEY=" + anthropicKey
	c := mustLoad(t, map[string]string{FileConfig: `
http:
  allow_hosts:
    - host: 192.168.1.10
      ports: [8123]
    - cidr: 10.0.0.0/24
      ports: [443, 80]
    - host: NAS.lan.
      cidr: 192.168.1.20
      ports: [5000, 5000]
    - host: "[fd12:3456:789a::1]"
      ports: [80]
`}, env)
	want := []LANHost{
		{Host: "192.168.1.10", Ports: []int{8123}},
		{CIDR: "10.0.0.0/24", Ports: []int{80, 443}},
		{Host: "nas.lan", CIDR: "192.168.1.20", Ports: []int{5000}},
		{Host: "fd12:3456:789a::1", Ports: []int{80}},
	}
	if diff := cmp.Diff(want, c.HTTP.AllowHosts); diff != "" {
		t.Errorf("allow_hosts (-want +got):\n%s", diff)
	}
	if got := len(c.LAN()); got != 4 {
		t.Errorf("LAN() has %d rules, want 4", got)
	}
	wantJob := []contracts.LANHost{
		{Host: "192.168.1.10", Ports: []int{8123}},
		{CIDR: "10.0.0.0/24", Ports: []int{80, 443}},
		{Host: "nas.lan", CIDR: "192.168.1.20", Ports: []int{5000}},
		{Host: "fd12:3456:789a::1", Ports: []int{80}},
	}
	if diff := cmp.Diff(wantJob, c.LANHosts()); diff != "" {
		t.Errorf("LANHosts (-want +got):\n%s", diff)
	}
	if d := mustLoad(t, nil, env); len(d.HTTP.AllowHosts) != 0 || d.LAN() != nil || d.LANHosts() != nil {
		t.Errorf("default allow_hosts = %+v", d.HTTP.AllowHosts)
	}

	for _, tc := range []struct{ entry, want string }{
		{"{host: 127.0.0.1, ports: [80]}", "http.allow_hosts[0]: 127.0.0.1 is a loopback address"},
		{"{host: localhost, cidr: 192.168.1.2, ports: [80]}", "loopback"},
		{"{host: 169.254.169.254, ports: [80]}", "cloud metadata"},
		{"{host: 'fd00:ec2::254', ports: [80]}", "cloud metadata"},
		{"{host: 100.100.100.200, ports: [80]}", "cloud metadata"},
		{"{host: 169.254.10.1, ports: [80]}", "link-local"},
		{"{host: 8.8.8.8, ports: [80]}", "public address"},
		{"{cidr: 10.0.0.0/8, ports: [80]}", "wider than /16"},
		{"{cidr: 10.0.0.1/24, ports: [80]}", "host bits set"},
		{"{host: 192.168.1.10, ports: []}", "ports is empty"},
		{"{host: 192.168.1.10}", "ports is empty"},
		{"{host: 192.168.1.10, ports: [0]}", "outside 1-65535"},
		{"{host: 192.168.1.10, ports: [70000]}", "outside 1-65535"},
		{"{host: 3232235786, ports: [80]}", "ambiguous"},
		{"{host: 0300.0250.1.10, ports: [80]}", "ambiguous"},
		{"{host: '::ffff:192.168.1.10', ports: [80]}", "write it as 192.168.1.10"},
		{"{host: nas.lan, ports: [80]}", "add cidr"},
		{"{host: nаs.lan, cidr: 192.168.1.2, ports: [80]}", "not plain ASCII"},
		{"{host: 'http://nas.lan', cidr: 192.168.1.2, ports: [80]}", "without a scheme"},
		{"{ports: [80]}", "give host"},
		{"{host: 192.168.1.10, ports: [80], port: 81}", "port"}, // unknown key: strict decoding
	} {
		_, err := load(t, map[string]string{FileConfig: "http:\n  allow_hosts:\n    - " + tc.entry + "\n"}, env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.entry, err, tc.want)
		}
	}
}

// TestAgentCannotChangeAllowHosts: http.allow_hosts is the owner's; the
// agent's update_config cannot add to it, in any spelling, and the
// owner's overlay can.
func TestAgentCannotChangeAllowHosts(t *testing.T) {
	t.Parallel()
	h := ownerHome(t)
	for _, changes := range []string{
		`{"http": {"allow_hosts": [{"host": "192.168.1.10", "ports": [80]}]}}`,
		`{"http": {"allow_hosts": []}}`,
		`{"http.allow_hosts": [{"host": "192.168.1.10", "ports": [80]}]}`,
		`{"HTTP": {"allow_hosts": [{"host": "192.168.1.10", "ports": [80]}]}}`,
	} {
		if _, err := PrepareAgentOverlay(h, ownerEnv, changesOf(t, changes)); err == nil || !strings.Contains(err.Error(), "not a key the agent may change") {
			t.Errorf("%s: %v, want a refusal", changes, err)
		}
	}
	o := newHome(t, map[string]string{FileConfig: ownerConfig, FileOverlay: "http:\n  allow_hosts:\n    - {host: 192.168.1.10, ports: [80]}\n"})
	if c, err := Load(o, ownerEnv); err != nil || len(c.HTTP.AllowHosts) != 1 {
		t.Errorf("the owner's overlay: %v, %v", c, err)
	}
}
