package pytool

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

//go:embed py/runner.py
var runnerScript string

// Host is what a running tool may call back into. Each host function fails closed, in
// the tool, with "<capability> is not granted to this tool", unless it is set here; set
// only what the tool's approved CAPABILITIES grant.
type Host struct {
	// HTTPGet serves shelldon_host.http_get(url) -> (status, body). pytool passes the URL
	// as the tool gave it: HTTPGet must allow only the tool's granted hosts, go through
	// the SSRF-safe client, and return when ctx is done.
	HTTPGet func(ctx context.Context, url string) (status int, body string, err error)
}

const (
	maxHTTPCalls = 32      // per run or call
	maxHTTPBody  = 1 << 20 // bytes, per response
	maxURL       = 8 << 10
	maxEventLine = 1 << 20
	maxTests     = 1000 // as in runner.py
)

// TestResult is one test_* function's outcome.
type TestResult struct {
	Name    string
	OK      bool
	Message string // why it failed: the assertion or exception, and where
}

// TestReport is a test run, for the model and the owner.
type TestReport struct {
	Passed   bool         // every test ran and passed, and there was at least one
	Tests    []TestResult // in definition order, including those not run
	Output   string       // what the tool and tests printed, stdout and stderr, capped
	Duration time.Duration
	Error    string // what stopped the run as a whole: an import error, a timeout...
}

// RunTests runs test_<name>.py against <name>.py, both in dir and already checked, with
// python (a path to python3). Each test_* function runs in definition order, with a time
// limit of timeout/2 (SIGALRM in the runner); the whole run is killed, with its process
// group, at timeout. A failing or hanging test is in the report; the error is for a
// broken system (python3 cannot start, ctx cancelled).
func RunTests(ctx context.Context, python, dir, name string, timeout time.Duration, host Host) (TestReport, error) {
	s, err := run(ctx, python, dir, name, "test", nil, timeout, host, nil)
	if err != nil {
		return TestReport{}, err
	}
	return testReport(s, name, timeout), nil
}

// testReport reads a test run's report from the events of s (a "check" event, the
// gate's, is skipped).
func testReport(s session, name string, timeout time.Duration) TestReport {
	rep := TestReport{Output: s.output, Duration: s.duration}
	index := map[string]int{}
	finished := map[string]bool{}
	var collected []string
	done := false
	for _, ev := range s.events {
		switch ev.Event {
		case "collected":
			collected = ev.Names
		case "start":
			if _, dup := index[ev.Name]; !dup && len(rep.Tests) < maxTests {
				index[ev.Name] = len(rep.Tests)
				rep.Tests = append(rep.Tests, TestResult{Name: ev.Name})
			}
		case "result":
			if i, ok := index[ev.Name]; ok && !finished[ev.Name] {
				rep.Tests[i].OK, rep.Tests[i].Message = ev.OK, ev.Message
				finished[ev.Name] = true
			}
		case "import_error":
			rep.Error = ev.Message
		case "abort":
			rep.Error = ev.Message
			if i, ok := index[ev.Name]; ok && !finished[ev.Name] {
				rep.Tests[i].Message = "timed out, caught the timeout and did not stop"
				finished[ev.Name] = true
			}
		case "done":
			done = true
		}
	}
	for i, t := range rep.Tests {
		if !finished[t.Name] {
			rep.Tests[i].Message = "did not finish: " + s.stopped(timeout)
		}
	}
	for _, n := range collected {
		if _, ok := index[n]; !ok && len(rep.Tests) < maxTests {
			rep.Tests = append(rep.Tests, TestResult{Name: n, Message: "not run"})
		}
	}
	switch {
	case rep.Error != "":
	case !done:
		rep.Error = "the test run did not finish: " + s.stopped(timeout)
	case len(rep.Tests) == 0:
		rep.Error = fmt.Sprintf("no tests: test_%s.py defines no top-level test_* functions", name)
	}
	rep.Passed = rep.Error == "" && len(rep.Tests) > 0
	for _, t := range rep.Tests {
		rep.Passed = rep.Passed && t.OK
	}
	return rep
}

// Call runs <name>.py's run(**args) in dir with python, and returns its result as text: a
// str as it is, anything else as JSON (default=str), capped at MaxResult. The tool's own
// failures (an exception, a timeout, a crash) are a *ToolError; other errors mean a broken
// system. Call does not re-check the source: callers must Check it first.
func Call(ctx context.Context, python, dir, name string, args json.RawMessage, timeout time.Duration, host Host) (string, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return "", fmt.Errorf("pytool: call %s: the arguments must be a JSON object", name)
	}
	s, err := run(ctx, python, dir, name, "call", args, timeout, host, nil)
	if err != nil {
		return "", err
	}
	for _, ev := range s.events {
		switch ev.Event {
		case "return":
			v := capString(ev.Value, MaxResult)
			if ev.Truncated && v == ev.Value {
				v += "\n[... truncated]"
			}
			return v, nil
		case "error":
			return "", &ToolError{Message: ev.Message, Output: s.output}
		}
	}
	te := &ToolError{Message: "no result: " + s.stopped(timeout), Output: s.output}
	if s.timedOut {
		te.Err = ErrTimeout
	}
	return "", te
}

// event is one JSON line the runner writes on fd 3.
type event struct {
	Event     string   `json:"event"`
	Name      string   `json:"name"`
	Names     []string `json:"names"`
	OK        bool     `json:"ok"`
	Message   string   `json:"message"`
	Value     string   `json:"value"`
	Truncated bool     `json:"truncated"`
	// The gate's "check" event: the checker's answer and the seconds it took.
	Result  json.RawMessage `json:"result"`
	Seconds float64         `json:"seconds"`
}

// session is what one runner process left behind.
type session struct {
	events   []event
	output   string
	duration time.Duration
	timedOut bool
	waitErr  error
	protoErr error
}

// stopped says why a run ended early.
func (s session) stopped(timeout time.Duration) string {
	switch {
	case s.timedOut:
		return fmt.Sprintf("timed out after %s", timeout)
	case s.protoErr != nil:
		return "the runner's report was unreadable: " + s.protoErr.Error()
	case s.waitErr != nil:
		return "the process ended early: " + s.waitErr.Error()
	}
	return "the process ended early"
}

// run runs the runner (or, mode "gate", load.py, which runs the gate's prelude and the
// runner) and collects its events. stop, if not nil, sees each event as it comes; when it
// returns true the process is killed there.
func run(ctx context.Context, python, dir, name, mode string, stdin []byte, timeout time.Duration, host Host, stop func(event) bool) (session, error) {
	var s session
	if !canRun {
		return s, fmt.Errorf("pytool: running tools: %w on this platform", errors.ErrUnsupported)
	}
	if err := checkName(name); err != nil {
		return s, err
	}
	if timeout <= 0 {
		return s, fmt.Errorf("pytool: %s %s: no timeout", mode, name)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return s, fmt.Errorf("pytool: %s %s: %w", mode, name, err)
	}
	need := []string{name + ".py"}
	if mode == "test" || mode == "gate" {
		need = append(need, "test_"+name+".py")
	}
	for _, f := range need {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return s, fmt.Errorf("pytool: %s %s: %w", mode, name, err)
		}
	}

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := newPipes(host.HTTPGet != nil)
	if err != nil {
		return s, fmt.Errorf("pytool: %s %s: %w", mode, name, err)
	}
	defer p.close()
	perTest := strconv.FormatFloat((timeout / 2).Seconds(), 'f', -1, 64)
	granted := "0"
	if host.HTTPGet != nil {
		granted = "1"
	}
	allowed := strings.Join(allowedModules, ",")
	script := runnerScript
	if mode == "gate" {
		script = loadScript // it runs gateMain, compiled ahead or from stdin (see cache.go)
	}
	cmd := command(runCtx, python, dir, append(pythonFlags, "-c", script, mode, name, perTest, granted, allowed)...)
	cmd.ExtraFiles = p.child
	out := &capWriter{max: MaxResult}
	cmd.Stdout, cmd.Stderr = out, out
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	start := time.Now()
	err = cmd.Start()
	p.closeChild()
	if err != nil {
		return s, fmt.Errorf("pytool: %s %s: %w", mode, name, err)
	}
	httpDone := make(chan struct{})
	if host.HTTPGet != nil {
		go serveHTTP(runCtx, host.HTTPGet, p.httpReqs, p.httpResps, httpDone)
	} else {
		close(httpDone)
	}

	s.events, s.protoErr = readEvents(runCtx, p.results, stop)
	killGroup(cmd) // the runner is done or dead: end whatever it started
	s.waitErr = cmd.Wait()
	s.duration = time.Since(start)
	s.output = out.String()
	s.timedOut = errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	p.close() // unblocks serveHTTP
	<-httpDone
	if err := ctx.Err(); err != nil {
		return session{}, fmt.Errorf("pytool: %s %s: %w", mode, name, err)
	}
	return s, nil
}

// pipes are the runner's extra files: results (fd 3) and, when http is granted, requests
// (fd 4) and responses (fd 5). child holds the child's ends, in fd order.
type pipes struct {
	results, httpReqs, httpResps *os.File // the parent's ends
	child                        []*os.File
}

func newPipes(http bool) (*pipes, error) {
	p := &pipes{}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.results, p.child = r, []*os.File{w}
	if http {
		reqR, reqW, err := os.Pipe()
		if err != nil {
			p.close()
			return nil, err
		}
		p.httpReqs, p.child = reqR, append(p.child, reqW)
		respR, respW, err := os.Pipe()
		if err != nil {
			p.close()
			return nil, err
		}
		p.httpResps, p.child = respW, append(p.child, respR)
	}
	return p, nil
}

func (p *pipes) closeChild() {
	for _, f := range p.child {
		f.Close()
	}
}

func (p *pipes) close() {
	p.closeChild()
	for _, f := range []*os.File{p.results, p.httpReqs, p.httpResps} {
		if f != nil {
			f.Close() // a second Close only returns an error
		}
	}
}

// readEvents reads the runner's JSON lines until EOF, or until stop (if not nil) returns
// true for one. When ctx is done the process group is being killed, which ends the pipe;
// if something outside the group still holds it, the read is abandoned after waitDelay.
func readEvents(ctx context.Context, r *os.File, stop func(event) bool) ([]event, error) {
	type result struct {
		events []event
		err    error
	}
	ch := make(chan result, 1)
	go func() {
		var res result
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
		for sc.Scan() {
			var ev event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				res.err = fmt.Errorf("bad line: %w", err)
				break
			}
			if len(res.events) < 3*maxTests+8 {
				res.events = append(res.events, ev)
			}
			if stop != nil && stop(ev) {
				break // the caller kills the process
			}
		}
		if res.err == nil {
			res.err = sc.Err()
		}
		if res.err != nil {
			_, _ = io.Copy(io.Discard, r) // keep the child from blocking on a full pipe
		}
		ch <- res
	}()
	select {
	case res := <-ch:
		return res.events, res.err
	case <-ctx.Done():
	}
	select {
	case res := <-ch:
		return res.events, res.err
	case <-time.After(waitDelay):
		r.Close()
		res := <-ch
		return res.events, res.err
	}
}

// httpAnswer is one line on fd 5.
type httpAnswer struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
	Error  string `json:"error,omitempty"`
}

// serveHTTP answers the tool's http_get requests, one JSON line each way, until the
// request pipe ends.
func serveHTTP(ctx context.Context, get func(context.Context, string) (int, string, error), reqs, resps *os.File, done chan<- struct{}) {
	defer close(done)
	br := bufio.NewReaderSize(reqs, maxURL+64)
	for n := 0; ; n++ {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return // EOF, closed, or a request too long: the tool sees the channel close
		}
		var req struct {
			URL string `json:"url"`
		}
		var ans httpAnswer
		switch {
		case json.Unmarshal(line, &req) != nil || req.URL == "":
			ans.Error = "bad request"
		case n >= maxHTTPCalls:
			ans.Error = fmt.Sprintf("more than %d requests in one run", maxHTTPCalls)
		default:
			status, body, err := get(ctx, req.URL)
			switch {
			case err != nil:
				ans.Error = err.Error()
			case len(body) > maxHTTPBody:
				ans.Error = fmt.Sprintf("the response is larger than %d bytes", maxHTTPBody)
			default:
				ans.Status, ans.Body = status, body
			}
		}
		b, _ := json.Marshal(ans)
		if _, err := resps.Write(append(b, '\n')); err != nil {
			return
		}
	}
}
