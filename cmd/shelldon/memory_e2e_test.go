package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

// TestMemoryRememberedForgotten, through the real binary and a fake
// provider: the model remembers a fact in one turn; a later turn, in
// another chat, has it in its system prompt as quoted data; the owner
// lists it, then forgets it with `shelldon memory forget`, which the
// running daemon carries out; the next turn's prompt does not hold it and
// recall does not find it; the audit says it was stored and forgotten,
// with its id and hash, and never its words. The chat where it was said
// keeps its history.
func TestMemoryRememberedForgotten(t *testing.T) {
	t.Parallel()
	const fact = "The owner's cat is called Mistigri and hates the vacuum cleaner."
	srv := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		msgs := r.Request.Messages
		last := msgs[len(msgs)-1]
		switch {
		case last.Role == contracts.RoleUser && last.Text == "My cat is Mistigri; she hates the vacuum cleaner. Remember it.":
			args, _ := json.Marshal(map[string]string{"fact": fact})
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "call_1", Name: contracts.ToolRemember, Arguments: string(args)}}}
		case last.Role == contracts.RoleUser && last.Text == "Look it up.":
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "call_2", Name: contracts.ToolRecall, Arguments: `{"query":"Mistigri vacuum"}`}}}
		case len(last.ToolResults) == 1:
			return brokertest.Reply{Text: "TOOL: " + last.ToolResults[0].Content}
		}
		return brokertest.Reply{Text: "OK"}
	})
	h, addr := daemonHome(t, srv)
	d := startServeAt(t, h, addr)
	chat := func(chatID, text string) string {
		t.Helper()
		status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": chatID, "text": text})
		if status != 200 {
			t.Fatalf("chat %q: %d %v", text, status, out)
		}
		reply, _ := out["reply"].(string)
		return reply
	}
	lastSystem := func() string {
		reqs := srv.Requests()
		return reqs[len(reqs)-1].Request.System
	}
	quoted, _ := json.Marshal(fact)

	if reply := chat("home", "My cat is Mistigri; she hates the vacuum cleaner. Remember it."); !strings.Contains(reply, "TOOL: Remembered as fact #1.") {
		t.Fatalf("remember: %q", reply)
	}
	chat("other", "What should I get my cat for her birthday?")
	if sys := lastSystem(); !strings.Contains(sys, "Remembered facts (") || !strings.Contains(sys, "- #1 (") || !strings.Contains(sys, string(quoted)) {
		t.Fatalf("the later turn's prompt lacks the fact:\n%s", sys)
	}

	stdout, stderr, code := run(t, h, "", "memory", "list")
	if code != 0 || !strings.Contains(stdout, "Mistigri") || !strings.Contains(stdout, "home") {
		t.Fatalf("memory list: %d %q %q", code, stdout, stderr)
	}
	stdout, stderr, code = run(t, h, "", "memory", "forget", "1")
	if code != 0 || stdout != "Fact #1 is forgotten.\n" {
		t.Fatalf("memory forget: %d %q %q", code, stdout, stderr)
	}

	chat("other", "What should I get my cat for her birthday?")
	if sys := lastSystem(); strings.Contains(sys, "Mistigri") || strings.Contains(sys, "Remembered facts (") {
		t.Errorf("the prompt after forget still holds the fact:\n%s", sys)
	}
	if reply := chat("other", "Look it up."); !strings.Contains(reply, "TOOL: No remembered fact holds any of those words.") {
		t.Errorf("recall after forget: %q", reply)
	}
	stdout, _, code = run(t, h, "", "memory", "list")
	if code != 0 || stdout != "No facts.\n" {
		t.Errorf("memory list after forget: %d %q", code, stdout)
	}

	_, audit := d.do(t, "GET", "/api/audit?limit=100", d.token, nil)
	rows, _ := audit["audit"].([]any)
	sum := sha256.Sum256([]byte(fact))
	hash := hex.EncodeToString(sum[:])
	kinds := map[string]string{}
	for _, r := range rows {
		row := r.(map[string]any)
		line := fmt.Sprint(row)
		if strings.Contains(line, "Mistigri") || strings.Contains(line, "vacuum") {
			t.Errorf("an audit row holds the fact's words: %s", line)
		}
		if k, _ := row["kind"].(string); strings.HasPrefix(k, "memory_") {
			kinds[k] = row["args"].(string) + " " + row["summary"].(string)
		}
	}
	want := map[string]string{
		"memory_stored":    `{"fact":1,"sha256":"` + hash + `"} fact #1 stored`,
		"memory_forgotten": `{"fact":1,"sha256":"` + hash + `"} fact #1 forgotten by http`,
	}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("the memory rows of the audit = %v, want %v", kinds, want)
	}
	// The chat where the owner said it keeps its own history: its next
	// turn's messages still hold the call.
	chat("home", "Thanks.")
	reqs := srv.Requests()
	if msgs, _ := json.Marshal(reqs[len(reqs)-1].Request.Messages); !strings.Contains(string(msgs), "Mistigri") {
		t.Errorf("the chat lost its own history")
	}
}
