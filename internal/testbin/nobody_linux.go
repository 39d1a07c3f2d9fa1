package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// AsNobody runs the named tests of the calling test binary again as the
// user nobody (uid and gid 65534), with env added to a minimal one (PATH,
// HOME and TMPDIR; SHELLDON_TEST_HELPER naming the shelldon binary, which
// the re-run should use instead of building its own), and fails t unless
// every one of them passed: a skip counts as a failure. The binary is
// copied first where nobody may run it. The caller skips when it is not
// root, or when env says it is the re-run already.
func AsNobody(t *testing.T, tests []string, env ...string) {
	t.Helper()
	helper := os.Getenv("SHELLDON_TEST_HELPER")
	if helper == "" {
		helper = Shelldon(t)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "shelldon-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(self))
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	// No fork may happen while the copy is open for writing (ETXTBSY at
	// its exec otherwise: a child of another test would hold the file).
	syscall.ForkLock.Lock()
	err = os.WriteFile(bin, data, 0o755)
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^("+strings.Join(tests, "|")+")$", "-test.v")
	cmd.Env = append([]string{"SHELLDON_TEST_HELPER=" + helper, "PATH=/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp"}, env...)
	cmd.Dir = "/tmp"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "--- SKIP") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	for _, name := range tests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Fatalf("the run as nobody did not pass %s:\n%s", name, out)
		}
	}
}
