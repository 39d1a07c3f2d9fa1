package gitguard

import (
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	errEscapes = errors.New("escapes the workspace")
	errDenied  = errors.New("on the deny list")
)

// fakeCheck stands in for the caller's PathCheck: no absolute names, no
// climbing out, a case-folded deny list, and any name may not exist yet.
func fakeCheck(p string) error {
	if path.IsAbs(p) {
		return errEscapes
	}
	clean := path.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return errEscapes
	}
	for _, c := range strings.Split(clean, "/") {
		c = strings.ToLower(c)
		for _, pat := range []string{".env", ".env.*", ".ssh", "id_rsa*", "*.pem", "secrets*"} {
			if ok, _ := path.Match(pat, c); ok {
				return errDenied
			}
		}
	}
	return nil
}

// splitParse splits and parses like the git tool does.
func splitParse(t *testing.T, in string) (Command, error) {
	t.Helper()
	words, err := Split(in)
	if err != nil {
		t.Fatalf("Split(%q): %v", in, err)
	}
	return Parse(words, fakeCheck)
}

// TestParseRefused is the attack table: each line must be refused, and
// for the path attacks, by the path check.
func TestParseRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want error  // ErrRefused, errDenied or errEscapes
		msg  string // in the message, when set
	}{
		// Global options before the subcommand: only the daemon sets them.
		{"-c core.pager=sh log", ErrRefused, "global option"},
		// The repository's configuration is read-only to git.
		{"branch -m old new", ErrRefused, "read-only"},
		{"branch --mov old new", ErrRefused, "read-only"},
		{"branch -C old new", ErrRefused, "read-only"},
		{"-c core.fsmonitor=/tmp/x status", ErrRefused, "global option"},
		{"-C /etc status", ErrRefused, "global option"},
		{"--git-dir=/tmp/x status", ErrRefused, "global option"},
		{"--git-dir /tmp/x status", ErrRefused, "global option"},
		{"--work-tree=/ status", ErrRefused, "global option"},
		{"--exec-path=/tmp status", ErrRefused, "global option"},
		{"--namespace=x log", ErrRefused, "global option"},
		{"--config-env=core.pager=X log", ErrRefused, "global option"},
		{"--super-prefix=x status", ErrRefused, "global option"},
		{"-p log", ErrRefused, "global option"},
		{"--paginate log", ErrRefused, "global option"},
		{"--no-pager log", ErrRefused, "global option"},
		{"--no-replace-objects log", ErrRefused, "global option"},
		{"--literal-pathspecs log", ErrRefused, "global option"},
		{"--glob-pathspecs log", ErrRefused, "global option"},
		{"--icase-pathspecs log", ErrRefused, "global option"},
		{"--bare status", ErrRefused, "global option"},
		{"--html-path", ErrRefused, "global option"},
		{"-", ErrRefused, "global option"},
		{"", ErrRefused, "no subcommand"},
		// Subcommands that talk to the network, run programs or configure.
		{"config --global x y", ErrRefused, "not offered"},
		{"config core.pager sh", ErrRefused, "not offered"},
		{"remote add origin x", ErrRefused, "not offered"},
		{"fetch", ErrRefused, "network"},
		{"pull", ErrRefused, "network"},
		{"push origin main", ErrRefused, "network"},
		{"clone https://x/y", ErrRefused, "network"},
		{"clone ext::sh -c touch% /tmp/x", ErrRefused, "network"},
		{"submodule update --init", ErrRefused, "not offered"},
		{"archive --remote=x HEAD", ErrRefused, "not offered"},
		{"archive --output=/tmp/x HEAD", ErrRefused, "not offered"},
		{"daemon", ErrRefused, "not offered"},
		{"send-email x", ErrRefused, "not offered"},
		{"request-pull a b", ErrRefused, "not offered"},
		{"bisect run sh", ErrRefused, "not offered"},
		{"filter-branch --tree-filter x", ErrRefused, "not offered"},
		{"difftool", ErrRefused, "not offered"},
		{"mergetool", ErrRefused, "not offered"},
		{"credential fill", ErrRefused, "not offered"},
		{"worktree add ../x", ErrRefused, "not offered"},
		{"instaweb", ErrRefused, "not offered"},
		{"svn clone x", ErrRefused, "not offered"},
		{"rebase -x sh", ErrRefused, "not offered"},
		{"am x.mbox", ErrRefused, "not offered"},
		{"gc", ErrRefused, "not offered"},
		{"help log", ErrRefused, "not offered"},
		{"Status", ErrRefused, "not offered"},
		{"stat", ErrRefused, "not offered"},
		{"frobnicate", ErrRefused, "not offered"},
		{"git", ErrRefused, "no subcommand"},
		{"git git", ErrRefused, "not offered"},
		// Options that run programs, with their abbreviations.
		{"log --upload-pack=touch /tmp/x", ErrRefused, "upload-pack"},
		{"log --upload-pa=touch /tmp/x", ErrRefused, "upload-pack"},
		{"log --upl", ErrRefused, "upload-pack"},
		{"status --receive-p=x", ErrRefused, "receive-pack"},
		{"diff --ext-diff", ErrRefused, "refused"},
		{"diff --ext-di", ErrRefused, "ext-diff"},
		{"log --ext", ErrRefused, "ext-diff"},
		{"show --textconv HEAD:x", ErrRefused, "textconv"},
		{"show --textc HEAD:x", ErrRefused, "textconv"},
		{"log --exec=sh", ErrRefused, "exec"},
		{"commit --exec=sh -m x", ErrRefused, "exec"},
		{"grep -O foo", ErrRefused, "open-files-in-pager"},
		{"grep -Ovim foo", ErrRefused, "open-files-in-pager"},
		{"grep --open-files-in-pager=vim foo", ErrRefused, "open-files-in-pager"},
		{"grep --open foo", ErrRefused, "open-files-in-pager"},
		{"grep -pO foo", ErrRefused, "open-files-in-pager"},
		{"grep -nO foo", ErrRefused, "open-files-in-pager"},
		{"grep --ext-grep foo", ErrRefused, "refused"},
		{"merge -s evil main", ErrRefused, "git-merge-<name>"},
		{"merge --strategy=../../tmp/x main", ErrRefused, "built-in strategies"},
		{"cherry-pick --strategy=x HEAD", ErrRefused, "built-in strategies"},
		{"commit --trailer=sign:x -m x", ErrRefused, "trailer"},
		{"log --alternate-refs", ErrRefused, "alternateRefsCommand"},
		{"log --show-signature", ErrRefused, "gpg"},
		{"log --remerge-diff", ErrRefused, "merge drivers"},
		{"log --diff-merges=remerge", ErrRefused, "merge drivers"},
		{"log --diff-merges r", ErrRefused, "merge drivers"},
		{"status --help", ErrRefused, "manual"},
		{"log --help", ErrRefused, "manual"},
		// Options that write files.
		{"log --output=/tmp/x", ErrRefused, "writes a file"},
		{"log --output=../x", ErrRefused, "writes a file"},
		{"log --output ../x", ErrRefused, "writes a file"},
		{"diff --output=x", ErrRefused, "writes a file"},
		{"log --outp=/tmp/x", ErrRefused, ""},
		{"show --output-dir=/tmp", ErrRefused, "output-directory"},
		{"log --output-d /tmp", ErrRefused, "output-directory"},
		{"init --template=/tmp/t", ErrRefused, "template"},
		{"init --templ=/tmp/t", ErrRefused, "template"},
		{"init --separate-git-dir=/tmp/g", ErrRefused, "separate-git-dir"},
		{"init --bare", ErrRefused, "bare"},
		{"init sub", ErrRefused, "no arguments"},
		{"init -- sub", ErrRefused, "no arguments"},
		{"commit --template=msg.txt", ErrRefused, "editor"},
		// Options that name the repository or configuration.
		{"status --git-dir=/tmp/x", ErrRefused, "global"},
		{"rev-parse --git-dir", ErrRefused, "global"},
		{"log --work-tree=/", ErrRefused, "global"},
		{"status --config=core.pager=sh", ErrRefused, "global"},
		{"log --exec-path=/tmp", ErrRefused, "global"},
		{"rev-parse --git-path hooks", ErrRefused, ".git"},
		{"rev-parse --resolve-git-dir /etc", ErrRefused, "outside"},
		// Editors, pagers, interactive modes, signing.
		{"add -p", ErrRefused, "editor"},
		{"add -i", ErrRefused, "editor"},
		{"add --interactive", ErrRefused, "editor"},
		{"add --inter", ErrRefused, "editor"},
		{"add -e", ErrRefused, "editor"},
		{"commit -e -m x", ErrRefused, "editor"},
		{"commit --patch", ErrRefused, "editor"},
		{"commit -c HEAD", ErrRefused, "editor"},
		{"checkout -p", ErrRefused, "editor"},
		{"reset -p", ErrRefused, "editor"},
		{"restore -p x", ErrRefused, "editor"},
		{"stash -p", ErrRefused, "editor"},
		{"stash push --patch", ErrRefused, "editor"},
		{"branch --edit-description", ErrRefused, "editor"},
		{"merge -e main", ErrRefused, "editor"},
		{"commit -S -m x", ErrRefused, "gpg"},
		{"commit --gpg-sign=KEY -m x", ErrRefused, "gpg"},
		{"commit --gpg -m x", ErrRefused, "gpg"},
		{"commit -aS -m x", ErrRefused, "gpg"},
		{"tag -s v1 -m x", ErrRefused, "gpg"},
		{"tag -v v1", ErrRefused, "gpg"},
		{"tag -u KEY v1", ErrRefused, "gpg"},
		{"merge --verify-signatures main", ErrRefused, "gpg"},
		// Reads beyond the repository, ignored and untracked files.
		{"diff --no-index /etc/passwd /dev/null", ErrRefused, "outside"},
		{"diff --no-ind a b", ErrRefused, "no-index"},
		{"grep --no-index foo", ErrRefused, "outside"},
		{"grep --untracked KEY", ErrRefused, "untracked"},
		{"add -f secret.txt", ErrRefused, "ignored"},
		{"add --force .", ErrRefused, "ignored"},
		{"stash push -a", ErrRefused, "ignored"},
		{"stash --all", ErrRefused, "ignored"},
		{"add --pathspec-from-file=list", ErrRefused, "pathspec"},
		{"add --pathspec-f=list", ErrRefused, "pathspec"},
		{"commit --pathspec-from-file=list -m x", ErrRefused, "pathspec"},
		{"checkout --pathspec-from-file=list", ErrRefused, "pathspec"},
		{"stash push --pathspec-from-file=.env", ErrRefused, "pathspec"},
		{"checkout --recurse-submodules main", ErrRefused, "submodule"},
		{"diff --submodule=log", ErrRefused, "submodule"},
		{"grep --recurse-submodules x", ErrRefused, "submodule"},
		{"log --stdin", ErrRefused, "standard input"},
		{"branch -u origin/main", ErrRefused, "remote"},
		{"branch --set-upstream-to=origin/main", ErrRefused, "remote"},
		{"switch -t origin/x", ErrRefused, "remote"},
		// Paths: pathspecs, file operands, rev:path, files options read.
		{"show HEAD:.env", errDenied, ".env"},
		{"show HEAD:sub/.env", errDenied, ""},
		{"show HEAD:../../etc/passwd", errEscapes, ""},
		{"show HEAD:/etc/passwd", errEscapes, ""},
		{"show :.env", errDenied, ""},
		{"show :0:.env", errDenied, ""},
		{"show :2:.ssh/id_rsa", errDenied, ""},
		{"show main:secret.pem", errDenied, ""},
		{"show HEAD@{1}:.env", errDenied, ""},
		{"show HEAD^{/fix: it}:.env", errDenied, ""},
		{"show HEAD~2..HEAD:.env", errDenied, ""},
		{"diff HEAD:.env HEAD~1:.env", errDenied, ""},
		{"log -p HEAD:.ENV", errDenied, ""},
		{"add .env", errDenied, ""},
		{"add -- .ENV", errDenied, ""},
		{"add config/.env.local", errDenied, ""},
		{"add secrets/id_rsa", errDenied, ""},
		{"add ../outside", errEscapes, ""},
		{"add /etc/passwd", errEscapes, ""},
		{"diff -- .env", errDenied, ""},
		{"diff .env", errDenied, ""},
		{"diff HEAD -- .ssh/config", errDenied, ""},
		{"log -- ../x", errEscapes, ""},
		{"log ../x", errEscapes, ""},
		{"log -p -- SECRETS.txt", errDenied, ""},
		{"grep -e x -- .ssh/", errDenied, ""},
		{"grep x -- .env", errDenied, ""},
		{"grep x HEAD .env", errDenied, ""},
		{"grep x HEAD:.env", errDenied, ""},
		{"grep -f .env", errDenied, ""},
		{"grep -f../x y", errEscapes, ""},
		{"blame .env", errDenied, ""},
		{"blame --contents=.env x", errDenied, ""},
		{"blame --contents /etc/shadow x", errEscapes, ""},
		{"blame -S ../revs x", errEscapes, ""},
		{"blame --ignore-revs-file=/etc/x x", errEscapes, ""},
		{"ls-files .env", errDenied, ""},
		{"ls-files -X .env", errDenied, ""},
		{"ls-files --exclude-from=../x", errEscapes, ""},
		{"ls-files --exclude-per-directory=.env -i -o", errDenied, ""},
		{"ls-files --with-tree=HEAD:.env", errDenied, ""},
		{"checkout -- .env", errDenied, ""},
		{"checkout HEAD -- secret.pem", errDenied, ""},
		{"checkout .env", errDenied, ""},
		{"restore .env", errDenied, ""},
		{"restore --source=HEAD:.env x", errDenied, ""},
		{"reset -- .env", errDenied, ""},
		{"rm --cached .env", errDenied, ""},
		{"mv notes.txt .env", errDenied, ""},
		{"mv .ssh/id_rsa x", errDenied, ""},
		{"mv x ../../y", errEscapes, ""},
		{"status .env", errDenied, ""},
		{"commit -F ../secret", errEscapes, ""},
		{"commit -F .env", errDenied, ""},
		{"commit -F.env", errDenied, ""},
		{"commit --file=/etc/passwd", errEscapes, ""},
		{"commit --fil .env", errDenied, ""},
		{"commit -C HEAD:.env", errDenied, ""},
		{"commit -m x -- .env", errDenied, ""},
		{"commit -m x .env", errDenied, ""},
		{"tag -F .env v1", errDenied, ""},
		{"merge -F .env main", errDenied, ""},
		{"stash push -- .env", errDenied, ""},
		{"stash -- .env", errDenied, ""},
		{"stash push -m x .env", errDenied, ""},
		{"log -L 1,5:.env", errDenied, ""},
		{"log -L1,5:../x", errEscapes, ""},
		{"log -L:main:secrets.go", errDenied, ""},
		{"log -L:a:b:.env", errDenied, ""},
		{"log -O .env", errDenied, ""},
		{"log --relative=../x", errEscapes, ""},
		{"log --skip-to=.env", errDenied, ""},
		{"diff --rotate-to .env", errDenied, ""},
		{"rev-parse HEAD:.env", errDenied, ""},
		{"describe HEAD:.env", errDenied, ""},
		{"shortlog -- .env", errDenied, ""},
		{"branch x HEAD:.env", errDenied, ""},
		{"log --ancestry-path=HEAD:.env", errDenied, ""},
		// git's own files.
		{"show HEAD:.git/config", ErrRefused, ".git"},
		{"add .git/hooks/pre-commit", ErrRefused, ".git"},
		{"add sub/.GIT/config", ErrRefused, ".git"},
		{"log -- .git", ErrRefused, ".git"},
		{"commit -F .git/COMMIT_EDITMSG", ErrRefused, ".git"},
		// Pathspec magic and message search.
		{"add ':(top)x'", ErrRefused, "magic"},
		{"add -- ':(exclude)x'", ErrRefused, "magic"},
		{"log -- ':!x'", ErrRefused, "magic"},
		{"log -- :^x", ErrRefused, "magic"},
		{"log -- :/x", ErrRefused, "magic"},
		{"add ':(glob)**/.env'", ErrRefused, "magic"},
		{"diff ':(icase).ENV'", ErrRefused, "magic"},
		{"show :/fix", ErrRefused, "message search"},
		{"add -- :x", ErrRefused, "magic"},
		// After "--", everything is a path, options included.
		{"log -- --output=/tmp/x", nil, ""}, // a file of that name in the workspace
		{"add -- --force", nil, ""},
		{"log -- -O", nil, ""},
		// Ambiguous, unknown and malformed options.
		{"log --no", ErrRefused, "ambiguous"},
		{"log --no-", ErrRefused, "ambiguous"},
		{"commit --no-ver -m x", ErrRefused, "ambiguous"},
		{"status --sho", ErrRefused, "ambiguous"},
		{"log --out=x", ErrRefused, "ambiguous"},
		{"log --frobnicate", ErrRefused, "unknown option"},
		{"log --end-of-options --output=x", ErrRefused, "unknown option"},
		{"status -Z", ErrRefused, "unknown option"},
		{"status -é", ErrRefused, "unknown option -é"},
		{"log --=x", ErrRefused, "not an option"},
		{"status --short=yes", ErrRefused, "takes no value"},
		{"commit --no-amend=x", ErrRefused, "takes no value"},
		{"commit -m", ErrRefused, "needs a value"},
		{"commit --message", ErrRefused, "needs a value"},
		{"add --chmod=777 x", ErrRefused, "+x"},
		{"log -n", ErrRefused, "needs a value"},
		{"log -5p", ErrRefused, "unknown option -5"},
		{"grep x -n", ErrRefused, "before the pattern"},
		{"grep -e x HEAD -- y -n", nil, ""},
		{"grep -e x HEAD -i", ErrRefused, "before the pattern"},
		{"stash save msg", ErrRefused, "deprecated"},
		{"stash create", ErrRefused, "plumbing"},
		{"stash frob", ErrRefused, "not offered"},
		{"stash clear x", ErrRefused, "no arguments"},
		{"show ''", ErrRefused, "empty"},
		{"add ''", ErrRefused, "empty"},
	}
	for _, tt := range tests {
		got, err := splitParse(t, tt.in)
		if tt.want == nil {
			if err != nil {
				t.Errorf("Parse(%q): %v, want it accepted", tt.in, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Parse(%q) = %q, want an error", tt.in, Render(got))
			continue
		}
		if !errors.Is(err, tt.want) {
			t.Errorf("Parse(%q) = %v, want %v", tt.in, err, tt.want)
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Parse(%q) = %v, want it to mention %q", tt.in, err, tt.msg)
		}
		if !strings.HasPrefix(err.Error(), "git: ") {
			t.Errorf("Parse(%q) = %v, want the git: prefix", tt.in, err)
		}
	}
}

// TestParseControl: Parse refuses what Split would have refused when it
// is handed words some other way.
func TestParseControl(t *testing.T) {
	t.Parallel()
	for _, argv := range [][]string{
		{"log", "a\x00b"}, {"commit", "-m", "a\nb"}, {"status", "\r"}, {"log", "\xff"},
		{"add", "x\x1b"},
	} {
		if _, err := Parse(argv, fakeCheck); !errors.Is(err, ErrRefused) {
			t.Errorf("Parse(%q) = %v, want ErrRefused", argv, err)
		}
	}
	if _, err := Parse(make([]string, maxWords+1), nil); !errors.Is(err, ErrRefused) {
		t.Errorf("Parse of %d words = %v, want ErrRefused", maxWords+1, err)
	}
}

func TestParseAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		args  []string // nil: the words of in after the subcommand
		paths []string
	}{
		{in: "status"},
		{in: "git status --short"},
		{in: "status -s -b"},
		{in: "status -sb", args: []string{"-s", "-b"}},
		{in: "status -vv", args: []string{"-v", "-v"}},
		{in: "status -uno", args: []string{"-uno"}},
		{in: "status --porcelain=v2 -z"},
		{in: "status --untracked=all", args: []string{"--untracked-files=all"}},
		{in: "status -- notes.txt", paths: []string{"notes.txt"}},
		{in: "log --oneline -n 5", args: []string{"--oneline", "-n", "5"}},
		{in: "log --oneline -n5", args: []string{"--oneline", "-n", "5"}},
		{in: "log -5 --stat"},
		{in: "log --max-count=3 --format=%h%x09%s --author=me"},
		{in: "log --author 'A B' --since '2 weeks ago'", args: []string{"--author=A B", "--since=2 weeks ago"}},
		{in: "log -p -- src/main.go", paths: []string{"src/main.go"}},
		{in: "log --graph --all --decorate"},
		{in: "log main..feature"},
		{in: "log -S needle -G 're.*x'"},
		{in: "log -S-foo", args: []string{"-S-foo"}},
		{in: "log -n -1", args: []string{"--max-count=-1"}},
		{in: "log -L 10,20:src/a.go", paths: []string{"src/a.go"}},
		{in: "log --follow -- a.txt", paths: []string{"a.txt"}},
		{in: "log --no-textconv --no-ext-diff"},
		{in: "log -c -m --cc"},
		{in: "diff"},
		{in: "diff HEAD~1"},
		{in: "diff --stat"},
		{in: "diff --cached --name-only"},
		{in: "diff --staged -U5 -w"},
		{in: "diff --word-diff=color HEAD -- a.txt", paths: []string{"a.txt"}},
		{in: "diff -M50% -C"},
		{in: "diff HEAD:a.txt HEAD~1:a.txt", paths: []string{"a.txt", "a.txt"}},
		{in: "diff --no-ext", args: []string{"--no-ext-diff"}},
		{in: "show HEAD"},
		{in: "show HEAD:notes.txt", paths: []string{"notes.txt"}},
		{in: "show --stat HEAD~2"},
		{in: "show v1.0^{tree} HEAD^{/fix: it} @{-1} HEAD@{10:00}"},
		{in: "show HEAD:"},
		{in: "show :notes.txt", paths: []string{"notes.txt"}},
		{in: "show :2:notes.txt", paths: []string{"notes.txt"}},
		{in: "add notes.txt", paths: []string{"notes.txt"}},
		{in: "add -A"},
		{in: "add ."},
		{in: "add -u -- src", paths: []string{"src"}},
		{in: "add --chmod=+x run.sh", paths: []string{"run.sh"}},
		{in: "add -N new.txt", paths: []string{"new.txt"}},
		{in: "add '*.go'", paths: []string{"*.go"}},
		{in: "rm --cached -r build", paths: []string{"build"}},
		{in: "mv a.txt b.txt", paths: []string{"a.txt", "b.txt"}},
		{in: `commit -m "msg"`, args: []string{"-m", "msg"}},
		{in: `commit -am "msg"`, args: []string{"-a", "-m", "msg"}},
		{in: `commit -amfix`, args: []string{"-a", "-m", "fix"}},
		{in: `commit -m "--amend"`, args: []string{"--message=--amend"}},
		{in: `commit -m ''`, args: []string{"-m", ""}},
		{in: `commit --mess=x --amend --no-edit`, args: []string{"--message=x", "--amend", "--no-edit"}},
		{in: `commit --no-verify --no-gpg-sign -m x`},
		{in: `commit -F msg.txt`, paths: []string{"msg.txt"}},
		{in: `commit -m x -- a.txt`, paths: []string{"a.txt"}},
		{in: `commit --author='A <a@b>' --date=now -s -m x`, args: []string{"--author=A <a@b>", "--date=now", "-s", "-m", "x"}},
		{in: `commit --fixup=HEAD~1`},
		{in: "restore --staged a.txt", paths: []string{"a.txt"}},
		{in: "restore -s HEAD~1 -- a.txt", paths: []string{"a.txt"}},
		{in: "reset"},
		{in: "reset --hard HEAD~1"},
		{in: "reset --soft HEAD^"},
		{in: "reset HEAD -- a.txt", paths: []string{"a.txt"}},
		{in: "branch"},
		{in: "branch -a -v"},
		{in: "branch -d x"},
		{in: "branch -D old"},
		{in: "branch feature main"},
		{in: "branch --merged"},
		{in: "branch --merged main", args: []string{"--merged=main"}},
		{in: "branch --list 'feat*'"},
		{in: "branch --no-track x"},
		{in: "switch -c feature"},
		{in: "switch main"},
		{in: "switch -"},
		{in: "switch --detach HEAD~2"},
		{in: "checkout main"},
		{in: "checkout -b x"},
		{in: "checkout -b x main"},
		{in: "checkout -- a.txt", paths: []string{"a.txt"}},
		{in: "checkout HEAD~1 -- a.txt", paths: []string{"a.txt"}},
		{in: "init"},
		{in: "init -b main", args: []string{"-b", "main"}},
		{in: "init --initial-branch=main -q"},
		{in: "tag"},
		{in: "tag v1"},
		{in: "tag -a v1 -m 'release 1'"},
		{in: "tag -l 'v*'"},
		{in: "tag -n5 -l"},
		{in: "tag -d v1"},
		{in: "tag --contains"},
		{in: "stash", args: []string{"push"}},
		{in: "stash -m wip", args: []string{"push", "-m", "wip"}},
		{in: "stash -- a.txt", args: []string{"push", "--", "a.txt"}, paths: []string{"a.txt"}},
		{in: "stash push -u -m wip"},
		{in: "stash pop"},
		{in: "stash pop --index stash@{1}"},
		{in: "stash list"},
		{in: "stash list --oneline -3"},
		{in: "stash show -p stash@{0}"},
		{in: "stash show -u"},
		{in: "stash drop stash@{0}"},
		{in: "stash apply"},
		{in: "stash branch b stash@{0}"},
		{in: "stash clear"},
		{in: "grep -n foo"},
		{in: "grep foo"},
		{in: "grep -e secrets"},
		{in: "grep secrets"},
		{in: "grep -i -e foo -e bar HEAD -- src", paths: []string{"src"}},
		{in: "grep foo HEAD~1 src/a.go"},
		{in: "grep -- -foo"},
		{in: "grep -- foo -- src", paths: []string{"src"}},
		{in: "grep -3 foo"},
		{in: "grep -C2 foo", args: []string{"-C", "2", "foo"}},
		{in: "grep --cached -l foo"},
		{in: "grep -e a --and '(' -e b --or -e c ')'"},
		{in: "grep --no-textconv x"},
		{in: "ls-files"},
		{in: "ls-files -s -o --exclude-standard"},
		{in: "ls-files -- src", paths: []string{"src"}},
		{in: "blame file.txt"},
		{in: "blame -L 10,20 HEAD -- file.txt", paths: []string{"file.txt"}},
		{in: "blame -w -M -C file.txt"},
		{in: "rev-parse HEAD"},
		{in: "rev-parse --abbrev-ref HEAD"},
		{in: "rev-parse --short=8 HEAD"},
		{in: "rev-parse --show-toplevel"},
		{in: "shortlog -sn", args: []string{"-s", "-n"}},
		{in: "shortlog -s -n --all --since=2024-01-01", args: []string{"-s", "-n", "--all", "--since=2024-01-01"}},
		{in: "describe --tags --always --dirty"},
		{in: "merge main"},
		{in: "merge --no-ff -m 'merge x' feature"},
		{in: "merge -s ours x"},
		{in: "merge -X theirs x"},
		{in: "merge --abort"},
		{in: "cherry-pick abc123"},
		{in: "cherry-pick -x -n a..b"},
		{in: "revert --no-edit HEAD"},
	}
	for _, tt := range tests {
		got, err := splitParse(t, tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		words, _ := Split(tt.in)
		want := tt.args
		if want == nil {
			want = words[1:]
		}
		if diff := cmp.Diff(want, got.Args, cmpEmpty); diff != "" {
			t.Errorf("Parse(%q) args (-want +got):\n%s", tt.in, diff)
		}
		if got.Sub != words[0] {
			t.Errorf("Parse(%q).Sub = %q", tt.in, got.Sub)
		}
		if tt.paths != nil {
			if diff := cmp.Diff(tt.paths, got.Paths); diff != "" {
				t.Errorf("Parse(%q) paths (-want +got):\n%s", tt.in, diff)
			}
		}
		// Normalised arguments parse to themselves.
		again, err := Parse(append([]string{got.Sub}, got.Args...), fakeCheck)
		if err != nil {
			t.Errorf("Parse(%q) again: %v", Render(got), err)
		} else if diff := cmp.Diff(got, again, cmpEmpty); diff != "" {
			t.Errorf("Parse(%q) again (-first +again):\n%s", tt.in, diff)
		}
	}
}

var cmpEmpty = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

// TestParseNilCheck: without a PathCheck, paths are not checked, but git's
// own files, magic and options still are.
func TestParseNilCheck(t *testing.T) {
	t.Parallel()
	if _, err := Parse([]string{"add", ".env"}, nil); err != nil {
		t.Errorf("add .env without a check: %v", err)
	}
	for _, argv := range [][]string{{"add", ".git/config"}, {"add", ":(top)x"}, {"log", "--output=x"}} {
		if _, err := Parse(argv, nil); !errors.Is(err, ErrRefused) {
			t.Errorf("Parse(%q, nil) = %v, want ErrRefused", argv, err)
		}
	}
}

// TestParseCheckError: the caller's error is kept for errors.Is and named
// with the path.
func TestParseCheckError(t *testing.T) {
	t.Parallel()
	_, err := Parse([]string{"show", "HEAD:.env"}, fakeCheck)
	if !errors.Is(err, errDenied) || errors.Is(err, ErrRefused) {
		t.Fatalf("err = %v, want errDenied only", err)
	}
	if want := `git: path ".env": on the deny list`; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}
