package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/gitremote"
	"github.com/shelldon/shelldon/internal/inert"
)

// checkGitRemotes lists the owner's git remotes (name, host, credential
// kind, whether its variable is set: never the value) and asks each for
// its branches with git ls-remote, through the credential path the git
// tool uses, changing nothing.
func (d *doctor) checkGitRemotes(ctx context.Context, cfg *config.Config) {
	for _, r := range cfg.Git.Remotes {
		what := "git " + r.Name
		cred := "no credential"
		switch {
		case r.TokenEnv != "":
			state := "set"
			if cfg.GitToken(r) == "" {
				state = "unset"
			}
			cred = fmt.Sprintf("token %s (%s)", r.TokenEnv, state)
		case r.SSHKey != "":
			cred = "ssh key " + r.SSHKey
		}
		desc := fmt.Sprintf("%s://%s%s, %s", r.Scheme, r.Host, inert.Line(r.Path), cred)
		if r.TokenEnv != "" && cfg.GitToken(r) == "" {
			d.fail(what, desc+": put the token in "+cfg.Path(config.FileEnv))
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		refs, err := gitremote.LsRemote(cctx, gitremote.Remote{
			Name: r.Name, URL: r.URL, Scheme: r.Scheme, Host: r.Host,
			Username: r.Username, Token: cfg.GitToken(r),
		})
		cancel()
		switch {
		case errors.Is(err, gitremote.ErrSSH):
			d.warn(what, desc+": not checked, "+err.Error())
		case err != nil:
			d.fail(what, desc+": "+inert.Line(err.Error()))
		default:
			d.ok(what, fmt.Sprintf("%s: answers, %d branches", desc, len(refs)))
		}
	}
}
