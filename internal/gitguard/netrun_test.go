package gitguard

import (
	"slices"
	"strings"
	"testing"
)

// TestNetRunArgv: what the daemon's fetch and the sandboxed fetch and
// merge run, from a parsed command: refs land only where the daemon puts
// them, tags only when asked, the file protocol only in the sandboxed
// fetch from the mirror, and a pull fast-forwards unless told otherwise.
func TestNetRunArgv(t *testing.T) {
	t.Parallel()
	remotes := []Remote{{Name: "origin", Scheme: "https", Host: "git.example"}}
	const url, mirror = "https://git.example/r.git", "/home/s/git-remotes/origin.git"
	for _, tc := range []struct {
		args                  string
		mirrorArgs, fetchTail []string
		merge                 []string // pull's merge options and target; nil for fetch
	}{
		{args: "fetch origin",
			mirrorArgs: []string{"--", url, "+refs/heads/*:refs/heads/*"},
			fetchTail:  []string{"--", mirror, "+refs/heads/*:refs/remotes/origin/*"}},
		{args: "fetch -p -t --depth 2 origin main refs/tags/v1",
			mirrorArgs: []string{"--prune", "--depth=2", "--", url, "+refs/heads/main:refs/heads/main", "+refs/tags/v1:refs/tags/v1", "+refs/tags/*:refs/tags/*"},
			fetchTail:  []string{"--prune", "--depth=2", "--", mirror, "+refs/heads/main:refs/remotes/origin/main", "refs/tags/v1:refs/tags/v1", "refs/tags/*:refs/tags/*"}},
		{args: "pull origin feature/x",
			mirrorArgs: []string{"--", url, "+refs/heads/feature/x:refs/heads/feature/x"},
			fetchTail:  []string{"--", mirror, "+refs/heads/feature/x:refs/remotes/origin/feature/x"},
			merge:      []string{"--ff-only", "refs/remotes/origin/feature/x"}},
		{args: "pull --no-ff -q origin main",
			mirrorArgs: []string{"--", url, "+refs/heads/main:refs/heads/main"},
			fetchTail:  []string{"--quiet", "--", mirror, "+refs/heads/main:refs/remotes/origin/main"},
			merge:      []string{"--no-ff", "--quiet", "refs/remotes/origin/main"}},
	} {
		argv, err := Split(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		nc, err := ParseNet(argv, remotes)
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		ma := MirrorArgs(nc, url)
		if i := slices.Index(ma, "--quiet"); !slices.Equal(ma[i+1:], tc.mirrorArgs) {
			t.Errorf("%s: mirror args %q, want ... %q", tc.args, ma, tc.mirrorArgs)
		}
		if !slices.Contains(ma, "--no-tags") || !slices.Contains(ma, "--no-recurse-submodules") {
			t.Errorf("%s: mirror args %q", tc.args, ma)
		}
		fa := FetchArgv(nc, mirror)
		i := slices.Index(fa, "fetch")
		if !slices.Equal(fa[i+3:], tc.fetchTail) || !slices.Equal(fa[i+1:i+3], []string{"--no-tags", "--no-recurse-submodules"}) {
			t.Errorf("%s: fetch %q, want ... %q", tc.args, fa[i:], tc.fetchTail)
		}
		// The file protocol is allowed after the prefix forbids it, and
		// only here.
		pre := strings.Join(fa[:i], " ")
		if !strings.Contains(pre, "protocol.file.allow=never") || strings.LastIndex(pre, "protocol.file.allow=always") < strings.LastIndex(pre, "protocol.file.allow=never") {
			t.Errorf("%s: the prefix %q", tc.args, pre)
		}
		if tc.merge != nil {
			m := MergeArgv(nc)
			j := slices.Index(m, "merge")
			if strings.Contains(strings.Join(m, " "), "protocol.file.allow=always") || !slices.Equal(m[len(m)-len(tc.merge):], tc.merge) {
				t.Errorf("%s: merge %q, want ... %q", tc.args, m[j:], tc.merge)
			}
		}
	}
}

// TestNetRefsPrintableASCII: a ref a network command names reaches the
// owner's card, so it is printable ASCII: no bidirectional controls, no
// look-alike letters, no zero-width characters.
func TestNetRefsPrintableASCII(t *testing.T) {
	t.Parallel()
	remotes := []Remote{{Name: "origin", Scheme: "https", Host: "git.example", AllowForce: true, AllowDelete: true}}
	for _, argv := range [][]string{
		{"fetch", "origin", "ma\u202ein"}, {"fetch", "origin", "br\u0430nch"}, {"pull", "origin", "main\u200b"},
		{"push", "origin", "main:ma\u00adin"}, {"fetch", "origin", "refs/tags/v1\u2028"}, {"fetch", "origin", "\xff"},
	} {
		if _, err := ParseNet(argv, remotes); err == nil {
			t.Errorf("%q: accepted", argv)
		}
	}
}

// TestPushBindingAndArgs: a push is bound to one full commit name per ref
// ("-" exactly for a deletion), and pushes those names, forced or
// deleting only where the parsed command does.
func TestPushBindingAndArgs(t *testing.T) {
	t.Parallel()
	remotes := []Remote{{Name: "origin", Scheme: "https", Host: "git.example", AllowForce: true, AllowDelete: true}}
	parse := func(argv ...string) NetCommand {
		nc, err := ParseNet(argv, remotes)
		if err != nil {
			t.Fatalf("%q: %v", argv, err)
		}
		return nc
	}
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 64)
	nc := parse("push", "origin", "main", "+HEAD:refs/heads/dev", ":old")
	got, err := ParsePushBinding(nc, PushBinding([]string{a, b, "-"}))
	if err != nil || !slices.Equal(got, []string{a, b, "-"}) {
		t.Fatalf("binding %q, %v", got, err)
	}
	want := []string{"--", "https://g/r.git", a + ":refs/heads/main", "+" + b + ":refs/heads/dev", ":refs/heads/old"}
	if pa := PushArgs(nc, "https://g/r.git", got, nil); !slices.Equal(pa[len(pa)-len(want):], want) || !slices.Contains(pa, "--no-verify") {
		t.Errorf("push args %q", pa)
	}
	for _, bad := range []string{"", a + "," + b + ",-", "push:" + a + "," + b, "push:" + a + "," + b + "," + a,
		"push:-," + b + ",-", "push:" + strings.ToUpper(a) + "," + b + ",-", "push:main," + b + ",-", "push:" + a[:39] + "," + b + ",-"} {
		if _, err := ParsePushBinding(nc, bad); err == nil {
			t.Errorf("binding %q accepted", bad)
		}
	}
}

// TestPushArgsLease: a leased ref is pushed without '+', with
// --force-with-lease naming the ref and what the daemon last saw there;
// with nothing seen the lease is empty (the ref must not exist), and a
// lease that is not an object name counts as nothing seen.
func TestPushArgsLease(t *testing.T) {
	t.Parallel()
	remotes := []Remote{{Name: "lab", Scheme: "https", Host: "lab.example", AllowForce: true}}
	nc, err := ParseNet([]string{"push", "--force-with-lease", "lab", "main", "HEAD:dev", "fix"}, remotes)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	old := strings.Repeat("0", 39) + "1"
	got := PushArgs(nc, "https://lab.example/r.git", []string{a, b, c}, []string{old, "", "refs/heads/x"})
	i := slices.Index(got, "--")
	opts, specs := got[:i], got[i+2:]
	for _, w := range []string{"--force-with-lease=refs/heads/main:" + old, "--force-with-lease=refs/heads/dev:", "--force-with-lease=refs/heads/fix:"} {
		if !slices.Contains(opts, w) {
			t.Errorf("push options %q lack %q", opts, w)
		}
	}
	if want := []string{a + ":refs/heads/main", b + ":refs/heads/dev", c + ":refs/heads/fix"}; !slices.Equal(specs, want) {
		t.Errorf("refspecs %q, want %q", specs, want)
	}
	if got := PushArgs(nc, "u", []string{a, b, c}, nil); !slices.Contains(got, "--force-with-lease=refs/heads/main:") {
		t.Errorf("no leases known: %q", got)
	}
}

// TestTrackingArgv: after a push the workspace's refs/remotes/<remote>/
// follow each pushed branch (a deleted one is deleted), and nothing
// else: not a tag, not after a dry run, not with a binding that does
// not fit.
func TestTrackingArgv(t *testing.T) {
	t.Parallel()
	remotes := []Remote{{Name: "origin", Scheme: "https", Host: "git.example", AllowForce: true, AllowDelete: true}}
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	nc, err := ParseNet([]string{"push", "origin", "main", "HEAD:refs/tags/v1", ":old", "+HEAD:dev"}, remotes)
	if err != nil {
		t.Fatal(err)
	}
	got := TrackingArgv(nc, []string{a, b, "-", b})
	var tails []string
	for _, argv := range got {
		i := slices.Index(argv, "update-ref")
		if i < 0 || argv[0] != "git" || !slices.Contains(argv, "core.hooksPath=/dev/null") {
			t.Fatalf("not a guarded update-ref: %q", argv)
		}
		tails = append(tails, strings.Join(argv[i+1:], " "))
	}
	want := []string{"-m push refs/remotes/origin/main " + a, "-d refs/remotes/origin/old", "-m push refs/remotes/origin/dev " + b}
	if !slices.Equal(tails, want) {
		t.Errorf("tracking updates %q, want %q", tails, want)
	}
	if got := TrackingArgv(nc, []string{a, b}); got != nil {
		t.Errorf("a binding of the wrong length: %q", got)
	}
	dry, _ := ParseNet([]string{"push", "-n", "origin", "main"}, remotes)
	if got := TrackingArgv(dry, []string{a}); got != nil {
		t.Errorf("a dry run: %q", got)
	}
}

// TestPushDryRun: a dry run stays one on the remote and says so.
func TestPushDryRun(t *testing.T) {
	t.Parallel()
	remotes := []Remote{{Name: "origin", Scheme: "https", Host: "git.example"}}
	for _, argv := range [][]string{{"push", "-n", "origin", "main"}, {"push", "--dry-run", "origin", "main"}, {"push", "--dry", "origin", "main"}} {
		nc, err := ParseNet(argv, remotes)
		if err != nil {
			t.Fatal(err)
		}
		if pa := PushArgs(nc, "https://g/r.git", []string{strings.Repeat("a", 40)}, nil); !slices.Contains(pa, "--dry-run") {
			t.Errorf("%q: push args %q", argv, pa)
		}
		if !strings.Contains(strings.Join(NetCard(nc), "\n"), "Dry run") {
			t.Errorf("%q: the card does not say it is a dry run", argv)
		}
	}
	nc, _ := ParseNet([]string{"push", "origin", "main"}, remotes)
	if slices.Contains(PushArgs(nc, "u", []string{strings.Repeat("a", 40)}, nil), "--dry-run") {
		t.Error("a push became a dry run")
	}
}
