package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/wire"
)

// Model is how the loop reaches the model. In the worker process it is the
// daemon, over the frame pipe; in tests a scripted fake.
type Model interface {
	Complete(ctx context.Context, req contracts.Request) (contracts.Completion, error)
}

// Default bounds of a turn, used where a Job leaves them zero.
const (
	DefaultMaxToolCalls = 6
	DefaultBudget       = 25 * time.Second
	DefaultReserve      = 2 * time.Second
	// MaxResultBytes caps one tool result handed back to the model.
	MaxResultBytes = 64 << 10
	// summaryBytes caps the result summary in a ToolEvent (audit, display).
	summaryBytes = 240
)

// Loop runs the bounded agentic loop of one turn.
type Loop struct {
	Model   Model
	Tools   *Registry
	Now     func() time.Time          // nil means time.Now
	OnEvent func(contracts.ToolEvent) // nil means no events
	Redact  func(args string) string  // redacts arguments for events; nil keeps them
	Logger  *slog.Logger              // nil means slog.Default()
	// Starting is told, and must succeed, before the owner's approved call
	// runs in a resumed turn: the daemon records that it starts, so a
	// crash after it is reported as "may have run", never as "not run",
	// and a call whose start was not recorded never runs. nil: nothing to
	// tell (tests of the loop alone).
	Starting func(ctx context.Context, callID string) error
	// Record is told a resumed turn's messages so far (the parked ones and
	// the decided call's result) before the model is asked again, and must
	// succeed: the daemon records the exchange, so no crash after it loses
	// it. nil: nothing to tell.
	Record func(ctx context.Context, msgs []contracts.Message) error

	// profile, when set (Serve), gets a mark for each model request, its
	// answer and each tool call.
	profile *profile
}

// Run runs one turn and returns its result. It never fails: a model that
// cannot be reached, a deadline or a cancellation end the turn with a reply
// that says so and with Result.Stopped set.
func (l *Loop) Run(ctx context.Context, job contracts.Job) contracts.Result {
	now := l.Now
	if now == nil {
		now = time.Now
	}
	lim := job.Limits
	if lim.MaxToolCalls <= 0 {
		lim.MaxToolCalls = DefaultMaxToolCalls
	}
	if lim.Budget <= 0 {
		lim.Budget = DefaultBudget
	}
	if lim.Reserve <= 0 {
		lim.Reserve = DefaultReserve
	}
	deadline := job.Deadline
	if deadline.IsZero() {
		deadline = now().Add(lim.Budget)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	t := &turn{loop: l, now: now, lim: lim, deadline: deadline}
	t.history = job.HistoryLen
	if len(job.Specs) > 0 {
		t.held = make(map[string]bool, len(job.Specs))
		for _, d := range job.Specs {
			t.held[d] = true
		}
	}
	if r := job.Resume; r != nil {
		t.convo = append(t.convo, r.Messages...)
		t.res.Messages = append([]contracts.Message(nil), r.Messages...)
		t.resume(ctx, *r)
		if l.Record != nil {
			if err := l.Record(ctx, t.res.Messages); err != nil {
				t.stop(contracts.StopError, "shelldon could not record the decided call's result, so the turn stops here: "+err.Error())
				return t.res
			}
		}
	} else {
		user := contracts.Message{Role: contracts.RoleUser, Text: job.Input}
		t.convo = append(t.convo, user)
		t.res.Messages = []contracts.Message{user}
	}
	t.run(ctx, job.System)
	return t.res
}

// resume runs (or, denied, answers for) the call the turn was parked at,
// and adds its result to the results of its assistant message.
func (t *turn) resume(ctx context.Context, r contracts.Resume) {
	res := contracts.ToolResult{CallID: r.Call.ID, Name: r.Call.Name, Content: contracts.DeniedByOwner}
	if r.Note != "" {
		res.Content = r.Note
	}
	if r.Approved {
		hash, err := contracts.ArgsHash(r.Call.Name, r.Call.Arguments, r.Binding)
		if err != nil || hash != r.ArgsHash {
			res.Content = "not run: the call does not match what the owner approved"
		} else if err := t.starting(ctx, r.Call.ID); err != nil {
			res.Content = "not run: shelldon could not record that the call starts (" + err.Error() + "); it was not run"
		} else {
			t.approved = r.Call.ID
			res = t.call(WithBinding(ctx, r.Binding), r.Call)
			t.approved = ""
		}
	}
	if n := len(t.res.Messages); n > 0 && t.res.Messages[n-1].Role == contracts.RoleTool {
		last := &t.res.Messages[n-1]
		last.ToolResults = append(last.ToolResults, res)
		t.convo[len(t.convo)-1] = *last
		return
	}
	t.append(contracts.Message{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{res}})
}

// starting tells the daemon the approved call callID starts.
func (t *turn) starting(ctx context.Context, callID string) error {
	if t.loop.Starting == nil {
		return nil
	}
	return t.loop.Starting(ctx, callID)
}

// turn is the state of one Run.
type turn struct {
	loop     *Loop
	now      func() time.Time
	lim      contracts.Limits
	deadline time.Time
	convo    []contracts.Message // this turn's messages, sent to the model after the history
	history  int                 // how many messages of history the daemon holds (Job.HistoryLen)
	held     map[string]bool     // the digests of the tool specs the daemon holds (Job.Specs)
	res      contracts.Result
	lastText string // the model's latest words, for an early stop
	approved string // the id of the one RISKY call the owner approved, while it runs
	requests int    // the model requests made so far
}

func (t *turn) append(m contracts.Message) {
	t.convo = append(t.convo, m)
	t.res.Messages = append(t.res.Messages, m)
}

func (t *turn) left() time.Duration { return t.deadline.Sub(t.now()) }

// named is specs with those the daemon holds named by their digest
// (contracts.ToolSpec.Digest) rather than sent.
func (t *turn) named(specs []contracts.ToolSpec) []contracts.ToolSpec {
	if len(t.held) == 0 {
		return specs
	}
	for i, s := range specs {
		if d := contracts.SpecDigest(s); t.held[d] {
			specs[i] = contracts.ToolSpec{Name: s.Name, Digest: d}
		}
	}
	return specs
}

func (t *turn) run(ctx context.Context, system string) {
	emptyReplies := 0
	for {
		if ctx.Err() != nil && t.left() > 0 {
			t.stop(contracts.StopCancelled, "")
			return
		}
		if t.left() < t.lim.Reserve {
			t.stop(contracts.StopDeadline, "")
			return
		}
		// The daemon holds the job's history: the request names it
		// (contracts.Request.History) and carries this turn's messages.
		req := contracts.Request{System: system, History: t.history, Messages: t.convo, MaxTokens: t.lim.MaxTokens}
		limitReached := t.res.ToolCalls >= t.lim.MaxToolCalls
		if limitReached {
			req.System = strings.TrimSpace(system + "\n\n" + fmt.Sprintf(
				"You have used all %d tool calls of this turn. Answer the owner now with what you have.", t.lim.MaxToolCalls))
		} else {
			req.Tools = t.named(t.loop.Tools.Specs())
		}
		// The model call may last until the turn's deadline: the daemon's
		// broker stops waiting a margin before it and answers with the
		// reason (the provider that sent nothing, its host, what never
		// came), which this worker must still be waiting to read; the
		// turn's own deadline is the backstop. The reserve checked above
		// keeps the calls from starting when no answer could come.
		t.requests++
		t.loop.profile.mark(stepRequestSent(t.requests))
		comp, err := t.loop.Model.Complete(ctx, req)
		t.loop.profile.mark(stepAnswerReceived(t.requests))
		t.res.Usage = t.res.Usage.Add(comp.Usage)
		if comp.Provider != "" {
			t.res.Provider, t.res.Model = comp.Provider, comp.Model
		}
		if err != nil {
			var remote *wire.RemoteError
			switch {
			case ctx.Err() != nil && t.left() > 0:
				t.stop(contracts.StopCancelled, "")
			case errors.As(err, &remote):
				// The daemon answered with the reason (a reply over its
				// caps, every provider down): the owner reads it, even
				// when little time is left; a call that ran out of time
				// gets no such answer.
				t.stop(contracts.StopError, fmt.Sprintf("I could not get an answer from the model: %v", err))
			case t.left() < t.lim.Reserve || errors.Is(err, context.DeadlineExceeded):
				t.stop(contracts.StopDeadline, "")
			default:
				t.stop(contracts.StopError, fmt.Sprintf("I could not get an answer from the model: %v", err))
			}
			return
		}
		msg := comp.Message
		msg.Role = contracts.RoleAssistant
		if limitReached {
			msg.ToolCalls = nil // none were offered; a server that sends some anyway is ignored
		}
		if msg.Text != "" {
			t.lastText = msg.Text
		}
		if strings.TrimSpace(msg.Text) == "" && len(msg.ToolCalls) == 0 {
			emptyReplies++
			if emptyReplies < 2 {
				continue // one more try: empty replies are often transient
			}
			t.stop(contracts.StopError, "The model returned an empty reply twice; please try again or rephrase.")
			return
		}
		if len(msg.ToolCalls) == 0 {
			t.append(msg)
			t.res.Reply = msg.Text
			return
		}
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" { // some OpenAI-compatible servers omit ids
				msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", len(t.res.Messages), i)
			}
		}
		// The first RISKY call parks the turn: the calls before it run, the
		// ones after it are dropped, so every call left in the message gets
		// a result, now or on resume.
		risky := -1
		for i, call := range msg.ToolCalls {
			if tool, ok := t.loop.Tools.Get(call.Name); ok && tool.Tier == contracts.TierRisky {
				risky = i
				break
			}
		}
		if risky >= 0 {
			msg.ToolCalls = msg.ToolCalls[:risky+1]
		}
		t.append(msg)
		results := make([]contracts.ToolResult, 0, len(msg.ToolCalls))
		for i, call := range msg.ToolCalls {
			if i == risky {
				break
			}
			results = append(results, t.call(ctx, call))
		}
		if risky >= 0 {
			call, binding, refusal := t.prepareRisky(ctx, msg.ToolCalls[risky])
			if refusal == nil {
				if len(results) > 0 {
					t.append(contracts.Message{Role: contracts.RoleTool, ToolResults: results})
				}
				t.res.Stopped = contracts.StopApproval
				t.res.Pending = &contracts.Pending{
					Messages:  append([]contracts.Message(nil), t.res.Messages...),
					Call:      call,
					ModelText: msg.Text,
					Binding:   binding,
				}
				return
			}
			results = append(results, *refusal)
		}
		t.append(contracts.Message{Role: contracts.RoleTool, ToolResults: results})
	}
}

// prepareRisky readies a RISKY call for the owner: its arguments filtered,
// validated and canonical, and the tool's own check passed. A call that
// could never run is answered at once (the refusal) instead of asking, and
// leaves an end event naming the guard, for the audit trail and every
// transport.
func (t *turn) prepareRisky(ctx context.Context, call contracts.ToolCall) (contracts.ToolCall, string, *contracts.ToolResult) {
	refuse := func(guard, why string) (contracts.ToolCall, string, *contracts.ToolResult) {
		args := call.Arguments
		if t.loop.Redact != nil {
			args = t.loop.Redact(args)
		}
		content := failure(why)
		t.emit(contracts.ToolEvent{Phase: contracts.PhaseEnd, CallID: call.ID, Tool: call.Name, Arguments: args,
			Summary: capText("refused by "+guard+": "+why, summaryBytes), Guard: guard})
		return call, "", &contracts.ToolResult{CallID: call.ID, Name: call.Name, Content: content}
	}
	if t.res.ToolCalls >= t.lim.MaxToolCalls {
		return refuse("the turn's limit", fmt.Sprintf("not run: the limit of %d tool calls per turn is reached; answer with what you have", t.lim.MaxToolCalls))
	}
	tool, _ := t.loop.Tools.Get(call.Name)
	args, err := PrepareArguments(tool, call.Arguments)
	if err != nil {
		return refuse("the argument check (the tool's schema)", err.Error())
	}
	guard := tool.Guard
	if guard == "" {
		guard = "the " + tool.Name + " check"
	}
	if tool.Check != nil {
		if err := tool.Check(ctx, args); err != nil {
			return refuse(guard, err.Error())
		}
	}
	canon, err := contracts.CanonicalArgs(string(args))
	if err != nil {
		return refuse("the argument check (canonical form)", err.Error())
	}
	binding := ""
	if tool.Bind != nil {
		if binding, err = tool.Bind(ctx, args); err != nil {
			return refuse(guard, err.Error())
		}
	}
	call.Arguments = canon
	return call, binding, nil
}

// call runs one tool call, or explains to the model why it did not run.
// Every call gets a result, so the conversation stays well-formed.
func (t *turn) call(ctx context.Context, call contracts.ToolCall) contracts.ToolResult {
	res := contracts.ToolResult{CallID: call.ID, Name: call.Name}
	if t.res.ToolCalls >= t.lim.MaxToolCalls {
		res.Content = fmt.Sprintf("not run: the limit of %d tool calls per turn is reached; answer with what you have", t.lim.MaxToolCalls)
		return res
	}
	if t.left() < t.lim.Reserve {
		res.Content = "not run: this turn's time budget is used up; answer with what you have"
		return res
	}
	t.res.ToolCalls++
	args := call.Arguments
	if t.loop.Redact != nil {
		args = t.loop.Redact(args)
	}
	t.emit(contracts.ToolEvent{Phase: contracts.PhaseStart, CallID: call.ID, Tool: call.Name, Arguments: args})
	start := t.now()
	out, err := t.execute(ctx, call)
	res.OK = err == nil
	if err != nil {
		res.Content = failure(err.Error())
	} else {
		res.Content = capText(out, MaxResultBytes)
	}
	t.emit(contracts.ToolEvent{
		Phase: contracts.PhaseEnd, CallID: call.ID, Tool: call.Name, Arguments: args,
		OK: res.OK, Summary: capText(res.Content, summaryBytes), Duration: t.now().Sub(start),
	})
	if t.loop.profile != nil {
		name := "?"
		if _, ok := t.loop.Tools.Get(call.Name); ok {
			name = call.Name
		}
		t.loop.profile.mark(stepToolRan(name))
	}
	return res
}

func (t *turn) emit(ev contracts.ToolEvent) {
	if t.loop.OnEvent != nil {
		t.loop.OnEvent(ev)
	}
}

// execute checks the call against the registry and the tool's schema, then
// runs it with the time the turn has left, containing a panic.
func (t *turn) execute(ctx context.Context, call contracts.ToolCall) (string, error) {
	tool, ok := t.loop.Tools.Get(call.Name)
	if !ok {
		names := make([]string, 0)
		for _, tl := range t.loop.Tools.Tools() {
			names = append(names, tl.Name)
		}
		return "", fmt.Errorf("unknown tool %q; the tools are: %s", call.Name, strings.Join(names, ", "))
	}
	if tool.Tier == contracts.TierRisky && call.ID != t.approved {
		return "", fmt.Errorf("the tool %s needs the owner's approval for each call", call.Name)
	}
	args, err := PrepareArguments(tool, call.Arguments)
	if err != nil {
		return "", err
	}
	tctx, cancel := context.WithDeadline(ctx, t.deadline.Add(-t.lim.Reserve))
	defer cancel()
	type outcome struct {
		out string
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				t.logger().Error("tool panicked", "tool", call.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				done <- outcome{err: fmt.Errorf("the tool %s failed internally (panic: %v)", call.Name, p)}
			}
		}()
		out, err := tool.Run(tctx, args)
		done <- outcome{out, err}
	}()
	select {
	case o := <-done:
		return o.out, o.err
	case <-tctx.Done():
		// A tool that ignores its context is abandoned; the worker process
		// ends with the turn, so nothing outlives it.
		return "", fmt.Errorf("the tool %s did not finish within this turn's time budget", call.Name)
	}
}

func (t *turn) logger() *slog.Logger {
	if t.loop.Logger != nil {
		return t.loop.Logger
	}
	return slog.Default()
}

// PrepareArguments parses the model's argument text, drops properties the
// tool's schema does not declare, and validates the rest against it. The
// error says what is wrong in words a model can act on.
func PrepareArguments(tool *Tool, raw string) (json.RawMessage, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "null" {
		raw = "{}"
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON (%v); send one JSON object", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the arguments must be a JSON object, not %s", jsonKind(v))
	}
	resolved, err := tool.ResolveSchema()
	if err != nil {
		return nil, err
	}
	if s := tool.Schema; s != nil && s.Properties != nil && !allowsExtra(s.AdditionalProperties) {
		for k := range obj {
			if _, declared := s.Properties[k]; !declared {
				delete(obj, k)
			}
		}
	}
	if err := resolved.Validate(obj); err != nil {
		return nil, fmt.Errorf("invalid arguments: %v", err)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("re-encode arguments: %w", err)
	}
	return out, nil
}

// allowsExtra reports whether an additionalProperties schema admits
// undeclared properties; nil (unspecified) is treated as no, so arguments are
// always filtered to what the tool declares.
func allowsExtra(s *jsonschema.Schema) bool { return s != nil && s.Not == nil }

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// capText cuts s to at most n bytes on a rune boundary, saying how much was cut.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…[truncated %d bytes]", len(s)-cut)
}
