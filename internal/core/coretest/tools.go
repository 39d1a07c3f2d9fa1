package coretest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/worker"
)

// Tools makes some of the tools of one worker. Each worker gets tools of
// its own, as a worker process would.
type Tools func(job contracts.Job, d worker.Daemon) []*worker.Tool

// Builder is a worker.Builder of a registry holding the tools of sets.
func Builder(sets ...Tools) worker.Builder {
	return func(job contracts.Job, d worker.Daemon) (*worker.Registry, func(), error) {
		reg := worker.NewRegistry()
		for _, set := range sets {
			for _, t := range set(job, d) {
				if err := reg.Add(t); err != nil {
					return nil, nil, err
				}
			}
		}
		return reg, func() {}, nil
	}
}

func must(t *worker.Tool, err error) *worker.Tool {
	if err != nil {
		panic(err)
	}
	return t
}

// TextArgs are the arguments of Echo.
type TextArgs struct {
	Text string `json:"text"`
}

// Echo is a FREE tool called name that answers its text.
func Echo(name string) Tools {
	return func(contracts.Job, worker.Daemon) []*worker.Tool {
		return []*worker.Tool{must(worker.NewTool(name, "Answers its text.", contracts.TierFree,
			func(_ context.Context, in TextArgs) (string, error) { return in.Text, nil }))}
	}
}

// RiskyArgs are the arguments of a Risky tool.
type RiskyArgs struct {
	Target  string `json:"target"`
	Content string `json:"content,omitempty"`
}

// Risky is a RISKY tool that records every run: the arguments it ran with,
// in canonical form (contracts.CanonicalArgs), which is how an approval
// holds them. Its guard (RiskyGuard) refuses, before the owner is asked,
// a target of RiskyForbidden.
type Risky struct {
	name string
	mu   sync.Mutex
	runs []string
}

// The guard of Risky and the target it refuses.
const (
	RiskyGuard     = "the coretest guard"
	RiskyForbidden = "/forbidden"
)

// NewRisky returns a RISKY tool called name.
func NewRisky(name string) *Risky { return &Risky{name: name} }

// Name is the tool's name.
func (r *Risky) Name() string { return r.name }

// Tools makes the tool for a worker; pass it to Builder.
func (r *Risky) Tools(contracts.Job, worker.Daemon) []*worker.Tool {
	t := must(worker.NewTool(r.name, "Changes something outside the turn.", contracts.TierRisky,
		func(_ context.Context, in RiskyArgs) (string, error) { return "changed " + in.Target, nil }))
	t.Guard = RiskyGuard
	t.Check = func(_ context.Context, args json.RawMessage) error {
		var in RiskyArgs
		if err := json.Unmarshal(args, &in); err != nil {
			return err
		}
		if in.Target == RiskyForbidden {
			return errors.New("that target is forbidden")
		}
		return nil
	}
	run := t.Run
	t.Run = func(ctx context.Context, args json.RawMessage) (string, error) {
		canon, err := contracts.CanonicalArgs(string(args))
		if err != nil {
			return "", err
		}
		r.mu.Lock()
		r.runs = append(r.runs, canon)
		r.mu.Unlock()
		return run(ctx, args)
	}
	return []*worker.Tool{t}
}

// Runs returns the arguments of every run so far, in order.
func (r *Risky) Runs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.runs...)
}

// SelfArgs are the arguments of the stand-ins of SelfTools.
type SelfArgs struct {
	Text string `json:"text,omitempty"`
	Fail bool   `json:"fail,omitempty"`
}

// ErrOnDemand is the failure of a SelfTools stand-in called with fail.
var ErrOnDemand = errors.New("coretest: failed on demand")

// SelfTools stands in for the live self-coded tools the job lists (what
// core discovered in its selfcode.Dir): one FREE tool of each name that
// answers its text, or fails when called with "fail": true, in the worker
// instead of a sandboxed child. A failure is what core counts as a strike.
func SelfTools(job contracts.Job, _ worker.Daemon) []*worker.Tool {
	var out []*worker.Tool
	for _, st := range job.SelfTools {
		out = append(out, must(worker.NewTool(st.Name, st.Description, contracts.TierFree,
			func(_ context.Context, in SelfArgs) (string, error) {
				if in.Fail {
					return "", fmt.Errorf("%s v%d: %w", st.Name, st.Version, ErrOnDemand)
				}
				return in.Text, nil
			})))
	}
	return out
}

// ProposeArgs are the arguments of Propose.
type ProposeArgs struct {
	Name        string `json:"name"`
	Code        string `json:"code"`
	Test        string `json:"test"`
	Description string `json:"description,omitempty"`
	Language    string `json:"language,omitempty"` // default starlark
}

// Gate is the gate report a Propose proposal carries.
const Gate = "coretest: no gate was run"

// Propose stands in for propose_tool: a FREE tool of that name that hands
// its proposal straight to the daemon (worker.Daemon.Propose), without
// running the gate, and answers with the daemon's reply.
func Propose(_ contracts.Job, d worker.Daemon) []*worker.Tool {
	return []*worker.Tool{must(worker.NewTool(contracts.ToolProposeTool, "Proposes a tool.", contracts.TierFree,
		func(ctx context.Context, in ProposeArgs) (string, error) {
			lang := in.Language
			if lang == "" {
				lang = selfcode.Starlark
			}
			got, err := d.Propose(ctx, contracts.Proposal{
				Name: in.Name, Language: lang, Code: in.Code, Test: in.Test, Description: in.Description,
				Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`), Gate: Gate,
			})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("proposed %s v%d (%s), request %s", in.Name, got.Version, got.Hash, got.ApprovalID), nil
		}))}
}
