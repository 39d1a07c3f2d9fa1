package app

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/toolbox"
)

// TestDaemonBuildsThePythonGateCache: a daemon compiles the Python gate's
// scripts into its home when it starts its first worker (in the
// background; Close waits for it), read-only, once; a daemon that started
// no worker, and a command that runs turns, build nothing.
func TestDaemonBuildsThePythonGateCache(t *testing.T) {
	if _, err := toolbox.SandboxPython(); errors.Is(err, toolbox.ErrNoPython) {
		t.Skip("no python3 on the sandbox's PATH")
	}
	cacheFiles := func(home string) []string {
		files, _ := filepath.Glob(filepath.Join(home, "cache", "pygate", "*"))
		return files
	}
	home, environ := testHome(t)
	for _, mode := range []Mode{ForTurns, ForDaemon} {
		a, err := OpenFor(context.Background(), mode, home, environ, io.Discard, 0)
		if err != nil {
			t.Fatal(err)
		}
		a.Close()
		if files := cacheFiles(home); len(files) != 0 {
			t.Errorf("mode %v without a worker built %q", mode, files)
		}
	}
	a, err := OpenFor(context.Background(), ForDaemon, home, environ, io.Discard, 0)
	if err != nil {
		t.Fatal(err)
	}
	inner := &countSpawns{}
	s := a.buildPyGateOnFirstSpawn(context.Background(), inner, a.pyGateCache(a.current()))
	for range 2 {
		if _, err := s.Spawn(context.Background()); !errors.Is(err, errNoWorker) {
			t.Fatalf("spawn: %v, want the inner spawner's error", err)
		}
	}
	a.Close()
	if inner.n != 2 {
		t.Errorf("the inner spawner was asked %d times, want 2", inner.n)
	}
	files := cacheFiles(home)
	if len(files) != 1 {
		t.Fatalf("the daemon's cache holds %q, want one file", files)
	}
	fi, err := os.Stat(files[0])
	if err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("the cache file is %v, %v: want read-only", fi.Mode(), err)
	}
}

// TestOneShotBuildsNothing: a one-shot process (chat -m) starts its turn's
// worker without building the Python gate's cache, which its exit would
// wait for.
func TestOneShotBuildsNothing(t *testing.T) {
	if _, err := toolbox.SandboxPython(); errors.Is(err, toolbox.ErrNoPython) {
		t.Skip("no python3 on the sandbox's PATH")
	}
	home, environ := testHome(t)
	a, err := OpenFor(context.Background(), ForDaemon, home, environ, io.Discard, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.OneShot()
	s := a.buildPyGateOnFirstSpawn(context.Background(), &countSpawns{}, a.pyGateCache(a.current()))
	if _, err := s.Spawn(context.Background()); !errors.Is(err, errNoWorker) {
		t.Fatalf("spawn: %v, want the inner spawner's error", err)
	}
	a.Close()
	if files, _ := filepath.Glob(filepath.Join(home, "cache", "pygate", "*")); len(files) != 0 {
		t.Errorf("a one-shot process built %q", files)
	}
}

// TestFirstSpawnAfterClose: a worker started after Close began starts no
// background work Close would not wait for.
func TestFirstSpawnAfterClose(t *testing.T) {
	home, environ := testHome(t)
	a, err := OpenFor(context.Background(), ForDaemon, home, environ, io.Discard, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	ran := false
	a.inBackground(func() { ran = true })
	a.background.Wait()
	if ran {
		t.Error("background work started after Close")
	}
}

var errNoWorker = errors.New("no worker in this test")

// countSpawns is a Spawner that counts its calls and starts nothing.
type countSpawns struct{ n int }

func (c *countSpawns) Spawn(context.Context) (core.Process, error) {
	c.n++
	return nil, errNoWorker
}
