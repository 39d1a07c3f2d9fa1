package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
)

// runStdin is run with stdin as the command's standard input (an
// *os.File is handed over as it is: /dev/null stays /dev/null).
func runStdin(t *testing.T, h string, stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = stdin
	return execute(t, cmd, h, nil)
}

// countingModel answers with how many messages it was sent, so a reply
// shows how much history the turn carried.
func countingModel(r brokertest.Recorded) brokertest.Reply {
	return brokertest.Reply{Text: fmt.Sprintf("saw %d messages", len(r.Request.Messages))}
}

// TestChatOneShotIsItsOwnConversation: `chat -m` starts a new conversation
// each run, so scripts share no history with the owner's chat or with each
// other; --chat continues a named one; the interactive chat keeps its own.
func TestChatOneShotIsItsOwnConversation(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", countingModel)
	h := home(t, "openai", srv.BaseURL(), "")
	say := func(stdin string, args ...string) string {
		t.Helper()
		stdout, stderr, code := run(t, h, stdin, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d %s %s", args, code, stdout, stderr)
		}
		return stdout
	}
	say("hello\n", "chat") // the owner's conversation
	for i := range 2 {
		if out := say("", "chat", "-m", "from a script"); strings.TrimSpace(out) != "saw 1 messages" {
			t.Errorf("one-shot run %d carried history: %q", i, out)
		}
	}
	say("", "chat", "-m", "first", "--chat", "job")
	if out := say("", "chat", "-m", "second", "--chat", "job"); strings.TrimSpace(out) != "saw 3 messages" {
		t.Errorf("--chat job did not continue the conversation: %q", out)
	}
	if out := say("again\n", "chat"); !strings.Contains(out, "saw 3 messages") {
		t.Errorf("the interactive chat lost its conversation, or saw the scripts': %q", out)
	}
}

// TestChatOneShotFailure: a provider failure is an error on stderr with
// exit status 1, not a reply on stdout; an empty message is bad input
// (2); a turn waiting for the owner is 4.
func TestChatOneShotFailure(t *testing.T) {
	t.Parallel()
	down := brokertest.NewServer(t, "openai", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Status: 401, Text: "invalid api key"}
	})
	h := home(t, "openai", down.BaseURL(), "")
	stdout, stderr, code := run(t, h, "", "chat", "-m", "hello?")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "error: I could not get an answer from the model") {
		t.Errorf("provider failure: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	stdout, stderr, code = run(t, h, "", "chat", "-m", " ")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "the message is empty") {
		t.Errorf("empty message: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	srv := brokertest.NewServer(t, "openai", riskyScript("write_file", `{"path":"x.txt","content":"x"}`))
	h = home(t, "openai", srv.BaseURL(), "")
	stdout, stderr, code = run(t, h, "", "chat", "-m", "write it")
	if code != 4 || !strings.Contains(stdout, "write_file") || !strings.Contains(stderr, "shelldon approvals approve ") {
		t.Errorf("parked: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestInputFromDevNull: /dev/null is a character device, not a terminal:
// `init` and `config set-secret` read it as input instead of prompting on
// it (which failed: "read secret: ... not supported in this terminal").
func TestInputFromDevNull(t *testing.T) {
	t.Parallel()
	devNull := func() *os.File {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	h := filepath.Join(t.TempDir(), "home")
	stdout, stderr, code := runStdin(t, h, devNull(), "init", "--provider", "openai")
	if code != 0 || strings.Contains(stderr, "read secret") {
		t.Fatalf("init < /dev/null: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(h, "config.yaml")); err != nil {
		t.Fatalf("init < /dev/null wrote no config: %v", err)
	}
	// An empty value is refused as such, not by a prompt that cannot run.
	_, stderr, code = runStdin(t, h, devNull(), "config", "set-secret", "OPENAI_API_KEY")
	if code == 0 || strings.Contains(stderr, "read secret") || !strings.Contains(stderr, "empty") {
		t.Errorf("set-secret < /dev/null: exit %d %s", code, stderr)
	}
	stdout, stderr, code = runStdin(t, h, strings.NewReader("sk-from-a-pipe\n"), "config", "set-secret", "OPENAI_API_KEY")
	if data, _ := os.ReadFile(filepath.Join(h, ".env")); code != 0 || !strings.Contains(string(data), "sk-from-a-pipe") {
		t.Errorf("set-secret from a pipe: exit %d %s %s; .env %q", code, stdout, stderr, data)
	}
}

// TestAuditShowsKind: `shelldon audit` has a KIND column, so the row of a
// request filed (OK) reads apart from the row of its denial.
func TestAuditShowsKind(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", riskyScript("write_file", `{"path":"x.txt","content":"x"}`))
	h := home(t, "openai", srv.BaseURL(), "")
	_, stderr, _ := run(t, h, "", "chat", "-m", "write it")
	m := regexp.MustCompile(`approvals approve (\S+)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no request: %s", stderr)
	}
	if stdout, stderr, code := run(t, h, "", "approvals", "deny", m[1]); code != 0 {
		t.Fatalf("deny: exit %d %s %s", code, stdout, stderr)
	}
	stdout, _, code := run(t, h, "", "audit")
	if code != 0 || !regexp.MustCompile(`(?m)^ID +TIME +CHAT +TURN +KIND +TOOL +OK `).MatchString(stdout) {
		t.Fatalf("audit: exit %d, no KIND column:\n%s", code, stdout)
	}
	for _, row := range []string{`approval_requested +write_file +true `, `approval_denied +write_file +false `, `tool_call +get_time +true `} {
		if !regexp.MustCompile(`(?m) ` + row).MatchString(stdout) {
			t.Errorf("audit lacks a row %q:\n%s", row, stdout)
		}
	}
}
