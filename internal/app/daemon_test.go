package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/childproc"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/testbin"
)

// TestMain lets the test binary serve as the sandbox helper the App's
// probe starts.
func TestMain(m *testing.M) {
	if childproc.IsChild(os.Args) {
		childproc.Main()
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

const testToken = "daemon-test-token-0123456789"

// testHome is a home whose provider is never reached: these tests run no
// turn.
func testHome(t *testing.T) (home string, environ []string) {
	t.Helper()
	home = t.TempDir()
	cfg := "provider:\n  kind: openai\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  api_key_env: TEST_KEY\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, []string{"HOME=" + home, "TEST_KEY=sk-test-0123456789abcdef", "SHELLDON_API_TOKEN=" + testToken}
}

func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestDaemonRunAndClose: the daemon serves the API with its token, shows
// every built-in tool, closes expired approvals on its tick, and stops
// when its context ends.
func TestDaemonRunAndClose(t *testing.T) {
	home, environ := testHome(t)
	ctx := context.Background()
	a, err := OpenFor(ctx, ForDaemon, home, environ, io.Discard, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// A request already past its expiry, as a daemon that was down finds it.
	id := store.NewApprovalID()
	past := time.Now().Add(-time.Minute)
	if err := a.Store.CreateApproval(ctx, store.Approval{ID: id, Kind: "tool_call", Chat: "c", Turn: 1, Tool: "run_shell",
		Args: `{"command":"true"}`, ArgsHash: "0123456789abcdef", Summary: "s", State: "pending", CreatedAt: past.Add(-time.Hour), ExpiresAt: past,
		Pending: contracts.Pending{Call: contracts.ToolCall{ID: "x", Name: "run_shell", Arguments: `{"command":"true"}`}}}); err != nil {
		t.Fatal(err)
	}

	d, err := NewDaemon(a, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d.ExpireEvery = 10 * time.Millisecond
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(runCtx) }()
	base := "http://" + d.Addr().String()

	if code, _ := get(t, base+"/healthz", ""); code != 200 {
		t.Errorf("healthz: %d", code)
	}
	if code, _ := get(t, base+"/api/tools", ""); code != 401 {
		t.Errorf("tools without the token: %d", code)
	}
	code, body := get(t, base+"/api/tools", testToken)
	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &tools) != nil {
		t.Fatalf("tools: %d %s", code, body)
	}
	if got, want := len(tools.Tools), len(contracts.BuiltinTools()); got != want {
		t.Errorf("the API lists %d tools, the catalogue has %d", got, want)
	}

	// The expiry tick closes the stale request (waiting for that event,
	// bounded, not for a fixed time).
	deadline := time.Now().Add(10 * time.Second)
	for {
		ap, err := a.Store.Approval(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if ap.State != "pending" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon did not close an expired request")
		}
		time.Sleep(5 * time.Millisecond)
	}

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(35 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if err := d.Close(); err != nil {
		t.Errorf("Close after Run: %v", err)
	}
}

// TestNewDaemonRefusesABusyAddress: a listen address in use is an error at
// construction, naming the address.
func TestNewDaemonRefusesABusyAddress(t *testing.T) {
	home, environ := testHome(t)
	a, err := OpenFor(context.Background(), ForTurns, home, environ, io.Discard, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	first, err := NewDaemon(a, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if _, err := NewDaemon(a, first.Addr().String()); err == nil || !strings.Contains(err.Error(), first.Addr().String()) {
		t.Fatalf("a second daemon on %s: %v", first.Addr(), err)
	}
}

// TestOpenModes: only the daemon closes turns a crash left running; a
// command that only reads neither touches them nor runs a turn.
func TestOpenModes(t *testing.T) {
	home, environ := testHome(t)
	ctx := context.Background()
	a, err := OpenFor(ctx, ForReading, home, environ, io.Discard, 0)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := a.Store.BeginTurn(ctx, "c", "hello", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if a.Core != nil || a.Reader == nil {
		t.Errorf("an App opened for reading has Core %v and Reader %v: want only the read side", a.Core, a.Reader)
	}
	if _, err := a.Reader.Approvals(ctx); err != nil {
		t.Errorf("the read side of an App opened for reading: %v", err)
	}
	if _, err := NewDaemon(a, "127.0.0.1:0"); err == nil {
		t.Error("a daemon was built over an App opened for reading")
	}
	a.Close()

	for _, mode := range []Mode{ForReading, ForTurns} {
		a, err := OpenFor(ctx, mode, home, environ, io.Discard, 0)
		if err != nil {
			t.Fatal(err)
		}
		info, err := a.Store.Turn(ctx, turn)
		a.Close()
		if err != nil || info.Status != "running" {
			t.Fatalf("mode %d: the running turn became %q (%v): only the daemon may recover it", mode, info.Status, err)
		}
	}
	a, err = OpenFor(ctx, ForDaemon, home, environ, io.Discard, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if info, err := a.Store.Turn(ctx, turn); err != nil || info.Status == "running" {
		t.Fatalf("the daemon left a crashed turn running: %q %v", info.Status, err)
	}
}

// serveHome opens home for the daemon, serves it on a loopback port until
// the test ends (waiting, bounded, for Run to return), and returns the App
// and the Daemon.
func serveHome(t *testing.T, home string, environ []string) (*App, *Daemon) {
	t.Helper()
	ctx := context.Background()
	a, err := OpenFor(ctx, ForDaemon, home, environ, io.Discard, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDaemon(a, "127.0.0.1:0")
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		select {
		case <-done:
		case <-time.After(35 * time.Second):
			t.Error("Run did not return")
		}
		d.Close()
		a.Close()
	})
	return a, d
}
