//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostResolvConf: the host's resolv.conf is read through its symlinks
// (systemd-resolved's stub) and cut at the last whole line within the cap.
func TestHostResolvConf(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stub := filepath.Join(dir, "stub-resolv.conf")
	content := "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .\n"
	if err := os.WriteFile(stub, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "resolv.conf")
	if err := os.Symlink(stub, link); err != nil {
		t.Fatal(err)
	}
	if got, err := hostResolvConf(link, resolvConfMax); err != nil || got != content {
		t.Errorf("through the link: %q, %v", got, err)
	}
	if got, err := hostResolvConf(link, 30); err != nil || got != "nameserver 127.0.0.53\n" {
		t.Errorf("capped at 30 bytes: %q, %v", got, err)
	}
	if got, err := hostResolvConf(link, 10); err != nil || got != "" {
		t.Errorf("capped within the first line: %q, %v", got, err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte(strings.Repeat("nameserver 192.0.2.1\n", 10000)), 0o644)
	if got, err := hostResolvConf(big, resolvConfMax); err != nil || len(got) > resolvConfMax || !strings.HasSuffix(got, "\n") {
		t.Errorf("a large one: %d bytes, %v", len(got), err)
	}
	if _, err := hostResolvConf(filepath.Join(dir, "missing"), resolvConfMax); err == nil {
		t.Error("a missing one read")
	}
}

// TestMemoryLimit: a sandbox's memory cgroup holds its data limit, its
// two tmpfs and the slack, and never overflows.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	sp := spec{Limits: DefaultLimits, TmpSize: DefaultTmpSize}
	if got, want := memoryLimit(sp), uint64(256<<20+64<<20+16<<20+memSlack); got != want {
		t.Errorf("default: %d, want %d", got, want)
	}
	sp.Limits.DataBytes = ^uint64(0)
	if got := memoryLimit(sp); got != 1<<62 {
		t.Errorf("unlimited data: %d", got)
	}
}
