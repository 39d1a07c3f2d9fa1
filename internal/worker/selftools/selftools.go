// Package selftools offers the worker's side of self-coding: the
// propose_tool tool, which runs the gate on a tool the model wrote and hands
// a passing one to the daemon for the owner's approval, and the live
// self-coded tools, each call of which runs in a sandboxed child. Model
// code never runs in the worker's own process.
//
// # No capability from the kernel
//
// Code shelldon did not write never gets a capability from the kernel: the
// gate and every call of a self-coded tool, whatever the tool was granted,
// run in the same sandbox (ToolCallPolicy, GatePolicy): an empty network
// namespace with nothing but a loopback that is down, so the code can
// neither connect nor be connected to, not even on the machine's own
// loopback (the daemon's API, a local model server).
//
// A capability is a host call served from outside the sandbox. The toolcall
// child (shelldon's own Go code, in the sandbox) talks to the worker over
// its standard input and output in wire's calls (a TypeCall frame with a
// sequence number and a method, answered by the TypeReply frame of that
// number with a body or an error):
//
//	worker → child: call MethodRun (CallRequest), first and once
//	child → worker: call MethodHTTPGet (HTTPGet), any number
//	worker → child: the reply to each (HTTPResponse, or an error)
//	child → worker: the reply to MethodRun (CallResult, or the tool's
//	                error), last; the worker stops there
//
// The worker serves the host calls with a wire.Handlers table built from
// the contracts.SelfTool the daemon gave it (never from anything the child
// says), with its own caps: at most MaxHostCalls per call, URLs of at most
// MaxURL bytes, bodies of at most MaxHTTPBody bytes, and the call's
// deadline. MethodHTTPGet fetches through netguard from the granted hosts
// only. Everything the worker reads from the child is hostile: each frame is
// capped at MaxChildFrame before anything is allocated, garbage, an
// unexpected frame or a reply to a call the worker did not make ends the
// call, and the worker stops serving when the child exits or the deadline
// passes. A forged result is only that tool's own output. A later
// capability is one more method in that table (hostCalls) on the same
// channel; the sandbox does not change.
//
// The gate grants nothing: it runs with no channel at all (its request on
// stdin, its report on stdout), and a tested tool's http fails closed.
package selftools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/netguard"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/worker"
)

// Sandbox runs a command in the sandbox: Run with its input given and its
// output collected, Start with standard streams of the caller's.
type Sandbox interface {
	Run(ctx context.Context, p sandbox.Policy) (sandbox.Result, error)
	Start(ctx context.Context, p sandbox.Policy, stdin io.Reader, stdout, stderr io.Writer) (*sandbox.Process, error)
}

// Env is what the self-coding tools work with.
type Env struct {
	Daemon        worker.Daemon
	Sandbox       Sandbox
	Binary        string // the shelldon binary, for its gate and toolcall child modes
	Tools         []contracts.SelfTool
	AllowDegraded bool
	Python        bool // python3 is available for Python tools
	// Search offers find_tools (Tools are only some of the live tools,
	// contracts.Job.ToolSearch), which asks Finder for more.
	Search bool
	Finder worker.ToolFinder
	// HTTP is the client that serves the http capability; nil means
	// netguard with a MaxHTTPBody cap and no redirects followed. Tests
	// inject one whose resolver and AllowAddr serve a test host from
	// loopback; it must not follow redirects either.
	HTTP *netguard.Client
	// LAN is the owner's http.allow_hosts, for the default HTTP client: a
	// tool granted a host of the owner's network reaches it only when the
	// owner listed it there (on its ports, at its addresses).
	LAN netguard.LAN
	// PyCache is the directory of the Python gate's code cache
	// (pytool.BuildGateCache), which the daemon writes and every sandbox
	// sees read-only; "" for none (the gate compiles its scripts).
	PyCache string
}

// Child-mode arguments of the binary.
var (
	GateArgs     = []string{"be-child", "gate"}
	ToolCallArgs = []string{"be-child", "toolcall"}
)

// GateMode is the sandbox helper's in-process mode that runs a Python
// tool's gate (sandbox.Policy.Mode): the helper, PID 1 of the gate's
// sandbox, runs it once the sandbox is built instead of starting the binary
// a second time (a process start and the Go runtime's). The model's code
// runs in the python3 it starts from its locked thread, the one the helper
// confined, so that process has every layer a target has
// (TestGatePythonIsConfined). A Starlark gate is not run this way: the
// model's code would run in the helper's own threads, of which only that
// one has the Landlock domain and has dropped the capabilities of the
// sandbox's user namespace; it runs as an exec'd target, all of whose
// threads have every layer.
const GateMode = "gate"

// GateRequest is what the gate child reads on stdin.
type GateRequest struct {
	Name     string `json:"name"`
	Language string `json:"language"`
	Code     string `json:"code"`
	Test     string `json:"test"`
	// PyCache is Env.PyCache: set by the worker, never from the model's
	// arguments; the gate's sandbox sees it read-only.
	PyCache string `json:"py_cache,omitempty"`
}

// GateResult is what the gate child prints.
type GateResult struct {
	Passed       bool                `json:"passed"`
	Description  string              `json:"description,omitempty"`
	Parameters   json.RawMessage     `json:"parameters,omitempty"`
	Capabilities map[string][]string `json:"capabilities,omitempty"`
	Report       string              `json:"report"`
}

// Methods of a tool call's channel (see the package doc), with the bodies
// of the call and of its reply.
const (
	MethodRun     = "run"      // worker → child: CallRequest → CallResult
	MethodHTTPGet = "http_get" // child → worker: HTTPGet → HTTPResponse
)

// Caps of the channel and of the host calls, per tool call.
const (
	MaxHostCalls   = 32        // host calls of any kind; more are refused
	MaxURL         = 8 << 10   // bytes of an http_get URL
	MaxHTTPBody    = 256 << 10 // bytes of a response body; a longer one is refused
	MaxChildFrame  = 256 << 10 // a frame the child sends (a host call, its result)
	MaxWorkerFrame = 4 << 20   // a frame the worker sends (the run call, a reply)
	MaxResultText  = 32 << 10  // bytes of a result or error the worker passes on
)

// CallRequest is the body of the MethodRun call, the first frame the
// toolcall child reads.
type CallRequest struct {
	Tool contracts.SelfTool `json:"tool"`
	Args json.RawMessage    `json:"args"`
}

// CallResult is the body of the child's reply to MethodRun, the last frame
// it sends: the tool's output. The tool's error is the reply's error.
type CallResult struct {
	Result string `json:"result,omitempty"`
}

// HTTPGet is the body of a MethodHTTPGet call: the http capability.
type HTTPGet struct {
	URL string `json:"url"`
}

// HTTPResponse is the body of the reply to a MethodHTTPGet call.
type HTTPResponse struct {
	Status int    `json:"status,omitempty"`
	Body   []byte `json:"body,omitempty"`
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

// ToolCallPolicy is the sandbox of every call of a self-coded tool whose
// files are in dir: the toolcall child of env.Binary, no network at all,
// the tool's directory read-only, callLimits and callTimeout. It takes no
// capability: a granted one is a host call (see the package doc), never a
// hole in the sandbox.
func ToolCallPolicy(env Env, dir string) sandbox.Policy {
	return sandbox.Policy{
		Argv:          append([]string{env.Binary}, ToolCallArgs...),
		Env:           sandbox.Env(),
		ReadOnly:      []string{dir, env.Binary},
		Network:       false,
		Timeout:       callTimeout,
		Limits:        callLimits,
		MaxOutput:     64 << 10,
		AllowDegraded: env.AllowDegraded,
	}
}

// GatePolicy is the sandbox of the gate of a tool in language: the gate
// child of env.Binary (for Python run in the sandbox helper itself,
// GateMode), no network, gateLimits and gateTimeout, and the Python gate's
// code cache (env.PyCache) read-only.
func GatePolicy(env Env, language string) sandbox.Policy {
	ro := []string{env.Binary}
	mode := ""
	if language == selfcode.Python {
		mode = GateMode
		if env.PyCache != "" {
			ro = append(ro, env.PyCache)
		}
	}
	return sandbox.Policy{
		Argv:          append([]string{env.Binary}, GateArgs...),
		Mode:          mode,
		Env:           sandbox.Env(),
		ReadOnly:      ro,
		Network:       false,
		Timeout:       gateTimeout,
		Limits:        gateLimits,
		MaxOutput:     256 << 10,
		AllowDegraded: env.AllowDegraded,
	}
}

// Register adds propose_tool, every live self-coded tool of env.Tools and,
// with env.Search, find_tools to reg. A
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
	if env.HTTP == nil {
		env.HTTP = netguard.NewClient(netguard.Options{MaxBytes: MaxHTTPBody, MaxRedirects: -1, LAN: env.LAN})
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
	if env.Search {
		ft, err := FindTool(reg, env.Finder, func(st contracts.SelfTool) *worker.Tool { return selfTool(env, st) })
		if err != nil {
			return err
		}
		if err := reg.Add(ft); err != nil {
			return err
		}
	}
	return nil
}

// runChild runs a child mode in the sandbox of pol with a JSON request on
// stdin and decodes its JSON answer from stdout (the gate).
func runChild(ctx context.Context, env Env, req any, pol sandbox.Policy, out any) error {
	in, err := json.Marshal(req)
	if err != nil {
		return err
	}
	pol.Stdin = in
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
		return noAnswer(res)
	}
	return nil
}

// noAnswer says why a child ended without an answer.
func noAnswer(res sandbox.Result) error {
	switch {
	case res.Signal != "":
		return fmt.Errorf("it was killed by %s (a limit: CPU time, memory or processes)", res.Signal)
	case res.ExitCode != 0:
		return fmt.Errorf("it exited with status %d (out of memory or crashed): %s", res.ExitCode, trim(string(res.Stderr), 500))
	}
	return fmt.Errorf("it ended without an answer")
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
