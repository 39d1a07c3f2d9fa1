package gitguard

import (
	"slices"
	"strings"
)

// The network commands run in two halves (see the package doc of
// gitremote): the daemon fetches from the remote into a bare mirror it
// owns, with MirrorArgs; git in the sandbox, with no network, then
// fetches from that mirror into the workspace with FetchArgv and, for a
// pull, merges with MergeArgv. Every word comes from a NetCommand that
// passed ParseNet and from the daemon.

// netOpts is what a parsed fetch or pull asked for.
type netOpts struct {
	quiet, verbose, dryRun, prune, tags bool
	depth                               string
	merge                               []string // pull: the merge's own options
	mergeMode                           bool     // pull: a fast-forward or squash choice was given
}

func optsOf(nc NetCommand) netOpts {
	var o netOpts
	for _, a := range nc.Opts {
		switch {
		case a == "-q" || a == "--quiet":
			o.quiet = true
		case a == "-v" || a == "--verbose":
			o.verbose = true
		case a == "--dry-run":
			o.dryRun = true
		case a == "-p" || a == "--prune":
			o.prune = true
		case a == "--no-prune":
			o.prune = false
		case a == "-t" || a == "--tags":
			o.tags = true
		case a == "--no-tags":
			o.tags = false
		case strings.HasPrefix(a, "--depth="):
			o.depth = strings.TrimPrefix(a, "--depth=")
		case nc.Sub == "pull":
			o.merge = append(o.merge, a)
			switch a {
			case "--ff-only", "--ff", "--no-ff", "--squash":
				o.mergeMode = true
			}
		}
	}
	return o
}

// fullRef is the full name of a fetched ref: a short name is a branch.
func fullRef(src string) string {
	if strings.HasPrefix(src, "refs/") {
		return src
	}
	return "refs/heads/" + src
}

// trackingRef is where a fetched ref lands in the workspace: a branch
// under refs/remotes/<remote>/, a tag under its own name.
func trackingRef(remote, full string) string {
	if b, ok := strings.CutPrefix(full, "refs/heads/"); ok {
		return "refs/remotes/" + remote + "/" + b
	}
	return full
}

// MirrorArgs are the arguments (after the daemon-owned configuration) of
// the daemon's fetch from url into the bare mirror: the refs nc names
// (every branch when it names none), tags only when asked, no
// submodules.
func MirrorArgs(nc NetCommand, url string) []string {
	o := optsOf(nc)
	args := []string{"fetch", "--no-tags", "--no-recurse-submodules", "--no-write-fetch-head", "--quiet"}
	if o.prune {
		args = append(args, "--prune")
	}
	if o.depth != "" {
		args = append(args, "--depth="+o.depth)
	}
	args = append(args, "--", url)
	if len(nc.Refs) == 0 {
		args = append(args, "+refs/heads/*:refs/heads/*")
	}
	for _, r := range nc.Refs {
		f := fullRef(r.Src)
		args = append(args, "+"+f+":"+f)
	}
	if o.tags {
		args = append(args, "+refs/tags/*:refs/tags/*")
	}
	return args
}

// FetchArgv is the sandboxed git's fetch from the daemon's mirror into
// the workspace: the daemon-owned prefix of Argv, the file protocol
// allowed for this call only, the mirror trusted by path (it is the
// daemon's, not the workspace's), and refspecs that land in
// refs/remotes/<remote>/ (tags in refs/tags/, never forced).
func FetchArgv(nc NetCommand, mirror string) []string {
	o := optsOf(nc)
	argv := append([]string{"git"}, prefix...)
	argv = append(argv, "-c", "protocol.file.allow=always", "-c", "safe.directory="+mirror,
		"fetch", "--no-tags", "--no-recurse-submodules")
	if o.quiet {
		argv = append(argv, "--quiet")
	}
	if o.verbose {
		argv = append(argv, "--verbose")
	}
	if o.dryRun {
		argv = append(argv, "--dry-run")
	}
	if o.prune {
		argv = append(argv, "--prune")
	}
	if o.depth != "" {
		argv = append(argv, "--depth="+o.depth)
	}
	argv = append(argv, "--", mirror)
	if len(nc.Refs) == 0 {
		argv = append(argv, "+refs/heads/*:refs/remotes/"+nc.Remote.Name+"/*")
	}
	for _, r := range nc.Refs {
		f := fullRef(r.Src)
		t := trackingRef(nc.Remote.Name, f)
		if f != t {
			t = "+" + f + ":" + t
		} else {
			t = f + ":" + t
		}
		argv = append(argv, t)
	}
	if o.tags {
		argv = append(argv, "refs/tags/*:refs/tags/*")
	}
	return argv
}

// MergeArgv is a pull's merge of the fetched branch into the current one,
// in the sandbox: fast-forward only unless the call chose otherwise
// (--ff, --no-ff or --squash, which the owner saw on the card).
func MergeArgv(nc NetCommand) []string {
	o := optsOf(nc)
	args := append([]string(nil), o.merge...)
	if !o.mergeMode {
		args = append([]string{"--ff-only"}, args...)
	}
	if o.quiet {
		args = append(args, "--quiet")
	}
	if len(nc.Refs) > 0 {
		args = append(args, trackingRef(nc.Remote.Name, fullRef(nc.Refs[0].Src)))
	}
	return Argv(Command{Sub: "merge", Args: args})
}

// pushDst is the full name of a pushed ref: a short name is a branch.
func pushDst(dst string) string { return fullRef(dst) }

// PushDst is the full remote ref a push refspec updates.
func PushDst(r Ref) string { return pushDst(r.Dst) }

// PushBinding is the binding of an approved push (contracts.GitPushPrefix):
// per ref, the commit it pushes, "-" for a deletion.
func PushBinding(commits []string) string {
	return "push:" + strings.Join(commits, ",")
}

// ParsePushBinding reads a push's binding for nc: one full object name
// per ref (or "-" exactly where nc deletes).
func ParsePushBinding(nc NetCommand, binding string) ([]string, error) {
	rest, ok := strings.CutPrefix(binding, "push:")
	if !ok {
		return nil, refusef("the push is not bound to commits")
	}
	commits := strings.Split(rest, ",")
	if len(commits) != len(nc.Refs) {
		return nil, refusef("the push is bound to %d commits for %d refs", len(commits), len(nc.Refs))
	}
	for i, c := range commits {
		if nc.Refs[i].Delete {
			if c != "-" {
				return nil, refusef("a deletion is bound to a commit")
			}
			continue
		}
		if !IsObjectName(c) {
			return nil, refusef("%q is not a commit's full name", c)
		}
	}
	return commits, nil
}

// IsObjectName reports whether s is a full object name (SHA-1 or SHA-256,
// lowercase hex).
func IsObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// RevParseArgv resolves a push's local ref to its commit, in the
// sandbox: the daemon-owned prefix, then rev-parse --verify.
func RevParseArgv(src string) []string {
	return Argv(Command{Sub: "rev-parse", Args: []string{"--verify", "--quiet", src + "^{commit}"}})
}

// PushArgs are the arguments (after the daemon-owned configuration) of
// the daemon's push from its mirror to url: exactly the bound commits,
// by name, to the refs nc names; "+" only where nc forces (the remote
// allows it: ParseNet), ":ref" only where it deletes. A leased ref is
// pushed with --force-with-lease=<ref>:<lease>, its lease from leases
// (what the daemon last saw of the remote's ref; "" or none: the ref must
// not exist there), so git replaces it only if it still is that.
func PushArgs(nc NetCommand, url string, commits, leases []string) []string {
	args := []string{"push", "--porcelain", "--no-verify", "--no-recurse-submodules"}
	if PushDryRun(nc) {
		args = append(args, "--dry-run")
	}
	for i, r := range nc.Refs {
		if r.Lease {
			lease := ""
			if i < len(leases) && IsObjectName(leases[i]) {
				lease = leases[i]
			}
			args = append(args, "--force-with-lease="+pushDst(r.Dst)+":"+lease)
		}
	}
	args = append(args, "--", url)
	for i, r := range nc.Refs {
		switch {
		case r.Delete:
			args = append(args, ":"+pushDst(r.Dst))
		case r.Lease:
			args = append(args, commits[i]+":"+pushDst(r.Dst))
		case r.Force:
			args = append(args, "+"+commits[i]+":"+pushDst(r.Dst))
		default:
			args = append(args, commits[i]+":"+pushDst(r.Dst))
		}
	}
	return args
}

// TrackingArgv are the sandboxed git commands that then set the
// workspace's refs/remotes/<remote>/<branch> to what an approved push left
// on the remote (a deleted branch's tracking ref deleted), as git push
// does itself: none for a dry run, nor for a ref outside refs/heads/.
func TrackingArgv(nc NetCommand, commits []string) [][]string {
	if PushDryRun(nc) || len(commits) != len(nc.Refs) {
		return nil
	}
	var out [][]string
	for i, r := range nc.Refs {
		t := trackingRef(nc.Remote.Name, pushDst(r.Dst))
		if !strings.HasPrefix(t, "refs/remotes/") {
			continue
		}
		args := []string{"-m", "push", t, commits[i]}
		if r.Delete {
			args = []string{"-d", t}
		} else if !IsObjectName(commits[i]) {
			continue
		}
		out = append(out, Argv(Command{Sub: "update-ref", Args: args}))
	}
	return out
}

// PushDryRun reports whether a push only says what it would do.
func PushDryRun(nc NetCommand) bool {
	return nc.Sub == "push" && (slices.Contains(nc.Opts, "-n") || slices.Contains(nc.Opts, "--dry-run"))
}
