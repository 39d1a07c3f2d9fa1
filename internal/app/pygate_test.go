package app

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/shelldon/shelldon/internal/core/toolbox"
)

// TestDaemonBuildsThePythonGateCache: a daemon compiles the Python gate's
// scripts into its home at start (in the background; Close waits for
// it), read-only; a command that runs turns uses the directory but builds
// nothing.
func TestDaemonBuildsThePythonGateCache(t *testing.T) {
	if _, err := toolbox.SandboxPython(); errors.Is(err, toolbox.ErrNoPython) {
		t.Skip("no python3 on the sandbox's PATH")
	}
	cacheFiles := func(home string) []string {
		files, _ := filepath.Glob(filepath.Join(home, "cache", "pygate", "*"))
		return files
	}
	home, environ := testHome(t)
	a, err := OpenFor(context.Background(), ForTurns, home, environ, io.Discard, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if files := cacheFiles(home); len(files) != 0 {
		t.Errorf("a one-turn command built %q", files)
	}
	a, err = OpenFor(context.Background(), ForDaemon, home, environ, io.Discard, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	files := cacheFiles(home)
	if len(files) != 1 {
		t.Fatalf("the daemon's cache holds %q, want one file", files)
	}
	fi, err := os.Stat(files[0])
	if err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("the cache file is %v, %v: want read-only", fi.Mode(), err)
	}
}
