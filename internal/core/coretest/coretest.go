// Package coretest runs core's turns against the real worker loop without a
// worker process, for tests only (like httptest). Its Spawner serves each
// turn with worker.Serve in a goroutine, over a pair of io.Pipes, with the
// tools a test chooses (fakes of each kind are here: Echo, Risky, SelfTools,
// Propose); Model is a scripted core.Completer that records every request.
// Nothing is re-executed and nothing is sandboxed, so core's approval,
// promotion and strike logic can be tested in milliseconds and under
// testing/synctest, with the fake clock as core.Options.Now.
//
// It imports testing; repo_test.go keeps it out of the binary.
package coretest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/wire"
	"github.com/shelldon/shelldon/internal/worker"
)

// Spawner starts each worker as worker.Serve in a goroutine of the test
// process, talking frames over pipes as a real worker does over its stdin
// and stdout. A worker behaves as a process: when it returns, its ends of
// the pipes close; Kill (or the end of Spawn's ctx) closes every end, which
// ends the worker, and waits for it.
type Spawner struct {
	// Build makes each worker's tool registry; see Builder.
	Build worker.Builder
	// Logger is the workers' log; nil discards it.
	Logger *slog.Logger
	// Redact redacts the arguments of tool events; nil keeps them.
	Redact func(string) string

	mu   sync.Mutex
	jobs []contracts.Job
}

var _ core.Spawner = (*Spawner)(nil)

// Jobs returns the job each worker received, in the order they started.
func (s *Spawner) Jobs() []contracts.Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]contracts.Job(nil), s.jobs...)
}

// Spawn starts a worker. ctx bounds its life, as it does a process's.
func (s *Spawner) Spawn(ctx context.Context) (core.Process, error) {
	if s.Build == nil {
		return nil, errors.New("coretest: the Spawner has no Build")
	}
	logger := s.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	redact := s.Redact
	if redact == nil {
		redact = func(a string) string { return a }
	}
	build := func(job contracts.Job, d worker.Daemon) (*worker.Registry, func(), error) {
		s.mu.Lock()
		s.jobs = append(s.jobs, job)
		s.mu.Unlock()
		return s.Build(job, d)
	}
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	p := &process{
		conn:   wire.NewConn(stdoutR, stdinW, 0),
		stdin:  stdinW,
		ends:   []io.Closer{stdinR, stdinW, stdoutR, stdoutW},
		exited: make(chan struct{}),
	}
	stop := context.AfterFunc(ctx, p.closeAll)
	go func() {
		defer close(p.exited)
		defer stop()
		// A process that ends closes its stdin and stdout.
		defer stdinR.Close()
		defer stdoutW.Close()
		defer func() {
			if r := recover(); r != nil {
				p.err = fmt.Errorf("coretest: the worker panicked: %v", r)
			}
		}()
		conn := wire.NewConn(stdinR, stdoutW, 0)
		p.err = worker.Serve(context.Background(), conn, build, redact, logger)
	}()
	return p, nil
}

// process is a worker goroutine seen as a process.
type process struct {
	conn   *wire.Conn
	stdin  io.Closer
	ends   []io.Closer
	exited chan struct{}
	err    error // Serve's, set before exited closes
}

func (p *process) Conn() *wire.Conn { return p.conn }

// Pid is the test process's: the worker runs in it.
func (p *process) Pid() int { return os.Getpid() }

// Wait closes the worker's stdin and waits for it to return.
func (p *process) Wait() error {
	p.stdin.Close()
	<-p.exited
	return p.err
}

// Kill closes both pipes, which ends the worker, and waits for it.
func (p *process) Kill() error {
	p.closeAll()
	<-p.exited
	return nil
}

func (p *process) closeAll() {
	for _, c := range p.ends {
		c.Close()
	}
}

// Store opens an empty store in t.TempDir(), closed when the test ends. Its
// file is a copy of one migrated once per test process: the migrations are
// most of the cost of opening a new store.
func Store(t testing.TB) *store.Store {
	t.Helper()
	return Reopen(t, StorePath(t))
}

// StorePath writes an empty store's file in t.TempDir() and returns its
// path, for a test that opens it more than once (Reopen).
func StorePath(t testing.TB) string {
	t.Helper()
	migrated.once.Do(func() { migrated.data, migrated.err = migrate() })
	if migrated.err != nil {
		t.Fatal(migrated.err)
	}
	path := filepath.Join(t.TempDir(), "shelldon.db")
	if err := os.WriteFile(path, migrated.data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Reopen opens a new handle on the store at path, closed when the test
// ends: what a restarted daemon (or a second process) opens. Work a
// handle holds (a turn, an approval's lease) is another handle's to take
// over only once the first is gone, which for two handles in one process
// is at once.
func Reopen(t testing.TB, path string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// migrated is the file of an empty store at the current schema.
var migrated struct {
	once sync.Once
	data []byte
	err  error
}

// migrate creates an empty store, closes it (which folds its write-ahead
// log into the file) and returns the file.
func migrate() ([]byte, error) {
	dir, err := os.MkdirTemp("", "coretest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "shelldon.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}
