// Package testbin builds the shelldon binary once per test process, for
// tests that need the real binary as a child: the sandbox helper, the eval
// child, end-to-end runs. The binary is built without the race detector,
// whose shadow memory does not fit under the memory limits children run
// with, and lives in a directory every user may enter, so tests can run it
// as an unprivileged user too. Tests only.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once  sync.Once
	built string
	err   error
)

// Shelldon returns the path of a freshly built shelldon binary.
func Shelldon(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		var dir string
		dir, err = os.MkdirTemp("", "shelldon-testbin")
		if err != nil {
			return
		}
		if err = os.Chmod(dir, 0o755); err != nil {
			return
		}
		built = filepath.Join(dir, "shelldon")
		cmd := exec.Command("go", "build", "-o", built, "github.com/shelldon/shelldon/cmd/shelldon")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, berr := cmd.CombinedOutput(); berr != nil {
			err = fmt.Errorf("build shelldon: %v\n%s", berr, out)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return built
}

// Cleanup removes the built binary; call it from TestMain after m.Run.
func Cleanup() {
	if built != "" {
		os.RemoveAll(filepath.Dir(built))
	}
}
