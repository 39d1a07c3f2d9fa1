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

// fakeAPI is a Bot API server on 127.0.0.1 that records every call and
// serves getUpdates from updates the test pushes, honouring offset and
// timeout like Telegram does.
type fakeAPI struct {
	srv *httptest.Server

	mu      sync.Mutex
	calls   []apiCall
	updates []json.RawMessage
	ids     []int64
	nextID  int64
	nextMsg int64
	wake    chan struct{}
	fail    map[string][]failure
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{nextID: 100, nextMsg: 1000, wake: make(chan struct{}), fail: map[string][]failure{}}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
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
	f.calls = append(f.calls, call)
	f.mu.Unlock()
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
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	for {
		f.mu.Lock()
		var out []json.RawMessage
		for i, id := range f.ids {
			if id >= int64(offset) {
				out = append(out, f.updates[i])
			}
		}
		wake := f.wake
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
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	u["update_id"] = f.nextID
	raw, _ := json.Marshal(u)
	f.pushLocked(f.nextID, raw)
	return f.nextID
}

// pushRaw queues an update as given (it may not decode).
func (f *fakeAPI) pushRaw(format string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.pushLocked(f.nextID, json.RawMessage(fmt.Sprintf(format, f.nextID)))
	return f.nextID
}

func (f *fakeAPI) pushLocked(id int64, raw json.RawMessage) {
	f.ids = append(f.ids, id)
	f.updates = append(f.updates, raw)
	close(f.wake)
	f.wake = make(chan struct{})
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
	tools    []core.ToolView
	audit    []store.AuditEntry
	reply    func(ctx context.Context, chat, text string) (core.Outcome, error)
	decide   func(ctx context.Context, id string, approve bool) // runs before the decision returns
}

func newFakeCore() *fakeCore {
	return &fakeCore{executed: map[string]int{}, expired: map[string]bool{},
		tools: []core.ToolView{
			{Name: "write_file", Tier: "risky", Runs: "worker", Source: "builtin", State: "live"},
			{Name: "word_count", Tier: "free", Runs: "sandbox", Source: "self", State: "quarantined", Version: 3, Strikes: 2},
		}}
}

func (c *fakeCore) Send(ctx context.Context, chat, text string, _ core.Events) (core.Outcome, error) {
	c.mu.Lock()
	c.sends = append(c.sends, chat+"|"+text)
	reply := c.reply
	c.mu.Unlock()
	if reply != nil {
		return reply(ctx, chat, text)
	}
	return core.Outcome{Turn: 1, Reply: "echo: " + text, Approvals: []core.ApprovalView{}}, nil
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

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// harness runs a Bot against a fake API and a fake core.
type harness struct {
	api  *fakeAPI
	core *fakeCore
	bot  *Bot
	logs *syncBuffer
	stop func() // cancels Run and waits for it
}

// startBot runs a bot; edit adjusts its options. The bot is stopped, and
// its logs checked for the token, at the end of the test.
func startBot(t *testing.T, api *fakeAPI, fc *fakeCore, offsetFile string, edit func(*Options)) *harness {
	return startTuned(t, api, fc, offsetFile, edit, nil)
}

// startTuned is startBot with tune applied to the Bot before it runs.
func startTuned(t *testing.T, api *fakeAPI, fc *fakeCore, offsetFile string, edit func(*Options), tune func(*Bot)) *harness {
	t.Helper()
	logs := &syncBuffer{}
	opts := Options{
		Token: testToken, APIBase: api.srv.URL, AllowedUsers: []int64{owner}, Core: fc, Audit: fc,
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
	if tune != nil {
		tune(b)
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
	return startBot(t, newFakeAPI(t), newFakeCore(), "", nil)
}

// waitFor polls cond until it holds, or fails the test after 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settle gives the bot a moment in which nothing should happen.
func settle() { time.Sleep(150 * time.Millisecond) }
