package main

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the test reads the databases itself

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// TestBackupWhileTurnsRun backs up a home while its daemon runs turns in
// a loop, restores the archive into a new home, and compares: the restored
// history is a prefix of the live one and every turn in it is whole; the
// config, the self-coded tool and the skills come back byte for byte; the
// secrets only with --secrets (and the command says it left them out); the
// restored home passes doctor, and a daemon on it continues the chat.
func TestBackupWhileTurnsRun(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", func(r brokertest.Recorded) brokertest.Reply {
		if len(r.Request.Messages) == 0 {
			return brokertest.Reply{Text: "ok"}
		}
		last := r.Request.Messages[len(r.Request.Messages)-1]
		if last.Role == contracts.RoleUser && len(last.ToolResults) == 0 {
			return brokertest.Reply{Text: "Counting.", ToolCalls: []contracts.ToolCall{{Name: "eval", Arguments: `{"code":"6*7"}`}}}
		}
		return brokertest.Reply{Text: fmt.Sprintf("done after %d messages", len(r.Request.Messages))}
	})
	h := home(t, "openai", srv.BaseURL(), "")
	os.Chmod(h, 0o700)
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(h, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("config.local.yaml", "agent:\n  max_tool_calls: 7\n")
	write("api_token", "file-token-0123456789abcdef0123\n")
	write("skills/tea/SKILL.md", "---\nname: tea\ndescription: Brew a cup of tea.\n---\nBoil the water first.\n")
	write("workspace/notes.txt", "water the plants")
	// Some bulk, so that the backup takes a while beside the turns.
	bulk := make([]byte, 4<<20)
	rand.Read(bulk)
	write("workspace/bulk.bin", string(bulk))
	tools, err := selfcode.Open(filepath.Join(h, "tools"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tools.Stage("greet", selfcode.Starlark, "def run(args):\n    return 'hi'\n", "def test_a():\n    pass\n", selfcode.Meta{Description: "says hi"}, "passed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tools.Promote("greet", m.Hash, "owner"); err != nil {
		t.Fatal(err)
	}
	d := startServe(t, h)

	// Turns in a loop, one after another, until stopped.
	var done atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var loopErr atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			body, _ := json.Marshal(map[string]string{"chat": "bk", "text": fmt.Sprintf("turn %d", i)})
			req, _ := http.NewRequest("POST", "http://"+d.addr+"/api/chat", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+d.token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				loopErr.Store(err.Error())
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				loopErr.Store(fmt.Sprintf("turn %d: status %d", i, resp.StatusCode))
				return
			}
			done.Add(1)
		}
	}()
	waitTurns := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for done.Load() < n {
			if e := loopErr.Load(); e != nil || time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				t.Fatalf("the turns stopped at %d: %v\n%s", done.Load(), e, d.log())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitTurns(3)

	out := t.TempDir()
	plain, withSecrets := filepath.Join(out, "plain.tar.gz"), filepath.Join(out, "secrets.tar.gz")
	before := done.Load()
	stdout, stderr, code := run(t, h, "", "backup", plain)
	during := done.Load() - before
	if code != 0 {
		t.Fatalf("backup: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"Backed up " + h, ".env: a secret (pass --secrets to include it)", "api_token: a secret (pass --secrets to include it)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("backup does not say %q:\n%s", want, stdout)
		}
	}
	stdout, stderr, code = run(t, h, "", "backup", "--secrets", withSecrets)
	if code != 0 || !strings.Contains(stdout, "The archive holds your secrets") {
		t.Fatalf("backup --secrets: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, stderr, code := run(t, h, "", "backup", plain); code == 0 || !strings.Contains(stderr, "--force") {
		t.Errorf("backup over an existing archive: exit %d: %s", code, stderr)
	}
	waitTurns(done.Load() + 2) // turns go on after the backups
	close(stop)
	wg.Wait()
	t.Logf("%d turns finished while the first backup ran", during)

	for _, fi := range []string{plain, withSecrets} {
		if st, err := os.Stat(fi); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v", fi, err, st.Mode())
		}
	}

	parent := t.TempDir()
	h2, h3 := filepath.Join(parent, "plain"), filepath.Join(parent, "secrets")
	if stdout, stderr, code := run(t, h2, "", "restore", plain); code != 0 || !strings.Contains(stdout, "It holds no secrets") {
		t.Fatalf("restore: exit %d\n%s%s", code, stdout, stderr)
	}
	if stdout, stderr, code := run(t, h3, "", "restore", withSecrets); code != 0 || strings.Contains(stdout, "It holds no secrets") {
		t.Fatalf("restore --secrets archive: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, stderr, code := run(t, h2, "", "restore", plain); code == 0 || !strings.Contains(stderr, "is not empty") {
		t.Errorf("restore into a restored home: exit %d: %s", code, stderr)
	}

	live := readHistory(t, filepath.Join(h, "shelldon.db"))
	for _, r := range []string{h2, h3} {
		got := readHistory(t, filepath.Join(r, "shelldon.db"))
		checkPrefix(t, r, got, live)
		for _, rel := range []string{"config.yaml", "config.local.yaml", "skills/tea/SKILL.md", "tools/live/greet/manifest.json",
			"tools/live/greet/tool.star", "workspace/notes.txt", "workspace/bulk.bin"} {
			want, _ := os.ReadFile(filepath.Join(h, rel))
			got, err := os.ReadFile(filepath.Join(r, rel))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: %s differs from the original (%v)", r, rel, err)
			}
		}
	}
	for _, secret := range []string{".env", "api_token"} {
		if _, err := os.Stat(filepath.Join(h2, secret)); err == nil {
			t.Errorf("the home restored without --secrets has %s", secret)
		}
		want, _ := os.ReadFile(filepath.Join(h, secret))
		if got, err := os.ReadFile(filepath.Join(h3, secret)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("the home restored with --secrets: %s: %v", secret, err)
		}
	}

	// The restored home is whole: doctor passes, a daemon serves it and
	// the chat goes on from the restored history.
	if stdout, _, code := run(t, h3, "", "doctor"); code != 0 {
		t.Errorf("doctor on the restored home: exit %d\n%s", code, stdout)
	}
	d3 := startServe(t, h3)
	status, resp := d3.do(t, "POST", "/api/chat", d3.token, map[string]string{"chat": "bk", "text": "after the restore"})
	if status != 200 {
		t.Fatalf("chat on the restored home: %d %v", status, resp)
	}
	reqs := srv.Requests()
	var seen bool
	for _, r := range reqs {
		ms := r.Request.Messages
		if len(ms) > 0 && ms[len(ms)-1].Text == "after the restore" {
			seen = slices.ContainsFunc(ms, func(m contracts.Message) bool { return m.Text == "turn 1" })
		}
	}
	if !seen {
		t.Error("the restored daemon's turn did not carry the restored history")
	}
}

// turnRow is a turn and its messages as the database holds them.
type turnRow struct {
	id                  int64
	status, input       string
	reply               string
	messages, messageNo int
	bodies              []string
}

// readHistory reads the turns of chat "bk" and the audit trail's ids, read
// only.
func readHistory(t *testing.T, path string) (h struct {
	turns []turnRow
	audit []int64
}) {
	t.Helper()
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&_pragma=busy_timeout(5000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, status, input, COALESCE(reply, ''), messages FROM turns WHERE chat = 'bk' ORDER BY id`)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for rows.Next() {
		var r turnRow
		if err := rows.Scan(&r.id, &r.status, &r.input, &r.reply, &r.messages); err != nil {
			t.Fatal(err)
		}
		h.turns = append(h.turns, r)
	}
	rows.Close()
	for i := range h.turns {
		ms, err := db.Query(`SELECT body FROM messages WHERE turn = ? ORDER BY seq`, h.turns[i].id)
		if err != nil {
			t.Fatal(err)
		}
		for ms.Next() {
			var b string
			ms.Scan(&b)
			h.turns[i].bodies = append(h.turns[i].bodies, b)
		}
		ms.Close()
		h.turns[i].messageNo = len(h.turns[i].bodies)
	}
	ids, err := db.Query(`SELECT id FROM audit ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for ids.Next() {
		var id int64
		ids.Scan(&id)
		h.audit = append(h.audit, id)
	}
	ids.Close()
	return h
}

// checkPrefix wants the restored history a prefix of the live one: every
// finished turn in it the live one's, whole, with all its messages; at
// most one turn still running (begun before the snapshot), with no
// messages; the audit trail's ids the first of the live ones.
func checkPrefix(t *testing.T, where string, got, live struct {
	turns []turnRow
	audit []int64
}) {
	t.Helper()
	if len(got.turns) < 3 || len(got.turns) >= len(live.turns) {
		t.Errorf("%s: %d turns restored of %d live: want at least 3 and fewer than all", where, len(got.turns), len(live.turns))
	}
	for i, r := range got.turns {
		if i >= len(live.turns) {
			t.Errorf("%s: turn %d is not in the live history", where, r.id)
			break
		}
		l := live.turns[i]
		switch {
		case r.id != l.id || r.input != l.input:
			t.Errorf("%s: turn %d (%q) is not the live turn %d (%q)", where, r.id, r.input, l.id, l.input)
		case r.status == "running":
			if i != len(got.turns)-1 || r.messageNo != 0 {
				t.Errorf("%s: running turn %d is not the last, or has %d messages", where, r.id, r.messageNo)
			}
		case r.status != l.status || r.reply != l.reply || r.messages != r.messageNo || !slices.Equal(r.bodies, l.bodies):
			t.Errorf("%s: turn %d is not whole: status %s reply %q, %d of %d messages; live: %s %q %d", where, r.id, r.status, r.reply, r.messageNo, r.messages, l.status, l.reply, len(l.bodies))
		case r.messageNo < 4:
			t.Errorf("%s: turn %d has %d messages, want the user's, the call, its result and the reply", where, r.id, r.messageNo)
		}
	}
	if len(got.audit) < 3 || len(got.audit) > len(live.audit) || !slices.Equal(got.audit, live.audit[:len(got.audit)]) {
		t.Errorf("%s: audit ids %v are not a prefix of the live %v", where, got.audit, live.audit)
	}
}
