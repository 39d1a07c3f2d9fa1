package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

// riskyScript is a fake model that asks for a FREE call, a RISKY call and a
// call after it (which must be dropped) for each message naming a file, and
// reports the tool results it gets back.
func riskyScript(tool, args string) func(brokertest.Recorded) brokertest.Reply {
	return func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		if last.Role == contracts.RoleUser {
			return brokertest.Reply{Text: "On it.", ToolCalls: []contracts.ToolCall{
				{ID: "call_free", Name: "get_time", Arguments: `{}`},
				{ID: "call_risky", Name: tool, Arguments: args},
				{ID: "call_after", Name: "list_dir", Arguments: `{"path":"."}`},
			}}
		}
		var parts []string
		for _, tr := range last.ToolResults {
			parts = append(parts, fmt.Sprintf("%s ok=%v %s", tr.Name, tr.OK, tr.Content))
		}
		return brokertest.Reply{Text: "RESULTS: " + strings.Join(parts, " | ")}
	}
}

func approvalID(t testing.TB, out map[string]any) string {
	t.Helper()
	list, _ := out["approvals"].([]any)
	if len(list) != 1 {
		t.Fatalf("approvals = %v", out["approvals"])
	}
	a := list[0].(map[string]any)
	id, _ := a["id"].(string)
	if len(id) < 20 {
		t.Fatalf("approval id %q", id)
	}
	return id
}

// TestApprovalFlow: a RISKY call parks the turn; the owner sees the daemon's
// rendering; approving runs exactly that call once and the turn goes on.
func TestApprovalFlow(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"anthropic", "openai"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := brokertest.NewServer(t, kind, riskyScript("write_file", `{"path":"notes/todo.txt","content":"buy milk\u202e"}`))
			h := home(t, kind, srv.BaseURL(), "")
			d := startServe(t, h)
			target := filepath.Join(h, "workspace", "notes", "todo.txt")

			status, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "e2e", "text": "note that I need milk"})
			if status != 200 || out["stopped"] != "approval" {
				t.Fatalf("chat: %d %v", status, out)
			}
			id := approvalID(t, out)
			if _, err := os.Stat(target); err == nil {
				t.Fatal("write_file ran before the owner decided")
			}
			reply := fmt.Sprint(out["reply"])
			for _, want := range []string{"write_file", "notes/todo.txt", `buy milk\u202e`, "Resolved path: " + target, "The model's words (not shelldon's): On it."} {
				if !strings.Contains(reply, want) {
					t.Errorf("the request lacks %q:\n%s", want, reply)
				}
			}
			status, list := d.do(t, "GET", "/api/approvals", d.token, nil)
			if status != 200 || len(list["approvals"].([]any)) != 1 {
				t.Fatalf("list: %d %v", status, list)
			}

			status, out = d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": true})
			if status != 200 {
				t.Fatalf("approve: %d %v", status, out)
			}
			reply = fmt.Sprint(out["reply"])
			for _, want := range []string{"get_time ok=true", "write_file ok=true", "created notes/todo.txt"} {
				if !strings.Contains(reply, want) {
					t.Errorf("resumed reply lacks %q: %s", want, reply)
				}
			}
			if strings.Contains(reply, "list_dir") {
				t.Errorf("the call after the RISKY one was not dropped: %s", reply)
			}
			if data, err := os.ReadFile(target); err != nil || string(data) != "buy milk\u202e" {
				t.Fatalf("file = %q, %v", data, err)
			}
			// Replays: the same decision again, or the opposite one.
			for _, approve := range []bool{true, false} {
				if status, out := d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": approve}); status != 409 {
					t.Errorf("replayed decision: %d %v", status, out)
				}
			}
			if status, _ := d.do(t, "POST", "/api/approvals/nosuchrequest0000000000000", d.token, map[string]bool{"approve": true}); status != 404 {
				t.Errorf("unknown id: %d", status)
			}
			// The audit trail tells the story.
			_, audit := d.do(t, "GET", "/api/audit?limit=50", d.token, nil)
			var kinds []string
			for _, row := range audit["audit"].([]any) {
				kinds = append(kinds, fmt.Sprint(row.(map[string]any)["kind"]))
			}
			all := strings.Join(kinds, ",")
			for _, want := range []string{"approval_requested", "approval_approved", "approval_executed"} {
				if !strings.Contains(all, want) {
					t.Errorf("audit lacks %s: %s", want, all)
				}
			}
		})
	}
}

func TestApprovalDenied(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", riskyScript("run_shell", `{"command":"touch pwned"}`))
	h := home(t, "openai", srv.BaseURL(), "")
	d := startServe(t, h)
	_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"text": "do something"})
	id := approvalID(t, out)
	status, out := d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": false})
	if status != 200 || !strings.Contains(fmt.Sprint(out["reply"]), "run_shell ok=false "+contracts.DeniedByOwner) {
		t.Fatalf("deny: %d %v", status, out)
	}
	if _, err := os.Stat(filepath.Join(h, "workspace", "pwned")); err == nil {
		t.Fatal("a denied command ran")
	}
}

func TestApprovedShellRunsSandboxed(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "anthropic", riskyScript("run_shell", `{"command":"echo made > made.txt; grep '^Seccomp:' /proc/self/status; ls /root 2>&1 | head -1"}`))
	h := home(t, "anthropic", srv.BaseURL(), "")
	d := startServe(t, h)
	_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"text": "run it"})
	id := approvalID(t, out)
	_, out = d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": true})
	reply := fmt.Sprint(out["reply"])
	if !strings.Contains(reply, "run_shell ok=true exit status 0") {
		t.Fatalf("reply %s", reply)
	}
	// The approved command ran contained: under seccomp, without the host's /root.
	if !strings.Contains(reply, "Seccomp:\t2") || !strings.Contains(reply, "No such file or directory") {
		t.Errorf("the command's view was not the sandbox's: %s", reply)
	}
	if data, _ := os.ReadFile(filepath.Join(h, "workspace", "made.txt")); string(data) != "made\n" {
		t.Errorf("made.txt = %q", data)
	}
}

// openDB opens a stopped daemon's database, to set up what a crash leaves.
func openDB(t *testing.T, h string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(h, "shelldon.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// fire posts without waiting to look at the answer (the daemon may die).
func (d *daemon) fire(path, body string) {
	req, _ := http.NewRequest("POST", "http://"+d.addr+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+d.token)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

func (d *daemon) stop(t testing.TB) {
	t.Helper()
	d.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
	}
}

func approvalState(t *testing.T, db *sql.DB, id string) (state, outcome string) {
	t.Helper()
	if err := db.QueryRowContext(context.Background(), `SELECT state, outcome FROM approvals WHERE id = ?`, id).Scan(&state, &outcome); err != nil {
		t.Fatal(err)
	}
	return state, outcome
}

// TestApprovalsAcrossRestarts: pending requests survive a restart and stay
// answerable; expired ones are refused; a decision a crash left unexecuted
// runs once at the next start; a call a crash cut short is not retried.
func TestApprovalsAcrossRestarts(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", riskyScript("run_shell", `{"command":"echo run >> runs.log"}`))
	h := home(t, "openai", srv.BaseURL(), "")
	runs := filepath.Join(h, "workspace", "runs.log")
	d := startServe(t, h)
	ids := make([]string, 4)
	for i := range ids {
		_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": fmt.Sprint("c", i), "text": "log a run"})
		ids[i] = approvalID(t, out)
	}
	d.stop(t)

	db := openDB(t, h)
	ctx := context.Background()
	// ids[1]: expired while the daemon was down.
	db.ExecContext(ctx, `UPDATE approvals SET expires_at = 1 WHERE id = ?`, ids[1])
	// ids[2]: approved, then the daemon died before running it.
	db.ExecContext(ctx, `UPDATE approvals SET state = 'approved', decided_at = 1 WHERE id = ?`, ids[2])
	// ids[3]: the daemon died while it ran.
	db.ExecContext(ctx, `UPDATE approvals SET state = 'running', decided_at = 1 WHERE id = ?`, ids[3])

	d = startServe(t, h)
	deadline := time.Now().Add(20 * time.Second)
	for {
		s2, _ := approvalState(t, db, ids[2])
		s3, _ := approvalState(t, db, ids[3])
		if s2 == "done" && s3 == "done" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("recovery did not finish: %s %s", s2, s3)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, outcome := approvalState(t, db, ids[2]); outcome != "executed ok" {
		t.Errorf("the approved request left by a crash: %q", outcome)
	}
	if _, outcome := approvalState(t, db, ids[3]); !strings.Contains(outcome, "may or may not") {
		t.Errorf("the interrupted request: %q", outcome)
	}
	if state, _ := approvalState(t, db, ids[1]); state != "expired" {
		t.Errorf("expired request state %q", state)
	}
	if status, out := d.do(t, "POST", "/api/approvals/"+ids[1], d.token, map[string]bool{"approve": true}); status != 409 {
		t.Errorf("expired decision: %d %v", status, out)
	}
	// The pending one survived and is answerable.
	status, out := d.do(t, "POST", "/api/approvals/"+ids[0], d.token, map[string]bool{"approve": true})
	if status != 200 || !strings.Contains(fmt.Sprint(out["reply"]), "run_shell ok=true") {
		t.Fatalf("surviving request: %d %v", status, out)
	}
	// Exactly two runs: the surviving approval and the crash-left one; the
	// interrupted one was not retried, the expired one never ran.
	data, _ := os.ReadFile(runs)
	if n := strings.Count(string(data), "run"); n != 2 {
		t.Errorf("runs.log has %d runs, want 2: %q", n, data)
	}
}

// TestDoubleTapExecutesOnce: many simultaneous approvals of one request run
// it once.
func TestDoubleTapExecutesOnce(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", riskyScript("run_shell", `{"command":"echo tap >> taps.log"}`))
	h := home(t, "openai", srv.BaseURL(), "")
	d := startServe(t, h)
	_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"text": "tap"})
	id := approvalID(t, out)
	codes := make(chan int, 8)
	for range 8 {
		go func() {
			status, _ := d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": true})
			codes <- status
		}()
	}
	ok := 0
	for range 8 {
		if <-codes == 200 {
			ok++
		}
	}
	data, _ := os.ReadFile(filepath.Join(h, "workspace", "taps.log"))
	if ok != 1 || strings.Count(string(data), "tap") != 1 {
		t.Fatalf("%d decisions succeeded, %q logged", ok, data)
	}
}

// TestHTTPGetToLocalNetworkNeverAsks: a URL that could only reach the local
// network is refused before the owner is asked, whatever its spelling.
func TestHTTPGetToLocalNetworkNeverAsks(t *testing.T) {
	t.Parallel()
	for _, url := range []string{
		"http://127.0.0.1:7433/api/settings", "http://[::ffff:127.0.0.1]/", "http://2130706433/",
		"http://169.254.169.254/latest/meta-data/", "http://localhost/", "http://user:pw@example.com/",
		"file:///etc/passwd", "http://0x7f.1/",
	} {
		t.Run(url, func(t *testing.T) {
			t.Parallel()
			srv := brokertest.NewServer(t, "openai", riskyScript("http_get", fmt.Sprintf(`{"url":%q}`, url)))
			h := home(t, "openai", srv.BaseURL(), "")
			stdout, stderr, code := run(t, h, "", "chat", "-m", "fetch it")
			if code != 0 || !strings.Contains(stdout, "http_get ok=false") || strings.Contains(stdout+stderr, "approval") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
		})
	}
}

// TestWriteFileNeverAsksForWhatItRefuses: hooks, git config, shell startup
// files, credentials and escapes are refused before the owner is asked, so
// a hurried approval cannot plant them.
func TestWriteFileNeverAsksForWhatItRefuses(t *testing.T) {
	t.Parallel()
	for _, path := range []string{
		".git/hooks/pre-commit", ".GIT/config", "sub/.git/config", ".gitattributes", ".gitmodules",
		".bashrc", "x/.profile", ".envrc", ".env", "keys/id_rsa", "../outside.txt", "/etc/cron.d/x",
	} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			srv := brokertest.NewServer(t, "anthropic", riskyScript("write_file", fmt.Sprintf(`{"path":%q,"content":"#!/bin/sh\ntouch /tmp/pwned"}`, path)))
			h := home(t, "anthropic", srv.BaseURL(), "")
			stdout, stderr, code := run(t, h, "", "chat", "-m", "write it")
			if code != 0 || !strings.Contains(stdout, "write_file ok=false") || strings.Contains(stdout+stderr, "approval") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
		})
	}
}

// TestApprovalsCommand decides from the command line, and the terminal chat
// asks inline.
func TestApprovalsCommand(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", riskyScript("write_file", `{"path":"cli.txt","content":"from the cli"}`))
	h := home(t, "openai", srv.BaseURL(), "")
	stdout, stderr, code := run(t, h, "", "chat", "-m", "write it")
	if code != 4 || !strings.Contains(stderr, "shelldon approvals approve ") {
		t.Fatalf("parked chat -m: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, code = run(t, h, "", "approvals", "list")
	fields := strings.Fields(strings.Split(strings.TrimSpace(stdout), "\n")[1])
	if code != 0 || len(fields) < 2 || fields[1] != "write_file" {
		t.Fatalf("list: exit %d\n%s", code, stdout)
	}
	id := fields[0]
	stdout, _, code = run(t, h, "", "approvals", "show", id)
	if code != 0 || !strings.Contains(stdout, "Resolved path: "+filepath.Join(h, "workspace", "cli.txt")) {
		t.Fatalf("show: exit %d\n%s", code, stdout)
	}
	stdout, _, code = run(t, h, "", "approvals", "approve", id)
	if code != 0 || !strings.Contains(stdout, "write_file ok=true") {
		t.Fatalf("approve: exit %d\n%s", code, stdout)
	}
	if data, _ := os.ReadFile(filepath.Join(h, "workspace", "cli.txt")); string(data) != "from the cli" {
		t.Fatalf("cli.txt = %q", data)
	}
	if _, stderr, code := run(t, h, "", "approvals", "deny", id); code != 1 || !strings.Contains(stderr, "already decided") {
		t.Errorf("second decision: exit %d %s", code, stderr)
	}

	// The interactive chat shows the request and asks; "n" denies.
	stdout, _, code = run(t, h, "write again\nn\n", "chat")
	if code != 0 || !strings.Contains(stdout, "Approve request ") || !strings.Contains(stdout, "write_file ok=false "+contracts.DeniedByOwner) {
		t.Fatalf("interactive: exit %d\n%s", code, stdout)
	}
}

// TestGitNeverAsksForWhatItRefuses: git arguments that run programs, write
// files, reach the network or reveal denied files are refused before the
// owner is asked.
func TestGitNeverAsksForWhatItRefuses(t *testing.T) {
	t.Parallel()
	for _, args := range []string{
		"-c core.pager=sh log", "log --output=../x", "fetch --upload-pa=touch", "diff --ext-di",
		"show HEAD:.env", "add .ENV", "clone http://example.com/x", "status; rm -rf /",
		"log --ou=/tmp/x", "grep -O x", "config core.hooksPath /tmp", "push", "-C /etc status",
		"log -- ../outside", "show HEAD:../../etc/passwd", "ls-files :(top)", "diff --no-index /etc/passwd x",
	} {
		t.Run(args, func(t *testing.T) {
			t.Parallel()
			srv := brokertest.NewServer(t, "openai", riskyScript("git", fmt.Sprintf(`{"args":%q}`, args)))
			h := home(t, "openai", srv.BaseURL(), "")
			stdout, stderr, code := run(t, h, "", "chat", "-m", "git it")
			if code != 0 || !strings.Contains(stdout, "git ok=false") || strings.Contains(stdout+stderr, "approval") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			// The terminal shows the refusal and the guard, not only the
			// model's account of it.
			if !strings.Contains(stdout, "shelldon refused a git call before asking you: refused by the git guard") {
				t.Errorf("no line for the refusal in the terminal:\n%s", stdout)
			}
		})
	}
}

// TestApprovedGitIgnoresPlantedConfig: a repository whose config points
// fsmonitor, hooks, the pager and a filter driver (selected by
// .gitattributes, as an earlier approved run_shell could plant them) at
// programs runs none of them, through the real daemon, worker and nested
// sandbox; and a credential file stays out of 'add -A'.
func TestApprovedGitIgnoresPlantedConfig(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "anthropic", riskyScript("git", `{"args":"add -A"}`))
	h := home(t, "anthropic", srv.BaseURL(), "")
	ws := filepath.Join(h, "workspace")
	os.MkdirAll(ws, 0o700)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	marker := filepath.Join(ws, "PWNED")
	script := filepath.Join(ws, "evil.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	cfg := fmt.Sprintf("[core]\n\tfsmonitor = %s\n\thooksPath = %s\n\tpager = %s\n[filter \"planted\"]\n\tclean = %s\n\tsmudge = %s\n\trequired = true\n",
		script, ws, script, script, script)
	os.WriteFile(filepath.Join(ws, ".gitattributes"), []byte("* filter=planted\n"), 0o644)
	f, _ := os.OpenFile(filepath.Join(ws, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(cfg)
	f.Close()
	os.WriteFile(filepath.Join(ws, "pre-commit"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("notes"), 0o644)
	os.WriteFile(filepath.Join(ws, ".env"), []byte("KEY=sk-secret"), 0o644)

	d := startServe(t, h)
	_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"text": "stage everything"})
	id := approvalID(t, out)
	if !strings.Contains(fmt.Sprint(out["reply"]), "Runs exactly: git add -A") {
		t.Errorf("the request does not show the exact command: %v", out["reply"])
	}
	_, out = d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": true})
	if !strings.Contains(fmt.Sprint(out["reply"]), "git ok=true") {
		t.Fatalf("git add: %v", out["reply"])
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a program planted in the repository's config ran")
	}
	staged, _ := exec.Command("git", "-C", ws, "diff", "--cached", "--name-only").Output()
	if !strings.Contains(string(staged), "notes.txt") || strings.Contains(string(staged), ".env") {
		t.Fatalf("staged: %q", staged)
	}
}

// TestDaemonKilledBetweenApproveAndExecute: the decision is committed, the
// daemon is killed (SIGKILL) before it runs the call, and the next start
// runs it exactly once.
func TestDaemonKilledBetweenApproveAndExecute(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		last := r.Request.Messages[len(r.Request.Messages)-1]
		switch {
		case last.Role == contracts.RoleUser && last.Text == "log it":
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{ID: "c1", Name: "run_shell", Arguments: `{"command":"echo once >> once.log"}`}}}
		case last.Role == contracts.RoleUser:
			return brokertest.Reply{Text: "slow answer", Delay: 30 * time.Second} // holds the only worker slot
		}
		return brokertest.Reply{Text: "logged"}
	})
	h := home(t, "openai", srv.BaseURL(), "agent:\n  workers: 1\n  turn_budget: 60s\n")
	d := startServe(t, h)
	_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"chat": "a", "text": "log it"})
	id := approvalID(t, out)

	// A slow turn takes the only slot; the approval then waits for it.
	go d.fire("/api/chat", `{"chat":"b","text":"think slowly"}`)
	time.Sleep(300 * time.Millisecond)
	go d.fire("/api/approvals/"+id, `{"approve":true}`)
	db := openDB(t, h)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if state, _ := approvalState(t, db, id); state == "approved" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the decision was not committed")
		}
	}
	d.cmd.Process.Kill() // the decision is committed; the call has not run
	d.cmd.Wait()
	if _, err := os.Stat(filepath.Join(h, "workspace", "once.log")); err == nil {
		t.Fatal("the call ran before the kill; the test proves nothing")
	}

	startServe(t, h)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if state, _ := approvalState(t, db, id); state == "done" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the approved call was not resumed after the restart")
		}
	}
	data, _ := os.ReadFile(filepath.Join(h, "workspace", "once.log"))
	if string(data) != "once\n" {
		t.Fatalf("once.log = %q, want exactly one run", data)
	}
}

// TestApprovedWriteIsBoundToTheResolvedPath: the owner approves a write to
// the file a symlink pointed at; retargeting the link before the decision
// makes the approved write refuse, not land in another file.
func TestApprovedWriteIsBoundToTheResolvedPath(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", riskyScript("write_file", `{"path":"link.txt","content":"new"}`))
	h := home(t, "openai", srv.BaseURL(), "")
	ws := filepath.Join(h, "workspace")
	os.MkdirAll(ws, 0o700)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("b"), 0o644)
	os.Symlink("a.txt", filepath.Join(ws, "link.txt"))
	d := startServe(t, h)
	_, out := d.do(t, "POST", "/api/chat", d.token, map[string]string{"text": "update it"})
	id := approvalID(t, out)
	if !strings.Contains(fmt.Sprint(out["reply"]), "Resolved path: "+filepath.Join(ws, "a.txt")) {
		t.Fatalf("card: %v", out["reply"])
	}
	os.Remove(filepath.Join(ws, "link.txt"))
	os.Symlink("b.txt", filepath.Join(ws, "link.txt"))
	_, out = d.do(t, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": true})
	if !strings.Contains(fmt.Sprint(out["reply"]), "write_file ok=false") {
		t.Fatalf("the retargeted write was not refused: %v", out["reply"])
	}
	for name, want := range map[string]string{"a.txt": "a", "b.txt": "b"} {
		if data, _ := os.ReadFile(filepath.Join(ws, name)); string(data) != want {
			t.Errorf("%s = %q, want %q", name, data, want)
		}
	}
}
