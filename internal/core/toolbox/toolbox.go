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
	auditRecovered   = "tool_recovered"
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

	mu       sync.Mutex // guards strikes and inflight
	strikes  int
	inflight map[string]chan struct{} // promotions being carried out here, by request id; closed when done
	disc     discovery
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
	done := t.begin(a.ID)
	defer done()
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

// begin marks the promotion of request id as carried out here until the
// returned func is called.
func (t *Toolbox) begin(id string) (done func()) {
	ch := make(chan struct{})
	t.mu.Lock()
	if t.inflight == nil {
		t.inflight = map[string]chan struct{}{}
	}
	t.inflight[id] = ch
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		delete(t.inflight, id)
		t.mu.Unlock()
		close(ch)
	}
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

// Promoted finishes a promotion a crash interrupted (its request is still
// running) and returns the outcome to record on the request. The tool's
// interrupted change in the directory, if any, is finished first; then, if
// the approved version is still staged, the promotion had not begun and is
// carried out now: the owner's decision was recorded before anything ran,
// and only the request that holds it is running. Otherwise it is live
// (promoted) or gone (not promoted).
func (t *Toolbox) Promoted(a store.Approval) string {
	if t.dir == nil {
		return "not promoted: " + ErrDisabled.Error()
	}
	ctx := context.Background()
	// A promotion still being carried out in this process is not
	// interrupted: wait for it, then say what it did.
	t.mu.Lock()
	ch := t.inflight[a.ID]
	t.mu.Unlock()
	if ch != nil {
		<-ch
	}
	if err := t.dir.Settle(a.Tool); err != nil {
		t.log.Error("finish an interrupted promotion", "tool", a.Tool, "err", err)
		return "not promoted: " + err.Error()
	}
	t.Invalidate()
	if staged, err := t.dir.Load(selfcode.StateStaged, a.Tool); ch == nil && err == nil && staged.Hash == a.ArgsHash {
		_, outcome, _ := t.Promote(ctx, a)
		return outcome + " (after a restart)"
	}
	if tool, err := t.dir.Load(selfcode.StateLive, a.Tool); err == nil && tool.Hash == a.ArgsHash {
		return fmt.Sprintf("promoted v%d", tool.Version)
	}
	return "not promoted: interrupted"
}

// Recover finishes, or undoes, every change of a live version a crash
// interrupted (promotions, restores, rollbacks; see selfcode.Dir.Recover),
// and records each in the audit trail. The daemon calls it once at start,
// before the desk resumes the decisions a crash interrupted.
func (t *Toolbox) Recover(ctx context.Context) error {
	if t.dir == nil {
		return nil
	}
	done, err := t.dir.Recover()
	if len(done) > 0 {
		t.Invalidate()
	}
	for _, p := range done {
		t.log.Warn("self-coded tool recovered after a restart", "tool", p.Tool, "what", p.What)
		t.record(ctx, "", 0, auditRecovered, p.Tool, "", p.What, true)
	}
	if err != nil {
		return fmt.Errorf("toolbox: recover: %w", err)
	}
	return nil
}

// Check reports what is wrong in the tools directory at root (see
// selfcode.Check), a staged version being wrong when no promotion request
// in st that the owner or a restart can still decide is for it. It changes
// nothing; doctor calls it.
func Check(ctx context.Context, root string, st *store.Store) ([]selfcode.Problem, error) {
	open, err := st.Approvals(ctx, store.ApprovalPending, store.ApprovalApproved, store.ApprovalDenied, store.ApprovalRunning)
	if err != nil {
		return nil, fmt.Errorf("toolbox: check: %w", err)
	}
	requested := map[[2]string]bool{}
	for _, a := range open {
		if a.Kind == KindPromotion {
			requested[[2]string{a.Tool, a.ArgsHash}] = true
		}
	}
	return selfcode.Check(root, func(name, hash string) bool { return requested[[2]string{name, hash}] }), nil
}
