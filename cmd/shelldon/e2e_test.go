package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

// binary is the shelldon binary built once for these end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "shelldon-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "shelldon")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build shelldon: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const apiKey = "sk-test-e2e-0123456789abcdefghijklmnop"

// home makes a shelldon home whose config points at the fake provider.
func home(t testing.TB, kind, baseURL string, extra string) string {
	t.Helper()
	h := t.TempDir()
	cfg := fmt.Sprintf("provider:\n  kind: %s\n  base_url: %s\n  model: test-model\n  api_key_env: TEST_PROVIDER_KEY\n%s", kind, baseURL, extra)
	if err := os.WriteFile(filepath.Join(h, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h, ".env"), []byte("TEST_PROVIDER_KEY="+apiKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// env is a minimal environment for the daemon: no key of ours except in .env.
func env(h string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + h, "SHELLDON_HOME=" + h, "TZ=UTC"}, extra...)
}

// daemon is a running `shelldon serve`.
type daemon struct {
	cmd    *exec.Cmd
	addr   string
	token  string
	mu     sync.Mutex
	stderr bytes.Buffer
}

func startServe(t testing.TB, h string, extraEnv ...string) *daemon {
	t.Helper()
	return startServeAt(t, h, "127.0.0.1:0", extraEnv...)
}

// startServeAt is startServe on listen.
func startServeAt(t testing.TB, h, listen string, extraEnv ...string) *daemon {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--listen", listen)
	cmd.Env = env(h, append(extraEnv, "SHELLDON_API_TOKEN="+testAPIToken)...)
	return runDaemon(t, cmd)
}

// testAPIToken is the API token the daemons of these tests serve with.
const testAPIToken = "test-token-0123456789abcdef"

// runDaemon starts cmd, a `shelldon serve` serving with testAPIToken, and
// returns once it listens; it is stopped (SIGINT, then SIGKILL after 10 s)
// when the test ends, and its log shown if the test failed.
func runDaemon(t testing.TB, cmd *exec.Cmd) *daemon {
	t.Helper()
	token := testAPIToken
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd, token: token}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		pw.Close()
		if t.Failed() {
			t.Logf("daemon stderr:\n%s", d.log())
		}
	})
	addrRe := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			d.mu.Lock()
			d.stderr.WriteString(line + "\n")
			d.mu.Unlock()
			if m := addrRe.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case d.addr = <-found:
	case <-time.After(30 * time.Second):
		t.Fatalf("shelldon serve did not start:\n%s", d.log())
	}
	return d
}

func (d *daemon) log() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stderr.String()
}

func (d *daemon) do(t testing.TB, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+d.addr+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: status %d, body not JSON: %v", method, path, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

// TestServeChatWithTools chats over the HTTP API with each wire format,
// streamed and not: the model calls tools, sees their results and answers.
func TestServeChatWithTools(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"anthropic", "openai"} {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", kind, stream), func(t *testing.T) {
				t.Parallel()
				srv := brokertest.NewServer(t, kind, func(r brokertest.Recorded) brokertest.Reply {
					last := r.Request.Messages[len(r.Request.Messages)-1]
					switch {
					case last.Role == contracts.RoleUser && last.Text == "what is in notes.txt, and what is 6*7?":
						return brokertest.Reply{Text: "Checking.", ToolCalls: []contracts.ToolCall{
							{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"notes.txt"}`},
							{ID: "toolu_2", Name: "eval", Arguments: `{"code":"6*7"}`},
							{ID: "toolu_3", Name: "read_file", Arguments: `{"path":"../config.yaml"}`},
						}, Usage: contracts.Usage{InputTokens: 50, OutputTokens: 10}}
					case len(last.ToolResults) == 3:
						var parts []string
						for _, tr := range last.ToolResults {
							parts = append(parts, fmt.Sprintf("%s ok=%v %s", tr.Name, tr.OK, tr.Content))
						}
						return brokertest.Reply{Text: "RESULTS: " + strings.Join(parts, " | "), Usage: contracts.Usage{InputTokens: 80, OutputTokens: 20}}
					}
					return brokertest.Reply{Text: fmt.Sprintf("unexpected request: %+v", last)}
				})
				h := home(t, kind, srv.BaseURL(), fmt.Sprintf("  stream: %v\n", stream))
				os.MkdirAll(filepath.Join(h, "workspace"), 0o700)
				os.WriteFile(filepath.Join(h, "workspace", "notes.txt"), []byte("water the plants"), 0o600)
				d := startServe(t, h)

				status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "e2e", "text": "what is in notes.txt, and what is 6*7?"})
				if status != 200 {
					t.Fatalf("chat: %d %v", status, out)
				}
				rep, _ := out["reply"].(string)
				for _, want := range []string{"read_file ok=true water the plants", "eval ok=true 42", "read_file ok=false", "escapes"} {
					if !strings.Contains(rep, want) {
						t.Errorf("reply %q lacks %q", rep, want)
					}
				}
				if out["turn"] == nil || out["approvals"] == nil {
					t.Errorf("response lacks turn or approvals: %v", out)
				}
				// The provider got the key in its own header, and tools natively.
				reqs := srv.Requests()
				if len(reqs) != 2 {
					t.Fatalf("%d provider requests, want 2", len(reqs))
				}
				if kind == "anthropic" && reqs[0].Header.Get("x-api-key") != apiKey ||
					kind == "openai" && reqs[0].Header.Get("Authorization") != "Bearer "+apiKey {
					t.Errorf("the provider did not get the key: %v", reqs[0].Header)
				}
				if reqs[0].Stream != stream || len(reqs[0].Request.Tools) < 4 {
					t.Errorf("first request: stream=%v tools=%d", reqs[0].Stream, len(reqs[0].Request.Tools))
				}

				// The audit trail has the three calls.
				status, audit := d.do(t, "GET", "/api/audit?limit=10", d.token, nil)
				if status != 200 {
					t.Fatalf("audit: %d %v", status, audit)
				}
				rows, _ := audit["audit"].([]any)
				if len(rows) != 3 {
					t.Fatalf("audit rows = %d, want 3: %v", len(rows), audit)
				}
				if strings.Contains(d.log(), apiKey) {
					t.Error("the daemon's log holds the API key")
				}
			})
		}
	}
}

func TestServeAuthAndErrors(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", brokertest.Sequence())
	d := startServe(t, home(t, "openai", srv.BaseURL(), ""))
	cases := []struct {
		name, method, path, token string
		body                      any
		status                    int
		code                      string
	}{
		{"no token", "POST", "/api/chat", "", map[string]string{"text": "hi"}, 401, "unauthorized"},
		{"wrong token", "POST", "/api/chat", "nope", map[string]string{"text": "hi"}, 401, "unauthorized"},
		{"audit without token", "GET", "/api/audit", "", nil, 401, "unauthorized"},
		{"empty text", "POST", "/api/chat", d.token, map[string]string{"text": ""}, 400, "bad_request"},
		{"unknown field", "POST", "/api/chat", d.token, map[string]string{"txt": "hi"}, 400, "bad_request"},
		{"bad chat name", "POST", "/api/chat", d.token, map[string]string{"chat": "../x", "text": "hi"}, 400, "bad_request"},
		{"bad limit", "GET", "/api/audit?limit=abc", d.token, nil, 400, "bad_request"},
		{"unknown endpoint", "GET", "/api/nope", d.token, nil, 404, "not_found"},
	}
	for _, tc := range cases {
		status, out := d.do(t, tc.method, tc.path, tc.token, tc.body)
		e, _ := out["error"].(map[string]any)
		if status != tc.status || e == nil || e["code"] != tc.code || e["message"] == "" {
			t.Errorf("%s: %d %v, want %d %s", tc.name, status, out, tc.status, tc.code)
		}
	}
	resp, err := http.Get("http://" + d.addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("rejected requests reached the provider %d times", n)
	}
}

func run(t *testing.T, h string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	return execute(t, cmd, h, nil)
}

// execute runs cmd (a command of the binary, its Stdin set by the caller)
// on home h with the test environment plus extra, killed after 60 s, and
// returns what it printed and its exit status.
func execute(t *testing.T, cmd *exec.Cmd, h string, extra []string) (stdout, stderr string, code int) {
	t.Helper()
	cmd.Env = env(h, extra...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	limit := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	limit.Stop()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestChatOneShot(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"anthropic", "openai"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := brokertest.NewServer(t, kind, brokertest.Sequence(
				brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "c1", Name: "get_time", Arguments: `{}`}}},
				brokertest.Reply{Text: "It is tea time."},
			))
			h := home(t, kind, srv.BaseURL(), "")
			stdout, stderr, code := run(t, h, "", "chat", "-m", "what time is it?")
			if code != 0 || strings.TrimSpace(stdout) != "It is tea time." {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			if !strings.Contains(stderr, "get_time") {
				t.Errorf("the tool call was not shown: %q", stderr)
			}
			stdout, _, _ = run(t, h, "", "audit")
			if !strings.Contains(stdout, "get_time") {
				t.Errorf("audit = %q", stdout)
			}
		})
	}
}

func TestChatInteractivePiped(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", brokertest.Sequence(
		brokertest.Reply{Text: "Hello, owner."},
		brokertest.Reply{Text: "Still here."},
	))
	h := home(t, "openai", srv.BaseURL(), "")
	stdout, stderr, code := run(t, h, "hi\n/help\nare you there?\n", "chat")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Hello, owner.", "Still here.", "Commands:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || len(reqs[1].Request.Messages) != 3 {
		t.Errorf("second turn did not carry the first: %d requests", len(reqs))
	}
}

func TestBadConfigExitStatus(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ file, body, want string }{
		"unknown key":  {"config.yaml", "provider:\n  kind: openai\n  modle: x\n", "provider.modle"},
		"bad duration": {"config.local.yaml", "agent:\n  turn_budget: soon\n", "agent.turn_budget"},
		"bad kind":     {"config.yaml", "provider:\n  kind: gemini\n", "provider.kind"},
		"yaml syntax":  {"config.yaml", "provider: [\n", "config.yaml"},
		"bad base_url": {"config.yaml", "provider:\n  kind: openai\n  base_url: ftp://x\n", "provider.base_url"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := t.TempDir()
			os.WriteFile(filepath.Join(h, ".env"), []byte("OPENAI_API_KEY="+apiKey+"\n"), 0o600)
			os.WriteFile(filepath.Join(h, tc.file), []byte(tc.body), 0o600)
			_, stderr, code := run(t, h, "", "chat", "-m", "hi")
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, stderr)
			}
			if !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, tc.file) {
				t.Errorf("stderr %q does not name %q in %s", stderr, tc.want, tc.file)
			}
			if strings.Contains(stderr, apiKey) {
				t.Error("the error shows the key")
			}
		})
	}
}

func TestDoctor(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "anthropic", brokertest.Sequence())
	h := home(t, "anthropic", srv.BaseURL(), "")
	os.MkdirAll(filepath.Join(h, "workspace"), 0o700)
	os.Chmod(h, 0o700)
	stdout, _, code := run(t, h, "", "doctor")
	if code != 0 || !strings.Contains(stdout, "answers") {
		t.Fatalf("doctor exit %d:\n%s", code, stdout)
	}
	// Each layer of the boundary is reported, and the disk floor.
	for _, want := range []string{"sandbox: socket-families", "sandbox: fds-closed", "sandbox: helper-hidden",
		"sandbox: helper-signals", "commands are stopped below 512MiB (sandbox.min_free_disk)", "python "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor does not report %q:\n%s", want, stdout)
		}
	}
	os.WriteFile(filepath.Join(h, "config.local.yaml"), []byte("sandbox:\n  min_free_disk: 1000000TiB\n"), 0o600)
	stdout, _, code = run(t, h, "", "doctor")
	if code != 1 || !strings.Contains(stdout, "below sandbox.min_free_disk (1000000TiB): run_shell and git will refuse to start") {
		t.Fatalf("doctor below the disk floor: exit %d:\n%s", code, stdout)
	}
	os.Remove(filepath.Join(h, "config.local.yaml"))
	os.Chmod(filepath.Join(h, ".env"), 0o644)
	stdout, _, code = run(t, h, "", "doctor")
	if code != 1 || !strings.Contains(stdout, "chmod 0600") {
		t.Fatalf("doctor with a readable .env: exit %d:\n%s", code, stdout)
	}
}

func TestInitThenChat(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", brokertest.Sequence(brokertest.Reply{Text: "OK"}, brokertest.Reply{Text: "hi from init"}))
	h := filepath.Join(t.TempDir(), "home")
	stdout, stderr, code := run(t, h, "", "init", "--provider", "ollama", "--base-url", srv.BaseURL(), "--model", "llama3")
	if code != 0 {
		t.Fatalf("init exit %d: %s %s", code, stdout, stderr)
	}
	fi, err := os.Stat(h)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("home mode: %v %v", fi, err)
	}
	stdout, stderr, code = run(t, h, "", "chat", "-m", "hello")
	if code != 0 || !strings.Contains(stdout, "hi from init") {
		t.Fatalf("chat after init: exit %d %q %q", code, stdout, stderr)
	}
	_, _, code = run(t, h, "", "init", "--provider", "ollama")
	if code == 0 {
		t.Error("a second init overwrote the config without --force")
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	h := t.TempDir()
	stdout, _, code := run(t, h, "", "version")
	if code != 0 || !strings.HasPrefix(stdout, "shelldon ") {
		t.Fatalf("version: %d %q", code, stdout)
	}
	stdout, _, code = run(t, h, "", "--help")
	for _, sub := range []string{"chat", "serve", "doctor", "init", "version", "audit"} {
		if !strings.Contains(stdout, sub) {
			t.Errorf("help lacks %q", sub)
		}
	}
	_, stderr, code := run(t, h, "", "nosuchcommand")
	if code != 2 || !strings.Contains(stderr, "unknown command") {
		t.Errorf("unknown command: exit %d %q", code, stderr)
	}
}

// TestFallbackAcrossWireFormats: the Anthropic provider keeps failing, so
// after its retries the turn is answered by the OpenAI-compatible fallback.
func TestFallbackAcrossWireFormats(t *testing.T) {
	t.Parallel()
	down := brokertest.NewServer(t, "anthropic", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Status: 529, Text: "overloaded"}
	})
	backup := brokertest.NewServer(t, "openai", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Text: "answered by the fallback"}
	})
	h := home(t, "anthropic", down.BaseURL(), fmt.Sprintf(
		"fallback:\n  - kind: openai\n    base_url: %s\n    model: backup-model\n", backup.BaseURL()))
	stdout, stderr, code := run(t, h, "", "chat", "-m", "hello?")
	if code != 0 || !strings.Contains(stdout, "answered by the fallback") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if n := len(down.Requests()); n != 3 {
		t.Errorf("the failing provider was tried %d times, want 3 (with retries)", n)
	}
	if got := backup.Requests(); len(got) != 1 || got[0].Header.Get("Authorization") != "" {
		t.Errorf("fallback requests: %d; a keyless local server must get no key", len(got))
	}
}

// TestHardenedDaemonAsUnprivilegedUser runs `shelldon serve` as nobody: the
// daemon is not dumpable, so another process of the same user cannot read
// its environment (where provider keys may live), and its sandboxed
// workers still start and use tools.
func TestHardenedDaemonAsUnprivilegedUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to switch to the nobody user")
	}
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		if len(last.ToolResults) > 0 {
			return brokertest.Reply{Text: "tool said: " + last.ToolResults[0].Content}
		}
		return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"note.txt"}`}}}
	})
	d, cmd, _ := serveAsNobody(t, fmt.Sprintf("provider:\n  kind: openai\n  base_url: %s\n  model: m\n", srv.BaseURL()),
		map[string]string{"note.txt": "hello nobody"})
	nobody := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}

	// Another process of the same user cannot read the daemon's environment.
	read := exec.Command("/bin/cat", fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
	read.SysProcAttr = nobody
	if out, err := read.CombinedOutput(); err == nil || strings.Contains(string(out), apiKey) {
		t.Fatalf("nobody read the daemon's environ: %v %q", err, out)
	}
	// Control: the same read of an ordinary process of that user works.
	sleeper := exec.Command("/bin/sleep", "30")
	sleeper.Env = []string{"MARK=readable"}
	sleeper.SysProcAttr = nobody
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	ctl := exec.Command("/bin/cat", fmt.Sprintf("/proc/%d/environ", sleeper.Process.Pid))
	ctl.SysProcAttr = nobody
	if out, err := ctl.CombinedOutput(); err != nil || !strings.Contains(string(out), "MARK=readable") {
		t.Fatalf("control read failed: %v %q", err, out)
	}

	// The hardened daemon still runs sandboxed workers with tools.
	status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"text": "read my note"})
	if status != 200 || !strings.Contains(fmt.Sprint(out["reply"]), "hello nobody") {
		t.Fatalf("chat as nobody: %d %v", status, out)
	}
}

// serveAsNobody starts `shelldon serve` as the nobody user (the test must
// run as root), with a copy of the binary and a home nobody owns holding
// config and the given workspace files. It returns the daemon, its process
// and the home.
func serveAsNobody(t *testing.T, config string, files map[string]string) (*daemon, *exec.Cmd, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "shelldon-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "shelldon")
	data, _ := os.ReadFile(binary)
	// No fork may happen while the copy is open for writing (ETXTBSY at
	// its exec otherwise: a child of another test would hold the file).
	syscall.ForkLock.Lock()
	err = os.WriteFile(bin, data, 0o755)
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	h := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(h, "workspace"), 0o700)
	os.WriteFile(filepath.Join(h, "config.yaml"), []byte(config), 0o600)
	for name, content := range files {
		os.WriteFile(filepath.Join(h, "workspace", name), []byte(content), 0o600)
	}
	filepath.Walk(h, func(p string, _ os.FileInfo, _ error) error { return os.Chown(p, 65534, 65534) })

	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + h, "SHELLDON_HOME=" + h, "SHELLDON_API_TOKEN=nobody-token-0123456789", "SECRET_IN_ENV=" + apiKey}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := ""
	sc := bufio.NewScanner(stderr)
	var logged strings.Builder
	for sc.Scan() {
		logged.WriteString(sc.Text() + "\n")
		if m := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatalf("serve did not start as nobody:\n%s", logged.String())
	}
	go io.Copy(io.Discard, stderr)
	return &daemon{cmd: cmd, addr: addr, token: "nobody-token-0123456789"}, cmd, h
}
