package core_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/childproc"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/testbin"
)

// TestMain lets the test binary act as the worker child, as the shelldon
// binary does, so these tests spawn real worker processes.
func TestMain(m *testing.M) {
	if childproc.IsChild(os.Args) {
		childproc.Main()
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// scriptedModel answers model calls from a script, in the daemon, the way
// the broker would; each step may inspect the request first.
type scriptedModel struct {
	mu    sync.Mutex
	steps []func(ctx context.Context, req contracts.Request) (contracts.Completion, error)
	reqs  []contracts.Request
}

func (m *scriptedModel) Complete(ctx context.Context, req contracts.Request, onText func(string)) (contracts.Completion, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	if len(m.steps) == 0 {
		m.mu.Unlock()
		return reply("done"), nil
	}
	step := m.steps[0]
	m.steps = m.steps[1:]
	m.mu.Unlock()
	c, err := step(ctx, req)
	if onText != nil && c.Message.Text != "" {
		onText(c.Message.Text)
	}
	return c, err
}

func (m *scriptedModel) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.reqs)
}

func reply(text string, calls ...contracts.ToolCall) contracts.Completion {
	return contracts.Completion{
		Message: contracts.Message{Role: contracts.RoleAssistant, Text: text, ToolCalls: calls},
		Usage:   contracts.Usage{InputTokens: 100, OutputTokens: 7}, Provider: "fake", Model: "fake-1",
	}
}

func answer(c contracts.Completion) func(context.Context, contracts.Request) (contracts.Completion, error) {
	return func(context.Context, contracts.Request) (contracts.Completion, error) { return c, nil }
}

// pidSpawner records the pid of every worker it starts.
type pidSpawner struct {
	core.Spawner
	mu   sync.Mutex
	pids []int
}

func (s *pidSpawner) Spawn(ctx context.Context) (core.Process, error) {
	p, err := s.Spawner.Spawn(ctx)
	if err == nil {
		s.mu.Lock()
		s.pids = append(s.pids, p.Pid())
		s.mu.Unlock()
	}
	return p, err
}

func (s *pidSpawner) last() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pids[len(s.pids)-1]
}

type fixture struct {
	core    *core.Core
	store   *store.Store
	model   *scriptedModel
	spawner *pidSpawner
	ws      string
}

func newFixture(t *testing.T, parentEnv []string, args ...string) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws := filepath.Join(dir, "workspace")
	os.Mkdir(ws, 0o700)
	exe, err := core.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if len(args) == 0 {
		args = childproc.WorkerArgs
	}
	sp := &pidSpawner{Spawner: &core.ExecSpawner{Path: exe, Args: args, Env: core.WorkerEnv(parentEnv)}}
	m := &scriptedModel{}
	c, err := core.New(core.Options{Store: st, Model: m, Spawner: sp, Workspace: ws,
		Limits: contracts.Limits{Budget: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{core: c, store: st, model: m, spawner: sp, ws: ws}
}

func TestTurnWithToolsIsRecorded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, os.Environ())
	os.WriteFile(filepath.Join(f.ws, "notes.txt"), []byte("buy milk"), 0o600)
	f.model.steps = append(f.model.steps,
		answer(reply("Let me look.",
			contracts.ToolCall{ID: "c1", Name: "read_file", Arguments: `{"path":"notes.txt"}`},
			contracts.ToolCall{ID: "c2", Name: "get_time", Arguments: `{}`})),
		func(_ context.Context, req contracts.Request) (contracts.Completion, error) {
			last := req.Messages[len(req.Messages)-1]
			if len(last.ToolResults) != 2 || !strings.Contains(last.ToolResults[0].Content, "buy milk") {
				return contracts.Completion{}, fmt.Errorf("tool results not sent back: %+v", last)
			}
			return reply("Your note says: buy milk."), nil
		})
	var events []contracts.ToolEvent
	out, err := f.core.Send(context.Background(), "c", "what does my note say?", core.Events{
		Tool: func(ev contracts.ToolEvent) { events = append(events, ev) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Reply != "Your note says: buy milk." || out.ToolCalls != 2 || out.Stopped != "" {
		t.Fatalf("outcome = %+v", out)
	}
	if out.Usage.InputTokens != 200 {
		t.Errorf("usage = %+v, want two calls' worth", out.Usage)
	}
	if len(events) != 4 {
		t.Errorf("%d tool events, want 4", len(events))
	}
	audit, err := f.store.Audit(context.Background(), store.AuditQuery{Chat: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 2 {
		t.Fatalf("audit has %d rows, want 2: %+v", len(audit), audit)
	}
	for _, a := range audit {
		if !a.OK || a.Turn != out.Turn || a.Kind != "tool_call" {
			t.Errorf("audit row %+v", a)
		}
	}
	// The system prompt and the tools were offered.
	first := f.model.reqs[0]
	if !strings.Contains(first.System, "You are shelldon") || len(first.Tools) < 4 {
		t.Errorf("first request: system %q, %d tools", first.System, len(first.Tools))
	}
	// The next turn sees this one in its context.
	f.model.steps = append(f.model.steps, answer(reply("yes")))
	if _, err := f.core.Send(context.Background(), "c", "thanks", core.Events{}); err != nil {
		t.Fatal(err)
	}
	ctxMsgs := f.model.reqs[len(f.model.reqs)-1].Messages
	if len(ctxMsgs) < 5 || ctxMsgs[0].Text != "what does my note say?" || ctxMsgs[len(ctxMsgs)-1].Text != "thanks" {
		t.Errorf("second turn context = %+v", ctxMsgs)
	}
}

// TestWorkerHoldsNoCredential reads the live worker's environment and
// command line from /proc while it waits on the model.
func TestWorkerHoldsNoCredential(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{
		"OPENAI_API_KEY":        "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
		"ANTHROPIC_API_KEY":     "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
		"SHELLDON_API_TOKEN":    "0123456789abcdef0123456789abcdef",
		"TELEGRAM_BOT_TOKEN":    "123456789:AAEhBOweik6ad9r_QXMENQjcrGbqCr4K-ew",
		"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"GITHUB_TOKEN":          "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
	}
	parent := append([]string{"TZ=UTC", "LANG=C.UTF-8", "HOME=/root"}, os.Environ()...)
	for k, v := range secrets {
		parent = append(parent, k+"="+v)
	}
	f := newFixture(t, parent)
	var environ, cmdline []byte
	f.model.steps = append(f.model.steps, func(context.Context, contracts.Request) (contracts.Completion, error) {
		pid := f.spawner.last()
		var err error
		if environ, err = os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err != nil {
			return contracts.Completion{}, err
		}
		if cmdline, err = os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err != nil {
			return contracts.Completion{}, err
		}
		return reply("ok"), nil
	})
	if _, err := f.core.Send(context.Background(), "c", "hi", core.Events{}); err != nil {
		t.Fatal(err)
	}
	if len(environ) == 0 {
		t.Fatal("did not read the worker's environment")
	}
	vars := strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00")
	for _, kv := range vars {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH", "TZ", "LANG", "LC_ALL", "LC_CTYPE":
		default:
			t.Errorf("worker environment has %q beyond the allowlist", name)
		}
	}
	for k, v := range secrets {
		if strings.Contains(string(environ), v) || strings.Contains(string(cmdline), v) {
			t.Errorf("the worker holds %s", k)
		}
	}
}

func TestCancelEndsTurnAndKeepsHistory(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	f.model.steps = append(f.model.steps, func(mctx context.Context, _ contracts.Request) (contracts.Completion, error) {
		cancel() // the owner presses Ctrl-C while the model thinks
		<-mctx.Done()
		return contracts.Completion{}, mctx.Err()
	})
	start := time.Now()
	out, err := f.core.Send(ctx, "c", "long question", core.Events{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stopped != contracts.StopCancelled {
		t.Fatalf("outcome = %+v", out)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("cancel took %v", time.Since(start))
	}
	info, err := f.store.Turn(context.Background(), out.Turn)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != contracts.StopCancelled {
		t.Errorf("turn status = %q", info.Status)
	}
	hist, _ := f.store.History(context.Background(), "c", 10000)
	if len(hist) == 0 || hist[0].Text != "long question" {
		t.Errorf("history = %+v", hist)
	}
}

func TestWorkerCrashIsReportedNotLost(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, childproc.Arg, "no-such-mode")
	out, err := f.core.Send(context.Background(), "c", "hello", core.Events{})
	if err == nil {
		t.Fatal("a crashed worker gave no error")
	}
	if out.Turn == 0 || out.Stopped != contracts.StopError || !strings.Contains(out.Reply, "failed inside shelldon") {
		t.Fatalf("outcome = %+v", out)
	}
	hist, _ := f.store.History(context.Background(), "c", 10000)
	if len(hist) != 2 || hist[0].Text != "hello" {
		t.Errorf("history = %+v", hist)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	for _, text := range []string{"", "   \n", strings.Repeat("x", core.MaxInput+1)} {
		if _, err := f.core.Send(context.Background(), "c", text, core.Events{}); !errors.Is(err, core.ErrBadInput) {
			t.Errorf("Send(%d bytes) = %v, want ErrBadInput", len(text), err)
		}
	}
}

func TestModelFailureIsAReply(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.model.steps = append(f.model.steps, func(context.Context, contracts.Request) (contracts.Completion, error) {
		return contracts.Completion{}, errors.New("anthropic: 401 invalid x-api-key")
	})
	out, err := f.core.Send(context.Background(), "c", "hi", core.Events{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stopped != contracts.StopError || !strings.Contains(out.Reply, "401 invalid x-api-key") {
		t.Fatalf("outcome = %+v", out)
	}
}

// TestSandboxedWorker runs turns with the worker inside the sandbox, as the
// daemon does, using a real shelldon binary: the tools work, and the
// worker's policy keeps shelldon's home (database, config, .env) and the
// daemon out of its reach.
func TestSandboxedWorker(t *testing.T) {
	t.Parallel()
	bin := testbin.Shelldon(t)
	runner, err := sandbox.NewRunner(bin)
	if err != nil {
		t.Fatal(err)
	}
	if tier := runner.Probe(context.Background()); !tier.Full() {
		t.Skipf("this kernel lacks a required sandbox layer: %s", tier)
	}
	home := t.TempDir()
	ws := filepath.Join(home, "workspace")
	os.Mkdir(ws, 0o700)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("inside the sandbox"), 0o600)
	os.WriteFile(filepath.Join(home, ".env"), []byte("OPENAI_API_KEY=sk-secret-in-home-0123456789"), 0o600)
	st, err := store.Open(context.Background(), filepath.Join(home, "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := &scriptedModel{}
	c, err := core.New(core.Options{Store: st, Model: m, Workspace: ws, Limits: contracts.Limits{Budget: 20 * time.Second},
		Spawner: &core.SandboxSpawner{Runner: runner, Path: bin, Args: childproc.WorkerArgs, Env: core.WorkerEnv(nil), Workspace: ws}})
	if err != nil {
		t.Fatal(err)
	}
	m.steps = append(m.steps,
		answer(reply("", contracts.ToolCall{ID: "1", Name: "read_file", Arguments: `{"path":"notes.txt"}`},
			contracts.ToolCall{ID: "2", Name: "eval", Arguments: `{"code":"6*7"}`})),
		func(_ context.Context, req contracts.Request) (contracts.Completion, error) {
			rs := req.Messages[len(req.Messages)-1].ToolResults
			return reply(rs[0].Content + " / " + rs[1].Content), nil
		})
	out, err := c.Send(context.Background(), "c", "go", core.Events{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Reply != "inside the sandbox / 42" {
		t.Fatalf("reply = %q", out.Reply)
	}

	// The same policy, running a shell instead of the worker, cannot reach
	// shelldon's home or the daemon; the workspace it can.
	probe := func(script string) sandbox.Result {
		pol := core.WorkerPolicy("/bin/sh", []string{"-c", script}, core.WorkerEnv(nil), ws, 10*time.Second)
		pol.Mode = "" // the shell in the worker's place
		res, err := runner.Run(context.Background(), pol)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := probe("cat " + filepath.Join(ws, "notes.txt")); !res.OK() {
		t.Fatalf("control: the worker policy cannot read its workspace: %s", res.Stderr)
	}
	for _, script := range []string{
		"cat " + filepath.Join(home, ".env"),
		"cat " + filepath.Join(home, "shelldon.db"),
		"ls -a " + home,
		fmt.Sprintf("cat /proc/%d/environ", os.Getpid()),
	} {
		res := probe(script)
		if strings.Contains(string(res.Stdout), "sk-secret") || strings.Contains(string(res.Stdout), ".env") ||
			strings.Contains(string(res.Stdout), "shelldon.db") || (res.OK() && !strings.HasPrefix(script, "ls")) {
			t.Errorf("the worker policy allowed %q: %s", script, res.Stdout)
		}
	}
	probe("echo x > " + filepath.Join(home, "planted"))
	if _, err := os.Stat(filepath.Join(home, "planted")); err == nil {
		t.Error("the worker policy wrote into shelldon's home")
	}
	// The worker may build nested sandboxes (user and mount namespaces).
	if res := probe("unshare -U -r -m -p -f --mount-proc true"); !res.OK() {
		t.Errorf("a nested sandbox cannot be built in the worker: %s", res.Stderr)
	}
}

// TestDecisionQueuedWhenSlotsAreBusy: with the only worker slot taken, a
// decision waits for it instead of being refused, then runs once.
func TestDecisionQueuedWhenSlotsAreBusy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c, err := core.New(core.Options{Store: f.store, Model: f.model, Spawner: f.spawner, Workspace: f.ws, Workers: 1,
		Limits: contracts.Limits{Budget: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	f.model.steps = append(f.model.steps,
		answer(reply("", contracts.ToolCall{ID: "w", Name: "write_file", Arguments: `{"path":"q.txt","content":"queued"}`})),
		func(ctx context.Context, _ contracts.Request) (contracts.Completion, error) {
			<-release // a long turn holds the only slot
			return reply("long turn done"), nil
		},
		answer(reply("decision done")),
	)
	parked, err := c.Send(context.Background(), "a", "write q", core.Events{})
	if err != nil || len(parked.Approvals) != 1 {
		t.Fatalf("park: %+v %v", parked, err)
	}
	longDone := make(chan core.Outcome)
	go func() {
		out, _ := c.Send(context.Background(), "b", "think long", core.Events{})
		longDone <- out
	}()
	for f.model.calls() < 2 { // the long turn is in its model call
		time.Sleep(5 * time.Millisecond)
	}
	decided := make(chan error, 1)
	go func() {
		_, err := c.Decide(context.Background(), parked.Approvals[0].ID, true, "test", core.Events{})
		decided <- err
	}()
	select {
	case err := <-decided:
		t.Fatalf("the decision ran while the only slot was busy: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := os.Stat(filepath.Join(f.ws, "q.txt")); err == nil {
		t.Fatal("the approved call ran before a slot was free")
	}
	close(release)
	<-longDone
	if err := <-decided; err != nil {
		t.Fatalf("queued decision: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(f.ws, "q.txt")); string(data) != "queued" {
		t.Fatalf("q.txt = %q", data)
	}
}
