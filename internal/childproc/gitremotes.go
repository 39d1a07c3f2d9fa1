package childproc

import (
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/gitguard"
)

// gitRemotesOf is the owner's git.remotes from the job the daemon wrote
// (names, schemes, hosts and allow flags; never a credential), for the
// git tool's check of fetch and pull.
func gitRemotesOf(rs []contracts.GitRemote) []gitguard.Remote {
	out := make([]gitguard.Remote, len(rs))
	for i, r := range rs {
		out[i] = gitguard.Remote{Name: r.Name, Scheme: r.Scheme, Host: r.Host, AllowForce: r.AllowForce, AllowDelete: r.AllowDelete}
	}
	return out
}
