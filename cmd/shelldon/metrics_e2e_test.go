package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

// scrape GETs /metrics with token and returns the status, the content
// type and the body.
func scrape(t *testing.T, d *daemon, token string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+d.addr+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*\})? (\S+)$`)

// samples reads a text exposition: every line a HELP, a TYPE or a sample
// of a family typed before it; it returns each sample's value by its
// name and labels as written.
func samples(t *testing.T, body string) map[string]float64 {
	t.Helper()
	typed := map[string]string{}
	out := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			typed[name] = typ
			continue
		}
		if strings.HasPrefix(line, "# HELP ") {
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("not a HELP, a TYPE or a sample: %q", line)
		}
		family := m[1]
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(m[1], suf); ok && typed[base] == "histogram" {
				family = base
			}
		}
		if typed[family] == "" {
			t.Fatalf("no TYPE before %q", line)
		}
		v, err := strconv.ParseFloat(strings.TrimPrefix(m[3], "+"), 64)
		if err != nil {
			t.Fatalf("value of %q: %v", line, err)
		}
		out[m[1]+m[2]] = v
	}
	return out
}

// sum adds the values of the samples whose key begins with prefix and
// holds every one of parts.
func sum(s map[string]float64, prefix string, parts ...string) float64 {
	var total float64
next:
	for k, v := range s {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		for _, p := range parts {
			if !strings.Contains(k, p) {
				continue next
			}
		}
		total += v
	}
	return total
}

// TestMetricsAfterAScriptedSession: turns, a FREE call, a RISKY call
// approved and one denied, a provider's error; GET /metrics, behind the
// token, counts each, in the text format; after a restart the counts that
// come from the store stand, and the provider's start again.
func TestMetricsAfterAScriptedSession(t *testing.T) {
	t.Parallel()
	usage := contracts.Usage{InputTokens: 10, OutputTokens: 2}
	srv := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		switch {
		case len(last.ToolResults) > 0:
			return brokertest.Reply{Text: "done: " + last.ToolResults[0].Content, Usage: usage}
		case last.Text == "what time is it?":
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "c1", Name: "get_time", Arguments: `{}`}}, Usage: usage}
		case strings.HasPrefix(last.Text, "write "):
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "c2", Name: "write_file",
				Arguments: fmt.Sprintf(`{"path":%q,"content":"x"}`, strings.TrimPrefix(last.Text, "write ")+".txt")}}, Usage: usage}
		case last.Text == "fail":
			return brokertest.Reply{Status: 400, Text: "invalid request"}
		}
		return brokertest.Reply{Text: "hello", Usage: usage}
	})
	h := home(t, "openai", srv.BaseURL(), "budget:\n  prices:\n    test-model: {input: 3, output: 15}\n")
	d := startServe(t, h)

	// Before anything: the endpoint needs the token, and counts nothing.
	for _, tok := range []string{"", "wrong-token-0123456789"} {
		if status, _, body := scrape(t, d, tok); status != 401 || strings.Contains(body, "shelldon_") {
			t.Errorf("token %q: %d %s", tok, status, body)
		}
	}
	status, ct, body := scrape(t, d, d.token)
	if status != 200 || !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: %d %q %s", status, ct, body)
	}
	if s := samples(t, body); sum(s, "shelldon_tool_calls_total") != 0 || sum(s, "shelldon_turns_total") != 0 {
		t.Errorf("a new home counts: %s", body)
	}

	chat := func(c, text string) map[string]any {
		t.Helper()
		status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": c, "text": text})
		if status != 200 {
			t.Fatalf("chat %q: %d %v", text, status, out)
		}
		return out
	}
	chat("m1", "what time is it?")
	chat("m1", "hi")
	for _, approve := range []bool{true, false} {
		out := chat("m2", fmt.Sprintf("write %v", approve))
		id := approvalID(t, out)
		if status, out := d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": approve}); status != 200 {
			t.Fatalf("decide %v: %d %v", approve, status, out)
		}
	}
	if out := chat("m3", "fail"); out["stopped"] != "error" {
		t.Errorf("the turn the provider failed: %v", out)
	}

	status, _, body = scrape(t, d, d.token)
	if status != 200 {
		t.Fatalf("GET /metrics: %d %s", status, body)
	}
	s := samples(t, body)
	// Turns: two plain, two parked and their two continuations, one failed.
	want := map[string]float64{
		`shelldon_turns_total{origin="owner",status="ok"}`:                       4,
		`shelldon_turns_total{origin="owner",status="approval"}`:                 2,
		`shelldon_turns_total{origin="owner",status="error"}`:                    1,
		`shelldon_turns_failed_total{origin="owner"}`:                            1,
		`shelldon_turns_running`:                                                 0,
		`shelldon_tool_calls_total{tier="free",outcome="ok"}`:                    1,
		`shelldon_tool_calls_total{tier="risky",outcome="ok"}`:                   1,
		`shelldon_tool_calls_total{tier="risky",outcome="denied"}`:               1,
		`shelldon_tool_calls_total{tier="risky",outcome="failed"}`:               0,
		`shelldon_approvals_pending`:                                             0,
		`shelldon_approvals_decided_total{kind="tool_call",decision="approved"}`: 1,
		`shelldon_approvals_decided_total{kind="tool_call",decision="denied"}`:   1,
		`shelldon_model_calls_total{model="test-model"}`:                         7,
		`shelldon_tokens_total{model="test-model",direction="input"}`:            70,
		`shelldon_tokens_total{model="test-model",direction="output"}`:           14,
		// 70 × $3 + 14 × $15 per million tokens.
		`shelldon_spend_usd_total{model="test-model"}`: 0.00042,
	}
	for k, v := range want {
		if got, ok := s[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	// The provider: seven answers and one 400, each timed.
	if ok, bad := sum(s, "shelldon_provider_requests_total", `outcome="ok"`), sum(s, "shelldon_provider_requests_total", `outcome="client_error"`); ok != 7 || bad != 1 {
		t.Errorf("provider requests: %v ok, %v client_error\n%s", ok, bad, body)
	}
	if n := sum(s, "shelldon_provider_request_seconds_count"); n != 8 {
		t.Errorf("latency count = %v, want 8", n)
	}
	if n := sum(s, "shelldon_provider_request_seconds_bucket", `le="+Inf"`); n != 8 {
		t.Errorf("the +Inf bucket = %v, want 8", n)
	}
	if sum(s, "shelldon_build_info") != 1 || sum(s, "shelldon_goroutines") <= 0 || sum(s, "shelldon_uptime_seconds") <= 0 {
		t.Errorf("process basics missing:\n%s", body)
	}
	if rss := sum(s, "shelldon_resident_memory_bytes"); rss < 1<<20 || rss > 400<<20 {
		t.Errorf("resident memory = %v", rss)
	}
	if strings.Contains(body, "m1") || strings.Contains(body, "m2") {
		t.Errorf("a chat's name is a label:\n%s", body)
	}

	// A restart: the store's counts stand; the provider's start again.
	exited := make(chan struct{})
	go func() { d.cmd.Wait(); close(exited) }()
	d.cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not exit")
	}
	d2 := startServe(t, h)
	status, _, body = scrape(t, d2, d2.token)
	if status != 200 {
		t.Fatalf("GET /metrics after the restart: %d %s", status, body)
	}
	s2 := samples(t, body)
	for k, v := range want {
		if s2[k] != v {
			t.Errorf("after the restart %s = %v, want %v", k, s2[k], v)
		}
	}
	if n := sum(s2, "shelldon_provider_requests_total"); n != 0 {
		t.Errorf("the provider's counts after the restart = %v, want 0", n)
	}
}
