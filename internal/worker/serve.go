package worker

import (
	"context"
	"encoding/json"
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
	// Configure applies the config change the owner approved.
	Configure(ctx context.Context, changes json.RawMessage) ([]string, error)
	// Skill lists, loads, creates or updates a skill.
	Skill(ctx context.Context, req contracts.SkillRequest) (string, error)
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
	rm := newRemote(conn)
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
	job.System = SystemPrompt(time.Now(), job.System, job.SkillCatalog)
	res := loop.Run(ctx, job)
	if err := conn.Send(wire.TypeResult, res); err != nil {
		return fmt.Errorf("worker: send result: %w", err)
	}
	return nil
}

// daemonClient asks the daemon for completions, proposals, skills and config
// changes over the frame pipe. Each request carries a sequence number; the
// answer with the same number goes to the request waiting for it.
type daemonClient struct {
	conn    *wire.Conn
	mu      sync.Mutex
	seq     int64
	pending map[int64]chan wire.Frame
	closed  bool
}

var (
	_ Model  = (*daemonClient)(nil)
	_ Daemon = (*daemonClient)(nil)
)

func newRemote(conn *wire.Conn) *daemonClient {
	return &daemonClient{conn: conn, pending: map[int64]chan wire.Frame{}}
}

// call sends one request and waits for its answer.
func (m *daemonClient) call(ctx context.Context, typ string, body func(seq int64) any) (wire.Frame, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return wire.Frame{}, errors.New("the daemon closed the pipe")
	}
	m.seq++
	seq := m.seq
	ch := make(chan wire.Frame, 1)
	m.pending[seq] = ch
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.pending, seq)
		m.mu.Unlock()
	}()
	if err := m.conn.Send(typ, body(seq)); err != nil {
		return wire.Frame{}, err
	}
	select {
	case <-ctx.Done():
		return wire.Frame{}, ctx.Err()
	case f, ok := <-ch:
		if !ok {
			return wire.Frame{}, errors.New("the daemon closed the pipe")
		}
		return f, nil
	}
}

// Propose sends a proposal and waits for the daemon's answer.
func (m *daemonClient) Propose(ctx context.Context, p contracts.Proposal) (contracts.Proposed, error) {
	f, err := m.call(ctx, wire.TypePropose, func(seq int64) any { return wire.ProposeMsg{Seq: seq, Proposal: p} })
	if err != nil {
		return contracts.Proposed{}, err
	}
	var msg wire.ProposedMsg
	if err := f.Decode(&msg); err != nil {
		return contracts.Proposed{}, err
	}
	if msg.Error != "" {
		return contracts.Proposed{}, errors.New(msg.Error)
	}
	return msg.Proposed, nil
}

// Configure asks the daemon to apply the config change the owner approved
// (update_config) and returns what changed.
func (m *daemonClient) Configure(ctx context.Context, changes json.RawMessage) ([]string, error) {
	f, err := m.call(ctx, wire.TypeConfigure, func(seq int64) any { return wire.ConfigureMsg{Seq: seq, Changes: changes} })
	if err != nil {
		return nil, err
	}
	var msg wire.ConfiguredMsg
	if err := f.Decode(&msg); err != nil {
		return nil, err
	}
	if msg.Error != "" {
		return nil, errors.New(msg.Error)
	}
	return msg.Diff, nil
}

// Skill asks the daemon for a skills operation.
func (m *daemonClient) Skill(ctx context.Context, req contracts.SkillRequest) (string, error) {
	f, err := m.call(ctx, wire.TypeSkill, func(seq int64) any { return wire.SkillMsg{Seq: seq, Request: req} })
	if err != nil {
		return "", err
	}
	var msg wire.SkillDoneMsg
	if err := f.Decode(&msg); err != nil {
		return "", err
	}
	if msg.Error != "" {
		return "", errors.New(msg.Error)
	}
	return msg.Result, nil
}

func (m *daemonClient) Complete(ctx context.Context, req contracts.Request) (contracts.Completion, error) {
	f, err := m.call(ctx, wire.TypeComplete, func(seq int64) any { return wire.CompleteMsg{Seq: seq, Request: req} })
	if err != nil {
		return contracts.Completion{}, err
	}
	var msg wire.CompletionMsg
	if err := f.Decode(&msg); err != nil {
		return contracts.Completion{}, err
	}
	if f.Error != "" {
		msg.Error = f.Error
	}
	if msg.Error != "" {
		return msg.Completion, errors.New(msg.Error)
	}
	return msg.Completion, nil
}

// readLoop routes the daemon's frames: answers to the request waiting for
// them, a cancel (or the pipe closing) to the turn's context.
func (m *daemonClient) readLoop(ctx context.Context, cancel context.CancelFunc, logger *slog.Logger) {
	defer func() {
		m.mu.Lock()
		m.closed = true
		for seq, ch := range m.pending {
			close(ch)
			delete(m.pending, seq)
		}
		m.mu.Unlock()
	}()
	for {
		f, err := m.conn.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				logger.Warn("worker: read from daemon", "err", err)
			}
			cancel()
			return
		}
		if f.Type == wire.TypeCancel {
			cancel()
			continue
		}
		var hdr struct {
			Seq int64 `json:"seq"`
		}
		json.Unmarshal(f.Body, &hdr)
		m.mu.Lock()
		ch, ok := m.pending[hdr.Seq]
		m.mu.Unlock()
		if !ok {
			continue // the answer to a request this turn already gave up on
		}
		select {
		case ch <- f:
		default:
		}
	}
}
