package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

// TestEveryGuardRefusalIsAudited: a RISKY call a guard refuses before the
// owner is asked (a path outside the workspace, a loopback URL, git push,
// an empty command, an owner-only config key) is never put to the owner;
// it appears in GET /api/audit with the guard and its reason, and in the
// reply every transport shows.
func TestEveryGuardRefusalIsAudited(t *testing.T) {
	t.Parallel()
	calls := map[string]contracts.ToolCall{
		"write outside":  {Name: contracts.ToolWriteFile, Arguments: `{"path":"../outside.txt","content":"x"}`},
		"fetch loopback": {Name: contracts.ToolHTTPGet, Arguments: `{"url":"http://127.0.0.1:1/secret"}`},
		"git push":       {Name: contracts.ToolGit, Arguments: `{"args":"push origin main"}`},
		"empty command":  {Name: contracts.ToolRunShell, Arguments: `{"command":"  "}`},
		"owner's key":    {Name: contracts.ToolUpdateConfig, Arguments: `{"changes":{"server":{"listen":"0.0.0.0:80"}}}`},
	}
	srv := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		if last.Role == contracts.RoleUser {
			call := calls[last.Text]
			call.ID = "c1"
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{call}}
		}
		return brokertest.Reply{Text: "noted"}
	})
	h := home(t, "openai", srv.BaseURL(), "")
	d := startServe(t, h)
	for text, call := range calls {
		status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "refusals", "text": text})
		if status != 200 {
			t.Fatalf("%s: %d %v", text, status, out)
		}
		reply, _ := out["reply"].(string)
		if approvals, _ := out["approvals"].([]any); len(approvals) != 0 {
			t.Errorf("%s: a refused call was put to the owner: %v", text, approvals)
		}
		if !strings.Contains(reply, "shelldon refused a "+call.Name+" call before asking you: refused by the ") {
			t.Errorf("%s: the reply does not show the refusal: %q", text, reply)
		}
	}
	status, audit := d.do(t, "GET", "/api/audit?limit=50", d.token, nil)
	if status != 200 {
		t.Fatalf("audit: %d %v", status, audit)
	}
	refused := map[string]string{}
	rows, _ := audit["audit"].([]any)
	for _, row := range rows {
		raw, _ := json.Marshal(row)
		var e struct{ Kind, Tool, Args, Summary string }
		json.Unmarshal(raw, &e)
		if e.Kind == "tool_refused" {
			refused[e.Tool] = e.Summary
		}
	}
	for text, call := range calls {
		sum, ok := refused[call.Name]
		if !ok || !strings.HasPrefix(sum, "refused by the ") || !strings.Contains(sum, ": ") {
			t.Errorf("%s: no audit row naming the guard and its reason for %s: %q (all: %v)", text, call.Name, sum, refused)
		}
	}
}

// TestAuditPages: 'shelldon audit' pages the trail, newest first, and says
// how to see the older entries; --tool filters.
func TestAuditPages(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", riskyScript("git", `{"args":"push origin main"}`))
	h := home(t, "openai", srv.BaseURL(), "")
	for range 3 {
		if _, _, code := run(t, h, "", "chat", "-m", "push it"); code != 0 {
			t.Fatal("chat failed")
		}
	}
	stdout, stderr, code := run(t, h, "", "audit", "-n", "2", "--tool", "git")
	m := regexp.MustCompile(`--before (\d+)`).FindStringSubmatch(stderr)
	if code != 0 || strings.Count(stdout, "refused by the git guard") != 2 || m == nil {
		t.Fatalf("first page: %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = run(t, h, "", "audit", "-n", "2", "--tool", "git", "--before", m[1])
	if code != 0 || strings.Count(stdout, "refused by the git guard") != 1 || strings.Contains(stderr, "--before") {
		t.Fatalf("last page: %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestUnsafeWorkspaceRefused: a workspace that is, or is a symlink to, the
// root of the file system, or that holds shelldon's home, runs no turn.
func TestUnsafeWorkspaceRefused(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", nil)
	for name, want := range map[string]string{"root": "root of the file system", "home": "holds shelldon's home"} {
		t.Run(name, func(t *testing.T) {
			h := home(t, "openai", srv.BaseURL(), "")
			ws := filepath.Join(t.TempDir(), "ws")
			target := "/"
			if name == "home" {
				target = filepath.Dir(h)
			}
			if err := os.Symlink(target, ws); err != nil {
				t.Fatal(err)
			}
			f, _ := os.OpenFile(filepath.Join(h, "config.yaml"), os.O_APPEND|os.O_WRONLY, 0)
			fmt.Fprintf(f, "workspace: %s\n", ws)
			f.Close()
			_, stderr, code := run(t, h, "", "chat", "-m", "hi")
			if code == 0 || !strings.Contains(stderr, want) {
				t.Fatalf("exit %d: %s", code, stderr)
			}
		})
	}
}
