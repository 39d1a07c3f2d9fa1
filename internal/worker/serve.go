package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/wire"
)

// Builder makes the tool registry of a turn. The returned func releases what
// the tools hold (an open workspace, say). d reaches the daemon for the
// tools that need it (propose_tool).
type Builder func(job contracts.Job, d Daemon) (*Registry, func(), error)

// Daemon is what a tool may ask of the daemon.
type Daemon interface {
	// Propose hands over a tool whose gate passed, to be staged and put
	// before the owner.
	Propose(ctx context.Context, p contracts.Proposal) (contracts.Proposed, error)
}

// Serve runs one turn in the worker process: it reads the Job from conn,
// builds the tools, runs the loop with the daemon as the model, reports each
// tool execution as an event and sends the Result. A cancel frame, or the
// daemon closing the pipe, ends the turn early.
func Serve(ctx context.Context, conn *wire.Conn, build Builder, redact func(string) string, logger *slog.Logger) error {
	first, err := conn.Recv()
	if err != nil {
		return fmt.Errorf("worker: read job: %w", err)
	}
	if first.Type != wire.TypeJob {
		return fmt.Errorf("worker: first frame is %q, want %q", first.Type, wire.TypeJob)
	}
	var job contracts.Job
	if err := first.Decode(&job); err != nil {
		return err
	}
	rm := &remoteModel{conn: conn, replies: make(chan wire.CompletionMsg, 1), proposed: make(chan wire.ProposedMsg, 1)}
	reg, release, err := build(job, rm)
	if err != nil {
		conn.SendError(wire.TypeResult, fmt.Sprintf("worker: build tools: %v", err))
		return fmt.Errorf("worker: build tools: %w", err)
	}
	defer release()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go rm.readLoop(ctx, cancel, logger)

	loop := &Loop{
		Model:  rm,
		Tools:  reg,
		Redact: redact,
		Logger: logger,
		OnEvent: func(ev contracts.ToolEvent) {
			if err := conn.Send(wire.TypeEvent, ev); err != nil {
				logger.Warn("worker: send event", "err", err)
			}
		},
	}
	job.System = SystemPrompt(time.Now(), job.System)
	res := loop.Run(ctx, job)
	if err := conn.Send(wire.TypeResult, res); err != nil {
		return fmt.Errorf("worker: send result: %w", err)
	}
	return nil
}

// remoteModel asks the daemon for completions, and proposals, over the
// frame pipe.
type remoteModel struct {
	conn     *wire.Conn
	replies  chan wire.CompletionMsg
	proposed chan wire.ProposedMsg
	mu       sync.Mutex
	seq      int64
}

var (
	_ Model  = (*remoteModel)(nil)
	_ Daemon = (*remoteModel)(nil)
)

func (m *remoteModel) next() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	return m.seq
}

// Propose sends a proposal and waits for the daemon's answer.
func (m *remoteModel) Propose(ctx context.Context, p contracts.Proposal) (contracts.Proposed, error) {
	seq := m.next()
	if err := m.conn.Send(wire.TypePropose, wire.ProposeMsg{Seq: seq, Proposal: p}); err != nil {
		return contracts.Proposed{}, err
	}
	for {
		select {
		case <-ctx.Done():
			return contracts.Proposed{}, ctx.Err()
		case r, ok := <-m.proposed:
			if !ok {
				return contracts.Proposed{}, errors.New("the daemon closed the pipe")
			}
			if r.Seq != seq {
				continue
			}
			if r.Error != "" {
				return contracts.Proposed{}, errors.New(r.Error)
			}
			return r.Proposed, nil
		}
	}
}

func (m *remoteModel) Complete(ctx context.Context, req contracts.Request) (contracts.Completion, error) {
	seq := m.next()
	if err := m.conn.Send(wire.TypeComplete, wire.CompleteMsg{Seq: seq, Request: req}); err != nil {
		return contracts.Completion{}, err
	}
	for {
		select {
		case <-ctx.Done():
			return contracts.Completion{}, ctx.Err()
		case r, ok := <-m.replies:
			if !ok {
				return contracts.Completion{}, errors.New("the daemon closed the pipe")
			}
			if r.Seq != seq {
				continue // the answer to a call this turn already gave up on
			}
			if r.Error != "" {
				return r.Completion, errors.New(r.Error)
			}
			return r.Completion, nil
		}
	}
}

// readLoop routes the daemon's frames: completions to Complete, a cancel (or
// the pipe closing) to the turn's context.
func (m *remoteModel) readLoop(ctx context.Context, cancel context.CancelFunc, logger *slog.Logger) {
	defer close(m.replies)
	defer close(m.proposed)
	for {
		f, err := m.conn.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				logger.Warn("worker: read from daemon", "err", err)
			}
			cancel()
			return
		}
		switch f.Type {
		case wire.TypeCancel:
			cancel()
		case wire.TypeCompletion:
			var msg wire.CompletionMsg
			if err := f.Decode(&msg); err != nil {
				msg.Error = err.Error()
			}
			if f.Error != "" {
				msg.Error = f.Error
			}
			select {
			case m.replies <- msg:
			case <-ctx.Done():
				return
			}
		case wire.TypeProposed:
			var msg wire.ProposedMsg
			if err := f.Decode(&msg); err != nil {
				msg.Error = err.Error()
			}
			if f.Error != "" {
				msg.Error = f.Error
			}
			select {
			case m.proposed <- msg:
			case <-ctx.Done():
				return
			}
		default:
			logger.Warn("worker: unexpected frame", "type", f.Type)
		}
	}
}
