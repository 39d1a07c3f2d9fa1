package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
)

// TestServeJSONLog: with log.format json, `shelldon serve` writes one JSON
// object a line on standard error, each with time, level and msg, and the
// API key a failing provider quotes back is redacted in it.
func TestServeJSONLog(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Status: 500, Text: "upstream rejected key " + apiKey}
	})
	h := home(t, "openai", srv.BaseURL(), "log:\n  format: json\n  level: debug\n")
	cmd := exec.Command(binary, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = env(h, "SHELLDON_API_TOKEN="+testAPIToken)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var log []string
	addr := ""
	deadline := time.After(30 * time.Second)
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("shelldon serve ended:\n%s", strings.Join(log, "\n"))
			}
			log = append(log, l)
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "shelldon serving" {
				addr, _ = m["addr"].(string)
			}
		case <-deadline:
			t.Fatalf("shelldon serve did not start:\n%s", strings.Join(log, "\n"))
		}
	}

	req, _ := http.NewRequest("POST", "http://"+addr+"/api/chat", strings.NewReader(`{"chat":"e2e","text":"hello"}`))
	req.Header.Set("Authorization", "Bearer "+testAPIToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cmd.Process.Signal(os.Interrupt)
	for l := range lines {
		log = append(log, l)
	}
	cmd.Wait()

	all := strings.Join(log, "\n")
	if len(log) < 3 {
		t.Fatalf("%d log lines:\n%s", len(log), all)
	}
	for _, l := range log {
		var m map[string]any
		if err := json.NewDecoder(bytes.NewReader([]byte(l))).Decode(&m); err != nil {
			t.Errorf("log line %q is not a JSON object: %v", l, err)
			continue
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := m[k].(string); !ok {
				t.Errorf("log line %q has no %s", l, k)
			}
		}
	}
	if strings.Contains(all, apiKey) {
		t.Errorf("the JSON log holds the API key:\n%s", all)
	}
	if !strings.Contains(all, `"err":"openai: status 500: server_error: upstream rejected key [`) {
		t.Errorf("the provider's error, with the key redacted, is not in the log:\n%s", all)
	}
}
