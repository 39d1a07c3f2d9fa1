package app

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core/store"
)

// memoryHome is a home with no daemon answering on its address, and its
// store holding facts (written straight to the store, unchecked, as
// hostile as a model could make them).
func memoryHome(t *testing.T, facts ...string) (home string, environ []string, st *store.Store) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	home = t.TempDir()
	cfg := fmt.Sprintf("provider:\n  kind: openai\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  api_key_env: TEST_KEY\nserver:\n  listen: %s\n", addr)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err = store.Open(context.Background(), filepath.Join(home, dbFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i, f := range facts {
		if _, _, err := st.Remember(context.Background(), "chat\x1b[31m", int64(i+1), f, time.Unix(int64(1000+i), 0), 0); err != nil {
			t.Fatal(err)
		}
	}
	return home, []string{"HOME=" + home, "TEST_KEY=sk-test-0123456789abcdef", "SHELLDON_API_TOKEN=" + testToken}, st
}

func runMemory(t *testing.T, home string, environ []string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(append([]string{"--home", home, "memory"}, args...), strings.NewReader(""), &out, &errOut, environ)
	return out.String(), errOut.String(), code
}

// hostileFact acts on a terminal and hides text, if shown raw.
const hostileFact = "The cat is Tom\x1b[2J\x1b]0;pwned\x07\r\u202eevil\u200b and more\nsecond line"

// TestMemoryCommands: with no daemon running, `memory list` lists the facts
// (or searches them), `show` shows one in full, `edit` and `forget` change
// them, each audited as by cli; a fact's text and chat are shown inert;
// a fact that is not there, a bad number and a refused text are errors.
func TestMemoryCommands(t *testing.T) {
	t.Parallel()
	home, environ, st := memoryHome(t, hostileFact, "The dog is called Rex.", "Bins go out on Tuesday.")
	raw := func(s string) bool { return strings.ContainsAny(s, "\x1b\x07\r\u202e\u200b") }

	out, errOut, code := runMemory(t, home, environ, "list")
	if code != 0 || raw(out) || !strings.Contains(out, `The cat is Tom\x1b[2J`) || !strings.Contains(out, "Rex") || !strings.HasPrefix(out, "ID") {
		t.Errorf("list: %d %q %q", code, out, errOut)
	}
	out, _, code = runMemory(t, home, environ, "list", "--query", "dog* OR NEAR(")
	if code != 0 || !strings.Contains(out, "Rex") || strings.Contains(out, "Tom") {
		t.Errorf("list --query: %d %q", code, out)
	}
	out, errOut, code = runMemory(t, home, environ, "list", "-n", "2")
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(errOut, "--before 2") {
		t.Errorf("list -n 2: %d %q %q", code, out, errOut)
	}
	out, _, code = runMemory(t, home, environ, "show", "#1")
	if code != 0 || raw(out) || !strings.Contains(out, "Fact #1\n") || !strings.Contains(out, "  second line") || !strings.Contains(out, `chat "chat\x1b[31m"`) {
		t.Errorf("show: %d %q", code, out)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"show", "99"}, 1, "fact #99: no such fact"},
		{[]string{"show", "x\x1b[2J"}, 2, `is not a fact's number`},
		{[]string{"edit", "2", "the", "key", "is", "sk-ant-abcdefghijklmnopqrstuvwxyz"}, 1, "looks like it holds a secret"},
		{[]string{"edit", "99", "x"}, 1, "no such fact"},
		{[]string{"forget", "99"}, 1, "no such fact"},
	} {
		out, errOut, code := runMemory(t, home, environ, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) || raw(errOut) || out != "" {
			t.Errorf("%q: %d %q %q", tc.args, code, out, errOut)
		}
	}
	out, errOut, code = runMemory(t, home, environ, "edit", "2", "The dog is called Rex", "and he is old.")
	if code != 0 || out != "Fact #2 is changed.\n" {
		t.Errorf("edit: %d %q %q", code, out, errOut)
	}
	if f, err := st.Fact(context.Background(), 2); err != nil || f.Text != "The dog is called Rex and he is old." {
		t.Errorf("after edit: %+v, %v", f, err)
	}
	out, errOut, code = runMemory(t, home, environ, "forget", "1")
	if code != 0 || out != "Fact #1 is forgotten.\n" {
		t.Errorf("forget: %d %q %q", code, out, errOut)
	}
	if _, _, code := runMemory(t, home, environ, "show", "1"); code != 1 {
		t.Errorf("show after forget: exit %d", code)
	}
	rows, err := st.Audit(context.Background(), store.AuditQuery{Limit: 2})
	if err != nil || len(rows) != 2 || rows[0].Summary != "fact #1 forgotten by cli" || rows[1].Summary != "fact #2 edited by cli" {
		t.Errorf("audit: %+v, %v", rows, err)
	}
}
