//go:build linux

package sandbox_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/testbin"
)

// BenchmarkExecTrue is the baseline: a plain fork and exec of /bin/true.
func BenchmarkExecTrue(b *testing.B) {
	for range b.N {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSandboxTrue runs /bin/true through the whole sandbox: helper
// start, namespaces, the mount view, rlimits, capabilities, Landlock,
// seccomp, and the teardown.
func BenchmarkSandboxTrue(b *testing.B) {
	r, err := sandbox.NewRunner(testbin.Shelldon(b))
	if err != nil {
		b.Fatal(err)
	}
	if tier := r.Probe(context.Background()); !tier.Full() {
		b.Skipf("degraded kernel: %s", tier)
	}
	ws := b.TempDir()
	p := sandbox.Policy{Argv: []string{"/bin/true"}, Workspace: ws, Timeout: 10 * time.Second}
	b.ResetTimer()
	for range b.N {
		res, err := r.Run(context.Background(), p)
		if err != nil || !res.OK() {
			b.Fatalf("%+v %v", res, err)
		}
	}
}
