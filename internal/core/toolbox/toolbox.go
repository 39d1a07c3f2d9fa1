// Package toolbox decides about shelldon's self-coded tools: a proposal
// staged for the owner (core files it as one more kind of approval, a
// promotion), a decided promotion carried out, the live tools each turn is
// offered (discovery), failed calls counted as strikes that quarantine a
// version, and the owner's commands on the tools.
//
// Its invariant: a tool goes live only from the staged version, and only
// when its content hash is still the one the owner approved; every change
// of the live set made here invalidates the discovery cache. The turn
// engine reaches it through Toolbox's methods and hands it a Recorder for
// the audit trail; it never imports core or a model SDK (repo_test.go).
package toolbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// KindPromotion is an approval of a self-coded tool version.
const KindPromotion = store.KindPromotion

// Audit kinds of the self-coding trail.
const (
	AuditProposed    = "tool_proposed"
	auditPromoted    = "tool_promoted"
	auditDiscarded   = "tool_denied"
	auditStrike      = "tool_strike"
	auditQuarantined = "tool_quarantined"
	auditRestored    = "tool_restored"
	auditRolledBack  = "tool_rolled_back"
	auditRemoved     = "tool_removed"
)

// ErrDisabled is returned when there is no tools directory.
var ErrDisabled = errors.New("self-coded tools are not enabled")

// Recorder is what the toolbox needs of the turn engine: a row in the
// audit trail (the engine stamps the time and redacts).
type Recorder interface {
	Record(ctx context.Context, e store.AuditEntry)
}

// Options configure a Toolbox.
type Options struct {
	Dir     *selfcode.Dir // the tools directory; nil means self-coded tools are off
	Store   *store.Store  // the strikes
	Strikes int           // failed calls that quarantine a version; default 3
	Audit   Recorder
	Now     func() time.Time
	Logger  *slog.Logger
}

// Toolbox decides about the self-coded tools. It is safe for concurrent use.
type Toolbox struct {
	dir   *selfcode.Dir
	st    *store.Store
	audit Recorder
	now   func() time.Time
	log   *slog.Logger

	mu      sync.Mutex // guards strikes
	strikes int
	disc    discovery
}

// New returns a Toolbox.
func New(o Options) *Toolbox {
	t := &Toolbox{dir: o.Dir, st: o.Store, audit: o.Audit, now: o.Now, log: o.Logger}
	if t.now == nil {
		t.now = time.Now
	}
	if t.log == nil {
		t.log = slog.Default()
	}
	if t.audit == nil {
		t.audit = nopRecorder{}
	}
	t.SetStrikes(o.Strikes)
	return t
}

type nopRecorder struct{}

func (nopRecorder) Record(context.Context, store.AuditEntry) {}

// SetStrikes changes the quarantine threshold from the next strike on; n
// <= 0 means the default, 3.
func (t *Toolbox) SetStrikes(n int) {
	if n <= 0 {
		n = 3
	}
	t.mu.Lock()
	t.strikes = n
	t.mu.Unlock()
}

// Enabled reports whether there is a tools directory.
func (t *Toolbox) Enabled() bool { return t.dir != nil }

func (t *Toolbox) record(ctx context.Context, chat string, turn int64, kind, tool, args, summary string, ok bool) {
	t.audit.Record(ctx, store.AuditEntry{Chat: chat, Turn: turn, Kind: kind, Tool: tool, Args: args, Summary: summary, OK: ok})
}

// Staged is a proposal staged for the owner: what core files as a
// promotion approval (Kind KindPromotion, Tool Name, Args, ArgsHash Hash).
type Staged struct {
	Manifest selfcode.Manifest
	Args     string // {"name":…,"version":…}
}

// Stage checks a proposal's name and stages its code whose gate passed.
func (t *Toolbox) Stage(p contracts.Proposal) (Staged, error) {
	if t.dir == nil {
		return Staged{}, ErrDisabled
	}
	name, err := selfcode.Normalize(p.Name)
	if err != nil {
		return Staged{}, err
	}
	meta := selfcode.Meta{Description: p.Description, ParamsSchema: p.Parameters, Capabilities: p.Capabilities}
	m, err := t.dir.Stage(name, p.Language, p.Code, p.Test, meta, p.Gate)
	if err != nil {
		return Staged{}, err
	}
	return Staged{Manifest: m, Args: fmt.Sprintf(`{"name":%q,"version":%d}`, name, m.Version)}, nil
}

// Promote carries out an approved promotion a: the staged version goes
// live if its content is still the one the owner saw (a.ArgsHash). It
// returns the outcome to record on the request.
func (t *Toolbox) Promote(ctx context.Context, a store.Approval) (selfcode.Manifest, string, error) {
	if t.dir == nil {
		return selfcode.Manifest{}, "not promoted: " + ErrDisabled.Error(), ErrDisabled
	}
	m, err := t.dir.Promote(a.Tool, a.ArgsHash, a.DecidedBy)
	outcome := fmt.Sprintf("promoted v%d", m.Version)
	if err != nil {
		outcome = "not promoted: " + err.Error()
	} else {
		t.Invalidate()
	}
	t.record(ctx, a.Chat, a.Turn, auditPromoted, a.Tool, a.Args, "request "+a.ID+": "+outcome, err == nil)
	if err != nil {
		return m, outcome, fmt.Errorf("toolbox: promote %s: %w", a.Tool, err)
	}
	return m, outcome, nil
}

// Deny discards the staged version of a denied promotion a.
func (t *Toolbox) Deny(ctx context.Context, a store.Approval) {
	t.Discard(a.Tool)
	t.record(ctx, a.Chat, a.Turn, auditDiscarded, a.Tool, a.Args, "request "+a.ID, true)
}

// Discard drops the staged version of name (an expired proposal).
func (t *Toolbox) Discard(name string) {
	if t.dir != nil {
		t.dir.Discard(name)
	}
}

// Promoted tells, for a promotion a crash interrupted, whether its rename
// happened: the outcome to record on the request.
func (t *Toolbox) Promoted(a store.Approval) string {
	if t.dir != nil {
		if tool, err := t.dir.Load(selfcode.StateLive, a.Tool); err == nil && tool.Hash == a.ArgsHash {
			return fmt.Sprintf("promoted v%d", tool.Version)
		}
	}
	return "not promoted: interrupted"
}
