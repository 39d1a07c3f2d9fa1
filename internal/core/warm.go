package core

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// WarmSpawner keeps the next turn's worker started ahead of need, so a
// turn pays only for its job: the process, its namespaces, mount view,
// limits and seccomp are in place before the turn begins. A worker started
// ahead holds no turn data and no credential (its environment is the
// spawner's, and it reads its job from its pipe only once a turn hands it
// one); it still serves exactly one turn and is never reused.
//
// At most one worker waits. One that waited MaxIdle, that died, or that was
// started before Invalidate is never handed out. Spawn takes the waiting
// worker (waiting for it if its start is under way), or starts one itself
// when there is none; when the turn's worker ends, the next one starts.
// Starting it then, rather than when the turn begins, keeps its start
// (several milliseconds of CPU) off the turn it would slow down on a
// small board, and a person's next message comes later than that.
//
// Workers start only when a turn's worker ends (the next one) or when
// Invalidate replaces one, never on a timer: starting a sandbox makes the
// hardened daemon dumpable for the instant of the fork
// (sandbox.startDumpable), and those instants stay tied to the owner's
// actions, one per turn as without a worker ahead. A worker that waited
// too long is replaced by the turn that finds it. Nothing starts ahead
// before Warm, so a command that runs one turn and exits pays nothing.
type WarmSpawner struct {
	Spawner Spawner // starts the workers
	// MaxIdle is how long a worker may wait for its turn; an older one is
	// killed when a turn finds it. Default DefaultWarmMaxIdle.
	MaxIdle time.Duration
	// MaxTurn is the longest a turn holds its worker; a worker started
	// ahead lives at most MaxIdle+MaxTurn, as the sandbox's own deadline.
	// Default DefaultWarmMaxTurn.
	MaxTurn time.Duration
	Now     func() time.Time // default time.Now
	Logger  *slog.Logger     // default discard

	mu     sync.Mutex
	armed  bool        // Warm was called: Spawn starts the next worker
	gen    uint64      // bumped by Invalidate
	next   *warmWorker // the worker started ahead, or nil
	closed bool
	wg     sync.WaitGroup // starts and discards under way
}

var _ Spawner = (*WarmSpawner)(nil)

const (
	// DefaultWarmMaxIdle is how long a worker started ahead waits before
	// it is replaced.
	DefaultWarmMaxIdle = 10 * time.Minute
	// DefaultWarmMaxTurn covers the longest turn: agent.turn_budget is at
	// most 10 minutes, and the core's backstop kills a worker 5 s after
	// the turn's deadline.
	DefaultWarmMaxTurn = 11 * time.Minute
)

// warmWorker is one worker started ahead. Whoever takes it out of
// WarmSpawner.next owns it: the turn that is handed it, or a discard.
type warmWorker struct {
	gen    uint64
	ready  chan struct{} // closed when the start has ended; the fields below are set
	proc   Process       // nil when the start failed
	watch  procWatch
	born   time.Time
	cancel context.CancelFunc // ends the context the worker was started under
}

// Warm arms the spawner: from now on the end of each turn's worker starts
// the next. It starts nothing itself.
func (s *WarmSpawner) Warm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = true
}

// refill starts the next worker if Warm was called.
func (s *WarmSpawner) refill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startLocked()
}

// Spawn hands out the worker started ahead if it is fit, else starts one;
// the next starts when the one handed out ends. When ctx ends, the worker
// is killed.
func (s *WarmSpawner) Spawn(ctx context.Context) (Process, error) {
	s.mu.Lock()
	w := s.next
	s.next = nil
	s.mu.Unlock()
	if w != nil {
		select {
		case <-w.ready:
		case <-ctx.Done():
			s.putBack(w)
			return nil, ctx.Err()
		}
		if s.fit(w) {
			s.log().Debug("worker started ahead handed out", "worker_pid", w.proc.Pid(), "waited", s.now().Sub(w.born))
			return w.bind(ctx, s.refill), nil
		}
		s.goDiscard(w)
	}
	p, err := s.Spawner.Spawn(ctx)
	if err != nil {
		s.refill()
		return nil, err
	}
	return &warmProcess{Process: p, stop: make(chan struct{}), cancel: func() {}, ended: s.refill}, nil
}

// Invalidate replaces the waiting worker: what it was started with may
// have changed. The owner's config change is what calls it.
func (s *WarmSpawner) Invalidate() {
	s.mu.Lock()
	s.gen++
	w := s.next
	s.next = nil
	s.startLocked()
	s.mu.Unlock()
	if w != nil {
		s.goDiscard(w)
	}
}

// Close kills the waiting worker and starts no more; a turn running keeps
// its worker, and Spawn still starts one per turn. It returns once no
// start or discard of its own is under way.
func (s *WarmSpawner) Close() error {
	s.mu.Lock()
	s.closed = true
	w := s.next
	s.next = nil
	s.mu.Unlock()
	if w != nil {
		s.discard(w)
	}
	s.wg.Wait()
	return nil
}

// startLocked begins the start of the next worker unless one waits.
func (s *WarmSpawner) startLocked() {
	if !s.armed || s.closed || s.next != nil {
		return
	}
	w := &warmWorker{gen: s.gen, ready: make(chan struct{})}
	s.next = w
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.start(w)
	}()
}

// start starts w's process under a context of its own, which only its
// deadline or the worker's end ends: Close must not kill a worker a turn
// holds.
func (s *WarmSpawner) start(w *warmWorker) {
	ctx, cancel := context.WithTimeout(context.Background(), s.maxIdle()+s.maxTurn())
	p, err := s.Spawner.Spawn(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(w.ready)
	w.born, w.cancel = s.now(), cancel
	if err != nil {
		cancel()
		s.log().Warn("start a worker ahead", "err", err)
		return
	}
	w.proc, w.watch = p, watchProc(p.Pid())
}

// fit says whether a started w may serve a turn: it started, it is of the
// current generation, it has not waited too long, and it is alive.
func (s *WarmSpawner) fit(w *warmWorker) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case w.proc == nil:
		return false
	case w.gen != s.gen:
		return false
	case s.now().Sub(w.born) >= s.maxIdle():
		s.log().Debug("worker started ahead waited too long: replaced")
		return false
	case w.watch.exited():
		s.log().Warn("worker started ahead died while it waited; starting another", "worker_pid", w.proc.Pid())
		return false
	}
	return true
}

// putBack returns a w a turn gave up waiting for, unless another took its
// place or it is of a past generation.
func (s *WarmSpawner) putBack(w *warmWorker) {
	s.mu.Lock()
	if s.next == nil && w.gen == s.gen && !s.closed {
		s.next = w
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.goDiscard(w)
}

// goDiscard discards w in the background (at once after Close).
func (s *WarmSpawner) goDiscard(w *warmWorker) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.discard(w)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		s.discard(w)
	}()
}

// discard kills and reaps w once its start has ended.
func (s *WarmSpawner) discard(w *warmWorker) {
	<-w.ready
	if w.proc != nil {
		// SIGKILL before Kill closes its stdin: a worker that read EOF
		// there would log that it got no job.
		w.watch.kill()
		w.proc.Kill()
		w.watch.close()
	}
	w.cancel()
}

func (s *WarmSpawner) maxIdle() time.Duration {
	if s.MaxIdle > 0 {
		return s.MaxIdle
	}
	return DefaultWarmMaxIdle
}

func (s *WarmSpawner) maxTurn() time.Duration {
	if s.MaxTurn > 0 {
		return s.MaxTurn
	}
	return DefaultWarmMaxTurn
}

func (s *WarmSpawner) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *WarmSpawner) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// bind hands w's process to a turn: when ctx ends, the process is killed,
// as a worker started for the turn would be; ended runs once it ends.
func (w *warmWorker) bind(ctx context.Context, ended func()) Process {
	p := &warmProcess{Process: w.proc, stop: make(chan struct{}), cancel: w.cancel, ended: ended}
	go func() {
		// This goroutine owns the watch from here on: no one else uses or
		// closes its descriptor.
		defer w.watch.close()
		select {
		case <-ctx.Done():
			w.watch.kill()
		case <-p.stop:
		}
	}()
	return p
}

// warmProcess is a worker serving its one turn, started ahead or not;
// its end starts the next.
type warmProcess struct {
	Process
	stop     chan struct{}
	once     sync.Once // ended
	stopOnce sync.Once
	cancel   context.CancelFunc
	ended    func()
}

func (p *warmProcess) end() {
	p.once.Do(func() { p.ended() })
	p.stopOnce.Do(func() {
		close(p.stop)
		p.cancel()
	})
}

func (p *warmProcess) Wait() error {
	err := p.Process.Wait()
	p.end()
	return err
}

// Kill starts the next worker, then kills this one and waits for it: the
// two overlap, so the next is ready sooner after a turn.
func (p *warmProcess) Kill() error {
	p.once.Do(func() { p.ended() })
	err := p.Process.Kill()
	p.end()
	return err
}
