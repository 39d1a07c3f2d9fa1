package gitguard

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// trap is a repository whose configuration tries every way this package
// knows for a git command to start a program, and the scripts that record
// it when one does.
type trap struct {
	git     string // the git binary
	root    string
	repo    string // the workspace, a git repository
	home    string // HOME of the guarded commands
	bin     string // the trap scripts
	markers string // where a trap script records that it ran
}

// trapNames are the scripts; each touches a marker file of its own name.
var trapNames = []string{
	"fsmonitor", "fsmonitor2", "pager", "pager-log", "editor", "ssh", "askpass",
	"diffext", "diffext2", "textconv", "diffcmd", "alias", "gpg", "cred", "filter",
	"env-fsmonitor", "env-diff", "env-pager", "env-editor",
}

var hookNames = []string{
	"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout",
	"reference-transaction", "post-index-change", "pre-auto-gc", "post-merge",
	"pre-merge-commit", "post-rewrite",
}

func newTrap(t *testing.T) *trap {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the trap scripts are shell scripts")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	tr := &trap{
		git: git, root: root, repo: filepath.Join(root, "ws"), home: filepath.Join(root, "home"),
		bin: filepath.Join(root, "bin"), markers: filepath.Join(root, "markers"),
	}
	hooks := filepath.Join(root, "hooks")
	for _, d := range []string{tr.repo, tr.home, tr.bin, tr.markers, hooks, filepath.Join(root, "elsewhere")} {
		mkdir(t, d)
	}
	script := func(dir, name string) {
		write(t, filepath.Join(dir, name), "#!/bin/sh\ntouch '"+filepath.Join(tr.markers, name)+"'\nexit 0\n", 0o755)
	}
	for _, n := range trapNames {
		script(tr.bin, n)
	}
	for _, n := range hookNames {
		script(hooks, n)
	}
	write(t, filepath.Join(root, "elsewhere", "outside.txt"), "outside\n", 0o644)

	tr.plain(t, tr.repo, "init", "-q", "-b", "main")
	b := func(n string) string { return filepath.Join(tr.bin, n) }
	included := filepath.Join(root, "included.cfg")
	write(t, included, strings.Join([]string{
		"[core]", "\tfsmonitor = " + b("fsmonitor2"), "\thooksPath = " + hooks,
		"[diff]", "\texternal = " + b("diffext2"),
	}, "\n")+"\n", 0o644)
	cfg := strings.Join([]string{
		"[user]", "\tname = Test", "\temail = test@example.com",
		"[core]",
		"\thooksPath = " + hooks,
		"\tfsmonitor = " + b("fsmonitor"),
		"\tpager = " + b("pager"),
		"\teditor = " + b("editor"),
		"\tsshCommand = " + b("ssh"),
		"\taskPass = " + b("askpass"),
		"\tworktree = " + filepath.Join(root, "elsewhere"),
		"[diff]", "\texternal = " + b("diffext"),
		`[diff "evil"]`, "\ttextconv = " + b("textconv"), "\tcommand = " + b("diffcmd"),
		"[pager]", "\tlog = " + b("pager-log"), "\tstatus = " + b("pager-log"),
		"[alias]", "\tstatus = !" + b("alias"), "\tlog = !" + b("alias"), "\tst = !" + b("alias"),
		"[gpg]", "\tprogram = " + b("gpg"),
		"[commit]", "\tgpgSign = true",
		"[tag]", "\tgpgSign = true",
		"[log]", "\tshowSignature = true",
		"[credential]", "\thelper = " + b("cred"),
		"[protocol]", "\tallow = always",
		"[gc]", "\tauto = 1", "\tautoDetach = false",
		"[include]", "\tpath = " + included,
		"",
	}, "\n")
	f, err := os.OpenFile(filepath.Join(tr.repo, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(cfg); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// Attributes from a file only shelldon's prefix overrides (the repo's
	// core.attributesFile), and from .git/info, which write_file refuses.
	attrs := filepath.Join(root, "attributes")
	write(t, attrs, "* filter=evil\n", 0o644)
	appendConfig(t, tr, "[core]\n\tattributesFile = "+attrs+"\n[filter \"evil\"]\n\tclean = "+b("filter")+"\n\tsmudge = "+b("filter")+"\n")
	mkdir(t, filepath.Join(tr.repo, ".git", "info"))
	write(t, filepath.Join(tr.repo, ".git", "info", "attributes"), "* diff=evil\n", 0o644)
	// The credential deny patterns as the caller may place them in HOME.
	mkdir(t, filepath.Join(tr.home, ".config", "git"))
	write(t, filepath.Join(tr.home, ".config", "git", "ignore"), ".env\n*.pem\n", 0o644)
	return tr
}

func appendConfig(t *testing.T, tr *trap, s string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(tr.repo, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, name, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// plain runs git without the guard, as a careless caller would.
func (tr *trap) plain(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(tr.git, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + tr.home, "GIT_CONFIG_NOSYSTEM=1"}
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// guarded runs args as the git tool does: Split, Parse, Argv, Env.
func (tr *trap) guarded(t *testing.T, dir, args string) (string, error) {
	t.Helper()
	words, err := Split(args)
	if err != nil {
		t.Fatalf("Split(%q): %v", args, err)
	}
	c, err := Parse(words, fakeCheck)
	if err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	argv := Argv(c)
	cmd := exec.Command(tr.git, argv[1:]...)
	cmd.Dir = dir
	cmd.Env = Env(tr.home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// fired returns the traps that ran, and clears them.
func (tr *trap) fired(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(tr.markers)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if err := os.Remove(filepath.Join(tr.markers, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// TestEndToEnd runs allowed commands with the real git in a repository
// whose configuration (and included file, and attributes) points hooks,
// fsmonitor, pagers, editors, diff drivers, aliases, gpg and credential
// helpers at scripts, in a process whose environment carries GIT_*
// variables that would do the same. No script may run.
func TestEndToEnd(t *testing.T) {
	// The traps are live: plain git, in a repository set up the same way,
	// springs them.
	live := newTrap(t)
	write(t, filepath.Join(live.repo, "notes.txt"), "hello\n", 0o644)
	for _, args := range [][]string{
		{"status"}, {"add", "notes.txt"}, {"commit", "-m", "x"},
		{"-c", "commit.gpgSign=false", "commit", "-m", "x"}, {"log", "-p"},
		{"diff", "--no-index", "notes.txt", "/dev/null"},
	} {
		live.plain(t, live.repo, append([]string{"--work-tree=."}, args...)...)
	}
	got := live.fired(t)
	for _, want := range []string{"fsmonitor2", "filter", "pre-commit", "commit-msg", "gpg", "textconv", "diffcmd"} {
		if !slices.Contains(got, want) {
			t.Errorf("plain git fired %q, not %s: the trap is not set", got, want)
		}
	}

	tr := newTrap(t)
	write(t, filepath.Join(tr.repo, "notes.txt"), "hello\n", 0o644)

	// A poisoned environment: each of these would undo a guard.
	t.Setenv("GIT_DIR", filepath.Join(tr.root, "nowhere"))
	t.Setenv("GIT_WORK_TREE", filepath.Join(tr.root, "elsewhere"))
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='"+filepath.Join(tr.bin, "env-fsmonitor")+"'")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.pager")
	t.Setenv("GIT_CONFIG_VALUE_0", filepath.Join(tr.bin, "env-pager"))
	t.Setenv("GIT_EXTERNAL_DIFF", filepath.Join(tr.bin, "env-diff"))
	t.Setenv("GIT_PAGER", filepath.Join(tr.bin, "env-pager"))
	t.Setenv("GIT_EDITOR", filepath.Join(tr.bin, "env-editor"))
	for _, kv := range Env(tr.home) {
		k, v, _ := strings.Cut(kv, "=")
		if strings.Contains(v, tr.root) && k != "HOME" {
			t.Errorf("Env passes %s on from the caller", k)
		}
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXTERNAL_DIFF":
			t.Errorf("Env sets %s", k)
		}
	}

	write(t, filepath.Join(tr.repo, ".env"), "SECRET=hunter2\n", 0o600)
	write(t, filepath.Join(tr.repo, "b.txt"), "b\n", 0o644)
	steps := []string{
		"status",
		"add notes.txt",
		"commit -m first",
		"status --short",
		"log -p",
		"show HEAD",
		"show HEAD:notes.txt",
		"blame notes.txt",
		"grep -n hello",
		"ls-files",
		"rev-parse HEAD",
		"describe --always",
		"shortlog -s HEAD",
		"branch feature",
		"tag v1",
		"tag -a v2 -m release",
		"switch feature",
		"checkout -b other",
		"checkout main",
		"add -A",
		"commit -m everything",
	}
	for _, s := range steps {
		if out, err := tr.guarded(t, tr.repo, s); err != nil {
			t.Fatalf("git %s: %v\n%s", s, err, out)
		}
	}
	write(t, filepath.Join(tr.repo, "notes.txt"), "hello\nworld\n", 0o644)
	for _, s := range []string{
		"diff", "diff HEAD", "diff --stat", "log -p -1", "show --stat HEAD",
		"stash", "stash list -p", "stash show", "stash show -p", "stash pop",
		"commit -am second", "merge feature", "revert --no-edit HEAD", "cherry-pick HEAD~1",
	} {
		if out, err := tr.guarded(t, tr.repo, s); err != nil {
			t.Fatalf("git %s: %v\n%s", s, err, out)
		}
	}
	write(t, filepath.Join(tr.repo, "notes.txt"), "changed\n", 0o644)
	for _, s := range []string{
		"add notes.txt", "restore --staged notes.txt", "checkout -- notes.txt",
		"grep -e hello -- notes.txt", "mv b.txt c.txt", "rm --cached c.txt",
		"reset -q HEAD -- c.txt", "commit --allow-empty -m x -- notes.txt",
		"diff HEAD~1 -- notes.txt", "log --oneline -- notes.txt", "reset --hard HEAD",
	} {
		if out, err := tr.guarded(t, tr.repo, s); err != nil {
			t.Fatalf("git %s: %v\n%s", s, err, out)
		}
	}
	if got := tr.fired(t); len(got) > 0 {
		t.Errorf("guarded git ran %q", got)
	}

	// core.worktree pointed elsewhere; the workspace was the work tree.
	out, err := tr.guarded(t, tr.repo, "ls-files")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "outside.txt") || !strings.Contains(out, "notes.txt") || !strings.Contains(out, "b.txt") {
		t.Errorf("ls-files = %q: the work tree was not the workspace", out)
	}
	// The ignore file in HOME kept .env out of "add -A".
	if strings.Contains(out, ".env") {
		t.Errorf("ls-files = %q: add -A staged .env", out)
	}
	// The plain diff showed the change (--no-ext-diff did not hide it).
	out, _ = tr.guarded(t, tr.repo, "show HEAD~1 --stat")
	if !strings.Contains(out, "notes.txt") {
		t.Errorf("show --stat = %q", out)
	}
}

// TestEndToEndNoRepository: in a workspace that is not a repository, git
// diff would silently compare two directories in full (denied files
// included) and git grep would search every file; both must fail instead.
func TestEndToEndNoRepository(t *testing.T) {
	t.Parallel()
	tr := &trap{}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	tr.git, tr.home = git, t.TempDir()
	ws := t.TempDir()
	for _, d := range []string{"d1", "d2"} {
		mkdir(t, filepath.Join(ws, d))
	}
	write(t, filepath.Join(ws, "d1", ".env"), "SECRET=hunter2\n", 0o600)
	write(t, filepath.Join(ws, "d2", "y"), "y\n", 0o644)
	for _, s := range []string{"diff d1 d2", "diff -- d1 d2", "diff --stat d1 d2", "grep SECRET", "grep -e SECRET -- d1", "log -p", "show"} {
		out, err := tr.guarded(t, ws, s)
		if err == nil || strings.Contains(out, "hunter2") || strings.Contains(out, ".env") {
			t.Errorf("git %s outside a repository: err %v, output %q", s, err, out)
		}
	}
	// init works, and records no work tree elsewhere.
	if out, err := tr.guarded(t, ws, "init -q -b main"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	cfg, err := os.ReadFile(filepath.Join(ws, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), "worktree") || strings.Contains(string(cfg), "bare = true") {
		t.Errorf(".git/config after init:\n%s", cfg)
	}
	if out, err := tr.guarded(t, ws, "status --short"); err != nil || !strings.Contains(out, "d2/") {
		t.Errorf("status after init: %v\n%s", err, out)
	}
}
