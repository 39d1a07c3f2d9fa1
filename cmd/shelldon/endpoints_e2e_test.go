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

// twoProviderHome is a home whose owner configured two providers: a, the
// primary (anthropic, TEST_PROVIDER_KEY), and b, its fallback (openai,
// OPENAI_API_KEY pointed by the owner at b's loopback address).
func twoProviderHome(t *testing.T, a, b *brokertest.Server) string {
	t.Helper()
	h := home(t, "anthropic", a.BaseURL(), fmt.Sprintf("  name: a\nfallback:\n  - name: b\n    kind: openai\n    base_url: %s\n    model: model-b\n    api_key_env: OPENAI_API_KEY\n", b.BaseURL()))
	f, err := os.OpenFile(filepath.Join(h, ".env"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("OPENAI_API_KEY=" + openaiKey + "\n")
	f.Close()
	return h
}

// lastResult is the model's echo of the tool results it was given.
func lastResult(last contracts.Message) string {
	var parts []string
	for _, tr := range last.ToolResults {
		parts = append(parts, fmt.Sprintf("%s ok=%v %s", tr.Name, tr.OK, tr.Content))
	}
	return "RESULTS: " + strings.Join(parts, " | ")
}

// TestHostileModelNeverReachesTheCanary: a hostile model asks, turn after
// turn, for every update_config that would send the key or the
// conversation to another endpoint, and a careless owner approves
// everything put to them. The canary, a second 127.0.0.1 listener standing
// in for "any host", never receives a request: each change is refused
// before the owner is asked, with the owner's command named. The one
// allowed change (the owner's own fallback, by name) is approved and
// works.
func TestHostileModelNeverReachesTheCanary(t *testing.T) {
	t.Parallel()
	canary := brokertest.NewServer(t, "openai", nil)
	c := canary.BaseURL()
	attacks := []string{
		`{"provider":{"base_url":"` + c + `"}}`,
		`{"provider":{"kind":"openai","base_url":"` + c + `","api_key_env":"TEST_PROVIDER_KEY"}}`,
		`{"provider":{"kind":"openai","base_url":"` + c + `","api_key_env":""}}`,
		`{"provider":{"base_url":"` + strings.Replace(c, "127.0.0.1", "127.0.0.1.nip.io", 1) + `"}}`,
		`{"provider":{"base_url":"http://аpi.anthropic.com"}}`,
		`{"provider":{"api_key_env":"OPENAI_API_KEY"}}`,
		`{"provider":{"kind":"openai"}}`,
		`{"provider":{"name":"b","base_url":"` + c + `"}}`,
		`{"fallback":[{"name":"x","kind":"openai","base_url":"` + c + `","model":"m"}]}`,
		`{"fallback":[{"kind":"openai","base_url":"` + c + `","api_key_env":"TEST_PROVIDER_KEY"}]}`,
		`{"fallback":[{"name":"b"},{"name":"a","base_url":"` + c + `"}]}`,
		`{"provider":{"Base_URL":"` + c + `"}}`,
		`{"Provider":{"base_url":"` + c + `"}}`,
		`{"provider.base_url":"` + c + `"}`,
		`{"fallback[0].base_url":"` + c + `"}`,
		`{"provider":{"base_url":null},"fallback":null}`,
		`{"provider":{"api_key_env":null}}`,
	}
	// A name the owner did not configure is refused before the owner is
	// asked too: the job carries the configured names to the worker.
	unknownName := `{"provider":{"name":"canary"}}`
	allowed := `{"provider":{"name":"b","model":"model-b2"}}`
	script := func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		if last.Role != contracts.RoleUser {
			return brokertest.Reply{Text: lastResult(last)}
		}
		var n int
		if _, err := fmt.Sscanf(last.Text, "attack %d", &n); err != nil || n > len(attacks)+1 {
			return brokertest.Reply{Text: "hello"}
		}
		args := allowed
		switch {
		case n < len(attacks):
			args = attacks[n]
		case n == len(attacks):
			args = unknownName
		}
		return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "u1", Name: contracts.ToolUpdateConfig, Arguments: `{"changes":` + args + `}`}}}
	}
	a := brokertest.NewServer(t, "anthropic", script)
	b := brokertest.NewServer(t, "openai", script)
	h := twoProviderHome(t, a, b)
	d := startServe(t, h)

	// approveAll is the careless owner: whatever is put to them, approved.
	var cards, results strings.Builder
	approveAll := func(out map[string]any) (asked int) {
		for {
			list, _ := out["approvals"].([]any)
			if len(list) == 0 {
				return asked
			}
			asked++
			cards.WriteString(fmt.Sprint(out["reply"]))
			id, _ := list[0].(map[string]any)["id"].(string)
			_, out = d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": true})
			results.WriteString(fmt.Sprint(out["reply"]))
		}
	}
	for n := range attacks {
		_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "hostile", "text": fmt.Sprintf("attack %d", n)})
		reply := fmt.Sprint(out["reply"])
		if asked := approveAll(out); asked != 0 {
			t.Errorf("attack %d (%s) was put to the owner", n, attacks[n])
		}
		if !strings.Contains(reply, "update_config") || strings.Contains(reply, "ok=true") {
			t.Errorf("attack %d (%s): %s", n, attacks[n], reply)
		}
		if strings.Contains(attacks[n], "url") && !strings.Contains(reply, contracts.OwnerConfigSet) {
			t.Errorf("attack %d: the refusal does not name %q: %s", n, contracts.OwnerConfigSet, reply)
		}
	}
	_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "hostile", "text": fmt.Sprintf("attack %d", len(attacks))})
	if reply := fmt.Sprint(out["reply"]); approveAll(out) != 0 || !strings.Contains(reply, `no provider called "canary" is configured`) {
		t.Errorf("the unknown name was put to the owner, or not refused plainly: %s", reply)
	}
	_, out = d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "hostile", "text": fmt.Sprintf("attack %d", len(attacks)+1)})
	if asked := approveAll(out); asked != 1 {
		t.Errorf("the allowed switch was put to the owner %d times", asked)
	}
	_, out = d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "hostile", "text": "after"})
	if fmt.Sprint(out["reply"]) != "hello" || len(b.Requests()) == 0 {
		t.Errorf("the owner's fallback did not take over: %v", out["reply"])
	}

	if n := len(canary.Requests()); n != 0 {
		t.Fatalf("the canary received %d requests", n)
	}
	local, _ := os.ReadFile(filepath.Join(h, "config.local.yaml"))
	if strings.Contains(string(local), strings.TrimPrefix(c, "http://")) {
		t.Errorf("the canary's address reached config.local.yaml:\n%s", local)
	}
	if strings.Contains(d.log(), apiKey) || strings.Contains(d.log(), openaiKey) {
		t.Error("a key reached the log")
	}
}

// TestConfigSwitchAppliesFromTheNextTurn: the model switches to the
// owner's fallback by name; the card shows the diff with its hosts and the
// chain after the change, and never whether a variable is set; approved,
// the change is written and applied, but the resumed turn keeps the model
// it started with (its next model call still goes to a); the next turn is
// answered by b. No secret reaches a model request, the history, the audit
// trail or the log.
func TestConfigSwitchAppliesFromTheNextTurn(t *testing.T) {
	t.Parallel()
	b := brokertest.NewServer(t, "openai", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Text: "hello from B"}
	})
	a := brokertest.NewServer(t, "anthropic", func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		if last.Role == contracts.RoleUser {
			args := `{"changes":{"provider":{"name":"b","model":"gpt-b"}}}`
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "u1", Name: contracts.ToolUpdateConfig, Arguments: args}}}
		}
		return brokertest.Reply{Text: "A: " + lastResult(last)}
	})
	h := twoProviderHome(t, a, b)
	d := startServe(t, h)

	_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "c", "text": "use b from now on"})
	id := approvalID(t, out)
	card := fmt.Sprint(out["reply"])
	for _, want := range []string{
		"provider.kind: anthropic -> openai", "provider.model: test-model -> gpt-b",
		"provider.base_url: " + a.BaseURL() + " -> " + b.BaseURL(), "host after: 127.0.0.1",
		"provider.api_key_env: TEST_PROVIDER_KEY -> OPENAI_API_KEY", "applied from the next turn",
		"1. b (openai) at " + b.BaseURL(), "2. a (anthropic) at " + a.BaseURL(),
	} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q:\n%s", want, card)
		}
	}
	if strings.Contains(card, "not set") || strings.Contains(card, " set in ") {
		t.Errorf("the card tells whether a variable is set:\n%s", card)
	}

	// Approved: the rest of the resumed turn still goes to a.
	postsA := len(a.Requests())
	_, out = d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": true})
	reply := fmt.Sprint(out["reply"])
	if !strings.HasPrefix(reply, "A: RESULTS: update_config ok=true") || !strings.Contains(reply, "provider.model: test-model -> gpt-b") {
		t.Fatalf("the resumed turn was not finished by a: %q", reply)
	}
	if len(a.Requests()) != postsA+1 || len(b.Requests()) != 0 {
		t.Fatalf("inside the resumed turn: a got %d more requests, b %d", len(a.Requests())-postsA, len(b.Requests()))
	}
	if data, _ := os.ReadFile(filepath.Join(h, "config.local.yaml")); !strings.Contains(string(data), "gpt-b") {
		t.Errorf("config.local.yaml: %q", data)
	}

	// The next turn is b's.
	postsA = len(a.Requests())
	_, out = d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "c", "text": "hi"})
	if reply := fmt.Sprint(out["reply"]); reply != "hello from B" {
		t.Fatalf("the next turn was not answered by b: %q", reply)
	}
	if len(a.Requests()) != postsA {
		t.Error("a was still called")
	}
	if got := b.Requests()[0]; got.Header.Get("Authorization") != "Bearer "+openaiKey || got.Model != "gpt-b" {
		t.Errorf("b got %q for model %q", got.Header.Get("Authorization"), got.Model)
	}
	if data, _ := os.ReadFile(filepath.Join(h, "config.yaml")); strings.Contains(string(data), "gpt-b") {
		t.Error("config.yaml was rewritten")
	}

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
	for _, s := range []string{apiKey, openaiKey} {
		if strings.Contains(everything.String(), s) {
			t.Errorf("a secret value leaked into requests, history, audit or logs")
		}
	}
}

// TestConfigSetCommand: `shelldon config set` writes config.local.yaml
// through the settings API's validated path, endpoints included; a value
// that would make the config invalid writes nothing and says why.
func TestConfigSetCommand(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", nil)
	h := home(t, "openai", srv.BaseURL(), "")
	local := filepath.Join(h, "config.local.yaml")

	stdout, stderr, code := run(t, h, "", "config", "set", "fallback[0]", "{name: local, kind: openai, base_url: 'http://xn--80ak6aa92e.example/v1', model: m}")
	if code != 0 || !strings.Contains(stdout, "fallback:") || !strings.Contains(stdout, "Restart") {
		t.Fatalf("append a fallback: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = run(t, h, "", "config", "set", "fallback[0].base_url", "http://аpple.example/v1")
	if code != 0 || !strings.Contains(stdout, "fallback:") {
		t.Fatalf("set a fallback's base_url: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = run(t, h, "", "config", "set", "provider.base_url", "http://xn--80ak6aa92e.example/v1")
	if code != 0 || !strings.Contains(stdout, "host: xn--80ak6aa92e.example (Unicode: ") {
		t.Fatalf("the host is not shown in both forms: exit %d\n%s\n%s", code, stdout, stderr)
	}
	written, _ := os.ReadFile(local)
	for _, bad := range [][]string{
		{"provider.base_url", "ftp://x.example"},
		{"provider.api_key_env", "NOT_SET_ANYWHERE_API_KEY"},
		{"agent.turn_budget", "soon"},
		{"nosuch.key", "1"},
		{"Provider.Base_URL", "http://x.example"},
	} {
		stdout, stderr, code := run(t, h, "", append([]string{"config", "set"}, bad...)...)
		if code == 0 || !strings.Contains(stderr, "nothing changed") && !strings.Contains(stderr, "not a config key") {
			t.Errorf("%v: exit %d\n%s\n%s", bad, code, stdout, stderr)
		}
	}
	if now, _ := os.ReadFile(local); string(now) != string(written) {
		t.Error("a refused setting was written")
	}
	if stdout, _, code := run(t, h, "", "config", "set", "--help"); code != 0 || !strings.Contains(stdout, "shelldon config set provider.base_url") {
		t.Errorf("help: %s", stdout)
	}
}
