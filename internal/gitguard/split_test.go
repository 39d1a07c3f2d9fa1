package gitguard

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"status", []string{"status"}},
		{"git status", []string{"status"}},
		{"  git\tlog  --oneline\t -n 5 ", []string{"log", "--oneline", "-n", "5"}},
		{"", nil},
		{"git", []string{}},
		{"git git", []string{"git"}},
		{`commit -m "fix the bug"`, []string{"commit", "-m", "fix the bug"}},
		{`commit -m 'it''s'`, []string{"commit", "-m", "its"}},
		{`commit -m 'it'\''s'`, []string{"commit", "-m", "it's"}},
		{"commit -m \"say \\\"hi\\\" \\\\ \\$5 \\` \\x\"", []string{"commit", "-m", "say \"hi\" \\ $5 ` \\x"}},
		{`commit -m "a;b|c&d<e>f(g)h"`, []string{"commit", "-m", "a;b|c&d<e>f(g)h"}},
		{`commit -m 'a;b $(x) ${y} $z ` + "`w`" + `'`, []string{"commit", "-m", "a;b $(x) ${y} $z `w`"}},
		{`add my\ file.txt`, []string{"add", "my file.txt"}},
		{`add a\;b \$x \'`, []string{"add", "a;b", "$x", "'"}},
		{`commit -m ''`, []string{"commit", "-m", ""}},
		{`commit -m ""`, []string{"commit", "-m", ""}},
		{`a""b''c`, []string{"abc"}},
		{`log --format=%h\ %s`, []string{"log", "--format=%h %s"}},
		{"commit -m 'tab\there'", []string{"commit", "-m", "tab\there"}},
		{"commit -m 'héllo wörld ✓ 日本'", []string{"commit", "-m", "héllo wörld ✓ 日本"}},
		{"commit -m 'rtl \u202e x'", []string{"commit", "-m", "rtl \u202e x"}},
		{`show HEAD~1 HEAD^ @{-1} HEAD@{1} v1.0^{tree}`, []string{"show", "HEAD~1", "HEAD^", "@{-1}", "HEAD@{1}", "v1.0^{tree}"}},
		{`log a#b x~y`, []string{"log", "a#b", "x~y"}},
		{`log '#x' "~y"`, []string{"log", "#x", "~y"}},
		{`grep -e 'foo$' -e "bar$" -e $`, []string{"grep", "-e", "foo$", "-e", "bar$", "-e", "$"}},
		{`add *.go`, []string{"add", "*.go"}},
	}
	for _, tt := range tests {
		got, err := Split(tt.in)
		if err != nil {
			t.Errorf("Split(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" && !(len(tt.want) == 0 && len(got) == 0) {
			t.Errorf("Split(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestSplitRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"status; rm -rf /", "shell operator"},
		{"status && curl x", "shell operator"},
		{"status || true", "shell operator"},
		{"status | sh", "shell operator"},
		{"status &", "shell operator"},
		{"log > /tmp/x", "shell operator"},
		{"log < /etc/passwd", "shell operator"},
		{"log >>x", "shell operator"},
		{"log `id`", "shell operator"},
		{"log $(id)", "expanded"},
		{"log ${HOME}", "expanded"},
		{"log $HOME", "expanded"},
		{"log $1", "expanded"},
		{"log $?", "expanded"},
		{"log $'\\x41'", "expanded"},
		{`log "$(id)"`, "expanded"},
		{`log "${x}"`, "expanded"},
		{"log \"`id`\"", "command"},
		{"log (x)", "shell operator"},
		{"status\nrm -rf /", "line break"},
		{"status\r\n", "line break"},
		{"commit -m 'a\nb'", "line break"},
		{"status\x00", "NUL"},
		{"commit -m 'a\x00b'", "NUL"},
		{"status \x1b[31m", "control character"},
		{"status \x7f", "control character"},
		{"status \u0085", "control character"},
		{"status \\\x01", "control character"},
		{"status '", "unbalanced '"},
		{`status "`, `unbalanced "`},
		{`commit -m "abc`, `unbalanced "`},
		{`commit -m 'abc`, "unbalanced '"},
		{`status \`, "lone backslash"},
		{"status # comment", "comment"},
		{"add ~/x", "home directory"},
		{"add \xff", "UTF-8"},
		{strings.Repeat("a ", maxWords+2), "words"},
		{strings.Repeat("a", maxInput+1), "bytes"},
	}
	for _, tt := range tests {
		got, err := Split(tt.in)
		if err == nil {
			t.Errorf("Split(%q) = %q, want an error", tt.in, got)
			continue
		}
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Split(%q) = %v, want ErrRefused mentioning %q", tt.in, err, tt.want)
		}
		if strings.Contains(tt.want, "shell operator") && !strings.Contains(err.Error(), "no shell") {
			t.Errorf("Split(%q) = %v: the message should say no shell is involved", tt.in, err)
		}
	}
}
