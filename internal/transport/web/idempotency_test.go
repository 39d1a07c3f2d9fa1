package web

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
)

// TestChatIdempotencyKey: a chat request retried with the same
// Idempotency-Key runs its turn once, against a real core and store; the
// retry gets that turn's outcome and says so; a retry while the turn runs
// is a 409; a malformed key is a 400 and runs nothing.
func TestChatIdempotencyKey(t *testing.T) {
	t.Parallel()
	m := &coretest.Model{}
	release, started := make(chan struct{}), make(chan struct{})
	var once sync.Once
	m.Script(coretest.Reply("first answer"), func(ctx context.Context, _ contracts.Request) (contracts.Completion, error) {
		once.Do(func() { close(started) })
		<-release
		return coretest.Completion("slow answer"), nil
	})
	c, err := core.New(core.Options{Store: coretest.Store(t), Model: m, Logger: slog.New(slog.DiscardHandler),
		Spawner: &coretest.Spawner{Build: coretest.Builder(coretest.Echo("echo"))}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Chat: c, Approvals: c, Audit: c, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	auth := func(key string) map[string]string {
		h := map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}
		if key != "" {
			h["Idempotency-Key"] = key
		}
		return h
	}
	body := `{"chat":"script","text":"hello"}`

	code, first := do(t, srv, "POST", "/api/chat", auth("k-1"), body)
	if code != 200 || first["reply"] != "first answer" || first["again"] != nil {
		t.Fatalf("first request: %d %v", code, first)
	}
	code, retry := do(t, srv, "POST", "/api/chat", auth("k-1"), body)
	if code != 200 || retry["reply"] != "first answer" || retry["again"] != core.Replayed || retry["turn"] != first["turn"] {
		t.Errorf("retry: %d %v; want the first turn's outcome, replayed", code, retry)
	}
	for _, bad := range []string{"with space", "é", strings.Repeat("a", 129)} {
		if code, out := do(t, srv, "POST", "/api/chat", auth(bad), body); code != 400 {
			t.Errorf("key %q: %d %v; want 400", bad, code, out)
		}
	}
	done := make(chan map[string]any, 1)
	go func() {
		_, out := do(t, srv, "POST", "/api/chat", auth("k-2"), body)
		done <- out
	}()
	<-started
	if code, out := do(t, srv, "POST", "/api/chat", auth("k-2"), body); code != 409 {
		t.Errorf("a retry while the turn runs: %d %v; want 409", code, out)
	}
	close(release)
	if out := <-done; out["reply"] != "slow answer" {
		t.Errorf("the slow turn: %v", out)
	}
	if n := len(m.Requests()); n != 2 {
		t.Errorf("the model was asked %d times; want 2 (one per key)", n)
	}
}
