package gitguard

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testRemotes = []Remote{
	{Name: "origin", Scheme: "https", Host: "git.example.com"},
	{Name: "lab", Scheme: "https", Host: "lab.example:8443", AllowForce: true, AllowDelete: true},
}

func parseNetString(t *testing.T, s string) (NetCommand, error) {
	t.Helper()
	argv, err := Split(s)
	if err != nil {
		return NetCommand{}, err
	}
	return ParseNet(argv, testRemotes)
}

func TestParseNet(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, render string
		refs       []Ref
	}{
		{"fetch origin", "git fetch origin", nil},
		{"fetch -q --prune origin main v1.0", "git fetch -q --prune origin main v1.0", []Ref{{Src: "main"}, {Src: "v1.0"}}},
		{"fetch --dep=1 origin", "git fetch --depth=1 origin", nil},
		{"pull --ff-only origin main", "git pull --ff-only origin main", []Ref{{Src: "main"}}},
		{"push origin main", "git push origin main:main", []Ref{{Src: "main", Dst: "main"}}},
		{"push origin feature:refs/heads/review", "git push origin feature:refs/heads/review", []Ref{{Src: "feature", Dst: "refs/heads/review"}}},
		{"push origin HEAD:main", "git push origin HEAD:main", []Ref{{Src: "HEAD", Dst: "main"}}},
		{"push lab +main", "git push lab +main:main", []Ref{{Src: "main", Dst: "main", Force: true}}},
		{"push --force lab main", "git push --force lab +main:main", []Ref{{Src: "main", Dst: "main", Force: true}}},
		{"push lab :old", "git push lab :old", []Ref{{Dst: "old", Delete: true}}},
		{"push --delete lab old", "git push --delete lab :old", []Ref{{Dst: "old", Delete: true}}},
		{"push --force-with-lease lab main", "git push --force-with-lease lab main:main", []Ref{{Src: "main", Dst: "main", Force: true, Lease: true}}},
		{"push --force-with lab HEAD:main dev", "git push --force-with-lease lab HEAD:main dev:dev", []Ref{{Src: "HEAD", Dst: "main", Force: true, Lease: true}, {Src: "dev", Dst: "dev", Force: true, Lease: true}}},
		{"push origin -- main", "git push origin main:main", []Ref{{Src: "main", Dst: "main"}}},
	} {
		nc, err := parseNetString(t, tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if got := RenderNet(nc); got != tt.render {
			t.Errorf("%s: rendered %q, want %q", tt.in, got, tt.render)
		}
		if diff := cmp.Diff(tt.refs, nc.Refs); diff != "" {
			t.Errorf("%s: refs (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseNetRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"fetch", "needs the name of a configured remote"},
		{"fetch https://attacker.example/x.git", "looks like a URL"},
		{"fetch file:///etc/passwd", "looks like a URL"},
		{"fetch ext::sh", "looks like a URL"},
		{"fetch 'ext::sh -c touch% /tmp/x'", "looks like a URL"},
		{"fetch ../other", "looks like a URL"},
		{"fetch git@attacker.example:x", "looks like a URL"},
		{"fetch upstream", "not a configured remote"},
		{"fetch --upload-pack=touch origin", "refused"},
		{"fetch --upload-pa=touch origin", "refused"},
		{"fetch --all", "refused"},
		{"fetch --multiple origin lab", "refused"},
		{"fetch -c core.sshCommand=x origin", "unknown option -c"},
		{"fetch --exec=x origin", "refused"},
		{"fetch --config=x origin", "refused"},
		{"fetch origin main:main", "not a branch or tag name"},
		{"fetch origin +main", "not a branch or tag name"},
		{"fetch origin 'refs/*:refs/*'", "not a branch or tag name"},
		{"fetch origin refs/remotes/x", "only refs/heads/"},
		{"fetch origin -- -main", "must not start with '-'"},
		{"fetch --depth=1x origin", "not a number"},
		{"fetch -f origin main", "refused"},
		{"fetch --refmap=x origin", "refused"},
		{"pull origin", "exactly one branch"},
		{"pull --rebase origin main", "refused"},
		{"pull -s ours origin main", "refused"},
		{"push origin", "names what it pushes"},
		{"push --all origin", "refused"},
		{"push --mirror origin", "refused"},
		{"push --tags origin", "refused"},
		{"push --follow-tags origin main", "refused"},
		{"push --receive-pack=touch origin main", "refused"},
		{"push --receive=touch origin main", "refused"},
		{"push --exec=touch origin main", "refused"},
		{"push -u origin main", "refused"},
		{"push -o x origin main", "refused"},
		{"push --prune origin main", "refused"},
		{"push --force origin main", "forcing a push to origin is refused"},
		{"push -f origin main", "forcing a push to origin is refused"},
		{"push --force-with-lease origin main", "forcing a push to origin is refused"},
		{"push --force-with origin main", "forcing a push to origin is refused"},
		{"push origin +main", "forcing a push to origin is refused"},
		{"push origin :main", "deleting main on origin is refused"},
		{"push --delete origin main", "deleting main on origin is refused"},
		{"push -d origin main", "deleting main on origin is refused"},
		{"push origin HEAD", "needs a destination"},
		{"push origin 'main:refs/*'", "not a branch or tag name"},
		{"push origin main~1:main", "not a branch or tag name"},
		{"push origin main:refs/notes/x", "only refs/heads/"},
		{"push origin main:-x", "not a branch or tag name"},
		{"push origin -- -main", "must not start with '-'"},
		{"push --repo=https://x.example/r origin main", "refused"},
		{"push origin main 'a b'", "not a branch or tag name"},
		{"push lab --delete --force x", "one or the other"},
		{"push --force-with-lease=main:abc lab main", "without a value"},
		{"push --force-with-lease= lab main", "without a value"},
		{"push --force-with-lease lab +main", "leave the '+' out"},
		{"push --force --force-with-lease lab main", "give one of them"},
		{"push --force-with-lease --delete lab old", "takes no --force-with-lease"},
		{"push --force-with-lease lab main :old", "takes no --force-with-lease"},
		{"push --force-with-lease lab", "names what it pushes"},
	} {
		_, err := parseNetString(t, tt.in)
		if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// TestParseStillRefusesNet: the local guard never runs a network command.
func TestParseStillRefusesNet(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"fetch", "pull", "push", "remote", "clone", "ls-remote"} {
		if _, err := Parse([]string{sub, "origin"}, nil); err == nil {
			t.Errorf("Parse(%s) allowed", sub)
		}
	}
}

func TestNetCard(t *testing.T) {
	t.Parallel()
	remotes := append(slicesClone(testRemotes), Remote{Name: "idn", Scheme: "https", Host: "xn--gthub-n4a.com:443"})
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"fetch origin main", []string{"Remote: origin (https://git.example.com)", "Host: git.example.com", "Downloads: main into refs/remotes/origin/"}},
		{"push --force-with-lease lab main", []string{"Remote: lab (https://lab.example:8443)", "Host: lab.example", "Uploads: main:main",
			"FORCED, with a lease: replaces the remote's main (may discard commits there) only if it is still what shelldon last fetched; if anyone pushed there since, nothing is pushed"}},
		{"push lab +main :old", []string{"Remote: lab (https://lab.example:8443)", "Host: lab.example", "Uploads: +main:main, :old", "FORCED: may discard commits on the remote's main", "DELETES the remote ref old"}},
		{"fetch idn", []string{"Remote: idn (https://xn--gthub-n4a.com:443)", "Host: xn--gthub-n4a.com, which reads as 'gıthub.com'", "Downloads: every branch of the remote's default fetch into refs/remotes/idn/"}},
	} {
		argv, _ := Split(tt.in)
		nc, err := ParseNet(argv, remotes)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, NetCard(nc)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.in, diff)
		}
	}
}

func slicesClone(r []Remote) []Remote { return append([]Remote(nil), r...) }
