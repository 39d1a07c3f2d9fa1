package gitguard

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestArgv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string // after "git" and the prefix
	}{
		{"status", []string{"status"}},
		{"log -p", []string{"log", "--no-ext-diff", "--no-textconv", "-p"}},
		{"show HEAD", []string{"show", "--no-ext-diff", "--no-textconv", "HEAD"}},
		{"diff HEAD", []string{"diff", "--no-ext-diff", "--no-textconv", "--dense", "HEAD"}},
		{"grep -n x", []string{"grep", "--no-textconv", "-n", "x"}},
		{"blame a", []string{"blame", "--no-textconv", "a"}},
		{"stash", []string{"stash", "push"}},
		{"stash list -p", []string{"stash", "list", "--no-ext-diff", "--no-textconv", "-p"}},
		{"stash show", []string{"stash", "show", "--no-ext-diff", "--no-textconv", "--stat"}},
		{"stash show stash@{1}", []string{"stash", "show", "--no-ext-diff", "--no-textconv", "--stat", "stash@{1}"}},
		{"stash show -p", []string{"stash", "show", "--no-ext-diff", "--no-textconv", "-p"}},
		{"commit -am x", []string{"commit", "-a", "-m", "x"}},
	}
	for _, tt := range tests {
		cmd, err := splitParse(t, tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		got := Argv(cmd)
		want := append(append([]string{"git"}, prefix...), tt.want...)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Argv(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestPrefix: every -c sets a key, each key once, and the prefix holds the
// guards the package doc promises.
func TestPrefix(t *testing.T) {
	t.Parallel()
	keys := map[string]string{}
	for i := 0; i < len(prefix); i++ {
		if prefix[i] != "-c" {
			if !strings.HasPrefix(prefix[i], "--") {
				t.Errorf("prefix word %q is neither -c nor a long option", prefix[i])
			}
			continue
		}
		i++
		k, v, ok := strings.Cut(prefix[i], "=")
		if !ok {
			t.Errorf("-c %q sets no value", prefix[i])
		}
		if _, dup := keys[strings.ToLower(k)]; dup {
			t.Errorf("-c %s twice", k)
		}
		keys[strings.ToLower(k)] = v
	}
	for k, v := range map[string]string{
		"core.hookspath": "/dev/null", "core.fsmonitor": "false", "core.pager": "cat",
		"core.editor": "false", "sequence.editor": "false", "core.sshcommand": "false",
		"core.askpass": "", "credential.helper": "", "diff.external": "",
		"protocol.allow": "never", "protocol.ext.allow": "never", "protocol.file.allow": "never",
		"gpg.program": "false", "commit.gpgsign": "false", "tag.gpgsign": "false",
		"gc.auto": "0", "core.attributesfile": "/dev/null",
	} {
		if got, ok := keys[k]; !ok || got != v {
			t.Errorf("-c %s=%q missing (have %q)", k, v, got)
		}
	}
	for _, o := range []string{"--no-pager", "--git-dir=.git", "--work-tree=.", "--literal-pathspecs", "--no-replace-objects"} {
		if !slices.Contains(prefix, o) {
			t.Errorf("prefix lacks %s", o)
		}
	}
}

func TestEnv(t *testing.T) {
	t.Parallel()
	env := Env("/home/x")
	want := map[string]string{
		"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": "/home/x",
		"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": "", "GIT_PAGER": "cat",
		"PAGER": "cat", "GIT_EDITOR": "false", "EDITOR": "false", "VISUAL": "false",
		"GIT_OPTIONAL_LOCKS": "0", "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin",
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s twice", k)
		}
		got[k] = v
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd  Command
		want string
	}{
		{Command{Sub: "status"}, "git status"},
		{Command{Sub: "commit", Args: []string{"-m", "fix the bug"}}, "git commit -m 'fix the bug'"},
		{Command{Sub: "commit", Args: []string{"-m", "it's"}}, `git commit -m 'it'\''s'`},
		{Command{Sub: "commit", Args: []string{"-m", ""}}, "git commit -m ''"},
		{Command{Sub: "log", Args: []string{"--format=%h %s", "-n", "5"}}, "git log '--format=%h %s' -n 5"},
		{Command{Sub: "show", Args: []string{"HEAD@{1}", "HEAD~2:a.txt", "$x", "a;b", "#c", "~d"}},
			`git show 'HEAD@{1}' 'HEAD~2:a.txt' '$x' 'a;b' '#c' '~d'`},
		{Command{Sub: "commit", Args: []string{"-m", "héllo ✓"}}, "git commit -m 'héllo ✓'"},
		{Command{Sub: "add", Args: []string{"rtl\u202etxt.exe"}}, `git add $'rtl\u202etxt.exe'`},
		{Command{Sub: "add", Args: []string{".e\u200bnv"}}, `git add $'.e\u200bnv'`},
		{Command{Sub: "add", Args: []string{"a\u00a0b"}}, `git add $'a\u00a0b'`},
		{Command{Sub: "add", Args: []string{"a\tb'c\\"}}, `git add $'a\tb\'c\\'`},
		{Command{Sub: "add", Args: []string{"a\nb\x01\xff"}}, `git add $'a\nb\x01\xff'`},
		{Command{Sub: "add", Args: []string{"tag\U000E0041"}}, `git add $'tag\U000e0041'`},
	}
	for _, tt := range tests {
		if got := Render(tt.cmd); got != tt.want {
			t.Errorf("Render(%q) = %s, want %s", tt.cmd.Args, got, tt.want)
		}
	}
}

// TestRenderRoundTrip: what the owner reads splits back into the words
// that run.
func TestRenderRoundTrip(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`commit -m "it's a \"test\" \\ \$5"`, `log '--format=%h %s' -- 'a b' "c'd"`,
		`show HEAD@{1} HEAD~2:'my file'`, `commit -m 'x;y|z&w<v>u(t)s'`, `add ./-x`,
	} {
		cmd, err := splitParse(t, in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		words, err := Split(Render(cmd))
		if err != nil {
			t.Fatalf("Split(Render(%q)) = %v", in, err)
		}
		if diff := cmp.Diff(append([]string{cmd.Sub}, cmd.Args...), words); diff != "" {
			t.Errorf("Split(Render(%q)) (-want +got):\n%s", in, diff)
		}
	}
}
