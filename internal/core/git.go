package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/gitguard"
)

// GitRemotes converts the owner's remotes as a job carries them into
// what gitguard checks against.
func GitRemotes(rs []contracts.GitRemote) []gitguard.Remote {
	out := make([]gitguard.Remote, len(rs))
	for i, r := range rs {
		out[i] = gitguard.Remote{Name: r.Name, Scheme: r.Scheme, Host: r.Host, AllowForce: r.AllowForce, AllowDelete: r.AllowDelete}
	}
	return out
}

// gitFetch carries out the network half of a git fetch or pull, only as
// the approved call this worker was resumed to run: the arguments must be
// exactly the approved ones, the daemon parses them again against the
// remotes it gave the job, and the fetch runs once.
func (c *Core) gitFetch(ctx context.Context, job contracts.Job, req contracts.GitFetch, done *bool) (contracts.GitFetched, error) {
	r := job.Resume
	if r == nil || !r.Approved || r.Call.Name != contracts.ToolGit || *done {
		return contracts.GitFetched{}, errors.New("git fetch and pull reach the remote only as the call the owner approved")
	}
	raw, err := json.Marshal(map[string]string{"args": req.Args})
	if err != nil {
		return contracts.GitFetched{}, err
	}
	got, err := contracts.CanonicalArgs(string(raw))
	if err != nil || got != r.Call.Arguments {
		return contracts.GitFetched{}, errors.New("the git arguments are not the ones the owner approved")
	}
	argv, err := gitguard.Split(req.Args)
	if err != nil {
		return contracts.GitFetched{}, err
	}
	nc, err := gitguard.ParseNet(argv, GitRemotes(job.GitRemotes))
	if err != nil {
		return contracts.GitFetched{}, err
	}
	if nc.Sub != "fetch" && nc.Sub != "pull" {
		return contracts.GitFetched{}, fmt.Errorf("git %s is not served by the daemon", nc.Sub)
	}
	if c.opts.GitFetch == nil {
		return contracts.GitFetched{}, errors.New("git remotes are not available")
	}
	*done = true
	start := time.Now()
	mirror, err := c.opts.GitFetch(ctx, nc)
	summary := "fetched from " + nc.Remote.Name + " (" + nc.Remote.Scheme + "://" + nc.Remote.Host + ")"
	if err != nil {
		summary = c.opts.Redact(err.Error())
	}
	c.audit(ctx, job.Chat, job.Turn, "git_fetched", contracts.ToolGit, gitguard.RenderNet(nc), summary, err == nil, time.Since(start))
	if err != nil {
		return contracts.GitFetched{}, errors.New(summary)
	}
	return contracts.GitFetched{Mirror: mirror}, nil
}

// gitPush carries out a git push, only as the approved call this worker
// was resumed to run, with exactly the approved arguments, once, and
// pushing the commits the approval is bound to (Resume.Binding, which the
// owner's card showed and the approval's hash covers), never what the
// workspace holds now.
func (c *Core) gitPush(ctx context.Context, job contracts.Job, req contracts.GitPush, done *bool) (contracts.GitPushed, error) {
	r := job.Resume
	if r == nil || !r.Approved || r.Call.Name != contracts.ToolGit || *done {
		return contracts.GitPushed{}, errors.New("git push reaches the remote only as the call the owner approved")
	}
	raw, err := json.Marshal(map[string]string{"args": req.Args})
	if err != nil {
		return contracts.GitPushed{}, err
	}
	got, err := contracts.CanonicalArgs(string(raw))
	if err != nil || got != r.Call.Arguments {
		return contracts.GitPushed{}, errors.New("the git arguments are not the ones the owner approved")
	}
	if hash, err := contracts.ArgsHash(r.Call.Name, r.Call.Arguments, r.Binding); err != nil || hash != r.ArgsHash {
		return contracts.GitPushed{}, errors.New("the push does not match what the owner approved")
	}
	argv, err := gitguard.Split(req.Args)
	if err != nil {
		return contracts.GitPushed{}, err
	}
	nc, err := gitguard.ParseNet(argv, GitRemotes(job.GitRemotes))
	if err != nil {
		return contracts.GitPushed{}, err
	}
	if nc.Sub != "push" {
		return contracts.GitPushed{}, fmt.Errorf("git %s is not a push", nc.Sub)
	}
	commits, err := gitguard.ParsePushBinding(nc, r.Binding)
	if err != nil {
		return contracts.GitPushed{}, err
	}
	if c.opts.GitPush == nil {
		return contracts.GitPushed{}, errors.New("git remotes are not available")
	}
	*done = true
	start := time.Now()
	out, err := c.opts.GitPush(ctx, nc, commits)
	summary := "pushed " + r.Binding + " to " + nc.Remote.Name + " (" + nc.Remote.Scheme + "://" + nc.Remote.Host + ")"
	if err != nil {
		summary = c.opts.Redact(err.Error())
	}
	c.audit(ctx, job.Chat, job.Turn, "git_pushed", contracts.ToolGit, gitguard.RenderNet(nc), summary, err == nil, time.Since(start))
	if err != nil {
		return contracts.GitPushed{}, errors.New(summary)
	}
	return contracts.GitPushed{Output: c.opts.Redact(out)}, nil
}
