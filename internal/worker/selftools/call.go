package selftools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/netguard"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/wire"
	"github.com/shelldon/shelldon/internal/worker"
)

// selfTool is a live self-coded tool: FREE, each call in a sandboxed child
// that reads the tool (read-only), checks its hash and runs it; the
// capabilities the owner granted are served here, as host calls.
func selfTool(env Env, st contracts.SelfTool) *worker.Tool {
	return &worker.Tool{
		Name:        st.Name,
		Description: st.Description + " (a tool you wrote; version " + itoa(st.Version) + ")",
		Tier:        contracts.TierFree,
		Params:      paramsOf(st.Parameters),
		Run: func(ctx context.Context, args json.RawMessage) (string, error) {
			return callTool(ctx, env, st, args)
		},
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// errEnded is the child's channel ending before its result.
var errEnded = errors.New("the channel ended before the result")

// callTool runs one call of st in the sandbox of ToolCallPolicy, serving
// its host calls until the result, the child's end or the deadline.
func callTool(ctx context.Context, env Env, st contracts.SelfTool, args json.RawMessage) (string, error) {
	pol := ToolCallPolicy(env, st.Dir)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < pol.Timeout {
		pol.Timeout = time.Until(dl)
	}
	callCtx, cancel := context.WithTimeout(ctx, pol.Timeout)
	defer cancel()

	inR, inW, err := os.Pipe()
	if err != nil {
		return "", err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return "", err
	}
	var once sync.Once
	closeOurs := func() { once.Do(func() { inW.Close(); outR.Close() }) }
	defer closeOurs()
	stderr := &capped{max: 4 << 10}
	proc, err := env.Sandbox.Start(callCtx, pol, inR, outW, stderr)
	inR.Close() // the child's ends: only the child holds them now
	outW.Close()
	if err != nil {
		return "", err
	}
	waited := make(chan struct{})
	var res sandbox.Result
	var waitErr error
	go func() {
		res, waitErr = proc.Wait()
		close(waited)
	}()
	type outcome struct {
		res answer
		err error
	}
	served := make(chan outcome, 1)
	host := hostCalls(st, env.HTTP)
	go func() {
		r, err := serve(callCtx, host, CallRequest{Tool: st, Args: args}, inW, outR)
		served <- outcome{r, err}
	}()

	var out outcome
	select {
	case out = <-served:
	case <-callCtx.Done():
		// The deadline (or the caller) ends the call: closing our ends
		// unblocks the server, wherever it is.
		kill(proc, waited)
		closeOurs()
		out = <-served
	case <-waited:
		// The child is gone; what it wrote is still in the pipe.
		select {
		case out = <-served:
		case <-time.After(time.Second):
			closeOurs()
			out = <-served
		}
	}
	if errors.Is(out.err, errEnded) {
		// No result: how the child ended says why.
		select {
		case <-waited:
		case <-callCtx.Done():
		}
	}
	kill(proc, waited)
	closeOurs()
	<-waited

	switch {
	case out.err == nil:
		if out.res.err != "" {
			return "", errors.New(trim(out.res.err, MaxResultText))
		}
		return trim(out.res.result, MaxResultText), nil
	case errors.Is(callCtx.Err(), context.DeadlineExceeded) || res.TimedOut:
		return "", fmt.Errorf("it did not finish within %s and was killed", pol.Timeout)
	case ctx.Err() != nil:
		return "", fmt.Errorf("the call was cancelled: %w", ctx.Err())
	case !errors.Is(out.err, errEnded):
		return "", fmt.Errorf("the tool's child broke the protocol and was stopped: %v", out.err)
	case waitErr != nil:
		return "", waitErr
	}
	res.Stderr = stderr.Bytes()
	return "", noAnswer(res)
}

// kill ends the sandbox unless it has already been reaped.
func kill(proc *sandbox.Process, waited <-chan struct{}) {
	select {
	case <-waited:
	default:
		proc.Kill()
	}
}

// runSeq numbers the worker's one call on the channel, MethodRun.
const runSeq = 1

// answer is what the child answered the run call: the tool's result, or its
// error.
type answer struct {
	result, err string
}

// serve calls MethodRun, then serves the child's host calls from host until
// the reply. Every read is capped at MaxChildFrame; anything but a host call
// or the reply to the run call ends the call.
func serve(ctx context.Context, host wire.Handlers, req CallRequest, w io.Writer, r io.Reader) (answer, error) {
	send := wire.NewConn(strings.NewReader(""), w, MaxWorkerFrame)
	if err := send.SendCall(runSeq, MethodRun, req); err != nil {
		if errors.Is(err, wire.ErrTooLarge) {
			return answer{err: fmt.Sprintf("the call's arguments are too large (the limit is %d bytes)", MaxWorkerFrame)}, nil
		}
		return answer{}, fmt.Errorf("%w: %v", errEnded, err)
	}
	br := bufio.NewReader(r)
	for calls := 0; ; {
		f, err := wire.ReadFrame(br, MaxChildFrame)
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed):
			return answer{}, errEnded // the child's exit status says why
		case err != nil:
			return answer{}, err
		}
		switch f.Type {
		case wire.TypeReply:
			if f.Seq != runSeq {
				return answer{}, fmt.Errorf("a reply to call %d, which the worker never made", f.Seq)
			}
			if f.Error != "" {
				return answer{err: f.Error}, nil
			}
			var res CallResult
			if err := f.Decode(&res); err != nil {
				return answer{}, err
			}
			return answer{result: res.Result}, nil
		case wire.TypeCall:
			calls++
			switch {
			case calls > MaxHostCalls+8:
				return answer{}, fmt.Errorf("more than %d host calls, after refusals", MaxHostCalls)
			case calls > MaxHostCalls:
				err = send.SendReplyError(f.Seq, fmt.Sprintf("more than %d requests in one call", MaxHostCalls))
			default:
				err = host.Serve(ctx, send, f)
			}
			if err != nil {
				return answer{}, fmt.Errorf("%w: %v", errEnded, err)
			}
		default:
			return answer{}, fmt.Errorf("unexpected %q frame", trim(f.Type, 40))
		}
	}
}

// hostCalls is the table of the host calls the child of one call of st may
// make, served as the worker's st grants them (never as the child says).
func hostCalls(st contracts.SelfTool, client *netguard.Client) wire.Handlers {
	get := grantedHTTP(st.Capabilities["http"], client)
	return wire.Handlers{
		MethodHTTPGet: wire.Handle(func(ctx context.Context, req HTTPGet) (HTTPResponse, error) {
			if get == nil {
				return HTTPResponse{}, errors.New("http is not granted to this tool")
			}
			status, body, err := get(ctx, req.URL)
			if err != nil {
				return HTTPResponse{}, err
			}
			return HTTPResponse{Status: status, Body: body}, nil
		}),
	}
}

// grantedHTTP is the http capability: GET from the granted hosts only,
// through netguard (client), no redirects, a body of at most MaxHTTPBody
// bytes. nil when nothing is granted.
func grantedHTTP(hosts []string, client *netguard.Client) func(ctx context.Context, rawURL string) (int, []byte, error) {
	if len(hosts) == 0 {
		return nil
	}
	granted := make([]string, len(hosts))
	for i, h := range hosts {
		granted[i] = strings.ToLower(h)
	}
	if client == nil {
		client = netguard.NewClient(netguard.Options{MaxBytes: MaxHTTPBody, MaxRedirects: -1})
	}
	return func(ctx context.Context, rawURL string) (int, []byte, error) {
		if len(rawURL) > MaxURL {
			return 0, nil, fmt.Errorf("http: the URL is %d bytes long; the limit is %d", len(rawURL), MaxURL)
		}
		u, err := client.CheckURL(rawURL) // with the owner's LAN list, if any
		if err != nil {
			return 0, nil, err
		}
		if !slices.Contains(granted, u.Hostname()) {
			return 0, nil, fmt.Errorf("http: %s is not a host this tool was granted (%s)", u.Hostname(), strings.Join(granted, ", "))
		}
		res, err := client.Get(ctx, u.String())
		switch {
		case err != nil:
			return 0, nil, err
		case len(res.Hops) > 1:
			return 0, nil, fmt.Errorf("http: %s redirected; redirects are not followed", u)
		case res.Truncated || len(res.Body) > MaxHTTPBody:
			return 0, nil, fmt.Errorf("http: the response from %s is larger than %d bytes", u, MaxHTTPBody)
		}
		return res.Status, res.Body, nil
	}
}

// capped keeps the first max bytes written and drops the rest.
type capped struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.buf)
}
