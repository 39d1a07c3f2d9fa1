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

// The agent's switch between the owner's providers, and its limits, are in
// endpoints_e2e_test.go.

// TestUpdateConfigRefusesOwnerKeys: the agent cannot propose to change the
// sandbox, the workspace or a key variable into another secret.
func TestUpdateConfigRefusesOwnerKeys(t *testing.T) {
	t.Parallel()
	for _, changes := range []string{
		`{"sandbox":{"allow_degraded":true}}`, `{"workspace":"/"}`, `{"server":{"listen":"0.0.0.0:7433"}}`,
		`{"telegram":{"api_base":"http://evil.example"}}`, `{"provider":{"api_key_env":"TELEGRAM_BOT_TOKEN"}}`,
		`{"budget":{"daily_usd":"1000"}}`, `{"budget":{"daily_turns":10000}}`, `{"schedules":{"quiet_hours":""}}`,
		`{"http":{"allow_hosts":[{"host":"192.168.1.10","ports":[80]}]}}`, // the owner's network (issue 19)
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

// TestConfigRevertAndClearSecret: `shelldon config revert` takes a key out
// of config.local.yaml and `config clear-secret` a variable out of .env,
// with a daemon running (applied at once) and without one (written);
// a key the overlay does not set, the key the provider needs and an
// unknown variable are refused with nothing changed.
func TestConfigRevertAndClearSecret(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", brokertest.Sequence())
	for _, withDaemon := range []bool{false, true} {
		t.Run(fmt.Sprint("daemon=", withDaemon), func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			h := home(t, "openai", srv.BaseURL(), fmt.Sprintf("server:\n  listen: %s\n", addr))
			// The commands find the daemon's token where the daemon does: .env.
			f, err := os.OpenFile(filepath.Join(h, ".env"), os.O_APPEND|os.O_WRONLY, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(f, "SHELLDON_API_TOKEN="+testAPIToken)
			f.Close()
			if _, stderr, code := run(t, h, "", "config", "set", "agent.turn_budget", "40s"); code != 0 {
				t.Fatalf("config set: %s", stderr)
			}
			if _, stderr, code := runStdin(t, h, strings.NewReader("gsk-0123456789\n"), "config", "set-secret", "GROQ_API_KEY"); code != 0 {
				t.Fatalf("set-secret: %s", stderr)
			}
			want := "Written."
			if withDaemon {
				startServeAt(t, h, addr)
				want = "Applied by the running daemon."
			}
			stdout, stderr, code := run(t, h, "", "config", "revert", "agent.turn_budget")
			if code != 0 || !strings.Contains(stdout, "agent.turn_budget: 40s -> ") || !strings.Contains(stdout, want) {
				t.Fatalf("revert: exit %d\n%s\n%s", code, stdout, stderr)
			}
			if show, _, _ := run(t, h, "", "config", "show"); strings.Contains(show, "turn_budget: 40s") {
				t.Errorf("after revert:\n%s", show)
			}
			stdout, stderr, code = run(t, h, "", "config", "clear-secret", "GROQ_API_KEY")
			if code != 0 || !strings.Contains(stdout, "secret GROQ_API_KEY: cleared") || !strings.Contains(stdout, want) {
				t.Fatalf("clear-secret: exit %d\n%s\n%s", code, stdout, stderr)
			}
			if env, _ := os.ReadFile(filepath.Join(h, ".env")); strings.Contains(string(env), "GROQ") || !strings.Contains(string(env), "TEST_PROVIDER_KEY") {
				t.Errorf(".env after clear-secret:\n%s", env)
			}
			before, _ := os.ReadFile(filepath.Join(h, ".env"))
			for _, bad := range [][]string{
				{"revert", "agent.turn_budget"},
				{"revert", "no.such.key"},
				{"clear-secret", "TEST_PROVIDER_KEY"},
				{"clear-secret", "GROQ_API_KEY"},
				{"clear-secret", "bad-name"},
				{"revert"},
			} {
				stdout, stderr, code := run(t, h, "", append([]string{"config"}, bad...)...)
				if code == 0 || strings.Contains(stdout+stderr, apiKey) {
					t.Errorf("%v: exit %d\n%s\n%s", bad, code, stdout, stderr)
				}
			}
			if after, _ := os.ReadFile(filepath.Join(h, ".env")); string(after) != string(before) {
				t.Errorf("a refused command changed .env")
			}
		})
	}
}
