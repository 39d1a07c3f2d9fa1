//go:build linux

package risky

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/testbin"
	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/workspace"
)

// unprivEnv marks the re-run of TestGitHostileRepositories as nobody.
const unprivEnv = "SHELLDON_RISKY_TEST_UNPRIVILEGED"

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

var (
	runnerOnce sync.Once
	runner     *sandbox.Runner
	runnerErr  error
)

// newGitTool returns the git tool on ws, run by a real sandbox whose
// helper is the real shelldon binary.
// testHelper is the shelldon binary the test sandbox runs.
func testHelper(t *testing.T) string {
	if helper := os.Getenv("SHELLDON_TEST_HELPER"); helper != "" {
		return helper
	}
	return testbin.Shelldon(t)
}

func newGitTool(t *testing.T, ws string) *worker.Tool {
	t.Helper()
	helper := testHelper(t)
	runnerOnce.Do(func() { runner, runnerErr = sandbox.NewRunner(helper) })
	if runnerErr != nil {
		t.Fatal(runnerErr)
	}
	if tier := runner.Probe(context.Background()); !tier.Full() {
		t.Skipf("this kernel lacks a required sandbox layer: %s", tier)
	}
	root, err := workspace.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	tool, err := gitTool(Env{Workspace: root, Sandbox: runner})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// repo is a hostile workspace: a repository (ws/.git, or a gitfile or a
// symbolic link to inner/.git) on main, with a branch feature; the trap,
// ws/.trap/trap <name>, touches ws/.trap/fired/<name> and copies its
// input to its output. The trap lives in the workspace, as one planted by
// an approved run_shell would, so that inside the sandbox it could run.
type repo struct {
	ws, gitdir, trap, fired string
}

// trapCmd is a configuration value that runs the trap as name.
func (r *repo) trapCmd(name string) string { return "'" + r.trap + "' " + name }

// program writes a trap that takes no arguments, ws/.trap/<name>, for a
// setting that names a program rather than a shell command.
func (r *repo) program(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(r.trap), name)
	writeFile(t, p, "#!/bin/sh\nexec '"+r.trap+"' "+name+"\n", 0o755)
	return p
}

// newRepo builds the repository with plain git, before anything hostile is
// planted: notes.txt has ten lines; main changed the first, feature the
// last, so that merging feature into main needs a three-way file merge.
func newRepo(t *testing.T, layout string) *repo {
	t.Helper()
	ws := t.TempDir()
	r := &repo{ws: ws, gitdir: filepath.Join(ws, ".git"), trap: filepath.Join(ws, ".trap", "trap"), fired: filepath.Join(ws, ".trap", "fired")}
	mkdirs(t, r.fired)
	writeFile(t, r.trap, "#!/bin/sh\ntouch '"+r.fired+"'/\"$1\"\nexec cat\n", 0o755)
	switch layout {
	case "":
		plainGit(t, ws, "init", "-q", "-b", "main")
	case "gitfile": // ws/.git holds "gitdir: <ws>/inner/.git"
		r.gitdir = filepath.Join(ws, "inner", ".git")
		mkdirs(t, filepath.Dir(r.gitdir))
		plainGit(t, ws, "init", "-q", "-b", "main", "--separate-git-dir", r.gitdir)
	case "symlink": // ws/.git -> inner/.git
		plainGit(t, ws, "init", "-q", "-b", "main")
		r.gitdir = filepath.Join(ws, "inner", ".git")
		mkdirs(t, filepath.Join(ws, "inner"))
		if err := os.Rename(filepath.Join(ws, ".git"), r.gitdir); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("inner/.git", filepath.Join(ws, ".git")); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(r.gitdir, "info", "exclude"), ".trap/\ninner/\n", 0o644)
	lines := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}
	writeFile(t, filepath.Join(ws, "notes.txt"), strings.Join(lines, "\n")+"\n", 0o644)
	plainGit(t, ws, "add", "notes.txt")
	plainGit(t, ws, "commit", "-q", "-m", "base")
	plainGit(t, ws, "branch", "feature")
	plainGit(t, ws, "switch", "-q", "feature")
	lines[9] = "ten, from feature"
	writeFile(t, filepath.Join(ws, "notes.txt"), strings.Join(lines, "\n")+"\n", 0o644)
	plainGit(t, ws, "commit", "-q", "-am", "feature")
	plainGit(t, ws, "switch", "-q", "main")
	lines[9] = "10"
	lines[0] = "one, from main"
	writeFile(t, filepath.Join(ws, "notes.txt"), strings.Join(lines, "\n")+"\n", 0o644)
	plainGit(t, ws, "commit", "-q", "-am", "main")
	return r
}

// config appends to the repository's own configuration file.
func (r *repo) config(t *testing.T, lines ...string) {
	t.Helper()
	appendFile(t, filepath.Join(r.gitdir, "config"), strings.Join(lines, "\n")+"\n")
}

// firedTraps lists the traps that ran.
func (r *repo) firedTraps(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(r.fired)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// plainEnv is the environment of plain git in these tests: no system or
// global configuration, a fixed identity.
var plainEnv = []string{
	"PATH=/usr/bin:/bin", "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
	"TERM=xterm", "LANG=C.UTF-8",
}

// plainGit runs git unguarded, outside the sandbox, and fails the test if
// git fails.
func plainGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := runPlain(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func runPlain(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	if args[0] == "pty" { // on a terminal, as a pager needs
		cmd = exec.Command("python3", append([]string{"-c", "import pty, sys; pty.spawn(sys.argv[1:])", "git"}, args[1:]...)...)
	}
	cmd.Dir = dir
	cmd.Env = plainEnv
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// hostileCase plants one way for a repository to name a program.
type hostileCase struct {
	name   string
	layout string // "" (.git directory), "gitfile" or "symlink"
	plant  func(t *testing.T, r *repo)
	// control are unguarded git commands that run the trap (the first word
	// "pty" runs git on a terminal): they show that the trap is live.
	control [][]string
	// steps are the approved git calls; a step starting with "!" must fail.
	steps []string
	// check says the calls did their work.
	check func(t *testing.T, r *repo, git func(string) string)
}

func hostileCases() []hostileCase {
	filter := func(r *repo, name string) []string {
		return []string{
			`[filter "` + name + `"]`,
			"\tclean = " + r.trapCmd("filter-clean"), "\tsmudge = " + r.trapCmd("filter-smudge"),
			"\trequired = true",
		}
	}
	committed := func(t *testing.T, r *repo, git func(string) string) {
		t.Helper()
		if got := git("show HEAD:notes.txt"); !strings.Contains(got, "edited by the test") {
			t.Errorf("HEAD:notes.txt does not hold the edit:\n%s", got)
		}
		if got := git("status --short"); strings.Contains(got, "notes.txt") {
			t.Errorf("notes.txt is still changed after the commit:\n%s", got)
		}
	}
	edit := func(t *testing.T, r *repo) { // far enough from the lines main and feature changed
		name := filepath.Join(r.ws, "notes.txt")
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, name, strings.Replace(string(data), "5\n", "5\nedited by the test\n", 1), 0o644)
	}
	addCommit := []string{"status", "add notes.txt", "commit -m edit", "log -p -1", "diff HEAD~1", "show HEAD"}
	cases := []hostileCase{{
		name: "filter from .git/config selected by .gitattributes",
		plant: func(t *testing.T, r *repo) {
			r.config(t, filter(r, "evil")...)
			writeFile(t, filepath.Join(r.ws, ".gitattributes"), "*.txt filter=evil\n", 0o644)
			edit(t, r)
		},
		control: [][]string{{"add", "notes.txt"}},
		steps:   addCommit,
		check:   committed,
	}, {
		name: "filters with unusual names from info/attributes and a subdirectory's .gitattributes",
		plant: func(t *testing.T, r *repo) {
			r.config(t, `[FILTER "Ev\"il\\x"]`, "\tCLEAN = "+r.trapCmd("quoted-clean"),
				"[Filter.Lower]", "\tClean = "+r.trapCmd("legacy-clean"),
				`[filter "tab	name"] clean = `+r.trapCmd("tab-clean"))
			writeFile(t, filepath.Join(r.gitdir, "info", "attributes"), "notes.txt filter=lower\n", 0o644)
			writeFile(t, filepath.Join(r.ws, "sub", ".gitattributes"), "* filter=Ev\\\"il\\\\x\n", 0o644)
			writeFile(t, filepath.Join(r.ws, "sub", "a.txt"), "a\n", 0o644)
			writeFile(t, filepath.Join(r.ws, "sub", "deeper", ".gitattributes"), "b.txt filter=\"tab\tname\"\n", 0o644)
			writeFile(t, filepath.Join(r.ws, "sub", "deeper", "b.txt"), "b\n", 0o644)
			edit(t, r)
		},
		control: [][]string{{"add", "notes.txt", "sub/a.txt"}},
		steps:   append(slices.Clone(addCommit), "add sub", "commit -m sub"),
		check: func(t *testing.T, r *repo, git func(string) string) {
			committed(t, r, git)
			if got := git("show HEAD:sub/a.txt"); strings.TrimSpace(got) != "a" {
				t.Errorf("HEAD:sub/a.txt = %q", got)
			}
		},
	}, {
		name: "filter pulled in by include.path and includeIf",
		plant: func(t *testing.T, r *repo) {
			writeFile(t, filepath.Join(r.ws, "evil.cfg"), strings.Join(filter(r, "inc"), "\n")+"\n", 0o644)
			writeFile(t, filepath.Join(r.ws, "evil2.cfg"), "[core]\n\tfsmonitor = "+r.trapCmd("included-fsmonitor")+"\n", 0o644)
			r.config(t, "[include]", "\tpath = ../evil.cfg", `[includeIf "gitdir:/"]`, "\tpath = "+filepath.Join(r.ws, "evil2.cfg"))
			writeFile(t, filepath.Join(r.ws, ".gitattributes"), "*.txt filter=inc\n", 0o644)
			edit(t, r)
		},
		control: [][]string{{"add", "notes.txt"}},
		steps:   addCommit,
		check:   committed,
	}, {
		name: "diff textconv and command on diff, log -p, show, blame and grep",
		plant: func(t *testing.T, r *repo) {
			r.config(t, `[diff "evil"]`, "\ttextconv = "+r.trapCmd("textconv"), "\tcommand = "+r.trapCmd("diff-command"))
			writeFile(t, filepath.Join(r.gitdir, "info", "attributes"), "*.txt diff=evil\n", 0o644)
			edit(t, r)
		},
		control: [][]string{{"diff"}, {"log", "-p", "-1"}},
		steps:   []string{"diff", "diff HEAD", "log -p -2", "show HEAD", "blame notes.txt", "grep -n one"},
		check: func(t *testing.T, r *repo, git func(string) string) {
			if got := git("diff"); !strings.Contains(got, "+edited by the test") {
				t.Errorf("diff shows no change:\n%s", got)
			}
			if got := git("log -p -1"); !strings.Contains(got, "+one, from main") {
				t.Errorf("log -p shows no patch:\n%s", got)
			}
		},
	}, {
		name: "diff.external",
		plant: func(t *testing.T, r *repo) {
			r.config(t, "[diff]", "\texternal = "+r.trapCmd("diff-external"))
			edit(t, r)
		},
		control: [][]string{{"diff"}},
		steps:   []string{"diff", "log -p -1", "show HEAD", "stash", "stash show -p", "stash pop"},
		check: func(t *testing.T, r *repo, git func(string) string) {
			if got := git("diff"); !strings.Contains(got, "+edited by the test") {
				t.Errorf("diff shows no change:\n%s", got)
			}
		},
	}, {
		name: "fsmonitor on status",
		plant: func(t *testing.T, r *repo) {
			r.config(t, "[Core]", "\tFSMonitor = "+r.trapCmd("fsmonitor"), "\tfsmonitorHookVersion = 2")
			edit(t, r)
		},
		control: [][]string{{"status"}},
		steps:   addCommit,
		check:   committed,
	}, {
		name: "pre-commit, post-commit and other hooks in .git/hooks",
		plant: func(t *testing.T, r *repo) {
			for _, h := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit",
				"post-checkout", "post-merge", "pre-merge-commit", "reference-transaction", "post-index-change"} {
				writeFile(t, filepath.Join(r.gitdir, "hooks", h), "#!/bin/sh\nexec "+r.trapCmd(h)+" </dev/null\n", 0o755)
			}
			edit(t, r)
		},
		control: [][]string{{"commit", "-am", "x"}},
		steps:   append(slices.Clone(addCommit), "switch -c other", "switch main", "merge --no-edit feature"),
		check:   committed,
	}, {
		name: "core.hooksPath into the workspace",
		plant: func(t *testing.T, r *repo) {
			for _, h := range []string{"pre-commit", "post-commit"} {
				writeFile(t, filepath.Join(r.ws, "myhooks", h), "#!/bin/sh\nexec "+r.trapCmd("hookspath-"+h)+" </dev/null\n", 0o755)
			}
			r.config(t, "[core]", "\thooksPath = myhooks")
			edit(t, r)
		},
		control: [][]string{{"commit", "-am", "x"}},
		steps:   addCommit,
		check:   committed,
	}, {
		name: "merge driver on merge",
		plant: func(t *testing.T, r *repo) {
			r.config(t, `[merge "evil"]`, "\tname = evil", "\tdriver = "+r.trapCmd("merge-driver")+" %O %A %B")
			writeFile(t, filepath.Join(r.ws, ".gitattributes"), "notes.txt merge=evil\n", 0o644)
		},
		control: [][]string{{"merge", "--no-edit", "feature"}},
		steps:   []string{"merge --no-edit feature", "log --oneline -3"},
		check: func(t *testing.T, r *repo, git func(string) string) {
			got := git("show HEAD:notes.txt")
			if !strings.Contains(got, "one, from main") || !strings.Contains(got, "ten, from feature") {
				t.Errorf("the merge did not merge notes.txt:\n%s", got)
			}
			if got := git("rev-parse HEAD^2"); strings.TrimSpace(got) == "" {
				t.Errorf("HEAD is not a merge")
			}
		},
	}, {
		name: "core.pager and pager.<cmd>",
		plant: func(t *testing.T, r *repo) {
			r.config(t, "[core]", "\tpager = "+r.trapCmd("core-pager"),
				"[pager]", "\tlog = "+r.trapCmd("pager-log"), "\tstatus = "+r.trapCmd("pager-status"))
		},
		control: [][]string{{"pty", "log", "-1"}},
		steps:   []string{"log -1", "status", "diff HEAD~1", "branch"},
		check: func(t *testing.T, r *repo, git func(string) string) {
			if got := git("log -1 --format=%s"); strings.TrimSpace(got) != "main" {
				t.Errorf("log = %q", got)
			}
		},
	}, {
		name: "core.editor on commit without -m",
		plant: func(t *testing.T, r *repo) {
			r.config(t, "[core]", "\teditor = "+r.trapCmd("editor"), "[sequence]", "\teditor = "+r.trapCmd("seq-editor"))
			edit(t, r)
		},
		control: [][]string{{"commit", "-a"}},
		steps:   []string{"add notes.txt", "!commit", "commit -m edit"},
		check:   committed,
	}, {
		name: "a submodule's own configuration and attributes",
		plant: func(t *testing.T, r *repo) {
			src := filepath.Join(t.TempDir(), "sub")
			plainGit(t, filepath.Dir(src), "init", "-q", "-b", "main", src)
			writeFile(t, filepath.Join(src, "a"), "a\n", 0o644)
			plainGit(t, src, "add", "a")
			plainGit(t, src, "commit", "-q", "-m", "s")
			plainGit(t, r.ws, "-c", "protocol.file.allow=always", "submodule", "-q", "add", src, "sub")
			plainGit(t, r.ws, "commit", "-q", "-m", "submodule")
			mod := filepath.Join(r.gitdir, "modules", "sub")
			appendFile(t, filepath.Join(mod, "config"), strings.Join(filter(r, "subevil"), "\n")+
				"\n[core]\n\tfsmonitor = "+r.trapCmd("sub-fsmonitor")+"\n")
			writeFile(t, filepath.Join(mod, "info", "attributes"), "* filter=subevil\n", 0o644)
			// Racily clean: git must read the file to know.
			past := time.Now().Add(-time.Hour)
			os.Chtimes(filepath.Join(r.ws, "sub", "a"), past, past)
			edit(t, r)
		},
		control: [][]string{{"status"}},
		steps:   append(slices.Clone(addCommit), "diff HEAD~1 --stat"),
		check:   committed,
	}, {
		name: "worktree configuration: extensions.worktreeConfig and config.worktree",
		plant: func(t *testing.T, r *repo) {
			r.config(t, "[core]", "\trepositoryformatversion = 1", "[extensions]", "\tworktreeConfig = true")
			writeFile(t, filepath.Join(r.gitdir, "config.worktree"), strings.Join(filter(r, "wt"), "\n")+"\n", 0o644)
			writeFile(t, filepath.Join(r.ws, ".gitattributes"), "*.txt filter=wt\n", 0o644)
			edit(t, r)
		},
		control: [][]string{{"add", "notes.txt"}},
		steps:   addCommit,
		check:   committed,
	}, {
		name:   ".git is a gitfile",
		layout: "gitfile",
		plant: func(t *testing.T, r *repo) {
			r.config(t, filter(r, "evil")...)
			writeFile(t, filepath.Join(r.ws, ".gitattributes"), "*.txt filter=evil\n", 0o644)
			edit(t, r)
		},
		control: [][]string{{"add", "notes.txt"}},
		steps:   addCommit,
		check:   committed,
	}, {
		name:   ".git is a symbolic link",
		layout: "symlink",
		plant: func(t *testing.T, r *repo) {
			r.config(t, "[core]", "\tfsmonitor = "+r.trapCmd("fsmonitor"))
			r.config(t, filter(r, "evil")...)
			writeFile(t, filepath.Join(r.ws, ".gitattributes"), "*.txt filter=evil\n", 0o644)
			edit(t, r)
		},
		control: [][]string{{"add", "notes.txt"}},
		steps:   addCommit,
		check:   committed,
	}, {
		name: "every other program-naming key, and the whole offered workflow",
		plant: func(t *testing.T, r *repo) {
			r.config(t, "[core]",
				"\tsshCommand = "+r.trapCmd("ssh"), "\tgitProxy = "+r.trapCmd("gitproxy"),
				"\taskPass = "+r.trapCmd("askpass"), "\talternateRefsCommand = "+r.trapCmd("altrefs"),
				"\tattributesFile = "+filepath.Join(r.ws, "attrs"), "\tworktree = /tmp",
				"[credential]", "\thelper = "+r.trapCmd("credential"),
				"[gpg]", "\tprogram = "+r.program(t, "gpg"), `[gpg "ssh"]`, "\tprogram = "+r.program(t, "gpg-ssh"),
				"[commit]", "\tgpgSign = true", "[tag]", "\tgpgSign = true", "[log]", "\tshowSignature = true",
				"[uploadpack]", "\tpackObjectsHook = "+r.trapCmd("packobjects"),
				"[alias]", "\tstatus = !"+r.trapCmd("alias"),
				"[submodule]", "\trecurse = true",
				"[gc]", "\tauto = 1", "\tautoDetach = false", "[maintenance]", "\tauto = true",
				`[remote "origin"]`, "\turl = ext::"+r.trapCmd("ext"), "\tuploadpack = "+r.trapCmd("uploadpack"),
				"\tvcs = evil", "\tfetch = +refs/heads/*:refs/remotes/origin/*",
				"[extensions]", "\tpartialClone = origin",
				"[filter \"a\"]", "\tclean = "+r.trapCmd("attrsfile-clean"),
				"[status]", "\tsubmoduleSummary = true",
				"[merge]", "\ttool = evil", "[mergetool \"evil\"]", "\tcmd = "+r.trapCmd("mergetool"),
				"[branch \"main\"]", "\tmergeOptions = --strategy=evil")
			writeFile(t, filepath.Join(r.ws, "attrs"), "* filter=a\n", 0o644)
			edit(t, r)
		},
		control: [][]string{{"--work-tree=.", "commit", "-am", "x"}},
		steps: append(slices.Clone(addCommit), "tag -a v1 -m release", "describe --tags", "branch topic",
			"switch topic", "switch main", "merge --no-edit feature", "revert --no-edit -m 1 HEAD", "cherry-pick -m 1 HEAD~1",
			"stash list", "reset --hard HEAD", "checkout -- notes.txt", "restore notes.txt", "rm --cached notes.txt",
			"add notes.txt", "grep -n one", "blame notes.txt", "shortlog -s HEAD", "ls-files", "rev-parse HEAD"),
		check: func(t *testing.T, r *repo, git func(string) string) {
			if got := git("show HEAD:notes.txt"); !strings.Contains(got, "edited by the test") || !strings.Contains(got, "ten, from feature") {
				t.Errorf("HEAD:notes.txt lacks the edit or the cherry-picked merge:\n%s", got)
			}
			if got := git("show HEAD~1:notes.txt"); strings.Contains(got, "ten, from feature") {
				t.Errorf("the revert did not revert the merge:\n%s", got)
			}
		},
	}}
	return cases
}

// TestGitHostileRepositories plants, in turn, each way a repository's
// configuration or attributes can name a program, shows with plain git
// that the trap is live, then makes approved calls of the git tool (the
// real tool, the real sandbox, real git) on a fresh copy: no trap may run,
// and git must still do its work.
func TestGitHostileRepositories(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Parallel()
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			live := newRepo(t, tc.layout)
			tc.plant(t, live)
			for _, args := range tc.control {
				out, err := runPlain(live.ws, args...)
				t.Logf("control %q: %v\n%s", args, err, out)
			}
			if fired := live.firedTraps(t); len(fired) == 0 {
				t.Fatalf("plain git %q ran no trap: the case proves nothing", tc.control)
			}

			r := newRepo(t, tc.layout)
			tc.plant(t, r)
			tool := newGitTool(t, r.ws)
			call := func(args string) (string, error) {
				raw, _ := json.Marshal(gitArgs{Args: args})
				return tool.Run(context.Background(), raw)
			}
			git := func(args string) string {
				t.Helper()
				out, err := call(args)
				if err != nil {
					t.Fatalf("git %s: %v", args, err)
				}
				_, out, _ = strings.Cut(out, "stdout:\n")
				return out
			}
			for _, s := range tc.steps {
				if args, ok := strings.CutPrefix(s, "!"); ok {
					if out, err := call(args); err == nil {
						t.Errorf("git %s succeeded, want a failure:\n%s", args, out)
					}
					continue
				}
				git(s)
			}
			tc.check(t, r, git)
			if fired := r.firedTraps(t); len(fired) > 0 {
				t.Errorf("approved git calls ran %q", fired)
			}
		})
	}
}

// TestGitRefusesRepositoriesOutsideDotGit: a gitfile or commondir that
// leads git to a directory a checkout could write (not within .git), or
// out of the workspace, refuses the call before anything runs.
func TestGitRefusesRepositoriesOutsideDotGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Parallel()
	r := newRepo(t, "")
	// A bare repository as tracked files would be: fixtures/bare.
	bare := filepath.Join(r.ws, "fixtures", "bare")
	plainGit(t, r.ws, "init", "-q", "--bare", bare)
	appendFile(t, filepath.Join(bare, "config"), "[core]\n\tfsmonitor = "+r.trapCmd("bare-fsmonitor")+"\n")
	tool := newGitTool(t, r.ws)
	for name, plant := range map[string]func(t *testing.T) func(){
		"gitfile to fixtures": func(t *testing.T) func() {
			p := filepath.Join(r.ws, "sub", ".git")
			writeFile(t, p, "gitdir: ../fixtures/bare\n", 0o644)
			return func() { os.RemoveAll(filepath.Dir(p)) }
		},
		"commondir to fixtures": func(t *testing.T) func() {
			p := filepath.Join(r.gitdir, "commondir")
			writeFile(t, p, "../fixtures/bare\n", 0o644)
			return func() { os.Remove(p) }
		},
		"gitfile out of the workspace": func(t *testing.T) func() {
			other := t.TempDir()
			plainGit(t, other, "init", "-q")
			p := filepath.Join(r.ws, "sub2", ".git")
			writeFile(t, p, "gitdir: "+filepath.Join(other, ".git")+"\n", 0o644)
			return func() { os.RemoveAll(filepath.Dir(p)) }
		},
		"config symlinked out of .git": func(t *testing.T) func() {
			p := filepath.Join(r.gitdir, "config")
			if err := os.Rename(p, p+".orig"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../fixtures/bare/config", p); err != nil {
				t.Fatal(err)
			}
			return func() { os.Remove(p); os.Rename(p+".orig", p) }
		},
		"config is a FIFO": func(t *testing.T) func() {
			p := filepath.Join(r.gitdir, "config")
			if err := os.Rename(p, p+".orig"); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			return func() { os.Remove(p); os.Rename(p+".orig", p) }
		},
	} {
		undo := plant(t)
		raw, _ := json.Marshal(gitArgs{Args: "status"})
		out, err := tool.Run(context.Background(), raw)
		undo()
		if err == nil || !strings.Contains(err.Error(), "gitguard") {
			t.Errorf("%s: status ran (err %v):\n%s", name, err, out)
		}
	}
	// Undone, the workspace works again.
	raw, _ := json.Marshal(gitArgs{Args: "status"})
	if out, err := tool.Run(context.Background(), raw); err != nil {
		t.Errorf("status: %v\n%s", err, out)
	}
	if fired := r.firedTraps(t); len(fired) > 0 {
		t.Errorf("ran %q", fired)
	}
}

// TestGitUnprivileged runs the hostile repositories again as nobody: the
// covers must not depend on running as root.
func TestGitUnprivileged(t *testing.T) {
	if os.Getenv(unprivEnv) != "" {
		t.Skip("already unprivileged")
	}
	if os.Getuid() != 0 {
		t.Skip("already running as an unprivileged user; the other tests cover it")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	testbin.AsNobody(t, []string{"TestGitHostileRepositories", "TestGitRefusesRepositoriesOutsideDotGit"}, unprivEnv+"=1")
}

func mkdirs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, name, data string, mode os.FileMode) {
	t.Helper()
	mkdirs(t, filepath.Dir(name))
	if err := os.WriteFile(name, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, name, data string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprint(f, data); err != nil {
		t.Fatal(err)
	}
}
