package gitguard

import (
	"slices"
	"strings"
	"testing"
)

// FuzzNetRun: whatever the model's words, a command ParseNet accepts runs
// with refspecs the daemon shaped: the sandboxed fetch reads only the
// mirror and writes only refs/remotes/<remote>/ and refs/tags/, the
// daemon's fetch only the ref it names, and a push only names of
// refs/heads/ or refs/tags/, forced only where the remote allows it.
func FuzzNetRun(f *testing.F) {
	for _, s := range []string{"fetch origin main", "pull origin main", "push origin main:dev", "fetch -t origin refs/tags/v1",
		"push origin +main", "push origin :old", "fetch origin ../x", "push origin HEAD:refs/heads/x"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, args string, allow bool) {
		argv, err := Split(args)
		if err != nil {
			return
		}
		remotes := []Remote{{Name: "origin", Scheme: "https", Host: "git.example", AllowForce: allow, AllowDelete: allow}}
		nc, err := ParseNet(argv, remotes)
		if err != nil {
			return
		}
		const mirror = "/m/origin.git"
		refOK := func(r string) bool {
			return strings.HasPrefix(r, "refs/heads/") || strings.HasPrefix(r, "refs/tags/")
		}
		switch nc.Sub {
		case "fetch", "pull":
			fa := FetchArgv(nc, mirror)
			i := slices.Index(fa, "--")
			if i < 0 || fa[i+1] != mirror {
				t.Fatalf("%q: the sandboxed fetch reads %q", args, fa)
			}
			for _, rs := range fa[i+2:] {
				src, dst, ok := strings.Cut(strings.TrimPrefix(rs, "+"), ":")
				if !ok || !refOK(src) || !(strings.HasPrefix(dst, "refs/remotes/origin/") || strings.HasPrefix(dst, "refs/tags/")) {
					t.Fatalf("%q: refspec %q", args, rs)
				}
			}
			ma := MirrorArgs(nc, "https://git.example/r.git")
			j := slices.Index(ma, "--")
			for _, rs := range ma[j+2:] {
				src, dst, _ := strings.Cut(strings.TrimPrefix(rs, "+"), ":")
				if !refOK(src) || src != dst {
					t.Fatalf("%q: mirror refspec %q", args, rs)
				}
			}
		case "push":
			commits := make([]string, len(nc.Refs))
			for i, r := range nc.Refs {
				commits[i] = strings.Repeat("a", 40)
				if r.Delete {
					commits[i] = "-"
				}
			}
			pa := PushArgs(nc, "https://git.example/r.git", commits, nil)
			j := slices.Index(pa, "--")
			if len(pa[j+2:]) != len(nc.Refs) {
				t.Fatalf("%q: push args %q", args, pa)
			}
			for k, rs := range pa[j+2:] {
				forced := strings.HasPrefix(rs, "+")
				src, dst, _ := strings.Cut(strings.TrimPrefix(rs, "+"), ":")
				want := commits[k]
				if want == "-" {
					want = ""
				}
				if !refOK(dst) || (forced && !allow) || (src == "" && !allow) || src != want {
					t.Fatalf("%q: push refspec %q", args, rs)
				}
			}
		}
	})
}
