// Package memorytools offers the long-term memory in the worker: remember
// and recall, both FREE. The daemon keeps the facts (in its store, outside
// the worker's view), so each tool is a request to it; it refuses a fact
// that looks like a secret. What a tool answers is data: a recalled fact
// is a quoted string, never an instruction.
package memorytools

import (
	"context"
	_ "embed"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/worker"
)

// Daemon serves the memory requests.
type Daemon interface {
	Memory(ctx context.Context, req contracts.MemoryRequest) (string, error)
}

//go:embed remember.md
var rememberDescription string

//go:embed recall.md
var recallDescription string

type rememberArgs struct {
	Fact string `json:"fact" jsonschema:"one durable fact in a short plain sentence that makes sense on its own, e.g. The owner's daughter Lea has violin lessons on Thursdays."`
}

type recallArgs struct {
	Query string `json:"query" jsonschema:"words the facts would contain, e.g. Lea violin"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many facts at most, 1 to 20; default 5"`
}

// Register adds remember and recall to reg.
func Register(reg *worker.Registry, d Daemon) error {
	remember, err := worker.NewBuiltin(contracts.ToolRemember, rememberDescription,
		func(ctx context.Context, in rememberArgs) (string, error) {
			return d.Memory(ctx, contracts.MemoryRequest{Op: contracts.MemoryRemember, Text: in.Fact})
		})
	if err != nil {
		return err
	}
	recall, err := worker.NewBuiltin(contracts.ToolRecall, recallDescription,
		func(ctx context.Context, in recallArgs) (string, error) {
			return d.Memory(ctx, contracts.MemoryRequest{Op: contracts.MemoryRecall, Query: in.Query, Limit: in.Limit})
		})
	if err != nil {
		return err
	}
	for _, t := range []*worker.Tool{remember, recall} {
		if err := reg.Add(t); err != nil {
			return err
		}
	}
	return nil
}
