package app

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/gitremote"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/sshkey"
)

// checkGitRemotes lists the owner's git remotes (name, host, credential
// kind, whether its variable is set: never the value) and asks each for
// its branches with git ls-remote, through the credential path the git
// tool uses, changing nothing.
func (d *doctor) checkGitRemotes(ctx context.Context, cfg *config.Config) {
	if len(cfg.Git.Remotes) == 0 {
		return
	}
	jail := gitremote.Jail{AllowDegraded: cfg.Sandbox.AllowDegraded}
	if exe, err := executable(); err == nil {
		if runner, err := sandbox.NewRunner(exe); err == nil {
			jail.Sandbox, jail.Exe = runner, exe
		}
	}
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
			if pk, err := sshkey.ParseHost(r.HostKey); err == nil {
				cred += ", host key " + ssh.FingerprintSHA256(pk)
			}
		}
		desc := fmt.Sprintf("%s://%s%s, %s", r.Scheme, r.Host, inert.Line(r.Path), cred)
		if r.TokenEnv != "" && cfg.GitToken(r) == "" {
			d.fail(what, desc+": put the token in "+cfg.Path(config.FileEnv))
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		refs, err := gitremote.LsRemote(cctx, jail, remoteOf(cfg, r))
		cancel()
		switch {
		case err != nil:
			d.fail(what, desc+": "+inert.Line(err.Error()))
		default:
			d.ok(what, fmt.Sprintf("%s: answers, %d branches", desc, len(refs)))
		}
	}
}
