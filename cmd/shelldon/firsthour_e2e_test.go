package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/transport/telegram/telegramtest"
)

// firstHourModel is the model of a newcomer's first hour: it answers
// init's test request, tells the time, writes a file when asked, proposes
// a tool when asked for one and calls it, follows a skill into its
// bundled file, and reports every tool result it gets.
func firstHourModel(r brokertest.Recorded) brokertest.Reply {
	msgs := r.Request.Messages
	last := msgs[len(msgs)-1]
	call := func(id, name string, args map[string]string) brokertest.Reply {
		raw, _ := json.Marshal(args)
		return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: id, Name: name, Arguments: string(raw)}}}
	}
	if last.Role == contracts.RoleUser {
		text := last.Text
		switch {
		case text == "Reply with OK":
			return brokertest.Reply{Text: "OK"}
		case strings.Contains(text, "time"):
			return call("t1", "get_time", map[string]string{})
		case strings.Contains(text, "write"):
			return call("w1", "write_file", map[string]string{"path": "notes.txt", "content": "first hour"})
		case strings.Contains(text, "word counter"):
			return call("p1", "propose_tool", map[string]string{"name": "word_count", "code": wordCountStar, "test": wordCountStarTest, "language": "starlark"})
		case strings.HasPrefix(text, "count "):
			return call("c1", "word_count", map[string]string{"text": strings.TrimPrefix(text, "count ")})
		case strings.Contains(text, "plants"):
			return call("s1", "use_skill", map[string]string{"name": "water-plants"})
		}
		return brokertest.Reply{Text: "echo: " + text}
	}
	var parts []string
	for _, tr := range last.ToolResults {
		if tr.Name == "use_skill" && tr.OK {
			return call("s2", "read_skill_file", map[string]string{"skill": "water-plants", "path": "reference.md"})
		}
		parts = append(parts, fmt.Sprintf("%s ok=%v %s", tr.Name, tr.OK, tr.Content))
	}
	return brokertest.Reply{Text: "RESULTS: " + strings.Join(parts, " | ")}
}

// TestFirstHour is a newcomer's first hour, scripted, for each kind of
// provider: init without a terminal (its test request answered), a chat
// with a FREE tool, a RISKY write approved from the terminal, a tool the
// agent writes and the owner approves, a skill with a bundled file read on
// demand, and Telegram's first run (the owner's id read from the log,
// allowed, then a chat and an approval tapped on a card).
func TestFirstHour(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		provider, wire string
		keyEnv         string // "" for a keyless server
	}{
		{"anthropic", "anthropic", "ANTHROPIC_API_KEY"},
		{"openai", "openai", "OPENAI_API_KEY"},
		{"ollama", "openai", ""},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			t.Parallel()
			srv := brokertest.NewServer(t, tc.wire, firstHourModel)
			h := filepath.Join(t.TempDir(), "home")
			var keyEnv []string
			if tc.keyEnv != "" {
				keyEnv = []string{tc.keyEnv + "=" + apiKey}
			}
			sh := func(args ...string) (string, string) {
				t.Helper()
				stdout, stderr, code := runOnboard(t, h, stdinDevNull, keyEnv, args...)
				if code != 0 {
					t.Fatalf("shelldon %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
				}
				return stdout, stderr
			}

			// 1. init, off a terminal; its test request is answered.
			args := []string{"init", "--provider", tc.provider, "--base-url", srv.BaseURL(), "--model", "m"}
			if out, _ := sh(args...); !strings.Contains(out, "m answered") {
				t.Fatalf("init did not test the provider:\n%s", out)
			}
			if tc.keyEnv != "" {
				// The key lives in the environment of this session only: put
				// it in .env, as the owner would, for the daemon.
				if _, stderr, code := runOnboardIn(t, h, apiKey+"\n", keyEnv, "config", "set-secret", tc.keyEnv); code != 0 {
					t.Fatalf("set-secret: exit %d %s", code, stderr)
				}
			}

			// 2. A chat with a FREE tool.
			if out, _ := sh("chat", "-m", "what time is it?"); !strings.Contains(out, "get_time ok=true") {
				t.Errorf("chat with get_time: %q", out)
			}

			// 3. A RISKY write, waiting for the owner, approved from the terminal.
			stdout, stderr, code := runOnboard(t, h, stdinDevNull, keyEnv, "chat", "-m", "write my notes")
			if code != 4 || !strings.Contains(stderr, "shelldon approvals approve ") {
				t.Fatalf("a RISKY call from chat -m: exit %d %q %q", code, stdout, stderr)
			}
			id := idInHint(t, stderr)
			if out, _ := sh("approvals", "approve", id); !strings.Contains(out, "write_file ok=true") {
				t.Errorf("approve: %q", out)
			}
			if data, err := os.ReadFile(filepath.Join(h, "workspace", "notes.txt")); err != nil || string(data) != "first hour" {
				t.Errorf("notes.txt after the approval: %q, %v", data, err)
			}

			// 4. A tool the agent writes: gate, the owner's approval, then use.
			stdout, stderr, code = runOnboard(t, h, stdinDevNull, keyEnv, "chat", "-m", "make me a word counter")
			if code != 0 || !strings.Contains(stdout+stderr, "PASSED") || !strings.Contains(stderr, "shelldon approvals approve ") {
				t.Fatalf("propose: exit %d %q %q", code, stdout, stderr)
			}
			sh("tools", "approve", "word_count")
			if out, _ := sh("chat", "-m", "count one two three"); !strings.Contains(out, "word_count ok=true 3") {
				t.Errorf("the new tool: %q", out)
			}

			// 5. A skill of the owner's with a bundled file, read on demand.
			skill := filepath.Join(h, "skills", "water-plants")
			os.MkdirAll(skill, 0o700)
			os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: water-plants\ndescription: >\n  How to water the plants,\n  by season.\n---\nRead reference.md for the amounts.\n"), 0o600)
			os.WriteFile(filepath.Join(skill, "reference.md"), []byte("Basil: 200 ml every two days.\n"), 0o600)
			if out, _ := sh("skills", "show", "water-plants"); !strings.Contains(out, "reference.md") {
				t.Errorf("skills show does not list the bundled file: %q", out)
			}
			if out, _ := sh("chat", "-m", "how do I water the plants?"); !strings.Contains(out, "Basil: 200 ml") {
				t.Errorf("the skill's bundled file was not read: %q", out)
			}

			// 6. Telegram's first run: the token, the owner's id from the log,
			// allowed; then a chat and a card tapped.
			bot := telegramtest.New(t, botToken)
			if _, stderr, code := runOnboardIn(t, h, botToken+"\n", keyEnv, "config", "set-secret", "TELEGRAM_BOT_TOKEN"); code != 0 {
				t.Fatalf("set-secret TELEGRAM_BOT_TOKEN: exit %d %s", code, stderr)
			}
			uncomment(t, h, "api_base", bot.URL())
			d := startServe(t, h, keyEnv...)
			bot.Message("hello?")
			bot.WaitFor(t, "the stranger logged", func() bool {
				return strings.Contains(d.log(), fmt.Sprintf("user_id=%d", telegramtest.Owner))
			})
			if n := len(bot.Sent()); n != 0 {
				t.Errorf("the bot answered a user it does not serve: %q", bot.Sent())
			}
			d.stop(t)
			uncomment(t, h, "allowed_users", fmt.Sprintf("[%d]", telegramtest.Owner))
			startServe(t, h, keyEnv...)
			bot.Message("what time is it now?")
			bot.WaitFor(t, "the answer on Telegram", func() bool { return bot.SentCount("get_time ok=true") == 1 })
			bot.Message("write my notes again")
			bot.WaitFor(t, "the card", func() bool { return len(bot.Buttons()) > 0 })
			i := slices.IndexFunc(bot.Buttons(), func(d string) bool { return strings.HasPrefix(d, "ap:") })
			if i < 0 {
				t.Fatalf("no Approve button: %q", bot.Buttons())
			}
			bot.Press(bot.Buttons()[i])
			bot.WaitFor(t, "the approved call's result", func() bool { return bot.SentCount("write_file ok=true") == 1 })
			if got := len(srv.Requests()); got == 0 {
				t.Error("no model request recorded")
			}
		})
	}
}

// idInHint reads the request id from "shelldon approvals approve ID".
func idInHint(t *testing.T, s string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, "shelldon approvals approve ")
	if !ok {
		t.Fatalf("no request id in %q", s)
	}
	return strings.Fields(rest)[0]
}

// uncomment sets a key init left commented out in config.yaml's
// telegram section, as the owner edits it: "  #key: ..." becomes
// "  key: value".
func uncomment(t *testing.T, h, key, value string) {
	t.Helper()
	path := filepath.Join(h, "config.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^  #` + key + `: .*$`)
	if !re.Match(data) {
		t.Fatalf("config.yaml has no commented %s", key)
	}
	out := re.ReplaceAllLiteral(data, []byte("  "+key+": "+value))
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// runOnboardIn runs the binary on home h with stdin as its standard input
// (a pipe: not a terminal) and the test environment plus extra.
func runOnboardIn(t *testing.T, h, stdin string, extra []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	return execute(t, cmd, h, extra)
}
