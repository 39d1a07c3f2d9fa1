package gitguard

import (
	"fmt"
	"net"
	"strings"

	"golang.org/x/net/idna"
)

// NetCard is the daemon's description of a network command for the
// owner's approval card, from the parsed command and the owner's
// configuration only: the remote, its host (ASCII as dialed, and its
// Unicode form when the host is an internationalized name), what moves
// and in which direction, and whether it forces or deletes. Nothing here
// is looked up or contacted. Every word comes from the remote's
// configuration or passed checkRefName (printable ASCII, no spaces).
func NetCard(nc NetCommand) []string {
	r := nc.Remote
	host := r.Host
	if h, _, err := net.SplitHostPort(r.Host); err == nil {
		host = h
	}
	lines := []string{fmt.Sprintf("Remote: %s (%s://%s)", r.Name, r.Scheme, r.Host)}
	if u, err := idna.Lookup.ToUnicode(host); err == nil && u != host {
		lines = append(lines, fmt.Sprintf("Host: %s, which reads as %s", host, quote(u)))
	} else {
		lines = append(lines, "Host: "+host)
	}
	var refs []string
	for _, ref := range nc.Refs {
		refs = append(refs, ref.String(nc.Sub))
	}
	switch nc.Sub {
	case "fetch", "pull":
		what := "every branch of the remote's default fetch"
		if len(refs) > 0 {
			what = strings.Join(refs, ", ")
		}
		lines = append(lines, "Downloads: "+what+" into refs/remotes/"+r.Name+"/")
		if optsOf(nc).tags {
			lines = append(lines, "And every tag of the remote, into refs/tags/ (existing tags are not overwritten)")
		}
		if nc.Sub == "pull" {
			how := "fast-forward only"
			if optsOf(nc).mergeMode {
				how = "as the options above say"
			}
			lines = append(lines, "Then merges it into the current branch ("+how+"), in the sandbox")
		}
	case "push":
		lines = append(lines, "Uploads: "+strings.Join(refs, ", "))
		if PushDryRun(nc) {
			lines = append(lines, "Dry run: git asks the remote what it would do; nothing is uploaded or changed")
		}
		for _, ref := range nc.Refs {
			switch {
			case ref.Delete:
				lines = append(lines, "DELETES the remote ref "+ref.Dst)
			case ref.Lease:
				lines = append(lines, "FORCED, with a lease: replaces the remote's "+ref.Dst+" (may discard commits there) only if it is still what shelldon last fetched; if anyone pushed there since, nothing is pushed")
			case ref.Force:
				lines = append(lines, "FORCED: may discard commits on the remote's "+ref.Dst)
			}
		}
	}
	return lines
}
