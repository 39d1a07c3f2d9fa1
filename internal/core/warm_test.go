package core_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shelldon/shelldon/internal/childproc"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
)

// startedSpawner reports the pid of every worker it starts, as it starts
// it, and keeps them all for the leak check.
type startedSpawner struct {
	core.Spawner
	started chan int
	mu      sync.Mutex
	pids    []int
}

func (s *startedSpawner) Spawn(ctx context.Context) (core.Process, error) {
	p, err := s.Spawner.Spawn(ctx)
	if err == nil {
		s.mu.Lock()
		s.pids = append(s.pids, p.Pid())
		s.mu.Unlock()
		s.started <- p.Pid()
	}
	return p, err
}

type warmFixture struct {
	core    *core.Core
	warm    *core.WarmSpawner
	inner   *startedSpawner
	handed  *pidSpawner // the workers the turns were handed
	clock   atomic.Int64
	started chan int
}

// newWarmFixture is a core whose workers (real processes: the test binary
// in its worker mode) come through a WarmSpawner, with a clock the test
// moves.
func newWarmFixture(t *testing.T) *warmFixture {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	exe, err := core.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := &warmFixture{started: make(chan int, 16)}
	f.clock.Store(time.Now().UnixNano())
	f.inner = &startedSpawner{Spawner: &core.ExecSpawner{Path: exe, Args: childproc.WorkerArgs, Env: core.WorkerEnv(os.Environ())},
		started: f.started}
	f.warm = &core.WarmSpawner{Spawner: f.inner, Now: func() time.Time { return time.Unix(0, f.clock.Load()) },
		Logger: slog.New(slog.DiscardHandler)}
	f.handed = &pidSpawner{Spawner: f.warm}
	f.core, err = core.New(core.Options{Store: st, Model: &scriptedModel{}, Spawner: f.handed, Workspace: dir,
		Limits: contracts.Limits{Budget: 20 * time.Second}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.core.Close()
		f.warm.Close()
		f.inner.mu.Lock()
		defer f.inner.mu.Unlock()
		for _, pid := range f.inner.pids {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
				t.Errorf("worker %d outlived the spawner", pid)
			}
		}
	})
	return f
}

// next waits for the next worker to start.
func (f *warmFixture) next(t *testing.T) int {
	t.Helper()
	select {
	case pid := <-f.started:
		return pid
	case <-time.After(30 * time.Second):
		t.Fatal("no worker started")
		return 0
	}
}

// prime arms the spawner and runs a first turn, whose worker is started
// for it; it returns the pid of the worker started ahead after it.
func (f *warmFixture) prime(t *testing.T) int {
	t.Helper()
	f.warm.Warm()
	if got, direct := f.turn(t), f.next(t); got != direct {
		t.Fatalf("the first turn ran in %d, started for it %d", got, direct)
	}
	return f.next(t)
}

func (f *warmFixture) turn(t *testing.T) int {
	t.Helper()
	out, err := f.core.Send(context.Background(), "c", "hi", core.Events{})
	if err != nil || out.Reply != "done" {
		t.Fatalf("Send = %+v, %v", out, err)
	}
	return f.handed.last()
}

// waitExit waits for a child process to end, by its pidfd.
func waitExit(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone already
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 30_000)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			t.Fatalf("worker %d did not end: %v", pid, err)
		}
		return
	}
}

// TestWarmWorkerServesOneTurn: a turn is served by the worker started
// before it, each turn by another process, and the next one is started
// ahead after each turn.
func TestWarmWorkerServesOneTurn(t *testing.T) {
	t.Parallel()
	f := newWarmFixture(t)
	ahead := f.prime(t)
	if got := f.turn(t); got != ahead {
		t.Fatalf("turn 1 ran in worker %d, want %d, started before the turn", got, ahead)
	}
	second := f.next(t)
	if second == ahead {
		t.Fatal("the next worker has the pid of the last")
	}
	// Turn 1's worker is killed and reaped in the background (the next
	// one starts beside its teardown): it ends.
	waitExit(t, ahead)
	if got := f.turn(t); got != second {
		t.Fatalf("turn 2 ran in worker %d, want %d, started ahead after turn 1", got, second)
	}
}

// TestWarmWorkerReplaced: a worker that waited too long, that was started
// before a config change, or that died while it waited is never handed
// out; the turn gets another, and the first is reaped.
func TestWarmWorkerReplaced(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		spoil func(f *warmFixture, pid int)
	}{
		{"waited too long", func(f *warmFixture, _ int) { f.clock.Add(int64(core.DefaultWarmMaxIdle)) }},
		{"config changed", func(f *warmFixture, _ int) { f.warm.Invalidate() }},
		{"died", func(f *warmFixture, pid int) {
			if err := unix.Kill(pid, unix.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitExit(t, pid)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newWarmFixture(t)
			ahead := f.prime(t)
			tt.spoil(f, ahead)
			if got := f.turn(t); got == ahead {
				t.Fatalf("the turn ran in worker %d, which should have been replaced", got)
			}
			waitExit(t, ahead)
		})
	}
}

// TestWarmWorkerClose: Close kills the waiting worker and starts no more;
// a turn after it still gets a worker.
func TestWarmWorkerClose(t *testing.T) {
	t.Parallel()
	f := newWarmFixture(t)
	ahead := f.prime(t)
	f.warm.Close()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", ahead)); err == nil {
		t.Fatalf("worker %d outlived Close", ahead)
	}
	got := f.turn(t)
	if direct := f.next(t); got != direct || got == ahead {
		t.Fatalf("after Close the turn ran in %d; started for it %d, killed %d", got, direct, ahead)
	}
	select {
	case pid := <-f.started:
		t.Fatalf("worker %d started ahead after Close", pid)
	default:
	}
}

// TestWarmWorkerBoundToTurn: when the context of the turn that was handed
// a worker started ahead ends, the worker is killed.
func TestWarmWorkerBoundToTurn(t *testing.T) {
	t.Parallel()
	f := newWarmFixture(t)
	ahead := f.prime(t)
	ctx, cancel := context.WithCancel(context.Background())
	p, err := f.warm.Spawn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Pid() != ahead {
		t.Fatalf("Spawn gave %d, want %d", p.Pid(), ahead)
	}
	cancel()
	waitExit(t, ahead)
	if err := p.Wait(); err == nil {
		t.Error("Wait of a killed worker = nil")
	}
	p.Kill()
}

// TestWarmSpawnGivesUp: a turn whose context ends while the worker ahead
// is still starting gets the context's error, and the worker waits on for
// the next turn.
func TestWarmSpawnGivesUp(t *testing.T) {
	t.Parallel()
	f := newWarmFixture(t)
	gate := make(chan struct{})
	asked := make(chan struct{}, 1)
	var calls atomic.Int32
	inner := f.warm.Spawner
	f.warm.Spawner = spawnFunc(func(ctx context.Context) (core.Process, error) {
		if calls.Add(1) > 1 {
			select {
			case asked <- struct{}{}:
			default:
			}
			<-gate // the start after the first turn's
		}
		return inner.Spawn(ctx)
	})
	f.warm.Warm()
	f.turn(t)
	f.next(t)
	<-asked // the first turn's worker ended, and the next one's start is under way
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.warm.Spawn(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Spawn = %v, want context.Canceled", err)
	}
	close(gate)
	ahead := f.next(t)
	if got := f.turn(t); got != ahead {
		t.Fatalf("the turn ran in %d, want %d", got, ahead)
	}
}

type spawnFunc func(ctx context.Context) (core.Process, error)

func (f spawnFunc) Spawn(ctx context.Context) (core.Process, error) { return f(ctx) }

// TestWarmSpawnerStartsNothingBeforeWarm: until Warm, each turn's worker
// is started for it and none ahead (a one-shot command pays nothing).
func TestWarmSpawnerStartsNothingBeforeWarm(t *testing.T) {
	t.Parallel()
	f := newWarmFixture(t)
	f.warm.Invalidate()
	got := f.turn(t)
	if direct := f.next(t); got != direct {
		t.Fatalf("the turn ran in %d, started for it %d", got, direct)
	}
	f.warm.Close() // waits for any start under way
	select {
	case pid := <-f.started:
		t.Fatalf("worker %d started ahead without Warm", pid)
	default:
	}
}
