// Package core runs the agent's turns: it takes a message from a transport,
// spawns a worker process for the turn, answers the worker's model calls
// through a Completer it is given, records tool executions in the audit
// trail and commits the turn's history before the reply is returned.
//
// It is the turn engine and the facade over core's parts: the desk of
// requests waiting for the owner (core/approvals), which it hands the turn
// engine as a small interface to carry out a decision, and the self-coded
// tools' toolbox (core/toolbox). Reader is the read side a command that
// only reads opens alone.
//
// Core is LLM-free: it never imports the broker's adapters or a model SDK
// (repo_test.go enforces this); the model reaches it as a small interface.
package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelldon/shelldon/internal/budget"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/approvals"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/gitguard"
	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/wire"
)

// SkillStore keeps the skills. What the agent writes is a draft until the
// owner approves it: Stage keeps it apart, core files it on the desk, and
// the store, as the desk's Promoter of KindSkill, makes it live.
type SkillStore interface {
	// Catalog lists the skills in use for the system prompt.
	Catalog() string
	// Do serves list, use (which records the use for the catalog) and
	// read (a file beside a skill).
	Do(ctx context.Context, req contracts.SkillRequest) (string, error)
	// Stage keeps the draft a create or an update makes.
	Stage(ctx context.Context, req contracts.SkillRequest) (SkillDraft, error)
	approvals.Promoter
}

// SkillDraft is a skill the agent drafted, as the desk files it.
type SkillDraft = approvals.SkillDraft

// Completer makes one model call. The broker's fallback chain implements it.
type Completer interface {
	Complete(ctx context.Context, req contracts.Request, onText func(delta string)) (contracts.Completion, error)
}

// Options configure a Core.
type Options struct {
	Store        *store.Store
	Model        Completer
	Spawner      Spawner
	Limits       contracts.Limits
	HistoryChars int    // size budget of the context rebuilt from history
	System       string // the owner's extra instructions, if any
	Workspace    string // the jail root of the file tools
	Workers      int    // turns that may run at once
	Redact       func(string) string
	ApprovalTTL  time.Duration // how long a request waits for the owner; default 1h
	// AllowDegraded is the owner's sandbox.allow_degraded, passed to each
	// worker for the sandboxed tools.
	AllowDegraded bool
	// MinFreeDisk is the owner's sandbox.min_free_disk in bytes, passed to
	// each worker for the sandboxed tools; 0 means no check.
	MinFreeDisk uint64
	// MemoryBytes is the owner's memory.context_bytes: the remembered
	// facts a turn's prompt gets at most (memory.go); 0 means none.
	MemoryBytes int
	// Configure applies an owner-approved config change (update_config)
	// and returns the diff; nil means the tool is unavailable.
	Configure func(ctx context.Context, changes json.RawMessage) ([]string, error)
	// Schedules keeps the schedules an approved schedule call creates;
	// nil means the tool is unavailable (schedules.go).
	Schedules Schedules
	// Providers are the names of the providers the owner configured, for
	// update_config's check in the worker; nil means not known.
	Providers []string
	// LANHosts are the owner's http.allow_hosts, passed to each worker for
	// http_get and the self-coded tools' http; nil lists none.
	LANHosts []contracts.LANHost
	// GitRemotes are the owner's git.remotes (no credential), passed to
	// each worker for the git tool's check of fetch, pull and push.
	GitRemotes []contracts.GitRemote
	// GitFetch fetches what an approved git fetch or pull names from its
	// remote into the daemon's mirror of it and returns the mirror's path
	// (git.go); nil means git remotes are unavailable.
	GitFetch func(ctx context.Context, nc gitguard.NetCommand) (string, error)
	// GitPush pushes the bound commits of an approved git push (git.go)
	// and returns git's report; nil means git remotes are unavailable.
	GitPush func(ctx context.Context, nc gitguard.NetCommand, commits []string) (string, error)
	// OnNetwork names the http.allow_hosts entry that lists a host a
	// proposed tool asks for, for its promotion card; nil lists none.
	OnNetwork func(host string) string
	// SandboxLayers are the sandbox layers in place, for the workers.
	SandboxLayers []string
	// Skills serves the skills tools and the catalog; nil means none.
	Skills SkillStore
	// Tools is the directory of self-coded tools; nil means none.
	Tools *selfcode.Dir
	// PyGateCache is the directory of the Python gate's compiled scripts
	// (toolbox.BuildPyGateCache), passed to each worker; "" means none.
	PyGateCache string
	// Strikes is how many failed calls quarantine a self-coded tool
	// version (selfcode.strikes); default 3.
	Strikes int
	// Describe adds the daemon's own facts to the rendering of a call the
	// owner must decide (the resolved path, a URL's host as it will be dialed; never a lookup);
	// nil adds nothing.
	Describe func(ctx context.Context, call contracts.ToolCall) []string
	// Budget is the owner's budgets (SendSelf, selfdriven.go); nil is
	// budget.Default().
	Budget *budget.Budgets
	Logger *slog.Logger
	Now    func() time.Time
}

// Core runs turns, and embeds the Reader that shows what they left. It is
// safe for concurrent use.
type Core struct {
	*Reader
	tuneMu    sync.RWMutex // guards the tunable fields of opts (see Tune)
	opts      Options
	slots     chan struct{}
	recovered atomic.Pointer[func(chat string, out Outcome)] // see OnRecovered
	self      selfDriven                                     // budgets and self-driven turns (selfdriven.go)
	reaping   sync.WaitGroup                                 // workers ended in the background (serveWorker)
	specs     specCache                                      // the tool specs workers may name (specs.go)
}

// Close waits until the workers of finished turns are reaped: a turn
// returns its outcome before its worker's sandbox is torn down.
func (c *Core) Close() error {
	c.reaping.Wait()
	return nil
}

// defaults fills the zero fields of opts that have one.
func (opts *Options) defaults() {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.HistoryChars <= 0 {
		opts.HistoryChars = 24000
	}
	if opts.Redact == nil {
		opts.Redact = func(s string) string { return s }
	}
	if opts.ApprovalTTL <= 0 {
		opts.ApprovalTTL = time.Hour
	}
	if opts.Strikes <= 0 {
		opts.Strikes = 3
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
}

// New returns a Core.
func New(opts Options) (*Core, error) {
	if opts.Store == nil || opts.Model == nil || opts.Spawner == nil {
		return nil, errors.New("core: store, model and spawner are required")
	}
	opts.defaults()
	c := &Core{opts: opts, slots: make(chan struct{}, opts.Workers)}
	r, err := newReader(opts, func() time.Duration { return c.tuning().ApprovalTTL })
	if err != nil {
		return nil, err
	}
	c.Reader = r
	return c, nil
}

// Events lets a transport show a turn as it happens. Either may be nil.
type Events struct {
	Text func(delta string)           // the model's words as they stream
	Tool func(ev contracts.ToolEvent) // a tool starting or ending

	// exchange is the decided request a resumed turn carries out (set by
	// the desk's engine, never by a transport).
	exchange *approvals.Exchange
	// self is the self-driven turn SendSelf runs (nil: the owner's).
	self *selfTurn
}

// Outcome is a finished turn as a transport shows it.
type Outcome struct {
	Turn      int64           `json:"turn"`
	Reply     string          `json:"reply"`
	Stopped   string          `json:"stopped,omitempty"`
	ToolCalls int             `json:"tool_calls"`
	Usage     contracts.Usage `json:"usage"`
	Approvals []ApprovalView  `json:"approvals"` // requests this turn parked, for the owner to decide
	// Again is set when a keyed message (SendOnce) came before: Replayed,
	// Rerun, CutShort or GaveUp.
	Again string `json:"again,omitempty"`
	// Warning says a money budget is spent (an owner's turn runs anyway);
	// the reply begins with it too.
	Warning string `json:"warning,omitempty"`
}

// What SendOnce did with a message that came before (Outcome.Again).
const (
	// Replayed: its turn had finished; this is that turn's outcome, not
	// run again.
	Replayed = "replayed"
	// Rerun: a restart cut its turn short before it did anything; it ran
	// again.
	Rerun = "rerun"
	// CutShort: a restart cut its turn short after it had filed requests
	// for the owner (they stand); it is not run again.
	CutShort = "cut_short"
	// GaveUp: restarts cut its turn short MaxAttempts times; it is not
	// run again.
	GaveUp = "gave_up"
)

// MaxAttempts bounds the runs of one keyed message whose turns restarts
// keep cutting short: a message that crashes the daemon does not crash it
// forever.
const MaxAttempts = 3

// ErrRunning: the turn of this message is running now (SendOnce).
var ErrRunning = errors.New("the turn of this message is running")

// ErrBadInput is returned for a message a turn cannot start from.
var ErrBadInput = errors.New("bad input")

// MaxInput caps one message from the owner.
const MaxInput = 32 << 10

// Send runs one turn of chat with the owner's text and returns its outcome
// once the history is committed. Cancelling ctx ends the turn early with what
// it has. An error means the system broke (the worker crashed, the store
// failed); the Outcome then still carries a reply that says so.
func (c *Core) Send(ctx context.Context, chat, text string, ev Events) (Outcome, error) {
	return c.send(ctx, chat, "", text, ev)
}

// SendOnce is Send for a message that carries a key naming it across
// restarts and retries (a Telegram update id, an API client's
// Idempotency-Key): its turn runs to its end once. When the message came
// before, Outcome.Again says what happened: the finished turn's outcome is
// returned without running it again (Replayed); a turn a restart cut short
// before it filed anything runs again (Rerun), up to MaxAttempts times
// (GaveUp); one that had filed requests for the owner is not run again
// (CutShort), and its pending requests are in the outcome. ErrRunning
// means the message's turn is running now.
func (c *Core) SendOnce(ctx context.Context, chat, key, text string, ev Events) (Outcome, error) {
	if key == "" {
		return Outcome{}, fmt.Errorf("%w: the message key is empty", ErrBadInput)
	}
	return c.send(ctx, chat, key, text, ev)
}

func (c *Core) send(ctx context.Context, chat, key, text string, ev Events) (Outcome, error) {
	if strings.TrimSpace(text) == "" {
		return Outcome{}, fmt.Errorf("%w: the message is empty", ErrBadInput)
	}
	if len(text) > MaxInput {
		return Outcome{}, fmt.Errorf("%w: the message is %d bytes; the limit is %d", ErrBadInput, len(text), MaxInput)
	}
	if chat == "" {
		chat = "default"
	}
	ctx = withProfile(ctx)
	if err := c.acquire(ctx); err != nil {
		return Outcome{}, err
	}
	defer c.release()
	profileOf(ctx).mark("worker slot taken")
	if ev.self != nil {
		return c.runTurn(ctx, chat, key, text, nil, ev)
	}
	// The budgets are read beside the turn, not before it: their warning
	// only heads the reply. It must count what was spent before this turn
	// only, so the turn's first model call is not metered until the read
	// is done (budgetRead), which at a turn's pace has long happened.
	warning := make(chan string, 1)
	read := make(chan struct{})
	go func() {
		w := c.budgetWarning(ctx)
		close(read)
		warning <- w
	}()
	out, err := c.runTurn(context.WithValue(ctx, budgetReadKey{}, read), chat, key, text, nil, ev)
	return warned(out, <-warning), err
}

// acquire waits for a worker slot: a turn or a decision waits its turn
// rather than being refused.
func (c *Core) acquire(ctx context.Context) error {
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("core: wait for a worker slot: %w", ctx.Err())
	}
}

func (c *Core) release() { <-c.slots }

// runTurn runs one turn in a worker: a new message (resume nil), or the
// continuation of a parked turn after the owner's decision. It commits the
// turn's messages, and parks a RISKY call the turn stopped at, before it
// returns.
func (c *Core) runTurn(ctx context.Context, chat, key, text string, resume *contracts.Resume, ev Events) (Outcome, error) {
	st := c.opts.Store
	ctx = withProfile(ctx)
	prof := profileOf(ctx)
	tun := c.tuning()
	// The facts for the prompt are read beside the history and the turn's
	// beginning (SQLite's WAL lets a reader run beside the writer).
	memories := make(chan []contracts.Fact, 1)
	go func() {
		facts := c.memoryFor(ctx, text, tun.MemoryBytes)
		prof.mark("memory read")
		memories <- facts
	}()
	// The history is read before this turn begins, so it holds earlier turns only.
	history, err := st.History(ctx, chat, tun.HistoryChars)
	if err != nil {
		return Outcome{}, fmt.Errorf("core: load history of %q: %w", chat, err)
	}
	prof.mark("history read")
	started := c.now()
	turn, again, err := c.begin(ctx, chat, key, text, started, ev.self.origin())
	prof.mark("turn begun")
	if err != nil || turn == 0 {
		return again, err
	}
	lim := tun.Limits
	if lim.Budget <= 0 {
		lim.Budget = 25 * time.Second
	}
	job := contracts.Job{
		Chat: chat, Turn: turn, System: tun.System, History: history, HistoryLen: len(history), Input: text,
		Workspace: c.opts.Workspace, Limits: lim, Deadline: started.Add(lim.Budget), Resume: resume,
		AllowDegraded: tun.AllowDegraded, MinFreeDisk: tun.MinFreeDisk, SkillCatalog: c.catalog(), SandboxLayers: c.opts.SandboxLayers,
		Providers: tun.Providers, PyGateCache: c.opts.PyGateCache,
		LANHosts: tun.LANHosts, GitRemotes: tun.GitRemotes,
	}
	job.SelfTools, job.ToolSearch = c.selfTools(text, resume)
	specs := c.specs.current()
	job.Specs = specs.list()
	prof.mark("tools selected")
	job.Memory = <-memories
	res, filed, endWorker, runErr := c.runWorker(ctx, job, specs, ev)
	defer endWorker()
	end := store.TurnEnd{
		Status: "ok", Reply: res.Reply, Messages: res.Messages, Usage: res.Usage,
		Provider: res.Provider, Model: res.Model, ToolCalls: res.ToolCalls, At: c.now(),
	}
	if res.Stopped != "" {
		end.Status = res.Stopped
	}
	out := Outcome{Turn: turn, Stopped: res.Stopped, ToolCalls: res.ToolCalls, Usage: res.Usage, Approvals: []ApprovalView{}, Again: again.Again}
	switch {
	case runErr != nil:
		end.Status, end.Error = contracts.StopError, runErr.Error()
		res.Reply = "Sorry, this turn failed inside shelldon: " + runErr.Error()
		out.Stopped = contracts.StopError
		// Keep the owner's words in the history even when the worker died:
		// and, for a decided request, the exchange, recorded or not.
		end.Reply = res.Reply
		// The reply is the owner's; the history closes with shelldon's
		// note, never with words the model did not write.
		sorry := contracts.StoppedNote(contracts.StopError)
		switch x := ev.exchange; {
		case filed.recorded != nil:
			end.Messages = append(append([]contracts.Message(nil), filed.recorded...), sorry)
		case x != nil:
			end.Messages = append(exchangeOf(resume.Messages, x.Abandoned()), sorry)
			c := x.Close(nil)
			end.Close = &c
		default:
			end.Messages = []contracts.Message{{Role: contracts.RoleUser, Text: text}, sorry}
		}
	case res.Pending != nil:
		// Parked: the messages stay with the request until the owner
		// decides; the turn that resumes it commits them. A continuation
		// that parks again keeps the exchange it recorded in its own turn,
		// and the request only what follows it (the history has the rest).
		p := *res.Pending
		if k := len(filed.recorded); k > 0 && k <= len(p.Messages) {
			p.Messages = p.Messages[k:]
		}
		view, err := c.desk.Park(ctx, chat, turn, p)
		if err != nil {
			return Outcome{}, err
		}
		out.Approvals = append(out.Approvals, view)
		res.Reply = approvals.ParkedReply(view)
		end.Reply, end.Messages = res.Reply, nil
	}
	if x := ev.exchange; x != nil && runErr == nil && filed.recorded == nil {
		// A worker that never recorded the exchange: it is in the
		// messages committed now, with the request's closing.
		c := x.Close(end.Messages)
		end.Close = &c
	}
	out.Approvals = append(out.Approvals, filed.approvals...)
	if extra := strings.Join(filed.notes, "\n"); extra != "" {
		res.Reply = strings.TrimSpace(res.Reply + "\n\n" + extra)
		end.Reply = res.Reply
	}
	out.Reply = res.Reply
	// Commit before replying, even if the caller has gone (nothing is lost).
	if err := st.FinishTurn(context.WithoutCancel(ctx), turn, end); err != nil {
		return Outcome{}, fmt.Errorf("core: finish turn %d: %w", turn, err)
	}
	prof.mark("turn committed")
	prof.log(c.log, chat, turn)
	c.log.Info("turn finished", "chat", chat, "turn", turn, "status", end.Status,
		"tool_calls", res.ToolCalls, "input_tokens", res.Usage.InputTokens,
		"output_tokens", res.Usage.OutputTokens, "duration", c.now().Sub(started).Round(time.Millisecond))
	if runErr != nil {
		return out, fmt.Errorf("core: turn %d: %w", turn, runErr)
	}
	return out, nil
}

// cancelGrace is how long a cancelled worker gets to return what it has.
const cancelGrace = 2 * time.Second

// runWorker spawns the turn's worker, serves its calls (the table of
// requests.go) and events, and returns its result with what the turn filed
// (also when the worker failed: a request it filed stands).
//
// The worker has answered, or is given up on, when it returns; end, which
// the caller calls once the turn is committed, ends and reaps it in the
// background, which starts the next worker started ahead: tearing down
// one sandbox and starting another cost milliseconds of CPU that the
// turn's commit and reply need not share. (A worker given up on is killed
// when runWorker returns, by its context.)
func (c *Core) runWorker(ctx context.Context, job contracts.Job, specs *specSet, ev Events) (res contracts.Result, filed turnFiled, end func(), err error) {
	res, proc, err := c.serveWorker(ctx, job, specs, ev, &filed)
	return res, filed, func() { c.reap(proc) }, err
}

// reap ends and reaps proc (if any) in the background; Close waits for it.
func (c *Core) reap(proc Process) {
	if proc == nil {
		return
	}
	c.reaping.Add(1)
	go func() {
		defer c.reaping.Done()
		proc.Kill()
	}()
}

// serveWorker is runWorker's loop; filed is touched only from it. specs
// are the tool specs job lists (Job.Specs). It returns the worker it
// spawned, for runWorker's end.
func (c *Core) serveWorker(ctx context.Context, job contracts.Job, specs *specSet, ev Events, filed *turnFiled) (_ contracts.Result, proc Process, _ error) {
	// The worker enforces the budget itself; this is the backstop for a
	// worker that hangs.
	hard, cancelHard := context.WithDeadline(context.WithoutCancel(ctx), job.Deadline.Add(5*time.Second))
	defer cancelHard()
	proc, err := c.opts.Spawner.Spawn(hard)
	if err != nil {
		return contracts.Result{}, nil, fmt.Errorf("spawn worker: %w", err)
	}
	profileOf(ctx).mark("worker spawned")
	conn := proc.Conn()
	if err := conn.Send(wire.TypeJob, job); err != nil {
		return contracts.Result{}, proc, fmt.Errorf("send job: %w", err)
	}
	profileOf(ctx).mark(stepJobSent)

	frames := make(chan wire.Frame)
	readErr := make(chan error, 1)
	go func() {
		for {
			f, err := conn.Recv()
			if err != nil {
				readErr <- err
				return
			}
			select {
			case frames <- f:
			case <-hard.Done():
				return
			}
		}
	}()

	// The model call runs in its own goroutine, so a cancel can reach the
	// worker while the daemon waits on the provider; the other calls are
	// served in order with the events.
	modelCtx, cancelModel := context.WithDeadline(ctx, job.Deadline)
	defer cancelModel()
	calls := c.calls(job, specs, ev, filed)
	serve := func(ctx context.Context, f wire.Frame) {
		if err := calls.Serve(ctx, conn, f); err != nil {
			c.log.Debug("answer the worker", "method", f.Method, "err", err)
		}
	}
	cancelled := ctx.Done()
	var grace <-chan time.Time
	for {
		select {
		case <-cancelled:
			cancelled = nil
			conn.SendError(wire.TypeCancel, "cancelled by the owner")
			grace = time.After(cancelGrace)
		case <-grace:
			return contracts.Result{}, proc, errors.New("the worker did not stop after cancel")
		case <-hard.Done():
			return contracts.Result{}, proc, errors.New("the worker overran the turn's budget and was killed")
		case err := <-readErr:
			werr := proc.Wait()
			return contracts.Result{}, proc, fmt.Errorf("the worker exited without a result (%v; %v)", err, werr)
		case f := <-frames:
			switch f.Type {
			case wire.TypeCall:
				if f.Method == wire.MethodComplete {
					go serve(modelCtx, f)
				} else {
					serve(ctx, f)
				}
			case wire.TypeEvent:
				var te contracts.ToolEvent
				if err := f.Decode(&te); err != nil {
					return contracts.Result{}, proc, err
				}
				c.toolEvent(ctx, job, te, ev, filed)
			case wire.TypeResult:
				if f.Error != "" {
					return contracts.Result{}, proc, errors.New(f.Error)
				}
				var res contracts.Result
				if err := f.Decode(&res); err != nil {
					return contracts.Result{}, proc, err
				}
				profileOf(ctx).mark("result received")
				profileOf(ctx).worker(res.Profile, res.ProfileAt)
				return res, proc, nil
			default:
				return contracts.Result{}, proc, fmt.Errorf("unexpected %q frame from the worker", f.Type)
			}
		}
	}
}

// auditRefused is the audit kind of a RISKY call a guard refused before
// the owner was asked.
const auditRefused = "tool_refused"

// toolEvent audits a finished tool call (or a refused one), counts a failed self-coded one as
// a strike (whose note goes to filed), and passes the event on.
func (c *Core) toolEvent(ctx context.Context, job contracts.Job, te contracts.ToolEvent, ev Events, filed *turnFiled) {
	te.Arguments = c.opts.Redact(te.Arguments)
	te.Summary = c.opts.Redact(te.Summary)
	if te.Phase == contracts.PhaseEnd {
		kind := store.KindToolCall
		if te.Guard != "" {
			kind = auditRefused
		}
		rec := memoryEvent(te) // a fact's words never reach the audit (memory.go)
		_, err := c.opts.Store.AppendAudit(context.WithoutCancel(ctx), store.AuditEntry{
			At: c.now(), Chat: job.Chat, Turn: job.Turn, Kind: kind,
			Tool: te.Tool, Args: rec.Arguments, Summary: rec.Summary, OK: te.OK, Duration: te.Duration,
		})
		if err != nil {
			c.log.Error("audit tool call", "tool", te.Tool, "err", err)
		}
		if te.Guard != "" {
			// Refused before the owner was asked: every transport shows it
			// in the turn's reply, as the CLI shows the event.
			filed.note(fmt.Sprintf("shelldon refused a %s call before asking you: %s", te.Tool, te.Summary))
		}
		if !te.OK && te.Guard == "" {
			filed.note(c.tools.Strike(ctx, filed.offered(job), te))
		}
		if te.OK {
			c.tools.Used(te.Tool)
		}
	}
	if ev.Tool != nil {
		ev.Tool(te)
	}
}

// configure carries out an update_config, only as the approved call this
// worker was resumed to run: the changes must be exactly the approved
// arguments, and they apply once.
func (c *Core) configure(ctx context.Context, job contracts.Job, changes json.RawMessage, done *bool) ([]string, error) {
	r := job.Resume
	if r == nil || !r.Approved || r.Call.Name != contracts.ToolUpdateConfig || *done {
		return nil, errors.New("update_config runs only as the call the owner approved")
	}
	got, err := contracts.CanonicalArgs(`{"changes":` + string(changes) + `}`)
	if err != nil || got != r.Call.Arguments {
		return nil, errors.New("the changes are not the ones the owner approved")
	}
	if c.opts.Configure == nil {
		return nil, errors.New("update_config is not available")
	}
	*done = true
	diff, err := c.opts.Configure(ctx, changes)
	if err != nil {
		return nil, err
	}
	c.audit(ctx, job.Chat, job.Turn, "config_changed", contracts.ToolUpdateConfig, string(changes), strings.Join(diff, "; "), true, 0)
	return diff, nil
}

// tuning reads the tunable settings.
func (c *Core) tuning() Tuning {
	c.tuneMu.RLock()
	defer c.tuneMu.RUnlock()
	return Tuning{Limits: c.opts.Limits, System: c.opts.System, HistoryChars: c.opts.HistoryChars,
		ApprovalTTL: c.opts.ApprovalTTL, AllowDegraded: c.opts.AllowDegraded, MinFreeDisk: c.opts.MinFreeDisk,
		Strikes: c.opts.Strikes, Providers: c.opts.Providers, MemoryBytes: c.opts.MemoryBytes,
		LANHosts: c.opts.LANHosts, GitRemotes: c.opts.GitRemotes}
}

// Tuning is what a config change can alter in a running core.
type Tuning struct {
	Limits        contracts.Limits
	System        string
	HistoryChars  int
	ApprovalTTL   time.Duration
	AllowDegraded bool
	MinFreeDisk   uint64
	Strikes       int
	Providers     []string // the names of the owner's providers
	MemoryBytes   int      // memory.context_bytes; 0: no facts in the prompt
	// LANHosts are http.allow_hosts; set whole on every Tune (nil: none).
	LANHosts []contracts.LANHost
	// GitRemotes are git.remotes; set whole on every Tune (nil: none).
	GitRemotes []contracts.GitRemote
}

// Tune applies new settings from the next turn on.
func (c *Core) Tune(t Tuning) {
	c.tuneMu.Lock()
	defer c.tuneMu.Unlock()
	c.opts.Limits, c.opts.System, c.opts.AllowDegraded = t.Limits, t.System, t.AllowDegraded
	c.opts.MinFreeDisk = t.MinFreeDisk
	c.opts.MemoryBytes = t.MemoryBytes
	c.opts.LANHosts = t.LANHosts
	c.opts.GitRemotes = t.GitRemotes
	if t.HistoryChars > 0 {
		c.opts.HistoryChars = t.HistoryChars
	}
	if t.ApprovalTTL > 0 {
		c.opts.ApprovalTTL = t.ApprovalTTL
	}
	if t.Providers != nil {
		c.opts.Providers = t.Providers
	}
	if t.Strikes > 0 {
		c.opts.Strikes = t.Strikes
		c.tools.SetStrikes(t.Strikes)
	}
}

func (c *Core) catalog() string {
	if c.opts.Skills == nil {
		return ""
	}
	return c.opts.Skills.Catalog()
}
