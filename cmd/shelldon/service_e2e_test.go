package main

import (
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
)

// TestServiceE2E: the real binary's `service` commands. This test's home
// and binary live under /tmp, which a service does not see (PrivateTmp),
// so install, even a dry run, refuses them and says what to do; status finds no unit of
// this user's and asks the running daemon's /healthz; doctor says whether
// the kernel enforces a memory cap. No systemd runs here: the unit itself
// is verified statically in internal/app (TestServiceUnitVerify).
func TestServiceE2E(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "anthropic", brokertest.Sequence())
	h := home(t, "anthropic", srv.BaseURL(), "")
	os.Chmod(h, 0o700)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code := run(t, h, "", "service", "install", "--dry-run", "--user", me.Username)
	if code != 2 || !strings.Contains(stderr, "under /tmp") || !strings.Contains(stderr, "PrivateTmp") {
		t.Fatalf("install --dry-run of a home under /tmp: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = run(t, h, "", "service", "install", "--memory-max", "lots")
	if code != 2 || !strings.Contains(stderr, "--memory-max") {
		t.Fatalf("install --memory-max lots: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(h, ".config")); !os.IsNotExist(err) {
		t.Errorf("a refused install wrote under HOME: %v", err)
	}

	// The daemon listens where the home's config says, as status reads it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if err := os.WriteFile(filepath.Join(h, "config.local.yaml"), []byte("server:\n  listen: "+addr+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startServeAt(t, h, addr)
	stdout, stderr, code = run(t, h, "", "service", "status")
	if code != 0 || !strings.Contains(stdout, "daemon:  answers at http://"+d.addr+"/healthz") {
		t.Fatalf("service status with a daemon running: exit %d\n%s\n%s", code, stdout, stderr)
	}

	stdout, _, code = run(t, h, "", "service", "--help")
	if code != 0 || !strings.Contains(stdout, "sudo shelldon service install") || !strings.Contains(stdout, "--dry-run") {
		t.Errorf("service --help: exit %d\n%s", code, stdout)
	}

	stdout, _, _ = run(t, h, "", "doctor")
	if !strings.Contains(stdout, "memory     ") {
		t.Errorf("doctor says nothing of the memory controller:\n%s", stdout)
	}
}
