//go:build !linux

package sandbox

import (
	"context"
	"io"
)

// Runner refuses to run anything on systems without Linux namespaces.
type Runner struct{}

// NewRunner returns a Runner that refuses sandboxed execution.
func NewRunner(string) (*Runner, error) { return &Runner{}, nil }

// Run refuses: sandboxed execution needs Linux.
func (r *Runner) Run(context.Context, Policy) (Result, error) { return Result{}, ErrUnsupported }

// Probe reports every required layer missing.
func (r *Runner) Probe(context.Context) Tier {
	var t Tier
	for _, name := range required {
		t.Layers = append(t.Layers, Layer{Name: name, Required: true, Detail: ErrUnsupported.Error()})
	}
	return t
}

// Helper is not available off Linux.
func Helper(map[string]func() int) int { return 125 }

// Process is never started off Linux.
type Process struct{}

// Start refuses: sandboxed execution needs Linux.
func (r *Runner) Start(context.Context, Policy, io.Reader, io.Writer, io.Writer) (*Process, error) {
	return nil, ErrUnsupported
}

// Pid is 0: there is no process.
func (*Process) Pid() int { return 0 }

// Kill does nothing.
func (*Process) Kill() {}

// Wait refuses.
func (*Process) Wait() (Result, error) { return Result{}, ErrUnsupported }

// Known does nothing off Linux.
func (r *Runner) Known(Tier) {}

// FreeSpace is not measured off Linux.
func FreeSpace(string) (uint64, error) { return 0, ErrUnsupported }

// FreeInodes is not measured off Linux.
func FreeInodes(string) (free, floor, total uint64, err error) { return 0, 0, 0, ErrUnsupported }
