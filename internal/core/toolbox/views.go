package toolbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// View is a tool as the owner's commands, GET /api/tools and Telegram's
// /tools show it.
type View struct {
	Name     string `json:"name"`
	Tier     string `json:"tier"`
	Runs     string `json:"runs"`   // where it runs: see contracts.Runs
	Source   string `json:"source"` // "builtin" or "self"
	State    string `json:"state"`
	Version  int    `json:"version,omitempty"`
	Language string `json:"language,omitempty"`
	Hash     string `json:"hash,omitempty"`
	Strikes  int    `json:"strikes,omitempty"`
	Summary  string `json:"summary,omitempty"` // a built-in's one line
}

// The sources of a View.
const (
	SourceBuiltin = "builtin"
	SourceSelf    = "self"
)

// states are the states Find looks in, in order.
var states = []string{selfcode.StateLive, selfcode.StateStaged, selfcode.StateQuarantined}

// Tools lists every built-in tool of the catalogue (contracts.BuiltinTools),
// in its order, then every self-coded one with its state. A self-coded tool
// is FREE and each call runs in a sandbox of its own.
func (t *Toolbox) Tools(ctx context.Context) ([]View, error) {
	builtins := contracts.BuiltinTools()
	out := make([]View, 0, len(builtins))
	for _, b := range builtins {
		out = append(out, View{Name: b.Name, Tier: string(b.Tier), Runs: string(b.Runs),
			Source: SourceBuiltin, State: selfcode.StateLive, Summary: b.Summary})
	}
	if t.dir == nil {
		return out, nil
	}
	for _, state := range states {
		list, err := t.dir.List(state)
		if err != nil {
			return nil, err
		}
		for _, m := range list {
			n, _ := t.st.Strikes(ctx, m.Name, m.Version)
			out = append(out, View{Name: m.Name, Tier: string(contracts.TierFree), Runs: string(contracts.RunsSandbox),
				Source: SourceSelf, State: state, Version: m.Version, Language: m.Language, Hash: m.Hash, Strikes: n})
		}
	}
	return out, nil
}

// Show returns a self-coded tool's manifest and source in a state.
func (t *Toolbox) Show(name, state string) (selfcode.Tool, error) {
	if t.dir == nil {
		return selfcode.Tool{}, selfcode.ErrNotFound
	}
	return t.dir.Load(state, name)
}

// Find returns the self-coded tool called name: its live version, else the
// one waiting for approval, else the quarantined one, and that state.
func (t *Toolbox) Find(name string) (selfcode.Tool, string, error) {
	for _, state := range states {
		tool, err := t.Show(name, state)
		if errors.Is(err, selfcode.ErrNotFound) {
			continue
		}
		return tool, state, err
	}
	return selfcode.Tool{}, "", selfcode.ErrNotFound
}

// Versions returns every version of the self-coded tool name that is
// kept, oldest first (selfcode.Dir.Versions).
func (t *Toolbox) Versions(name string) ([]selfcode.Tool, error) {
	if t.dir == nil {
		return nil, selfcode.ErrNotFound
	}
	return t.dir.Versions(name)
}

// Action carries out an owner's command on a self-coded tool (quarantine,
// restore, rollback, remove) and returns what to tell the owner.
func (t *Toolbox) Action(ctx context.Context, action, name, by string) (string, error) {
	if t.dir == nil {
		return "", selfcode.ErrNotFound
	}
	d := t.dir
	var err error
	var msg, kind string
	switch action {
	case "quarantine":
		err, kind, msg = d.Quarantine(name), auditQuarantined, name+" is quarantined: it is no longer offered."
	case "restore":
		var tool selfcode.Tool
		if tool, err = d.Load(selfcode.StateQuarantined, name); err == nil {
			if err = d.Restore(name); err == nil {
				t.st.ClearStrikes(ctx, name, tool.Version)
			}
		}
		kind, msg = auditRestored, name+" is live again, its strikes cleared."
	case "rollback":
		var m selfcode.Manifest
		m, err = d.Rollback(name)
		kind, msg = auditRolledBack, fmt.Sprintf("%s is back at version %d.", name, m.Version)
	case "remove":
		err, kind, msg = d.Remove(name), auditRemoved, name+" is removed (its versions are kept in the archive)."
	default:
		return "", fmt.Errorf("unknown action %q", action)
	}
	if err != nil {
		return "", err
	}
	t.Invalidate()
	t.record(ctx, "", 0, kind, name, "", "by "+by, true)
	return msg, nil
}
