package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

const openaiKey = "sk-openai-e2e-secret-abcdefghijklmnop"

// TestUpdateConfigSwitchesProviderLive: the model proposes to switch from
// an Anthropic provider to an OpenAI-compatible one; the owner sees the
// diff and approves; the next turn is answered by the new provider without
// a restart. No secret value reaches the model, the history, the audit
// trail or the log.
func TestUpdateConfigSwitchesProviderLive(t *testing.T) {
	t.Parallel()
	b := brokertest.NewServer(t, "openai", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Text: "hello from B"}
	})
	a := brokertest.NewServer(t, "anthropic", func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		if last.Role == contracts.RoleUser {
			args := fmt.Sprintf(`{"changes":{"provider":{"kind":"openai","base_url":%q,"model":"gpt-b","api_key_env":"OPENAI_API_KEY"}}}`, b.BaseURL())
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "u1", Name: "update_config", Arguments: args}}}
		}
		return brokertest.Reply{Text: "RESULTS: " + fmt.Sprintf("%s ok=%v %s", last.ToolResults[0].Name, last.ToolResults[0].OK, last.ToolResults[0].Content)}
	})
	h := home(t, "anthropic", a.BaseURL(), "")
	f, _ := os.OpenFile(filepath.Join(h, ".env"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("OPENAI_API_KEY=" + openaiKey + "\n")
	f.Close()
	d := startServe(t, h)

	_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "c", "text": "use the other model from now on"})
	id := approvalID(t, out)
	card := fmt.Sprint(out["reply"])
	for _, want := range []string{"provider.kind: anthropic -> openai", "provider.model: test-model -> gpt-b", "provider.api_key_env: TEST_PROVIDER_KEY -> OPENAI_API_KEY"} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q:\n%s", want, card)
		}
	}
	// The change applies at once: the rest of the resumed turn is already
	// answered by the new provider, which sees the tool's result.
	_, out = d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": true})
	if reply := fmt.Sprint(out["reply"]); reply != "hello from B" {
		t.Fatalf("approve: %s", reply)
	}
	if msgs := b.Requests()[0].Request.Messages; !strings.Contains(msgs[len(msgs)-1].ToolResults[0].Content, "provider.model: test-model -> gpt-b") {
		t.Errorf("the new provider did not get the update_config result: %+v", msgs[len(msgs)-1])
	}
	before := len(a.Requests())
	_, out = d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "c", "text": "hi"})
	if reply := fmt.Sprint(out["reply"]); reply != "hello from B" {
		t.Fatalf("the next turn was not answered by the new provider: %q", reply)
	}
	if len(a.Requests()) != before {
		t.Error("the old provider was still called")
	}
	if got := b.Requests()[1].Header.Get("Authorization"); got != "Bearer "+openaiKey {
		t.Errorf("the new provider got %q", got)
	}
	if data, _ := os.ReadFile(filepath.Join(h, "config.yaml")); strings.Contains(string(data), "gpt-b") {
		t.Error("config.yaml was rewritten")
	}
	if data, _ := os.ReadFile(filepath.Join(h, "config.local.yaml")); !strings.Contains(string(data), "gpt-b") {
		t.Errorf("config.local.yaml: %q", data)
	}

	// No secret value anywhere but in the providers' own auth headers.
	secrets := []string{apiKey, openaiKey}
	var everything strings.Builder
	for _, r := range append(a.Requests(), b.Requests()...) {
		everything.Write(r.Body)
	}
	db := openDB(t, h)
	for _, q := range []string{`SELECT body FROM messages`, `SELECT args || summary FROM audit`, `SELECT reply || error FROM turns`, `SELECT summary || args FROM approvals`} {
		rows, err := db.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			rows.Scan(&s)
			everything.WriteString(s)
		}
		rows.Close()
	}
	everything.WriteString(d.log())
	for _, s := range secrets {
		if strings.Contains(everything.String(), s) {
			t.Errorf("a secret value leaked into requests, history, audit or logs")
		}
	}
}

// TestUpdateConfigRefusesOwnerKeys: the agent cannot propose to change the
// sandbox, the workspace or a key variable into another secret.
func TestUpdateConfigRefusesOwnerKeys(t *testing.T) {
	t.Parallel()
	for _, changes := range []string{
		`{"sandbox":{"allow_degraded":true}}`, `{"workspace":"/"}`, `{"server":{"listen":"0.0.0.0:7433"}}`,
		`{"telegram":{"api_base":"http://evil.example"}}`, `{"provider":{"api_key_env":"TELEGRAM_BOT_TOKEN"}}`,
	} {
		t.Run(changes, func(t *testing.T) {
			t.Parallel()
			srv := brokertest.NewServer(t, "openai", riskyScript("update_config", `{"changes":`+changes+`}`))
			h := home(t, "openai", srv.BaseURL(), "")
			stdout, stderr, code := run(t, h, "", "chat", "-m", "change it")
			if code != 0 || !strings.Contains(stdout, "update_config ok=false") || strings.Contains(stdout+stderr, "needs your approval") {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
}

func TestSettingsAPI(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", brokertest.Sequence())
	h := home(t, "openai", srv.BaseURL(), "")
	d := startServe(t, h)
	if status, _ := d.do(t, "GET", "/api/settings", "", nil); status != 401 {
		t.Fatalf("no token: %d", status)
	}
	status, out := d.do(t, "GET", "/api/settings", d.token, nil)
	cfg, _ := out["config"].(map[string]any)
	if status != 200 || cfg["provider"].(map[string]any)["kind"] != "openai" {
		t.Fatalf("get: %d %v", status, out)
	}
	if s := fmt.Sprint(out); strings.Contains(s, apiKey) || !strings.Contains(s, "TEST_PROVIDER_KEY:set") {
		t.Fatalf("secrets shown wrongly: %s", s)
	}
	newSecret := "sk-new-secret-value-0123456789"
	status, out = d.do(t, "POST", "/api/settings", d.token, map[string]any{
		"secrets": map[string]string{"GROQ_API_KEY": newSecret},
		"config":  map[string]any{"agent": map[string]any{"max_tool_calls": 3}},
	})
	if status != 200 || strings.Contains(fmt.Sprint(out), newSecret) || !strings.Contains(fmt.Sprint(out["changed"]), "agent.max_tool_calls: 6 -> 3") {
		t.Fatalf("post: %d %v", status, out)
	}
	env, _ := os.ReadFile(filepath.Join(h, ".env"))
	fi, _ := os.Stat(filepath.Join(h, ".env"))
	if !strings.Contains(string(env), newSecret) || fi.Mode().Perm() != 0o600 {
		t.Errorf(".env: %v", fi.Mode())
	}
	for _, bad := range []map[string]any{
		{"config": map[string]any{"agent": map[string]any{"turn_budget": "soon"}}},
		{"config": map[string]any{"nosuch": 1}},
		{"secrets": map[string]string{"bad name": "sk-value-that-must-not-echo"}},
		{"secrets": map[string]string{"X": "multi\nline-value-that-must-not-echo"}},
		{},
	} {
		status, out := d.do(t, "POST", "/api/settings", d.token, bad)
		if status != 400 || strings.Contains(fmt.Sprint(out), "must-not-echo") {
			t.Errorf("%v: %d %v", bad, status, out)
		}
	}
	if strings.Contains(d.log(), newSecret) {
		t.Error("the new secret reached the log")
	}
}
