// Package builtin holds the FREE built-in tools of DESIGN section 3:
// get_time, read_file, list_dir and eval, and about. Their names, tiers and
// parameter names are a contract, kept in the catalogue
// (contracts.BuiltinTools). Each tool's description for the model is the .md
// file beside its .go file.
//
// Invariant: the file tools reach the file system only through a
// workspace.Root, so every path the model names is jailed beneath the
// workspace and checked against the credential deny list (see package
// workspace); eval runs one Starlark expression with no I/O at all.
//
// eval is bounded here in steps and wall-clock time, not in memory:
// Starlark does not bound allocation, and a few steps can allocate
// gigabytes. The worker therefore sets Env.Eval to run each expression in a
// child process under RLIMIT_DATA (see package childproc), so a memory bomb
// costs a failed call, not the worker. The one memory guard here is a
// nesting limit on json.decode, whose recursion would otherwise overflow the
// Go stack.
package builtin

import (
	"context"
	"fmt"
	"time"

	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/workspace"
)

// Env is what the built-in tools need from the worker.
type Env struct {
	Workspace *workspace.Root
	Now       func() time.Time // default time.Now
	Location  *time.Location   // default time.Local
	// Eval evaluates one expression for the eval tool. The worker sets it to
	// run each expression in a memory-limited child process (Starlark does
	// not bound memory); nil evaluates in this process, for tests.
	Eval func(ctx context.Context, code string) (string, error)
}

// Register adds get_time, read_file, list_dir, eval and about to reg.
func Register(reg *worker.Registry, env Env) error {
	if env.Workspace == nil {
		return fmt.Errorf("builtin: no workspace")
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Location == nil {
		env.Location = time.Local
	}
	for _, build := range []func(Env) (*worker.Tool, error){
		getTimeTool,
		readFileTool,
		listDirTool,
		func(e Env) (*worker.Tool, error) { return evalTool(defaultEvalLimits, e.Eval) },
		aboutTool,
	} {
		t, err := build(env)
		if err != nil {
			return fmt.Errorf("builtin: %w", err)
		}
		if err := reg.Add(t); err != nil {
			return fmt.Errorf("builtin: %w", err)
		}
	}
	return nil
}
