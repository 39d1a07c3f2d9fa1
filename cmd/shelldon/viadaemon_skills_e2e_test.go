package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/skill"
)

// daemonHome is a home whose server.listen is a free loopback port and
// whose .env holds the API token, as a home whose daemon the owner's
// commands find; the provider is srv.
func daemonHome(t *testing.T, srv *brokertest.Server) (h, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	h = home(t, "openai", srv.BaseURL(), fmt.Sprintf("server:\n  listen: %s\n", addr))
	f, err := os.OpenFile(filepath.Join(h, ".env"), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "SHELLDON_API_TOKEN="+testAPIToken)
	f.Close()
	return h, addr
}

// twoVersions gives the owner's skill name a version 2, version 1 kept.
func twoVersions(t *testing.T, h, name string) {
	t.Helper()
	lib, err := skill.Open(filepath.Join(h, "skills"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Create(name, "First "+name+".", "1. First."); err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Update(name, "Second "+name+".", "1. Second."); err != nil {
		t.Fatal(err)
	}
}

// TestSkillsAndSecretsGoThroughTheDaemon: with a daemon running,
// 'skills rollback|remove' are done by the daemon (its audit row says by
// http; the command itself would write by cli) and refused with its
// reason; 'config set-secret' has the daemon write .env and apply the
// secret at once (its next model call carries the new key, without a
// restart), and a refused secret leaves .env byte-identical. With the
// daemon stopped, the same commands do the work themselves.
func TestSkillsAndSecretsGoThroughTheDaemon(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", brokertest.Sequence())
	h, addr := daemonHome(t, srv)
	twoVersions(t, h, "water-plants")
	twoVersions(t, h, "plan-week")
	d := startServeAt(t, h, addr)

	stdout, stderr, code := run(t, h, "", "skills", "rollback", "water-plants")
	if code != 0 || stdout != "water-plants is back at version 1.\n" {
		t.Fatalf("rollback: %d %q %q", code, stdout, stderr)
	}
	_, audit := d.do(t, "GET", "/api/audit?tool=water-plants", d.token, nil)
	if s := fmt.Sprint(audit); !strings.Contains(s, "kind:skill_rolled_back") || !strings.Contains(s, "summary:by http: back at version 1") {
		t.Errorf("the daemon did not roll it back: %v", audit)
	}
	if _, list := d.do(t, "GET", "/api/skills", d.token, nil); !strings.Contains(fmt.Sprint(list), "description:First water-plants. name:water-plants source:owner version:1") {
		t.Errorf("the daemon's skills: %v", list)
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"rollback", "water-plants"}, `shelldon: skill "water-plants": no earlier version before version 1`},
		{[]string{"remove", "daily-note"}, `shelldon: skill "daily-note": bundled skills are read-only: it cannot be removed`},
		{[]string{"rollback", "no-such"}, `shelldon: skill "no-such": no such skill`},
	} {
		stdout, stderr, code := run(t, h, "", append([]string{"skills"}, tc.args...)...)
		if code != 1 || strings.TrimSpace(stderr) != tc.msg || stdout != "" {
			t.Errorf("skills %v: %d %q %q, want 1 %q", tc.args, code, stdout, stderr, tc.msg)
		}
	}
	if stdout, stderr, code := run(t, h, "", "skills", "remove", "water-plants"); code != 0 || !strings.Contains(stdout, "Removed water-plants") {
		t.Fatalf("remove: %d %q %q", code, stdout, stderr)
	}
	if _, audit := d.do(t, "GET", "/api/audit?tool=water-plants", d.token, nil); !strings.Contains(fmt.Sprint(audit), "kind:skill_removed") || !strings.Contains(fmt.Sprint(audit), "summary:by http") {
		t.Errorf("the daemon did not remove it: %v", audit)
	}

	newKey := "sk-rotated-0123456789abcdefghijklmnop"
	stdout, stderr, code = run(t, h, newKey+"\n", "config", "set-secret", "TEST_PROVIDER_KEY")
	if code != 0 || !strings.Contains(stdout, "applied by the running daemon") || strings.Contains(stdout+stderr, newKey) {
		t.Fatalf("set-secret: %d %q %q", code, stdout, stderr)
	}
	if status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "k", "text": "hello"}); status != 200 {
		t.Fatalf("chat: %d %v", status, out)
	}
	reqs := srv.Requests()
	if got := reqs[len(reqs)-1].Header.Get("Authorization"); got != "Bearer "+newKey {
		t.Errorf("the daemon's next model call carries %q, not the new key", got)
	}
	env, _ := os.ReadFile(filepath.Join(h, ".env"))
	if !strings.Contains(string(env), `TEST_PROVIDER_KEY="`+newKey+"\"\n") {
		t.Errorf(".env: the new key is not there")
	}
	for _, tc := range []struct{ name, value, msg string }{
		{"bad name", "sk-refused-value-0123456789", "not a variable name"},
		{"EMPTY_KEY", "", "the value of EMPTY_KEY is empty"},
		{"SHELLDON_API_TOKEN", "short-token", "at least 16 characters"},
	} {
		stdout, stderr, code := run(t, h, tc.value+"\n", "config", "set-secret", tc.name)
		if code != 1 || !strings.Contains(stderr, tc.msg) || (tc.value != "" && strings.Contains(stdout+stderr, tc.value)) {
			t.Errorf("set-secret %q: %d %q %q", tc.name, code, stdout, stderr)
		}
		if now, _ := os.ReadFile(filepath.Join(h, ".env")); string(now) != string(env) {
			t.Errorf("set-secret %q was refused but .env changed", tc.name)
		}
	}
	if strings.Contains(d.log(), newKey) {
		t.Error("the new key reached the daemon's log")
	}

	// No daemon: the command does it, as itself.
	d.stop(t)
	if stdout, stderr, code := run(t, h, "", "skills", "rollback", "plan-week"); code != 0 || stdout != "plan-week is back at version 1.\n" {
		t.Fatalf("rollback with no daemon: %d %q %q", code, stdout, stderr)
	}
	var summary string
	if err := openDB(t, h).QueryRowContext(context.Background(), `SELECT summary FROM audit WHERE kind = 'skill_rolled_back' AND tool = 'plan-week'`).Scan(&summary); err != nil || summary != "by cli: back at version 1" {
		t.Errorf("the rollback with no daemon is audited as %q (%v)", summary, err)
	}
	if stdout, stderr, code := run(t, h, "", "skills", "remove", "no-such"); code != 1 || !strings.Contains(stderr, `skill "no-such": no such skill`) {
		t.Errorf("a refusal with no daemon: %d %q %q", code, stdout, stderr)
	}
	lastKey := "sk-offline-0123456789abcdefghijklmnop"
	stdout, stderr, code = run(t, h, lastKey+"\n", "config", "set-secret", "TEST_PROVIDER_KEY")
	if code != 0 || !strings.Contains(stdout, "picks it up at the next settings change or restart") || strings.Contains(stdout+stderr, lastKey) {
		t.Fatalf("set-secret with no daemon: %d %q %q", code, stdout, stderr)
	}
	if env, _ := os.ReadFile(filepath.Join(h, ".env")); !strings.Contains(string(env), `TEST_PROVIDER_KEY="`+lastKey+"\"\n") {
		t.Error(".env: the key set with no daemon is not there")
	}
}
