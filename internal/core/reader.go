package core

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/approvals"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/core/toolbox"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// Reader is core's read side: the read models transports and the owner's
// read-only commands show (approvals, tools, the audit trail), and the
// expiry of requests nobody decided. They are core's, so no transport
// imports the store or the tools directory (repo_test.go). A Reader runs
// no turn: a command that only reads opens one alone (NewReader), with no
// model and no worker; Core embeds one.
type Reader struct {
	st     *store.Store
	desk   *approvals.Desk
	tools  *toolbox.Toolbox
	redact func(string) string
	log    *slog.Logger
	now    func() time.Time
}

// AuditEntry is one row of the audit trail.
type AuditEntry = store.AuditEntry

// AuditQuery selects audit entries; zero fields select everything.
type AuditQuery = store.AuditQuery

// Outcomes an AuditQuery selects by (AuditQuery.Outcome).
const (
	AuditOK     = store.OutcomeOK
	AuditFailed = store.OutcomeFailed
)

// AuditKinds lists the kinds of entry the audit trail holds, for a filter.
func AuditKinds() []string { return store.AuditKinds() }

// ValidAuditKind reports whether s can be a kind of entry (AuditQuery.Kind).
func ValidAuditKind(s string) bool { return store.ValidAuditKind(s) }

// ToolDetail is one version of a self-coded tool with its source.
type ToolDetail = selfcode.Tool

// ToolImport is where a version that came in a bundle came from, and the
// bundle's history (records only: a rollback never reaches them).
type ToolImport = selfcode.Import

// ToolImportedVersion is one version of a bundle's history.
type ToolImportedVersion = selfcode.ImportedVersion

// Errors of the tool commands.
var (
	ErrNoSuchTool = selfcode.ErrNotFound  // no tool of that name in that state
	ErrNoVersion  = selfcode.ErrNoVersion // no earlier version to roll back to
)

// NewReader returns a Reader over opts' Store, Tools and Skills (whose
// drafts an expiry discards); the model, the spawner and the turn settings
// are not used.
func NewReader(opts Options) (*Reader, error) {
	opts.defaults()
	return newReader(opts, func() time.Duration { return opts.ApprovalTTL })
}

// newReader builds the read side; ttl is read at each new request.
func newReader(opts Options, ttl func() time.Duration) (*Reader, error) {
	if opts.Store == nil {
		return nil, errors.New("core: a store is required")
	}
	r := &Reader{st: opts.Store, redact: opts.Redact, log: opts.Logger, now: opts.Now}
	r.tools = toolbox.New(toolbox.Options{Dir: opts.Tools, Store: opts.Store, Strikes: opts.Strikes,
		Audit: recorder{r}, Now: r.now, Logger: r.log})
	promoters := map[string]approvals.Promoter{approvals.KindPromotion: toolPromoter{r.tools}}
	if opts.Skills != nil {
		promoters[approvals.KindSkill] = opts.Skills
	}
	desk, err := approvals.New(approvals.Options{Store: opts.Store, Promoters: promoters, Audit: recorder{r},
		TTL: ttl, Describe: opts.Describe, OnNetwork: opts.OnNetwork, Now: r.now, Logger: r.log})
	if err != nil {
		return nil, err
	}
	r.desk = desk
	return r, nil
}

// recorder is the audit trail as the desk and the toolbox write it: the
// Reader stamps the time and redacts.
type recorder struct{ r *Reader }

var (
	_ toolbox.Recorder   = recorder{}
	_ approvals.Recorder = recorder{}
)

func (rec recorder) Record(ctx context.Context, e store.AuditEntry) {
	rec.r.audit(ctx, e.Chat, e.Turn, e.Kind, e.Tool, e.Args, e.Summary, e.OK, e.Duration)
}

// Entry stamps and redacts e as audit does, without appending it.
func (rec recorder) Entry(e store.AuditEntry) store.AuditEntry {
	e.At, e.Args, e.Summary = rec.r.now(), rec.r.redact(e.Args), rec.r.redact(e.Summary)
	return e
}

// audit appends one row to the audit trail; a failure is logged, not fatal.
func (r *Reader) audit(ctx context.Context, chat string, turn int64, kind, tool, args, summary string, ok bool, d time.Duration) {
	_, err := r.st.AppendAudit(context.WithoutCancel(ctx), store.AuditEntry{
		At: r.now(), Chat: chat, Turn: turn, Kind: kind, Tool: tool,
		Args: r.redact(args), Summary: r.redact(summary), OK: ok, Duration: d,
	})
	if err != nil {
		r.log.Error("audit", "kind", kind, "tool", tool, "err", err)
	}
}

// Approvals lists the requests waiting for the owner.
func (r *Reader) Approvals(ctx context.Context) ([]ApprovalView, error) { return r.desk.Pending(ctx) }

// Approval returns one request, in any state.
func (r *Reader) Approval(ctx context.Context, id string) (ApprovalView, error) {
	return r.desk.Get(ctx, id)
}

// ExpireApprovals closes every request past its expiry (see
// approvals.Desk.Expire) and returns how many.
func (r *Reader) ExpireApprovals(ctx context.Context) (int, error) { return r.desk.Expire(ctx) }

// Tools lists every built-in tool of the catalogue (contracts.BuiltinTools),
// in its order, then every self-coded one with its state: the one list the
// owner's commands, the API and Telegram show. A self-coded tool is FREE
// and each call runs in a sandbox of its own.
func (r *Reader) Tools(ctx context.Context) ([]ToolView, error) { return r.tools.Tools(ctx) }

// FindTool returns the self-coded tool called name: its live version, else
// the one waiting for approval, else the quarantined one, and that state.
func (r *Reader) FindTool(name string) (ToolDetail, string, error) { return r.tools.Find(name) }

// ToolVersions returns every version of the self-coded tool name that is
// kept, oldest first: the archived ones, then the live or quarantined one.
func (r *Reader) ToolVersions(name string) ([]ToolDetail, error) { return r.tools.Versions(name) }

// Conversation is the latest messages of chat, oldest first, up to about
// chars characters (whole turns): what a transport shows of it.
func (r *Reader) Conversation(ctx context.Context, chat string, chars int) ([]contracts.Message, error) {
	return r.st.History(ctx, chat, chars)
}

// Audit reads the audit trail, newest first.
func (r *Reader) Audit(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	return r.st.Audit(ctx, q)
}

// DecidedApproval is a request no longer waiting for the owner: its view,
// when and by whom it was decided (zero and "" for one that expired), and
// what came of it.
type DecidedApproval struct {
	ApprovalView
	DecidedAt time.Time `json:"decided_at"`
	DecidedBy string    `json:"decided_by"`
	Outcome   string    `json:"outcome"`
}

// RecentApprovals returns the n requests decided or expired most recently
// (50 when n <= 0), newest first: what a transport shows under the
// requests still waiting.
func (r *Reader) RecentApprovals(ctx context.Context, n int) ([]DecidedApproval, error) {
	if n <= 0 {
		n = 50
	}
	list, err := r.st.ClosedApprovals(ctx, n)
	if err != nil {
		return nil, err
	}
	out := make([]DecidedApproval, 0, len(list))
	for _, a := range list {
		out = append(out, DecidedApproval{
			ApprovalView: ApprovalView{ID: a.ID, Kind: a.Kind, Chat: a.Chat, Turn: a.Turn, Tool: a.Tool, Arguments: a.Args,
				Summary: a.Summary, State: a.State, CreatedAt: a.CreatedAt.UTC(), ExpiresAt: a.ExpiresAt.UTC()},
			DecidedAt: a.DecidedAt.UTC(), DecidedBy: a.DecidedBy, Outcome: a.Outcome,
		})
	}
	return out, nil
}
