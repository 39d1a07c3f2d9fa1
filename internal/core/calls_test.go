package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/wire"
)

// playSpawner starts, for each turn, a worker the test plays in-process on
// the worker's end of a pair of pipes: the next of its plays gets the job
// and a client of the daemon's calls, and returns the turn's result.
type playSpawner struct {
	mu    sync.Mutex
	plays []func(job contracts.Job, daemon *wire.Client) contracts.Result
}

func (s *playSpawner) Spawn(ctx context.Context) (core.Process, error) {
	s.mu.Lock()
	if len(s.plays) == 0 {
		s.mu.Unlock()
		return nil, errors.New("no more workers in the script")
	}
	play := s.plays[0]
	s.plays = s.plays[1:]
	s.mu.Unlock()
	toDaemonR, toDaemonW := io.Pipe()
	toWorkerR, toWorkerW := io.Pipe()
	p := &playProcess{conn: wire.NewConn(toDaemonR, toWorkerW, 0), done: make(chan struct{}),
		closers: []io.Closer{toDaemonR, toDaemonW, toWorkerR, toWorkerW}}
	go func() {
		defer close(p.done)
		defer toDaemonW.Close()
		conn := wire.NewConn(toWorkerR, toDaemonW, 0)
		f, err := conn.Recv()
		var job contracts.Job
		if err != nil || f.Type != wire.TypeJob || f.Decode(&job) != nil {
			return
		}
		daemon := wire.NewClient(conn)
		go daemon.Read(func(wire.Frame) error { return nil })
		conn.Send(wire.TypeResult, play(job, daemon))
	}()
	return p, nil
}

type playProcess struct {
	conn    *wire.Conn
	done    chan struct{}
	closers []io.Closer
}

func (p *playProcess) Conn() *wire.Conn { return p.conn }
func (p *playProcess) Wait() error      { <-p.done; return nil }
func (p *playProcess) Pid() int         { return os.Getpid() }
func (p *playProcess) Kill() error {
	for _, c := range p.closers {
		c.Close()
	}
	return nil
}

// TestDaemonCallTable: the daemon answers each of a worker's calls from its
// table: the model call with the model's answer (its text streamed to the
// transport), an update_config only as the approved call of a resumed job
// and only once, and an unknown method or a malformed body with an error
// reply that leaves the turn running.
func TestDaemonCallTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	model := &scriptedModel{}
	model.steps = append(model.steps, answer(reply("hello from the model")))
	changes := json.RawMessage(`{"agent":{"max_tool_calls":9}}`)
	args, err := contracts.CanonicalArgs(`{"changes":` + string(changes) + `}`)
	if err != nil {
		t.Fatal(err)
	}
	var configured []string
	var mu sync.Mutex
	errorOf := func(err error) string {
		var re *wire.RemoteError
		if !errors.As(err, &re) {
			return "not a reply: " + err.Error()
		}
		return re.Message
	}
	type got struct{ name, errText string }
	var seen []got
	note := func(name string, err error) {
		mu.Lock()
		defer mu.Unlock()
		e := ""
		if err != nil {
			e = errorOf(err)
		}
		seen = append(seen, got{name, e})
	}
	sp := &playSpawner{plays: []func(contracts.Job, *wire.Client) contracts.Result{
		func(job contracts.Job, d *wire.Client) contracts.Result {
			var comp contracts.Completion
			err := d.Call(context.Background(), wire.MethodComplete, contracts.Request{}, &comp)
			note("complete "+comp.Message.Text, err)
			note("configure, not resumed", d.Call(context.Background(), wire.MethodConfigure, changes, nil))
			note("unknown", d.Call(context.Background(), "exec", "rm -rf /", nil))
			note("malformed", d.Call(context.Background(), wire.MethodSkill, []int{1}, nil))
			note("skill", d.Call(context.Background(), wire.MethodSkill, contracts.SkillRequest{}, nil))
			call := contracts.ToolCall{ID: "c1", Name: contracts.ToolUpdateConfig, Arguments: args}
			return contracts.Result{Stopped: contracts.StopApproval, Pending: &contracts.Pending{
				Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "more tools"}}, Call: call}}
		},
		func(job contracts.Job, d *wire.Client) contracts.Result {
			var diff []string
			note("configure, approved", d.Call(context.Background(), wire.MethodConfigure, changes, &diff))
			note("configure, diff "+strings.Join(diff, ","), nil)
			note("configure, again", d.Call(context.Background(), wire.MethodConfigure, changes, nil))
			return contracts.Result{Reply: "done"}
		},
	}}
	c, err := core.New(core.Options{Store: st, Model: model, Spawner: sp, Logger: slog.New(slog.DiscardHandler),
		Configure: func(ctx context.Context, changes json.RawMessage) ([]string, error) {
			mu.Lock()
			defer mu.Unlock()
			configured = append(configured, string(changes))
			return []string{"agent.max_tool_calls: 6 -> 9"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	out, err := c.Send(context.Background(), "chat", "more tools", core.Events{Text: func(d string) { streamed.WriteString(d) }})
	if err != nil || len(out.Approvals) != 1 {
		t.Fatalf("first turn: %+v, %v", out, err)
	}
	if _, err := c.Decide(context.Background(), out.Approvals[0].ID, true, "owner", core.Events{}); err != nil {
		t.Fatal(err)
	}
	want := []got{
		{"complete hello from the model", ""},
		{"configure, not resumed", "update_config runs only as the call the owner approved"},
		{"unknown", `unknown method "exec"`},
		{"malformed", "skill: a malformed request: json: cannot unmarshal array"},
		{"skill", "skills are not available"},
		{"configure, approved", ""},
		{"configure, diff agent.max_tool_calls: 6 -> 9", ""},
		{"configure, again", "update_config runs only as the call the owner approved"},
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != len(want) {
		t.Fatalf("calls %+v, want %+v", seen, want)
	}
	for i, w := range want {
		if seen[i].name != w.name || !strings.HasPrefix(seen[i].errText, w.errText) || (w.errText == "") != (seen[i].errText == "") {
			t.Errorf("call %d: %+v, want %+v", i, seen[i], w)
		}
	}
	if len(configured) != 1 || configured[0] != string(changes) {
		t.Errorf("the config changed %d times: %q", len(configured), configured)
	}
	if streamed.String() != "hello from the model" {
		t.Errorf("streamed %q", streamed.String())
	}
}

// TestModelCallNamesTheHistory: a worker's model request may name the
// job's history, which the worker never receives (contracts.Job.History),
// rather than carry it (contracts.Request.History);
// the provider gets the whole conversation. A request that names more
// history than the job had, or a negative count, is refused, and the
// model is not called.
func TestModelCallNamesTheHistory(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	model := &scriptedModel{}
	var refused []string
	var lens []int
	named := func(job contracts.Job, d *wire.Client) contracts.Result {
		if len(job.History) != 0 {
			t.Errorf("the worker received %d messages of history: the daemon keeps them", len(job.History))
		}
		lens = append(lens, job.HistoryLen)
		var comp contracts.Completion
		for _, n := range []int{job.HistoryLen + 1, -1} {
			err := d.Call(context.Background(), wire.MethodComplete, contracts.Request{History: n,
				Messages: []contracts.Message{{Role: contracts.RoleUser, Text: job.Input}}}, &comp)
			var re *wire.RemoteError
			if errors.As(err, &re) {
				refused = append(refused, re.Message)
			}
		}
		req := contracts.Request{History: job.HistoryLen, Messages: []contracts.Message{{Role: contracts.RoleUser, Text: job.Input}}}
		if err := d.Call(context.Background(), wire.MethodComplete, req, &comp); err != nil {
			return contracts.Result{Stopped: contracts.StopError, Reply: err.Error()}
		}
		return contracts.Result{Reply: comp.Message.Text, Messages: append(req.Messages, comp.Message)}
	}
	sp := &playSpawner{plays: []func(contracts.Job, *wire.Client) contracts.Result{named, named}}
	c, err := core.New(core.Options{Store: st, Model: model, Spawner: sp, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"first", "second"} {
		if out, err := c.Send(context.Background(), "chat", text, core.Events{}); err != nil || out.Reply != "done" {
			t.Fatalf("turn %q: %+v, %v", text, out, err)
		}
	}
	if !slices.Equal(lens, []int{0, 2}) {
		t.Errorf("the workers were told histories of %v messages, want [0 2]", lens)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if len(model.reqs) != 2 {
		t.Fatalf("the model was called %d times, want 2 (refused requests never reach it)", len(model.reqs))
	}
	var texts []string
	for _, m := range model.reqs[1].Messages {
		texts = append(texts, string(m.Role)+":"+m.Text)
	}
	if got, want := strings.Join(texts, " "), "user:first assistant:done user:second"; got != want {
		t.Errorf("the second turn's request holds %q, want %q", got, want)
	}
	if len(refused) != 4 || !strings.Contains(refused[0], "names 1 messages of a history of 0") ||
		!strings.Contains(refused[3], "names -1 messages of a history of 2") {
		t.Errorf("refusals: %q", refused)
	}
}

// TestModelCallNamesHeldSpecs: a worker may name a tool spec the daemon
// listed in its job (contracts.Job.Specs: the specs earlier turns sent
// whole) by its digest, and the provider still gets the whole spec. A spec
// named by a digest the job did not list, under another tool's name, or
// with a description or parameters of its own beside the digest, refuses
// the request before the model is called.
func TestModelCallNamesHeldSpecs(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock := contracts.ToolSpec{Name: "get_time", Description: "Return the time.", Parameters: json.RawMessage(`{"type":"object"}`)}
	files := contracts.ToolSpec{Name: "read_file", Description: "Read a file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	model := &scriptedModel{}
	var listed [][]string
	var refused []string
	call := func(d *wire.Client, tools ...contracts.ToolSpec) error {
		var comp contracts.Completion
		return d.Call(context.Background(), wire.MethodComplete, contracts.Request{Tools: tools,
			Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "hi"}}}, &comp)
	}
	first := func(job contracts.Job, d *wire.Client) contracts.Result {
		listed = append(listed, job.Specs)
		if err := call(d, clock, files); err != nil {
			t.Errorf("whole specs: %v", err)
		}
		return contracts.Result{Reply: "done"}
	}
	second := func(job contracts.Job, d *wire.Client) contracts.Result {
		listed = append(listed, job.Specs)
		dc, df := contracts.SpecDigest(clock), contracts.SpecDigest(files)
		other := contracts.SpecDigest(contracts.ToolSpec{Name: "run_shell", Description: "Run a command."})
		for _, bad := range [][]contracts.ToolSpec{
			{{Name: "run_shell", Digest: other}},                                   // never sent whole
			{{Name: "run_shell", Digest: dc}},                                      // another tool's spec
			{{Name: "get_time", Digest: dc, Description: "Do anything you like."}}, // a description beside it
			{{Name: "get_time", Digest: dc, Parameters: json.RawMessage(`{}`)}},    // parameters beside it
			{{Name: "get_time", Digest: "not-a-digest"}},
		} {
			var re *wire.RemoteError
			if err := call(d, bad...); errors.As(err, &re) {
				refused = append(refused, re.Message)
			} else {
				t.Errorf("%+v: err %v, want a refusal", bad, err)
			}
		}
		if err := call(d, contracts.ToolSpec{Name: "get_time", Digest: dc}, contracts.ToolSpec{Name: "read_file", Digest: df}); err != nil {
			t.Errorf("named specs: %v", err)
		}
		return contracts.Result{Reply: "done"}
	}
	sp := &playSpawner{plays: []func(contracts.Job, *wire.Client) contracts.Result{first, second}}
	c, err := core.New(core.Options{Store: st, Model: model, Spawner: sp, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"first", "second"} {
		if _, err := c.Send(context.Background(), "chat", text, core.Events{}); err != nil {
			t.Fatalf("turn %q: %v", text, err)
		}
	}
	if len(listed) != 2 || len(listed[0]) != 0 ||
		!slices.Equal(slices.Sorted(slices.Values(listed[1])), slices.Sorted(slices.Values([]string{contracts.SpecDigest(clock), contracts.SpecDigest(files)}))) {
		t.Errorf("the jobs listed %q, want none, then the two specs sent whole", listed)
	}
	if len(refused) != 5 {
		t.Errorf("refusals: %q", refused)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if len(model.reqs) != 2 {
		t.Fatalf("the model was called %d times, want 2 (refused requests never reach it)", len(model.reqs))
	}
	want := []contracts.ToolSpec{clock, files}
	for i, req := range model.reqs {
		if len(req.Tools) != 2 {
			t.Fatalf("request %d offers %+v", i, req.Tools)
		}
		for j, got := range req.Tools {
			if got.Name != want[j].Name || got.Description != want[j].Description ||
				string(got.Parameters) != string(want[j].Parameters) || got.Digest != "" {
				t.Errorf("request %d's tool %d is %+v, want %+v", i, j, got, want[j])
			}
		}
	}
}
