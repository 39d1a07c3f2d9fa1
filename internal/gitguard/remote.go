package gitguard

import (
	"fmt"
	"strings"

	"github.com/shelldon/shelldon/internal/lazy"
)

// Remote is what the guard knows of a remote the owner configured
// (git.remotes): the model names it, never its URL.
type Remote struct {
	Name        string
	Scheme      string // https, http or ssh
	Host        string // host[:port]
	AllowForce  bool   // a push may rewrite the remote's history
	AllowDelete bool   // a push may delete remote refs
}

// Ref is one refspec of a network command, checked and split. For fetch
// and pull, Src is the remote branch or tag (Dst is empty: the daemon
// chooses where it lands). For push, Src is the local branch (or HEAD),
// Dst the remote ref; Src is empty for a deletion.
type Ref struct {
	Src, Dst string
	Force    bool // "+", --force or --force-with-lease: needs AllowForce
	// Lease (--force-with-lease): the push replaces the remote's ref only
	// if it still is what the daemon last saw there (PushArgs' leases).
	Lease  bool
	Delete bool // ":dst" or --delete: needs AllowDelete
}

// NetCommand is a git fetch, pull or push that passed ParseNet.
type NetCommand struct {
	Sub    string // fetch, pull or push
	Remote Remote
	Refs   []Ref
	// Opts are the options given, normalised (full long names).
	Opts []string
}

// IsNet reports whether argv is a network command (fetch, pull, push),
// which ParseNet checks rather than Parse.
func IsNet(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	_, ok := netSpecs()[argv[0]]
	return ok
}

var netSpecsOnce lazy.Value[map[string]*spec]

const (
	whyNetAll   = "it reaches every branch or tag at once; name the refs, so the owner sees each one"
	whyNetForce = "it rewrites the remote's history; the owner allows it per remote (git.remotes[].allow_force)"
	whyNetDel   = "it deletes remote refs; the owner allows it per remote (git.remotes[].allow_delete)"
	whyNetCfg   = "it writes the repository's configuration, which the git tool shows git read-only"
)

// netSpecs are the options of the network commands. Positional words are
// handled by ParseNet itself (the remote, then refspecs).
func netSpecs() map[string]*spec {
	return netSpecsOnce.Get(func() map[string]*spec {
		return buildSpecs(map[string]*spec{
			"fetch": {negatable: true, opts: []option{
				fl("quiet", 'q'), fl("verbose", 'v'), fl("dry-run", 0), fl("prune", 'p'),
				fl("tags", 't'), req("depth", 0, plain).check(digits),
				no("all", 0, flag, whyNetAll), no("multiple", 0, flag, whyNetAll),
				no("mirror", 0, flag, whyNetAll),
				no("force", 'f', flag, "remote-tracking refs are always updated; nothing else is written"),
				no("refmap", 0, required, "the daemon chooses where fetched refs land"),
				no("update-head-ok", 'u', flag, "the daemon chooses where fetched refs land"),
				no("set-upstream", 0, flag, whyNetCfg), no("append", 'a', flag, "it is not needed"),
				no("prefetch", 0, flag, "it is not needed"), no("unshallow", 0, flag, "it is not needed"),
				no("negotiation-tip", 0, required, "it is not needed"),
				no("server-option", 'o', required, "it sends the model's text to the server"),
				no("jobs", 'j', required, "it is not needed"),
			}},
			"pull": {negatable: true, opts: []option{
				fl("quiet", 'q'), fl("verbose", 'v'), fl("ff-only", 0), fl("ff", 0),
				fl("commit", 0), fl("squash", 0), fl("stat", 0),
				no("rebase", 'r', optional, "rebase is not offered (it can run programs)"),
				no("all", 0, flag, whyNetAll), no("force", 'f', flag, "it is not needed"),
				no("edit", 'e', flag, whyEditor), no("gpg-sign", 'S', optional, whySign),
				no("strategy", 's', required, "merge strategies are not offered with pull"),
				no("strategy-option", 'X', required, "merge strategies are not offered with pull"),
				no("autostash", 0, flag, "it is not needed"), no("set-upstream", 0, flag, whyNetCfg),
				no("server-option", 'o', required, "it sends the model's text to the server"),
				no("depth", 0, required, "it is not needed"),
			}},
			"push": {negatable: true, opts: []option{
				fl("quiet", 'q'), fl("verbose", 'v'), fl("dry-run", 'n'),
				fl("force", 'f'), opt("force-with-lease", 0, plain), fl("delete", 'd'),
				no("all", 0, flag, whyNetAll), no("branches", 0, flag, whyNetAll),
				no("mirror", 0, flag, whyNetAll), no("tags", 0, flag, whyNetAll),
				no("follow-tags", 0, flag, whyNetAll), no("prune", 0, flag, whyNetDel),
				no("set-upstream", 'u', flag, whyNetCfg), no("repo", 0, required, "name the remote as the first word"),
				no("push-option", 'o', required, "it sends the model's text to the server"),
				no("signed", 0, optional, whySign), no("atomic", 0, flag, "it is not needed"),
				no("force-if-includes", 0, flag, whyNetForce), no("thin", 0, flag, "it is not needed"),
				no("no-verify", 0, flag, "hooks never run anyway"), no("porcelain", 0, flag, "it is not needed"),
				no("ipv4", '4', flag, "it is not needed"), no("ipv6", '6', flag, "it is not needed"),
			}},
		})
	})
}

func digits(v string) error {
	if !allDigits(v) || len(v) > 6 {
		return refusef("%q is not a number", v)
	}
	return nil
}

// ParseNet checks a git fetch, pull or push: options from its allowlist,
// then the name of a remote the owner configured (never a URL or a path),
// then refspecs: for fetch and pull remote branch or tag names, for push
// [+]<branch>[:<ref>] or :<ref>. Forcing and deleting are refused unless
// the remote allows them. Every error wraps ErrRefused.
func ParseNet(argv []string, remotes []Remote) (NetCommand, error) {
	nc, err := parseNet(argv, remotes)
	if err != nil {
		return NetCommand{}, fmt.Errorf("git: %w", err)
	}
	return nc, nil
}

func parseNet(argv []string, remotes []Remote) (NetCommand, error) {
	if len(argv) > maxWords {
		return NetCommand{}, refusef("%d words; at most %d", len(argv), maxWords)
	}
	for _, w := range argv {
		if err := checkWord(w); err != nil {
			return NetCommand{}, err
		}
	}
	if !IsNet(argv) {
		return NetCommand{}, refusef("not a network command")
	}
	sub := argv[0]
	sp := netSpecs()[sub]
	nc := NetCommand{Sub: sub}
	var pos []string
	force, lease, del := false, false, false
	for i := 1; i < len(argv); i++ {
		w := argv[i]
		if w == "--" {
			pos = append(pos, argv[i+1:]...)
			break
		}
		if len(w) < 2 || w[0] != '-' {
			pos = append(pos, w)
			continue
		}
		p := &parser{sp: sp, cmd: sub}
		var err error
		if w[1] == '-' {
			i, err = p.long(argv, i)
		} else {
			i, err = p.short(argv, i)
		}
		if err != nil {
			return NetCommand{}, err
		}
		for _, a := range p.args {
			switch {
			case a == "--force" || a == "-f":
				force = true
			case a == "--force-with-lease":
				lease = true
			case strings.HasPrefix(a, "--force-with-lease="):
				return NetCommand{}, refusef("%q: give --force-with-lease without a value: shelldon leases each ref against what it last fetched from the remote", a)
			case a == "--delete" || a == "-d":
				del = true
			}
		}
		nc.Opts = append(nc.Opts, p.args...)
	}
	if len(pos) == 0 {
		return NetCommand{}, refusef("git %s needs the name of a configured remote first (%s)", sub, remoteNames(remotes))
	}
	r, err := findRemote(pos[0], remotes)
	if err != nil {
		return NetCommand{}, err
	}
	nc.Remote = r
	for _, w := range pos[1:] {
		ref, err := parseRefspec(sub, w, del)
		if err != nil {
			return NetCommand{}, err
		}
		if lease && ref.Force {
			return NetCommand{}, refusef("%q: a '+' refspec would ignore --force-with-lease; leave the '+' out", w)
		}
		if lease && ref.Delete {
			return NetCommand{}, refusef("%q: a deletion takes no --force-with-lease; push it on its own", w)
		}
		ref.Lease = lease
		ref.Force = ref.Force || force || lease
		nc.Refs = append(nc.Refs, ref)
	}
	switch sub {
	case "pull":
		if len(nc.Refs) != 1 {
			return NetCommand{}, refusef("git pull takes the remote and exactly one branch: git pull %s <branch>", r.Name)
		}
	case "push":
		if len(nc.Refs) == 0 {
			return NetCommand{}, refusef("git push names what it pushes: git push %s <branch> or <branch>:<remote-branch>", r.Name)
		}
		if del && force {
			return NetCommand{}, refusef("--delete with --force: push one or the other")
		}
		if force && lease {
			return NetCommand{}, refusef("--force would override --force-with-lease: give one of them")
		}
	}
	for _, ref := range nc.Refs {
		if ref.Force && !r.AllowForce {
			return NetCommand{}, refusef("forcing a push to %s is refused: %s", r.Name, whyNetForce)
		}
		if ref.Delete && !r.AllowDelete {
			return NetCommand{}, refusef("deleting %s on %s is refused: %s", ref.Dst, r.Name, whyNetDel)
		}
	}
	if (force || lease) && len(nc.Refs) == 0 {
		return NetCommand{}, refusef("--force needs named refs")
	}
	return nc, nil
}

// findRemote takes w only as the exact name of a configured remote.
func findRemote(w string, remotes []Remote) (Remote, error) {
	for _, r := range remotes {
		if r.Name == w {
			return r, nil
		}
	}
	if strings.ContainsAny(w, ":/\\@") || strings.HasPrefix(w, ".") {
		return Remote{}, refusef("%q looks like a URL or a path: the git tool reaches only the remotes the owner configured, by name (%s)", w, remoteNames(remotes))
	}
	return Remote{}, refusef("%q is not a configured remote (%s)", w, remoteNames(remotes))
}

func remoteNames(remotes []Remote) string {
	if len(remotes) == 0 {
		return "none is configured: the owner adds remotes under git.remotes in config.yaml"
	}
	names := make([]string, len(remotes))
	for i, r := range remotes {
		names[i] = r.Name
	}
	return "configured: " + strings.Join(names, ", ")
}

// parseRefspec checks one refspec word of sub.
func parseRefspec(sub, w string, del bool) (Ref, error) {
	if strings.HasPrefix(w, "-") {
		return Ref{}, refusef("%q: a refspec must not start with '-'", w)
	}
	if sub != "push" {
		if err := checkRefName(w); err != nil {
			return Ref{}, err
		}
		return Ref{Src: w}, nil
	}
	var ref Ref
	if rest, ok := strings.CutPrefix(w, "+"); ok {
		ref.Force, w = true, rest
	}
	src, dst, colon := strings.Cut(w, ":")
	if del {
		if colon {
			return Ref{}, refusef("%q: with --delete name the remote refs alone", w)
		}
		src, dst, colon = "", src, true
	}
	if colon && src == "" {
		ref.Delete = true
		if ref.Force {
			return Ref{}, refusef("%q: a deletion is not forced", "+"+w)
		}
	}
	if !ref.Delete {
		if src != "HEAD" {
			if err := checkRefName(src); err != nil {
				return Ref{}, err
			}
		}
		if !colon {
			if src == "HEAD" {
				return Ref{}, refusef("git push HEAD needs a destination: HEAD:<remote-branch>")
			}
			dst = src
		}
	}
	if err := checkRefName(dst); err != nil {
		return Ref{}, err
	}
	ref.Src, ref.Dst = src, dst
	return ref, nil
}

// checkRefName checks a branch or tag name, or a full refs/heads/... or
// refs/tags/... name, as git check-ref-format would, and more strictly: no
// globs, no revision syntax, nothing outside refs/heads and refs/tags.
func checkRefName(n string) error {
	bad := func(why string) error { return refusef("%q is not a branch or tag name: %s", n, why) }
	switch {
	case n == "":
		return bad("it is empty")
	case len(n) > 255:
		return bad("it is too long")
	case strings.HasPrefix(n, "-"):
		return bad("it starts with '-'")
	case strings.HasPrefix(n, "/") || strings.HasSuffix(n, "/") || strings.Contains(n, "//"):
		return bad("empty component")
	case strings.Contains(n, ".."), strings.Contains(n, "@{"), n == "@":
		return bad("revision syntax")
	case strings.HasSuffix(n, ".lock") || strings.HasSuffix(n, "."):
		return bad("it ends with .lock or '.'")
	case strings.HasPrefix(n, "refs/") && !strings.HasPrefix(n, "refs/heads/") && !strings.HasPrefix(n, "refs/tags/"):
		return bad("only refs/heads/ and refs/tags/ are offered")
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		// Printable ASCII only: a name the card shows is what it is (no
		// bidirectional controls, no look-alike letters).
		if c < 0x20 || c >= 0x7f || strings.IndexByte(" ~^:?*[\\+", c) >= 0 {
			return bad(fmt.Sprintf("it holds %q", c))
		}
	}
	for _, part := range strings.Split(n, "/") {
		if strings.HasPrefix(part, ".") {
			return bad("a component starts with '.'")
		}
	}
	return nil
}

// RenderNet returns the command the owner approves, as Render does.
func RenderNet(nc NetCommand) string {
	words := append([]string{"git", nc.Sub}, nc.Opts...)
	words = append(words, nc.Remote.Name)
	for _, r := range nc.Refs {
		words = append(words, r.String(nc.Sub))
	}
	for i, w := range words {
		words[i] = quote(w)
	}
	return strings.Join(words, " ")
}

// String is the refspec as git takes it.
func (r Ref) String(sub string) string {
	if sub != "push" {
		return r.Src
	}
	s := r.Src + ":" + r.Dst
	if r.Force && !r.Lease && !r.Delete {
		s = "+" + s
	}
	return s
}
