package toolbox

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/shelldon/shelldon/internal/selfcode/pytool"
)

// TestBuildPyGateCache: the daemon's build leaves the gate's cache of this
// binary's scripts in the directory, read-only.
func TestBuildPyGateCache(t *testing.T) {
	t.Parallel()
	if _, err := SandboxPython(); errors.Is(err, ErrNoPython) {
		t.Skip("python3 is not on the sandbox's PATH")
	}
	dir := t.TempDir()
	path, err := BuildPyGateCache(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || path != pytool.CacheFile(dir) || fi.Mode().Perm() != 0o444 || fi.Size() < 1024 {
		t.Fatalf("cache %s: %v %v", path, fi, err)
	}
}
