// Package selftools offers the worker's side of self-coding: the
// propose_tool tool, which runs the gate on a tool the model wrote and hands
// a passing one to the daemon for the owner's approval, and the live
// self-coded tools, each call of which runs in a sandboxed child. Model
// code never runs in the worker's own process.
package selftools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/worker"
)

// Sandbox runs a command in the sandbox.
type Sandbox interface {
	Run(ctx context.Context, p sandbox.Policy) (sandbox.Result, error)
}

// Env is what the self-coding tools work with.
type Env struct {
	Daemon        worker.Daemon
	Sandbox       Sandbox
	Binary        string // the shelldon binary, for its gate and toolcall child modes
	Tools         []contracts.SelfTool
	AllowDegraded bool
	Python        bool // python3 is available for Python tools
}

// Child-mode arguments of the binary.
var (
	GateArgs     = []string{"be-child", "gate"}
	ToolCallArgs = []string{"be-child", "toolcall"}
)

// GateRequest is what the gate child reads on stdin.
type GateRequest struct {
	Name     string `json:"name"`
	Language string `json:"language"`
	Code     string `json:"code"`
	Test     string `json:"test"`
}

// GateResult is what the gate child prints.
type GateResult struct {
	Passed       bool                `json:"passed"`
	Description  string              `json:"description,omitempty"`
	Parameters   json.RawMessage     `json:"parameters,omitempty"`
	Capabilities map[string][]string `json:"capabilities,omitempty"`
	Report       string              `json:"report"`
}

// CallRequest is what the toolcall child reads on stdin.
type CallRequest struct {
	Tool contracts.SelfTool `json:"tool"`
	Args json.RawMessage    `json:"args"`
}

// CallResult is what the toolcall child prints.
type CallResult struct {
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Limits of the children.
var (
	gateLimits = sandbox.Limits{CPUSeconds: 30, DataBytes: 256 << 20, FileBytes: 8 << 20, OpenFiles: 64, Processes: 32}
	callLimits = sandbox.Limits{CPUSeconds: 10, DataBytes: 128 << 20, FileBytes: 1 << 20, OpenFiles: 64, Processes: 16}
)

const (
	gateTimeout = 30 * time.Second
	callTimeout = 10 * time.Second
)

// Register adds propose_tool and every live self-coded tool to reg. A
// self-coded tool never shadows a built-in: one whose name is taken is
// left out.
func Register(reg *worker.Registry, env Env) error {
	pt, err := proposeTool(env)
	if err != nil {
		return err
	}
	if err := reg.Add(pt); err != nil {
		return err
	}
	for _, st := range env.Tools {
		if _, taken := reg.Get(st.Name); taken {
			continue
		}
		t := selfTool(env, st)
		if err := reg.Add(t); err != nil {
			return fmt.Errorf("selftools: %s: %w", st.Name, err)
		}
	}
	return nil
}

// runChild runs a child mode of the binary in the sandbox with a JSON
// request on stdin and decodes its JSON answer from stdout.
func runChild(ctx context.Context, env Env, args []string, req any, pol sandbox.Policy, out any) error {
	in, err := json.Marshal(req)
	if err != nil {
		return err
	}
	pol.Argv = append([]string{env.Binary}, args...)
	pol.Stdin = in
	pol.Env = sandbox.Env()
	pol.AllowDegraded = env.AllowDegraded
	pol.ReadOnly = append(pol.ReadOnly, env.Binary)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < pol.Timeout {
		pol.Timeout = time.Until(dl)
	}
	res, err := env.Sandbox.Run(ctx, pol)
	if err != nil {
		return err
	}
	if res.TimedOut {
		return fmt.Errorf("it did not finish within %s and was killed", pol.Timeout)
	}
	if err := json.Unmarshal(res.Stdout, out); err != nil {
		why := "it ended without an answer"
		switch {
		case res.Signal != "":
			why = "it was killed by " + res.Signal + " (a limit: CPU time, memory or processes)"
		case res.ExitCode != 0:
			why = fmt.Sprintf("it exited with status %d (out of memory or crashed): %s", res.ExitCode, trim(string(res.Stderr), 500))
		}
		return fmt.Errorf("%s", why)
	}
	return nil
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
