package gitremote

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/shelldon/shelldon/internal/testbin"
)

// unprivEnv marks TestUnprivileged's re-run of the tests as nobody.
const unprivEnv = "SHELLDON_GITREMOTE_UNPRIVILEGED"

// TestUnprivileged runs the jail's tests again as nobody, the way a
// daemon under its own user runs them: the sandbox (user namespace, its
// own loopback), the relay's private directory and socket, git over HTTP
// and over SSH.
func TestUnprivileged(t *testing.T) {
	if os.Getenv(unprivEnv) != "" {
		t.Skip("already unprivileged")
	}
	if os.Getuid() != 0 {
		t.Skip("already running as an unprivileged user; the other tests cover it")
	}
	helper := testbin.Shelldon(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "gitremote-unpriv")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "gitremote.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	// No fork while the copy is open for writing (ETXTBSY at its exec).
	syscall.ForkLock.Lock()
	err = os.WriteFile(bin, data, 0o755)
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	tests := []string{"TestLsRemote", "TestFetchIntoMirror", "TestSSHThroughTheJail", "TestRelay"}
	cmd := exec.Command(bin, "-test.run", "^("+strings.Join(tests, "|")+")$", "-test.v")
	cmd.Env = []string{unprivEnv + "=1", "SHELLDON_TEST_HELPER=" + helper, "PATH=/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp"}
	cmd.Dir = "/tmp"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "--- SKIP") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	for _, name := range tests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Fatalf("the unprivileged run did not pass %s:\n%s", name, out)
		}
	}
}
