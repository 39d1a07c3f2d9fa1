package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

// TestSkillsThroughTheModel: the model creates a skill, finds it in the
// next turn's catalog, loads it, and updates a bundled skill, which makes
// the owner's copy; the owner rolls an update back from the command line.
func TestSkillsThroughTheModel(t *testing.T) {
	t.Parallel()
	script := func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		call := func(name string, args map[string]string) brokertest.Reply {
			raw, _ := json.Marshal(args)
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "s1", Name: name, Arguments: string(raw)}}}
		}
		if last.Role == contracts.RoleUser {
			switch last.Text {
			case "remember how to water the plants":
				return call("create_skill", map[string]string{"name": "water-plants", "description": "Water the plants on Mondays.", "body": "1. Check the soil.\n2. Water."})
			case "how do I water the plants?":
				return call("use_skill", map[string]string{"name": "water-plants"})
			case "improve the daily note":
				return call("update_skill", map[string]string{"name": "daily-note", "description": "A better daily note.", "body": "1. Be brief."})
			case "improve watering":
				return call("update_skill", map[string]string{"name": "water-plants", "description": "Water the plants on Mondays and Thursdays.", "body": "1. Check the soil.\n2. Water twice."})
			case "sneaky":
				return call("create_skill", map[string]string{"name": "../escape", "description": "x", "body": "y"})
			}
			return brokertest.Reply{Text: "CATALOG: " + r.Request.System}
		}
		res := last.ToolResults[0]
		return brokertest.Reply{Text: fmt.Sprintf("RESULTS: %s ok=%v %s", res.Name, res.OK, res.Content)}
	}
	srv := brokertest.NewServer(t, "openai", script)
	h := home(t, "openai", srv.BaseURL(), "")
	chat := func(text string) string {
		stdout, stderr, code := run(t, h, "", "chat", "-m", text)
		if code != 0 {
			t.Fatalf("%q: exit %d %s %s", text, code, stdout, stderr)
		}
		return stdout
	}
	if out := chat("what skills do you have?"); !strings.Contains(out, "make-a-tool: ") || !strings.Contains(out, "daily-note: ") {
		t.Fatalf("bundled skills not in the catalog: %s", out)
	}
	if out := chat("remember how to water the plants"); !strings.Contains(out, "create_skill ok=true Created the skill water-plants") {
		t.Fatalf("create: %s", out)
	}
	if out := chat("what skills do you have?"); !strings.Contains(out, "water-plants: Water the plants on Mondays.") {
		t.Fatalf("the new skill is not in the next turn's catalog: %s", out)
	}
	if out := chat("how do I water the plants?"); !strings.Contains(out, "2. Water.") {
		t.Fatalf("use: %s", out)
	}
	if out := chat("improve watering"); !strings.Contains(out, "update_skill ok=true Updated the skill water-plants (version 2)") {
		t.Fatalf("update: %s", out)
	}
	if out := chat("improve the daily note"); !strings.Contains(out, "update_skill ok=true") {
		t.Fatalf("update bundled: %s", out)
	}
	if _, err := os.Stat(filepath.Join(h, "skills", "daily-note", "SKILL.md")); err != nil {
		t.Errorf("updating a bundled skill made no owner's copy: %v", err)
	}
	if out := chat("sneaky"); !strings.Contains(out, "create_skill ok=false") {
		t.Fatalf("a path-trick name was accepted: %s", out)
	}
	stdout, _, code := run(t, h, "", "skills", "rollback", "water-plants")
	if code != 0 {
		t.Fatalf("rollback: %d %s", code, stdout)
	}
	if out := chat("how do I water the plants?"); !strings.Contains(out, "2. Water.") || strings.Contains(out, "twice") {
		t.Fatalf("after rollback: %s", out)
	}
	stdout, _, _ = run(t, h, "", "skills", "list")
	if !strings.Contains(stdout, "water-plants") || !strings.Contains(stdout, "daily-note") {
		t.Errorf("skills list: %s", stdout)
	}
}
