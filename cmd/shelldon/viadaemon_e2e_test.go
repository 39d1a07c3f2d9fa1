package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
)

// TestOwnerCommandsGoThroughTheDaemon: with a daemon running on the home's
// server.listen, 'approvals approve' has it decide and carry out the call
// (it holds the lease), 'config set' has it apply the change at once, and
// a tool action's refusal is the daemon's.
func TestOwnerCommandsGoThroughTheDaemon(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := brokertest.NewServer(t, "openai", riskyScript("run_shell", `{"command":"echo once >> once.log"}`))
	h := home(t, "openai", srv.BaseURL(), fmt.Sprintf("server:\n  listen: %s\n", addr))
	// The commands find the daemon's token where the daemon does: .env.
	f, err := os.OpenFile(filepath.Join(h, ".env"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "SHELLDON_API_TOKEN="+testAPIToken)
	f.Close()
	d := startServeAt(t, h, addr)
	_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "v", "text": "log it"})
	id := approvalID(t, out)

	stdout, stderr, code := run(t, h, "", "approvals", "approve", id)
	if code != 0 || !strings.Contains(stdout, "run_shell ok=true") {
		t.Fatalf("approve through the daemon: %d %s %s", code, stdout, stderr)
	}
	_, audit := d.do(t, "GET", "/api/audit?limit=50", d.token, nil)
	if !strings.Contains(fmt.Sprint(audit), "request "+id+" by http") {
		t.Errorf("the daemon did not decide it: %v", audit)
	}
	if !strings.Contains(d.log(), "turn finished") {
		t.Error("the daemon ran no turn")
	}
	stdout, stderr, code = run(t, h, "", "config", "set", "agent.turn_budget", "40s")
	if code != 0 || !strings.Contains(stdout, "applied by the running daemon") {
		t.Fatalf("config set: %d %s %s", code, stdout, stderr)
	}
	if _, s := d.do(t, "GET", "/api/settings", d.token, nil); !strings.Contains(fmt.Sprint(s), "40s") {
		t.Errorf("the running daemon did not apply it: %v", s)
	}
	if _, stderr, code = run(t, h, "", "tools", "quarantine", "no-such-tool"); code != 1 || !strings.Contains(stderr, "no such tool") {
		t.Errorf("a refused action: %d %s", code, stderr)
	}
}
