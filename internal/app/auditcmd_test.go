package app

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core/store"
)

func runAudit(t *testing.T, home string, environ []string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(append([]string{"--home", home, "audit"}, args...), strings.NewReader(""), &out, &errOut, environ)
	return out.String(), errOut.String(), code
}

// TestAuditCommandFilters: `audit --kind` and `--outcome` show only their
// rows, together and with the other filters; the next page's command
// keeps them; a kind that is not a plain name and an outcome other than
// ok or failed are usage errors, shown inert, that open nothing.
func TestAuditCommandFilters(t *testing.T) {
	t.Parallel()
	home, environ, st := memoryHome(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 12 {
		e := store.AuditEntry{At: at.Add(time.Duration(i) * time.Second), Chat: "web", Kind: "tool_call", Tool: "run_shell",
			Summary: fmt.Sprintf("entry-%02d", i+1), OK: i%2 == 0}
		if i%4 == 3 {
			e.Kind, e.Tool = "approval_denied", "git"
		}
		if _, err := st.AppendAudit(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	entries := func(out string) []string { return regexp.MustCompile(`entry-\d\d`).FindAllString(out, -1) }
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--kind", "approval_denied"}, []string{"entry-12", "entry-08", "entry-04"}},
		{[]string{"--outcome", "ok"}, []string{"entry-11", "entry-09", "entry-07", "entry-05", "entry-03", "entry-01"}},
		{[]string{"--outcome", "failed", "--kind", "tool_call"}, []string{"entry-10", "entry-06", "entry-02"}},
		{[]string{"--outcome", "failed", "--tool", "git"}, []string{"entry-12", "entry-08", "entry-04"}},
		{[]string{"--kind", "tool_strike"}, nil},
	} {
		out, errOut, code := runAudit(t, home, environ, tc.args...)
		if got := entries(out); code != 0 || strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q: %d %v, want %v\n%s", tc.args, code, got, tc.want, errOut)
		}
	}

	// The next page: the hint keeps the filters, and following it ends.
	out, errOut, code := runAudit(t, home, environ, "--outcome", "failed", "--kind", "tool_call", "-n", "2")
	m := regexp.MustCompile(`Older entries: shelldon audit -n 2 --kind tool_call --outcome failed --before (\d+)\n`).FindStringSubmatch(errOut)
	if code != 0 || strings.Join(entries(out), " ") != "entry-10 entry-06" || m == nil {
		t.Fatalf("first page: %d %q %q", code, out, errOut)
	}
	out, errOut, code = runAudit(t, home, environ, "--outcome", "failed", "--kind", "tool_call", "-n", "2", "--before", m[1])
	if code != 0 || strings.Join(entries(out), " ") != "entry-02" || errOut != "" {
		t.Errorf("second page: %d %q %q", code, out, errOut)
	}

	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--kind", "Tool_Call"}, `--kind Tool_Call is not a kind`},
		{[]string{"--kind", "tool call"}, `--kind "tool call" is not a kind`},
		{[]string{"--kind", "x\x1b[2J\u202e"}, `--kind "x\x1b[2J\u202e" is not a kind`},
		{[]string{"--kind", strings.Repeat("k", 65)}, `is not a kind`},
		{[]string{"--outcome", "OK"}, `--outcome OK: say ok or failed`},
		{[]string{"--outcome", "true"}, `--outcome true: say ok or failed`},
		{[]string{"--outcome", "\u202efailed"}, `--outcome "\u202efailed": say ok or failed`},
	} {
		out, errOut, code := runAudit(t, home, environ, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.msg) || strings.ContainsAny(errOut, "\x1b\u202e") {
			t.Errorf("%q: %d %q %q", tc.args, code, out, errOut)
		}
	}
	out, _, _ = runAudit(t, home, environ, "--help")
	for _, want := range []string{"--kind string", "--outcome string", "approval_expired", "memory_forgotten", "(failed)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the help lacks %q:\n%s", want, out)
		}
	}
}
