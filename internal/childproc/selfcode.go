package childproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/selfcode/pytool"
	"github.com/shelldon/shelldon/internal/selfcode/starlarktool"
	"github.com/shelldon/shelldon/internal/wire"
	"github.com/shelldon/shelldon/internal/worker/selftools"
)

// The gate and toolcall modes run inside the sandbox the worker builds for
// them (never any network, a private /tmp, rlimits, seccomp, Landlock):
// model code only ever runs here.

// gateMode is the gate, run by the sandbox helper in its own process
// (selftools.GateMode) or as `be-child gate`. In the helper it runs on the
// helper's locked, confined thread (sandbox.Helper), and pytool starts
// python3 from it, synchronously: the child inherits the thread's Landlock
// domain with the rest of the sandbox. The helper is already not dumpable.
func gateMode(stdin io.Reader, stdout io.Writer, logger *slog.Logger) int {
	if err := hideFromChildren(); err != nil {
		return exitOf(err, logger)
	}
	return exitOf(runGate(stdin, stdout), logger)
}

// runGate checks a proposed tool and runs its test; it prints a
// selftools.GateResult.
func runGate(stdin io.Reader, stdout io.Writer) error {
	debug.SetMemoryLimit(192 << 20)
	var req selftools.GateRequest
	if err := json.NewDecoder(io.LimitReader(stdin, 1<<20)).Decode(&req); err != nil {
		return fmt.Errorf("gate: read request: %w", err)
	}
	res := gate(req)
	return json.NewEncoder(stdout).Encode(res)
}

func gate(req selftools.GateRequest) selftools.GateResult {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	fail := func(format string, args ...any) selftools.GateResult {
		return selftools.GateResult{Report: "FAILED: " + fmt.Sprintf(format, args...)}
	}
	var res selftools.GateResult
	switch req.Language {
	case selfcode.Starlark:
		meta, err := starlarktool.Inspect([]byte(req.Code))
		if err != nil {
			return fail("static checks of the code: %v", err)
		}
		if err := starlarktool.CheckTest([]byte(req.Test)); err != nil {
			return fail("static checks of the test: %v", err)
		}
		// The gate grants nothing: a test of an http tool runs with http
		// failing closed, so tests must not depend on the network.
		rep := starlarktool.RunTests(ctx, []byte(req.Code), []byte(req.Test), starlarktool.Host{}, starlarktool.Limits{})
		res = selftools.GateResult{Passed: rep.Passed, Description: meta.Description, Parameters: meta.ParamsSchema,
			Capabilities: meta.Capabilities, Report: starlarkReport(rep)}
	case selfcode.Python:
		dir, err := os.MkdirTemp("", "gate-")
		if err != nil {
			return fail("%v", err)
		}
		defer os.RemoveAll(dir)
		// The checks and, if they pass, the test, in one python3 process.
		meta, rep, err := pytool.Gate(ctx, "python3", req.PyCache, dir, req.Name, []byte(req.Code), []byte(req.Test), 20*time.Second)
		switch {
		case pytool.IsCheckFailure(err):
			return fail("static checks: %v", err)
		case err != nil:
			return fail("test run: %v", err)
		}
		res = selftools.GateResult{Passed: rep.Passed, Description: meta.Description, Parameters: meta.ParamsSchema,
			Capabilities: meta.Capabilities, Report: pythonReport(rep)}
	default:
		return fail("unknown language %q", req.Language)
	}
	return res
}

// testLine is one test's outcome in a gate report, either language.
type testLine struct {
	name, message string
	ok            bool
}

func starlarkReport(rep starlarktool.TestReport) string {
	lines := make([]testLine, len(rep.Tests))
	for i, t := range rep.Tests {
		lines[i] = testLine{t.Name, t.Message, t.OK}
	}
	return formatReport(rep.Passed, rep.Duration, rep.Error, rep.Output, lines)
}

func pythonReport(rep pytool.TestReport) string {
	lines := make([]testLine, len(rep.Tests))
	for i, t := range rep.Tests {
		lines[i] = testLine{t.Name, t.Message, t.OK}
	}
	return formatReport(rep.Passed, rep.Duration, rep.Error, rep.Output, lines)
}

// formatReport is the gate report the model and the owner read.
func formatReport(passed bool, d time.Duration, errText, output string, tests []testLine) string {
	var b strings.Builder
	status := "PASSED"
	if !passed {
		status = "FAILED"
	}
	fmt.Fprintf(&b, "%s: %d test(s) in %s", status, len(tests), d.Round(time.Millisecond))
	if errText != "" {
		fmt.Fprintf(&b, "\nerror: %s", errText)
	}
	for _, t := range tests {
		mark := "ok  "
		if !t.ok {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "\n%s %s", mark, t.name)
		if t.message != "" {
			fmt.Fprintf(&b, ": %s", t.message)
		}
	}
	if output != "" {
		fmt.Fprintf(&b, "\noutput:\n%s", capString(output, 4096))
	}
	return b.String()
}

func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// runToolCall runs one call of a live self-coded tool over the channel of
// selftools (see its package doc): it reads the worker's
// selftools.MethodRun call, calls the worker for the tool's host calls and
// replies with the selftools.CallResult or the tool's error. The sandbox it
// runs in has no network: a granted capability is served by the worker,
// outside it.
func runToolCall(stdin io.Reader, stdout io.Writer) error {
	debug.SetMemoryLimit(96 << 20)
	return serveToolCall(stdin, stdout)
}

func serveToolCall(stdin io.Reader, stdout io.Writer) error {
	conn := wire.NewConn(stdin, stdout, selftools.MaxWorkerFrame)
	f, err := conn.Recv()
	if err != nil {
		return fmt.Errorf("toolcall: read request: %w", err)
	}
	if f.Type != wire.TypeCall || f.Method != selftools.MethodRun {
		return fmt.Errorf("toolcall: read request: a %q frame", f.Type)
	}
	var req selftools.CallRequest
	if err := f.Decode(&req); err != nil {
		return fmt.Errorf("toolcall: read request: %w", err)
	}
	worker := wire.NewClient(conn)
	// Only replies to the host calls come now; anything else ends them.
	go worker.Read(nil)
	out, err := toolCall(req, hostCalls{worker})
	// A result is at most 20 KiB, an error 12 KiB; either, even with every
	// byte escaped in JSON, fits the worker's frame cap.
	if err != nil {
		return conn.SendReplyError(f.Seq, capString(err.Error(), 12<<10))
	}
	return conn.SendReply(f.Seq, selftools.CallResult{Result: capString(out, 20<<10)})
}

func toolCall(req selftools.CallRequest, host hostCalls) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Second)
	defer cancel()
	st := req.Tool
	// The tool is read from its read-only directory and must be exactly the
	// version the owner approved.
	code, test, err := readVersion(st.Dir, st.Language, st.Name)
	if err != nil {
		return "", err
	}
	if selfcode.Hash(st.Language, code, test) != st.Hash {
		return "", errors.New("the tool's files changed since the owner approved it; refusing to run it")
	}
	// http is offered to a tool the request says was granted it, for clear
	// messages; the worker serves it only as its own grant says.
	var httpGet func(context.Context, string) (int, string, error)
	if len(st.Capabilities["http"]) > 0 {
		httpGet = host.httpGet
	}
	switch st.Language {
	case selfcode.Starlark:
		return starlarktool.Call(ctx, []byte(code), req.Args, starlarktool.Host{HTTPGet: httpGet}, starlarktool.Limits{})
	case selfcode.Python:
		return pytool.Call(ctx, "python3", st.Dir, st.Name, req.Args, 8*time.Second, pytool.Host{HTTPGet: httpGet})
	}
	return "", fmt.Errorf("unknown language %q", st.Language)
}

func readVersion(dir, language, name string) (string, string, error) {
	codeName, testName := "tool.star", "tool_test.star"
	if language == selfcode.Python {
		codeName, testName = name+".py", "test_"+name+".py"
	}
	code, err := os.ReadFile(filepath.Join(dir, codeName))
	if err != nil {
		return "", "", fmt.Errorf("read the tool: %w", err)
	}
	test, err := os.ReadFile(filepath.Join(dir, testName))
	if err != nil {
		return "", "", fmt.Errorf("read the tool's test: %w", err)
	}
	return string(code), string(test), nil
}

// hostCalls is the toolcall child's end of the host calls: each is a call
// of the worker, which serves it as its own grant says.
type hostCalls struct {
	worker *wire.Client
}

// httpGet is the http capability, as the worker serves it.
func (h hostCalls) httpGet(ctx context.Context, url string) (int, string, error) {
	if len(url) > selftools.MaxURL {
		return 0, "", fmt.Errorf("http: the URL is %d bytes long; the limit is %d", len(url), selftools.MaxURL)
	}
	var resp selftools.HTTPResponse
	err := h.worker.Call(ctx, selftools.MethodHTTPGet, selftools.HTTPGet{URL: url}, &resp)
	var refused *wire.RemoteError
	switch {
	case err == nil:
		return resp.Status, string(resp.Body), nil
	case errors.As(err, &refused), ctx.Err() != nil:
		return 0, "", err
	}
	return 0, "", fmt.Errorf("%s: the worker did not answer (%v)", selftools.MethodHTTPGet, err)
}
