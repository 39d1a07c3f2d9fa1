package app

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/toolbox"
)

// buildPyGateOnFirstSpawn returns s, which builds the Python gate's cache
// in dir in the background when it starts its first worker (Close waits
// for the build). A gate runs in a worker, so a daemon that never ran a
// turn never needs the cache: building it at start cost the idle daemon
// about 0.6 MiB (the code that starts python and the build's buffers,
// BenchmarkDaemonIdleRSS). With the warm worker on, the first worker, and
// so the build, starts when the daemon starts serving. Until the cache is
// there, or if it cannot be built, a gate compiles the scripts itself,
// which takes longer and gives the same answer.
func (a *App) buildPyGateOnFirstSpawn(ctx context.Context, s core.Spawner, dir string) core.Spawner {
	ctx = context.WithoutCancel(ctx)
	return &firstSpawn{Spawner: s, first: func() {
		a.inBackground(func() {
			if _, err := toolbox.BuildPyGateCache(ctx, dir); err != nil && !errors.Is(err, toolbox.ErrNoPython) {
				a.Log.Warn("the python gate's cache", "err", err)
			}
			// The build's buffers (the scripts, python's output) are
			// garbage now: give them back rather than keep the daemon's
			// footprint at that peak (about 1 MiB).
			debug.FreeOSMemory()
		})
	}}
}

// OneShot says the process answers one message and exits (chat -m): it
// starts no background work, which its exit would wait for (the Python
// gate's cache takes a python3 of some 27 MiB and half a second here,
// seconds on a Pi). A gate in its turn compiles what it needs itself; a
// daemon or an interactive chat builds the cache.
func (a *App) OneShot() {
	a.bgMu.Lock()
	defer a.bgMu.Unlock()
	a.oneShot = true
}

// inBackground runs f in a goroutine Close waits for, unless Close has
// begun or the process is a one-shot (OneShot).
func (a *App) inBackground(f func()) {
	a.bgMu.Lock()
	defer a.bgMu.Unlock()
	if a.closing || a.oneShot {
		return
	}
	a.background.Add(1)
	go func() {
		defer a.background.Done()
		f()
	}()
}

// firstSpawn is a Spawner that calls first (once, without waiting for
// it) before it starts its first worker.
type firstSpawn struct {
	core.Spawner
	once  sync.Once
	first func()
}

var _ core.Spawner = (*firstSpawn)(nil)

func (s *firstSpawn) Spawn(ctx context.Context) (core.Process, error) {
	s.once.Do(s.first)
	return s.Spawner.Spawn(ctx)
}
