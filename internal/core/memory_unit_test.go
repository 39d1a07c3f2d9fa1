package core_test

// Tests of the long-term memory through core: the real worker loop
// in-process (coretest) with the real memory tools, a real store, a
// scripted model that records the system prompt of every request.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/redact"
	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/worker/memorytools"
)

// memoryTools are the real remember and recall, over the worker's daemon.
func memoryTools(_ contracts.Job, d worker.Daemon) []*worker.Tool {
	reg := worker.NewRegistry()
	if err := memorytools.Register(reg, d); err != nil {
		panic(err)
	}
	return reg.Tools()
}

// memUnit is a core with the memory tools, the real redactor and a
// context budget of budget bytes.
type memUnit struct {
	core  *core.Core
	store *store.Store
	model *coretest.Model
	sp    *coretest.Spawner
}

func newMemUnit(t *testing.T, budget int) *memUnit {
	t.Helper()
	red := redact.New("hunter2-owner-secret")
	u := &memUnit{store: coretest.Store(t), model: &coretest.Model{}}
	u.sp = &coretest.Spawner{Build: coretest.Builder(memoryTools), Redact: red.JSONArgs}
	c, err := core.New(core.Options{Store: u.store, Model: u.model, Spawner: u.sp, MemoryBytes: budget,
		Redact: red.JSONArgs, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	u.core = c
	return u
}

// turn runs a turn whose model makes calls (if any) and then reports the
// results it was given; it returns the reply.
func (u *memUnit) turn(t *testing.T, chat, text string, calls ...contracts.ToolCall) string {
	t.Helper()
	if len(calls) > 0 {
		u.model.Script(coretest.Reply("", calls...))
	}
	u.model.Script(coretest.Results)
	out, err := u.core.Send(context.Background(), chat, text, core.Events{})
	if err != nil {
		t.Fatalf("turn %q: %v", text, err)
	}
	return out.Reply
}

// lastSystem is the system prompt of the model's latest request.
func (u *memUnit) lastSystem() string {
	reqs := u.model.Requests()
	return reqs[len(reqs)-1].System
}

// TestRememberAndRecall: the model remembers a fact in one turn (the fact
// keeps its chat and turn), recalls it in another, is told when it is
// remembered already; the audit of both calls holds hashes and fact
// numbers, never the words.
func TestRememberAndRecall(t *testing.T) {
	t.Parallel()
	u := newMemUnit(t, 2048)
	const fact = "The owner's cat is called Tom and is afraid of the hoover."
	reply := u.turn(t, "c1", "my cat is Tom", coretest.Call("r1", contracts.ToolRemember, `{"fact":"  `+fact+`  "}`))
	if !strings.Contains(reply, "remember ok=true Remembered as fact #1.") {
		t.Fatalf("remember: %q", reply)
	}
	f, err := u.store.Fact(t.Context(), 1)
	if err != nil || f.Text != fact || f.Chat != "c1" || f.Turn == 0 {
		t.Fatalf("the stored fact = %+v, %v", f, err)
	}
	reply = u.turn(t, "c2", "again", coretest.Call("r2", contracts.ToolRemember, `{"fact":"`+fact+`"}`))
	if !strings.Contains(reply, "Already remembered as fact #1") {
		t.Errorf("remember again: %q", reply)
	}
	reply = u.turn(t, "c2", "what is my cat afraid of?", coretest.Call("r3", contracts.ToolRecall, `{"query":"hoover NOT cat*","limit":50}`))
	if !strings.Contains(reply, "recall ok=true 1 remembered facts") || !strings.Contains(reply, `- #1 (`) || !strings.Contains(reply, `"`+fact+`"`) {
		t.Errorf("recall: %q", reply)
	}
	reply = u.turn(t, "c2", "and?", coretest.Call("r4", contracts.ToolRecall, `{"query":"* ^ :"}`))
	if !strings.Contains(reply, "recall ok=false") || !strings.Contains(reply, "no word to look for") {
		t.Errorf("recall of no word: %q", reply)
	}

	entries, err := u.core.Audit(t.Context(), core.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, e := range entries {
		if strings.Contains(e.Args+e.Summary, "hoover") || strings.Contains(e.Args+e.Summary, "Tom") {
			t.Errorf("audit row %d holds the fact's words: %+v", e.ID, e)
		}
		if e.Kind == store.KindToolCall {
			calls = append(calls, e.Tool+" "+e.Args+" "+e.Summary)
		}
	}
	hash := store.FactHash(fact)
	want := []string{
		`recall {"query":"sha256:` + store.FactHash("* ^ :") + `"} error: the query holds no word to look for: give words the fact would contain, like "birthday Maria"`,
		`recall {"limit":50,"query":"sha256:` + store.FactHash("hoover NOT cat*") + `"} facts #1`,
		`remember {"fact":"sha256:` + hash + `"} fact #1`,
		`remember {"fact":"sha256:` + hash + `"} fact #1`,
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("the audited calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
}

// TestFactsRefused: a fact that looks like a secret (a key's shape, a
// secret the daemon holds, a password given by name), is empty, too long
// or hides characters is refused with the reason, and nothing is stored;
// the audit holds neither the secret nor the fact.
func TestFactsRefused(t *testing.T) {
	t.Parallel()
	u := newMemUnit(t, 2048)
	for _, tc := range []struct{ fact, why string }{
		{"The owner's OpenAI key is sk-proj-abcdefghijklmnopqrstuvwxyz0123", "looks like it holds a secret"},
		{"The wifi password: hunter2-owner-secret", "looks like it holds a secret"},
		{"password=correcthorsebattery", "looks like it holds a secret"},
		{"The GitHub token is ghp_abcdefghijklmnopqrstuvwxyz0123456789", "looks like it holds a secret"},
		{"   ", "the fact is empty"},
		{strings.Repeat("ab", core.MaxFactChars/2+1), "the fact is 1002 characters; the most is 1000"},
		{"hidden\u202etxt.exe", "holds the bidirectional"},
		{"zero\u200bwidth", "holds"},
		{"bell\x07", "the control character"},
	} {
		args, _ := json.Marshal(map[string]string{"fact": tc.fact})
		reply := u.turn(t, "c1", "remember this", coretest.Call("r", contracts.ToolRemember, string(args)))
		if !strings.Contains(reply, "remember ok=false") || !strings.Contains(reply, tc.why) {
			t.Errorf("%q: %q", tc.fact, reply)
		}
	}
	if n, err := u.store.CountFacts(t.Context()); err != nil || n != 0 {
		t.Errorf("%d facts stored, %v", n, err)
	}
	entries, _ := u.core.Audit(t.Context(), core.AuditQuery{Limit: 100})
	for _, e := range entries {
		for _, secret := range []string{"sk-proj-", "hunter2", "correcthorse", "ghp_"} {
			if strings.Contains(e.Args+e.Summary, secret) {
				t.Errorf("audit row %d holds %q: %+v", e.ID, secret, e)
			}
		}
	}
}

// TestFactsInThePrompt: a turn's job carries the facts most relevant to
// its input first, then the latest, within memory.context_bytes (each
// line counted as the prompt shows it); the prompt shows them under the
// heading that calls them data. A forgotten fact is in no later job, no
// prompt and no recall; with a budget of 0 no fact is.
func TestFactsInThePrompt(t *testing.T) {
	t.Parallel()
	const budget = 400
	u := newMemUnit(t, budget)
	ctx := t.Context()
	var ids []int64
	for i := range 30 {
		text := fmt.Sprintf("Filler fact number %d about the weather and other things of little interest.", i)
		if i == 7 {
			text = "The owner's sister Ingrid lives in Tromsø and visits at Easter."
		}
		f, _, err := u.store.Remember(ctx, "c0", 1, text, time.Unix(int64(1000+i), 0), 0)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, f.ID)
	}
	u.turn(t, "c1", "When does Ingrid visit?")
	jobs := u.sp.Jobs()
	mem := jobs[len(jobs)-1].Memory
	if len(mem) < 2 || mem[0].ID != ids[7] {
		t.Fatalf("the job's facts = %+v; want Ingrid's first", mem)
	}
	if mem[1].ID != ids[29] {
		t.Errorf("after the relevant one, the latest: %+v", mem)
	}
	used := 0
	for _, f := range mem {
		used += len(contracts.FactLine(f)) + 1
	}
	if used > budget {
		t.Errorf("the facts take %d bytes, over the budget of %d", used, budget)
	}
	sys := u.lastSystem()
	if !strings.Contains(sys, worker.MemoryHeading) || !strings.Contains(sys, `: "The owner's sister Ingrid lives in Tromsø and visits at Easter."`) {
		t.Errorf("the prompt lacks the facts:\n%s", sys)
	}

	if _, err := u.core.ForgetMemory(ctx, ids[7], "cli"); err != nil {
		t.Fatal(err)
	}
	reply := u.turn(t, "c1", "When does Ingrid visit?", coretest.Call("r", contracts.ToolRecall, `{"query":"Ingrid Tromsø Easter"}`))
	jobs = u.sp.Jobs()
	for _, f := range jobs[len(jobs)-1].Memory {
		if f.ID == ids[7] {
			t.Errorf("the forgotten fact is in the job: %+v", f)
		}
	}
	for _, req := range u.model.Requests()[len(u.model.Requests())-2:] {
		if strings.Contains(req.System, "Ingrid") {
			t.Errorf("the forgotten fact is in a prompt:\n%s", req.System)
		}
	}
	if !strings.Contains(reply, "recall ok=true No remembered fact holds any of those words.") {
		t.Errorf("recall after forget: %q", reply)
	}
	if _, err := u.core.ForgetMemory(ctx, ids[7], "cli"); !errors.Is(err, core.ErrNoSuchFact) {
		t.Errorf("forget again: %v", err)
	}

	u.core.Tune(core.Tuning{MemoryBytes: 0})
	u.turn(t, "c1", "filler weather")
	jobs = u.sp.Jobs()
	if m := jobs[len(jobs)-1].Memory; len(m) != 0 || strings.Contains(u.lastSystem(), worker.MemoryHeading) {
		t.Errorf("with no budget, the job holds %d facts", len(m))
	}
}

// TestOwnerEditsAFact: the owner's edit is checked as a remembered fact
// is, replaces the text in later prompts, and is refused for a fact that
// is not there.
func TestOwnerEditsAFact(t *testing.T) {
	t.Parallel()
	u := newMemUnit(t, 2048)
	ctx := t.Context()
	f, _, err := u.store.Remember(ctx, "c1", 1, "The dentist is on Monday.", time.Unix(1000, 0), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.core.EditMemory(ctx, f.ID, "token: sk-ant-abcdefghijklmnopqrstuvwxyz", "cli"); !errors.Is(err, core.ErrBadInput) {
		t.Errorf("a secret: %v", err)
	}
	if _, err := u.core.EditMemory(ctx, 99, "x", "cli"); !errors.Is(err, core.ErrNoSuchFact) {
		t.Errorf("no such fact: %v", err)
	}
	// The most a fact may hold, of the characters JSON escapes: not cut,
	// not taken for a secret.
	if _, err := u.core.EditMemory(ctx, f.ID, strings.Repeat(`<>&\`, core.MaxFactChars/4), "cli"); err != nil {
		t.Errorf("a fact of %d escaped characters: %v", core.MaxFactChars, err)
	}
	e, err := u.core.EditMemory(ctx, f.ID, " The dentist is on Tuesday. ", "cli")
	if err != nil || e.Text != "The dentist is on Tuesday." {
		t.Fatalf("edit = %+v, %v", e, err)
	}
	u.turn(t, "c1", "when is the dentist?")
	if sys := u.lastSystem(); !strings.Contains(sys, "Tuesday") || strings.Contains(sys, "Monday") {
		t.Errorf("the prompt after the edit:\n%s", sys)
	}
	if got, err := u.core.Memory(ctx, f.ID); err != nil || got.Text != e.Text {
		t.Errorf("Memory = %+v, %v", got, err)
	}
	if list, err := u.core.Memories(ctx, core.FactQuery{Query: "dentist"}); err != nil || len(list) != 1 {
		t.Errorf("Memories = %+v, %v", list, err)
	}
}

// TestMemoryAuditNamesNumbersOnly: the audit of the memory tools names the
// facts by number, also when a fact's text holds a number of its own, and
// holds a hash of arguments that are not even JSON.
func TestMemoryAuditNamesNumbersOnly(t *testing.T) {
	t.Parallel()
	u := newMemUnit(t, 2048)
	// The owner watching the turn sees what is remembered; the audit does not keep it.
	var live []string
	u.model.Script(coretest.Reply("", coretest.Call("r1", contracts.ToolRemember, `{"fact":"Flat #57 holds the spare key of the Larsen family."}`)), coretest.Results)
	if _, err := u.core.Send(context.Background(), "c1", "note it", core.Events{Tool: func(te contracts.ToolEvent) {
		live = append(live, te.Phase+" "+te.Arguments+" "+te.Summary)
	}}); err != nil {
		t.Fatal(err)
	}
	if len(live) != 2 || !strings.Contains(live[1], `end {"fact":"Flat #57 holds the spare key of the Larsen family."} Remembered as fact #1.`) {
		t.Errorf("the live events = %q", live)
	}
	u.turn(t, "c1", "where?", coretest.Call("r2", contracts.ToolRecall, `{"query":"spare key"}`))
	u.turn(t, "c1", "note it", coretest.Call("r3", contracts.ToolRemember, `the Larsen family is away`))
	entries, err := u.core.Audit(t.Context(), core.AuditQuery{Limit: 100, Chat: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if strings.Contains(e.Args+e.Summary, "Larsen") || strings.Contains(e.Args+e.Summary, "#57") {
			t.Errorf("audit row %d holds the fact's words: %+v", e.ID, e)
		}
		if e.Kind == store.KindToolCall {
			got = append(got, e.Summary)
		}
	}
	if len(got) != 3 || got[1] != "facts #1" || got[2] != "fact #1" || !strings.HasPrefix(got[0], "error: the arguments are not valid JSON") {
		t.Errorf("the audited summaries = %q", got)
	}
}
