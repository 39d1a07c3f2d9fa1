package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/config"
)

// TestDoctorListsLANHosts: doctor lists each host of http.allow_hosts in
// its canonical form, passes, and says it did not contact it; with none
// listed it says nothing.
func TestDoctorListsLANHosts(t *testing.T) {
	t.Parallel()
	env := []string{"ANTHROPIC_API_KEY=sk-ant-test-0123456789"}
	load := func(yaml string) *config.Config {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, config.FileConfig), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(home, env)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := load("provider:\n  kind: anthropic\nhttp:\n  allow_hosts:\n    - {host: 192.168.1.10, ports: [8123]}\n    - {host: NAS.lan, cidr: 192.168.1.20, ports: [5000, 80]}\n    - {cidr: 10.0.0.0/24, ports: [443]}\n")
	var out bytes.Buffer
	d := &doctor{w: &out}
	d.checkLANHosts(cfg)
	got := out.String()
	for _, want := range []string{
		"✓ lan host   192.168.1.10, port 8123: http_get may reach it",
		"✓ lan host   nas.lan (resolving to 192.168.1.20), ports 80, 5000:",
		"✓ lan host   10.0.0.0/24, port 443:",
		"not contacted by doctor",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, got)
		}
	}
	if d.failed != 0 {
		t.Errorf("failed = %d", d.failed)
	}
	out.Reset()
	d.checkLANHosts(load("provider:\n  kind: anthropic\n"))
	if out.Len() != 0 {
		t.Errorf("with no LAN hosts doctor printed %q", out.String())
	}
}
