package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
)

const (
	testToken  = "123456:TEST-secret_token-abcdefghij"
	owner      = int64(42)
	strangerID = int64(666)
)

// apiCall is one request the fake Bot API received.
type apiCall struct {
	Method   string
	Params   map[string]any // the JSON body, or the multipart fields
	FileName string         // multipart: the file's name
	File     string         // multipart: the file's content
	MsgID    int64          // the message id the fake answered with
}

func (c apiCall) str(key string) string {
	switch v := c.Params[key].(type) {
	case string:
		return v
	case float64:
		return fmt.Sprint(int64(v))
	}
	return ""
}

func (c apiCall) chatID() int64 {
	var n int64
	fmt.Sscan(c.str("chat_id"), &n)
	return n
}

// buttons returns the callback data of an inline keyboard, row by row.
func (c apiCall) buttons() []string {
	raw, _ := json.Marshal(c.Params["reply_markup"])
	var kb keyboard
	json.Unmarshal(raw, &kb)
	var out []string
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			out = append(out, b.CallbackData)
		}
	}
	return out
}

type failure struct {
	code       int
	retryAfter int
}

// signal tells waiters that something was recorded: a call, an update or
// a log line. A waiter takes changed() before it looks, so that it cannot
// miss what happens between its look and its wait.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// changed returns a channel that is closed at the next notify.
func (s *signal) changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// until blocks until cond holds, looking again at each notify, or until
// ctx ends.
func (s *signal) until(ctx context.Context, cond func() bool) error {
	for {
		ch := s.changed()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitFor blocks until cond holds, or fails the test after 10 s (of the
// bubble's clock inside synctest.Test, which passes only when every
// goroutine is blocked).
func (s *signal) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s.until(ctx, cond) != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// fakeAPI is a Bot API that records every call and serves getUpdates from
// updates the test pushes, honouring offset and timeout like Telegram
// does. It is an http.Handler and, for tests in a synctest bubble, an
// http.RoundTripper that serves in the caller's goroutine: no network, so
// a bot waiting on it is durably blocked. Each call and each push notifies
// its signal.
type fakeAPI struct {
	signal

	mu      sync.Mutex
	calls   []apiCall
	updates []json.RawMessage
	ids     []int64
	nextID  int64
	nextMsg int64
	fail    map[string][]failure
}

// fakeBase is the APIBase of a bot on a fakeAPI; nothing is dialled.
const fakeBase = "http://bot-api.invalid"

func newFakeAPI() *fakeAPI {
	return &fakeAPI{nextID: 100, nextMsg: 1000, fail: map[string][]failure{}}
}

// RoundTrip serves r in the caller's goroutine.
func (f *fakeAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	w := httptest.NewRecorder()
	f.ServeHTTP(w, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return w.Result(), nil
}

// record keeps a call and wakes the waiters.
func (f *fakeAPI) record(c apiCall) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	f.notify()
}

func writeEnvelope(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	prefix := "/bot" + testToken + "/"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		writeEnvelope(w, 401, map[string]any{"ok": false, "error_code": 401, "description": "Unauthorized"})
		return
	}
	call := apiCall{Method: strings.TrimPrefix(r.URL.Path, prefix), Params: map[string]any{}}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		if err := r.ParseMultipartForm(32 << 20); err != nil {
			writeEnvelope(w, 400, map[string]any{"ok": false, "error_code": 400, "description": "bad multipart"})
			return
		}
		for k, v := range r.MultipartForm.Value {
			call.Params[k] = v[0]
		}
		for _, fhs := range r.MultipartForm.File {
			fh := fhs[0]
			rd, _ := fh.Open()
			raw, _ := io.ReadAll(rd)
			rd.Close()
			call.FileName, call.File = fh.Filename, string(raw)
		}
	} else {
		json.NewDecoder(r.Body).Decode(&call.Params)
	}
	if call.Method == "getUpdates" {
		f.serveUpdates(w, r, call)
		return
	}
	f.mu.Lock()
	var fl *failure
	if q := f.fail[call.Method]; len(q) > 0 {
		fl, f.fail[call.Method] = &q[0], q[1:]
	}
	var result any = true
	switch call.Method {
	case "getMe":
		result = user{ID: 999, IsBot: true, FirstName: "shelldon", Username: "shelldon_bot"}
	case "sendMessage", "sendDocument", "editMessageText":
		f.nextMsg++
		call.MsgID = f.nextMsg
		result = message{MessageID: f.nextMsg, Chat: chat{ID: call.chatID()}, Date: time.Now().Unix(), Text: call.str("text")}
	}
	f.mu.Unlock()
	f.record(call)
	if fl != nil {
		body := map[string]any{"ok": false, "error_code": fl.code, "description": "scripted failure"}
		if fl.retryAfter > 0 {
			body["parameters"] = map[string]any{"retry_after": fl.retryAfter}
		}
		writeEnvelope(w, fl.code, body)
		return
	}
	writeEnvelope(w, 200, map[string]any{"ok": true, "result": result})
}

func (f *fakeAPI) serveUpdates(w http.ResponseWriter, r *http.Request, call apiCall) {
	offset, _ := call.Params["offset"].(float64)
	timeout, _ := call.Params["timeout"].(float64)
	deadline := time.After(time.Duration(timeout * float64(time.Second)))
	f.record(call)
	for {
		wake := f.changed()
		f.mu.Lock()
		var out []json.RawMessage
		for i, id := range f.ids {
			if id >= int64(offset) {
				out = append(out, f.updates[i])
			}
		}
		f.mu.Unlock()
		if len(out) > 0 {
			writeEnvelope(w, 200, map[string]any{"ok": true, "result": out})
			return
		}
		select {
		case <-wake:
		case <-deadline:
			writeEnvelope(w, 200, map[string]any{"ok": true, "result": []any{}})
			return
		case <-r.Context().Done():
			return
		}
	}
}

// push queues an update and returns its id.
func (f *fakeAPI) push(u map[string]any) int64 {
	return f.pushRaw(func(id int64) json.RawMessage {
		u["update_id"] = id
		raw, _ := json.Marshal(u)
		return raw
	})
}

// pushBad queues an update as given (it may not decode); format has a %d
// for its id.
func (f *fakeAPI) pushBad(format string) int64 {
	return f.pushRaw(func(id int64) json.RawMessage { return json.RawMessage(fmt.Sprintf(format, id)) })
}

func (f *fakeAPI) pushRaw(encode func(id int64) json.RawMessage) int64 {
	f.mu.Lock()
	f.nextID++
	id := f.nextID
	f.ids = append(f.ids, id)
	f.updates = append(f.updates, encode(id))
	f.mu.Unlock()
	f.notify()
	return id
}

// acked reports whether the bot has confirmed update id: it asked
// getUpdates for a later offset, which it does only once it has handled
// every update of the batch (see poll).
func (f *fakeAPI) acked(id int64) bool {
	for _, c := range f.callsOf("getUpdates") {
		if off, _ := c.Params["offset"].(float64); int64(off) > id {
			return true
		}
	}
	return false
}

func (f *fakeAPI) failNext(method string, fl failure) {
	f.mu.Lock()
	f.fail[method] = append(f.fail[method], fl)
	f.mu.Unlock()
}

func (f *fakeAPI) callsOf(method string) []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []apiCall
	for _, c := range f.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// sent returns the sendMessage calls whose text contains sub.
func (f *fakeAPI) sent(sub string) []apiCall {
	var out []apiCall
	for _, c := range f.callsOf("sendMessage") {
		if strings.Contains(c.str("text"), sub) {
			out = append(out, c)
		}
	}
	return out
}

func textMsg(from, chatID int64, text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"message_id": 1, "date": time.Now().Unix(), "text": text,
		"from": map[string]any{"id": from, "is_bot": false, "first_name": "Ann"},
		"chat": map[string]any{"id": chatID, "type": "private"},
	}}
}

func press(from, chatID, msgID int64, cardText, data string) map[string]any {
	return map[string]any{"callback_query": map[string]any{
		"id": fmt.Sprintf("cb-%d-%s", from, data), "data": data,
		"from": map[string]any{"id": from, "is_bot": false, "first_name": "Ann"},
		"message": map[string]any{"message_id": msgID, "date": time.Now().Unix(), "text": cardText,
			"chat": map[string]any{"id": chatID, "type": "private"}},
	}}
}

// fakeCore is a hand-written core: it records calls and answers from a
// script; Decide carries out each pending request once.
type fakeCore struct {
	mu       sync.Mutex
	sends    []string // chat + "|" + text
	decides  []string // id + "|" + approve + "|" + by
	executed map[string]int
	pending  []core.ApprovalView
	expired  map[string]bool
	failing  map[string]error // id -> the error Decide returns for it
	tools    []core.ToolView
	audit    []store.AuditEntry
	reply    func(ctx context.Context, chat, text string) (core.Outcome, error)
	decide   func(ctx context.Context, id string, approve bool) // runs before the decision returns
	// keys is what became of each message key, as the real core keeps it:
	// the outcome of a turn that finished, or nil for one cut short.
	keys map[string]*core.Outcome
}

func newFakeCore() *fakeCore {
	return &fakeCore{executed: map[string]int{}, expired: map[string]bool{}, failing: map[string]error{},
		tools: []core.ToolView{
			{Name: "write_file", Tier: "risky", Runs: "worker", Source: "builtin", State: "live"},
			{Name: "word_count", Tier: "free", Runs: "sandbox", Source: "self", State: "quarantined", Version: 3, Strikes: 2},
		}}
}

// SendOnce runs a message's turn once per key, as the real core does: a
// finished one is replayed, one cut short (its context ended) runs again.
func (c *fakeCore) SendOnce(ctx context.Context, chat, key, text string, _ core.Events) (core.Outcome, error) {
	c.mu.Lock()
	if c.keys == nil {
		c.keys = map[string]*core.Outcome{}
	}
	prev, seen := c.keys[key]
	if prev != nil {
		c.mu.Unlock()
		out := *prev
		out.Again = core.Replayed
		return out, nil
	}
	c.sends = append(c.sends, chat+"|"+text)
	c.keys[key] = nil
	reply := c.reply
	c.mu.Unlock()
	out, err := core.Outcome{Turn: 1, Reply: "echo: " + text, Approvals: []core.ApprovalView{}}, error(nil)
	if reply != nil {
		out, err = reply(ctx, chat, text)
	}
	if ctx.Err() == nil {
		c.mu.Lock()
		c.keys[key] = &out
		c.mu.Unlock()
	}
	if seen {
		out.Again = core.Rerun
	}
	return out, err
}

func (c *fakeCore) Approvals(context.Context) ([]core.ApprovalView, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.pending), nil
}

func (c *fakeCore) Decide(ctx context.Context, id string, approve bool, by string, _ core.Events) (core.Outcome, error) {
	c.mu.Lock()
	c.decides = append(c.decides, fmt.Sprintf("%s|%v|%s", id, approve, by))
	hook := c.decide
	c.mu.Unlock()
	if hook != nil {
		hook(ctx, id, approve)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.expired[id] {
		return core.Outcome{}, core.ErrApprovalExpired
	}
	if err := c.failing[id]; err != nil {
		return core.Outcome{}, err
	}
	i := slices.IndexFunc(c.pending, func(a core.ApprovalView) bool { return a.ID == id })
	if i < 0 {
		if c.executed[id] > 0 {
			return core.Outcome{}, core.ErrAlreadyDecided
		}
		return core.Outcome{}, core.ErrUnknownApproval
	}
	c.pending = slices.Delete(c.pending, i, i+1)
	c.executed[id]++
	return core.Outcome{Turn: 2, Reply: fmt.Sprintf("resumed after %s (approved=%v)", id, approve), Approvals: []core.ApprovalView{}}, nil
}

func (c *fakeCore) Tools(context.Context) ([]core.ToolView, error) { return c.tools, nil }

func (c *fakeCore) Audit(_ context.Context, q store.AuditQuery) ([]store.AuditEntry, error) {
	return c.audit[:min(q.Limit, len(c.audit))], nil
}

// set changes the fake under its lock (the bot may be reading it).
func (c *fakeCore) set(f func(c *fakeCore)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

func (c *fakeCore) sendCalls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sends)
}

func (c *fakeCore) executions(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.executed[id]
}

func (c *fakeCore) sendCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sends)
}

func (c *fakeCore) decideCalls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.decides)
}

// syncBuffer is a log sink safe for concurrent writes; each write
// notifies its signal.
type syncBuffer struct {
	signal
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	n, err := s.buf.Write(p)
	s.mu.Unlock()
	s.notify()
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// harness runs a Bot against a fake API and a fake core. Tests that use it
// run inside synctest.Test: the bot's clock is the bubble's, and idle
// tells when the bot has done all it is going to do.
type harness struct {
	api  *fakeAPI
	core *fakeCore
	bot  *Bot
	logs *syncBuffer
	stop func() // cancels Run and waits for it
}

// startBot runs a bot on api; edit adjusts its options. The bot is
// stopped, and its logs checked for the token, at the end of the test.
func startBot(t *testing.T, api *fakeAPI, fc *fakeCore, offsetFile string, edit func(*Options)) *harness {
	t.Helper()
	logs := &syncBuffer{}
	opts := Options{
		Token: testToken, APIBase: fakeBase, HTTPClient: &http.Client{Transport: api},
		AllowedUsers: []int64{owner}, Core: fc, Audit: fc,
		Logger:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		PollTimeout: time.Second, OffsetFile: offsetFile,
		Status: func() string { return "all good <ok>" },
	}
	if edit != nil {
		edit(&opts)
	}
	b, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Error("Run did not return after cancel")
			}
			if strings.Contains(logs.String(), testToken) || strings.Contains(logs.String(), "TEST-secret") {
				t.Errorf("the token appears in the logs:\n%s", logs.String())
			}
		})
	}
	t.Cleanup(stop)
	return &harness{api: api, core: fc, bot: b, logs: logs, stop: stop}
}

func newHarness(t *testing.T) *harness {
	return startBot(t, newFakeAPI(), newFakeCore(), "", nil)
}

// idle waits until the bot has done everything it will do without news:
// every goroutine in the bubble is blocked, the poll on the fake's next
// update and the rest on nothing or on a timer. A test asserts that
// something did not happen after idle, not after a pause.
func idle() { synctest.Wait() }
