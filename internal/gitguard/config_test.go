package gitguard

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// configCorpus are configuration files git's parser has opinions about.
var configCorpus = []string{
	"[core]\n\tbare = false\n",
	"[Core]\n\tBare = false\n\tFileMode\n",
	"\xEF\xBB\xBF[user]\n\tname = a\n",
	"\xEF\xBB[user]\n\tname = a\n",
	"[user] name = inline header\n",
	"[user]\r\n\tname = crlf\r\n",
	"[user]\n\tname = a \\\n  continued\n",
	"[user]\n\tname = \"quoted ; # kept\" ; comment\n",
	"[user]\n\tname =   spaces   inside\t\tand tabs   \n",
	"[user]\n\tname = esc \\t \\n \\b \\\\ \\\"\n",
	"[user]\n\tname = bad \\x escape\n",
	"[user]\n\tname = \"unterminated\n",
	"[user]\n\tname = a\"b\"c \"\" d\n",
	"[user]\n\tname\n",
	"[user]\n\tname # comment\n",
	"[user]\n\tname=\n",
	"[user]\n\t9name = x\n",
	"[user]\n\tna_me = x\n",
	"[branch \"Feature/X.y\"]\n\tmerge = refs/heads/x\n",
	"[branch \"q\\\"u\\\\o\\te\"]\n\tremote = o\n",
	"[branch \"\"]\n\tremote = o\n",
	"[branch \"a\nb\"]\n\tremote = o\n",
	"[branch.Legacy.Sub]\n\tremote = o\n",
	"[branch  \"spaced\" ]\n\tremote = o\n",
	"[branch \"x\"] remote = same line\n",
	"[]\nx = 1\n",
	"[bad section]\n",
	"[core\n",
	"key = without section\n",
	"; only a comment\n# another\n",
	"",
	"[filter \"evil\"]\n\tclean = touch /tmp/x\n[include]\n\tpath = other\n",
	"[user]\n\tname = NUL\x00inside\n",
	"[user]\n\tname = lone\rcarriage\n",
	"[user]\n\tname = last line without newline",
	"[user]\n\tname = ends with backslash\\",
	"\n\n   \t[user]   \n\temail = e\n",
	"[remote \"origin\"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\tfetch = +refs/tags/*:refs/tags/*\n",
}

// gitList is what git itself reads from a configuration file, or ok
// false when git refuses it.
func gitList(t *testing.T, data []byte) (entries []configEntry, ok bool) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "config", "--file", f, "--no-includes", "--list", "-z")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		name, value, has := strings.Cut(rec, "\n")
		entries = append(entries, configEntry{name: name, value: value, hasValue: has})
	}
	return entries, true
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// TestParseConfigMatchesGit: parseConfig reads what the installed git
// reads, and refuses what it refuses. (The sanitized copy does not depend
// on it: only allowed names reach git, freshly written. This keeps the
// values of allowed names what the owner meant.)
func TestParseConfigMatchesGit(t *testing.T) {
	needGit(t)
	t.Parallel()
	for _, in := range configCorpus {
		want, ok := gitList(t, []byte(in))
		got, err := parseConfig([]byte(in))
		if ok != (err == nil) {
			t.Errorf("%q: git ok %v, parseConfig error %v", in, ok, err)
			continue
		}
		// git --list cuts a value at a NUL byte, as every C reader does.
		for i := range got {
			got[i].value, _, _ = strings.Cut(got[i].value, "\x00")
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(configEntry{})); ok && diff != "" {
			t.Errorf("%q (-git +parseConfig):\n%s", in, diff)
		}
	}
}

// TestSanitizeConfig: the copy git sees holds the allowed variables of the
// original with their values, as git reads them, and nothing else.
func TestSanitizeConfig(t *testing.T) {
	needGit(t)
	t.Parallel()
	in := strings.Join([]string{
		"[core]", "\trepositoryformatversion = 0", "\tFSMonitor = /x", "\thooksPath = /x", "\tpager = /x",
		"\teditor = /x", "\tsshCommand = /x", "\taskPass = /x", "\tgitProxy = /x", "\tworktree = /x",
		"\talternateRefsCommand = /x", "\tattributesFile = /x", "\texcludesFile = /x", "\tbare = false",
		`[core "sub"]`, "\tbare = true",
		`[filter "evil"]`, "\tclean = /x", "\tsmudge = /x", "\tprocess = /x", "\trequired = true",
		"[filter.legacy]", "\tclean = /x",
		`[merge "evil"]`, "\tdriver = /x", `[diff "evil"]`, "\ttextconv = /x", "\tcommand = /x",
		"[diff]", "\texternal = /x", "\trenames = copies",
		"[pager]", "\tlog = /x", "[sequence]", "\teditor = /x", "[credential]", "\thelper = /x",
		`[credential "https://x"]`, "\thelper = /x", "[gpg]", "\tprogram = /x", `[gpg "ssh"]`, "\tprogram = /x",
		"[uploadpack]", "\tpackObjectsHook = /x", "[include]", "\tpath = /x", `[includeIf "gitdir:/"]`, "\tpath = /x",
		`[remote "origin"]`, "\turl = ext::sh -c x", "\tfetch = +refs/heads/*:refs/remotes/origin/*", "\tvcs = x",
		`[branch "main"]`, "\tremote = origin", "\tmerge = refs/heads/main", "\tmergeOptions = -s evil",
		"[user]", "\tname = \"Ann \\\"Q\\\" ; # Lee\"", "\temail = ann@example.com",
		"[extensions]", "\tobjectFormat = sha1", "\tpartialClone = origin",
		"[alias]", "\tst = !/x", "[submodule]", "\trecurse = true", `[submodule "s"]`, "\tupdate = !/x",
		"[mergetool \"x\"]", "\tcmd = /x", "[difftool]", "\tprompt = false",
		"[init]", "\ttemplateDir = /x", "\tdefaultBranch = trunk",
		"[commit]", "\ttemplate = /x", "\tgpgSign = true", "\tcleanup = strip",
	}, "\n") + "\n"
	out, err := sanitizeConfig([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := gitList(t, out)
	if !ok {
		t.Fatalf("git refuses the copy:\n%s", out)
	}
	want := []configEntry{
		{"core.repositoryformatversion", "0", true},
		{"core.bare", "false", true},
		{"diff.renames", "copies", true},
		{"remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*", true},
		{"branch.main.remote", "origin", true},
		{"branch.main.merge", "refs/heads/main", true},
		{"user.name", `Ann "Q" ; # Lee`, true},
		{"user.email", "ann@example.com", true},
		{"extensions.objectformat", "sha1", true},
		{"init.defaultbranch", "trunk", true},
		{"commit.cleanup", "strip", true},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(configEntry{})); diff != "" {
		t.Errorf("git reads the copy as (-want +got):\n%s\ncopy:\n%s", diff, out)
	}

	for _, bad := range []string{"[extensions]\n\tnewThing = 1\n", "[core\n", "[user]\n\tname = \"open\n"} {
		if _, err := sanitizeConfig([]byte(bad)); err == nil {
			t.Errorf("sanitizeConfig(%q) = nil error", bad)
		}
	}
}

// TestFormatConfigRoundTrip: git reads formatConfig's output as exactly
// the entries given, whatever bytes their subsections and values hold.
func TestFormatConfigRoundTrip(t *testing.T) {
	needGit(t)
	t.Parallel()
	entries := []configEntry{
		{"branch.we\"ird\\name\t.merge", "refs/heads/x", true},
		{"branch.we\"ird\\name\t.remote", " leading and trailing ", true},
		{"branch.other.rebase", "", false},
		{"branch.other.description", "line one\nline two\t\"quoted\" \\ ; # \b\xff", true},
		{"branch..remote", "empty subsection", true},
		{"user.name", "", true},
	}
	got, ok := gitList(t, formatConfig(entries))
	if !ok {
		t.Fatalf("git refuses:\n%s", formatConfig(entries))
	}
	if diff := cmp.Diff(entries, got, cmp.AllowUnexported(configEntry{})); diff != "" {
		t.Errorf("(-written +git read):\n%s\n%s", diff, formatConfig(entries))
	}
}

// FuzzSanitizeConfig: whatever the input, the copy holds allowed names
// only, parses, and sanitizes to itself.
func FuzzSanitizeConfig(f *testing.F) {
	for _, in := range configCorpus {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := sanitizeConfig(in)
		if err != nil {
			return
		}
		entries, err := parseConfig(out)
		if err != nil {
			t.Fatalf("the copy does not parse: %v\n%q", err, out)
		}
		for _, e := range entries {
			if ok, _ := keep(e); !ok {
				t.Fatalf("the copy holds %q", e.name)
			}
		}
		again, err := sanitizeConfig(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not a fixed point: %v\n%q\n%q", err, out, again)
		}
	})
}
