package core_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/gitguard"
	"github.com/shelldon/shelldon/internal/wire"
)

// TestGitFetchOnlyAsApproved: the daemon reaches a remote for a git fetch
// or pull only as the approved call of a resumed job, with exactly the
// approved arguments, parsed again against the remotes the job carried,
// and once; a worker asking before approval, with other arguments, a
// second time, or after a denial gets a refusal and nothing is fetched.
func TestGitFetchOnlyAsApproved(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	remotes := []contracts.GitRemote{{Name: "origin", Scheme: "https", Host: "git.example:8443"}}
	args, err := contracts.CanonicalArgs(`{"args":"pull origin main"}`)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var fetched []gitguard.NetCommand
	var seen []string
	note := func(name string, err error) {
		mu.Lock()
		defer mu.Unlock()
		var re *wire.RemoteError
		switch {
		case err == nil:
			seen = append(seen, name+": ok")
		case errors.As(err, &re):
			seen = append(seen, name+": refused")
		default:
			seen = append(seen, name+": "+err.Error())
		}
	}
	fetch := func(d *wire.Client, a string) (contracts.GitFetched, error) {
		var out contracts.GitFetched
		err := d.Call(context.Background(), wire.MethodGitFetch, contracts.GitFetch{Args: a}, &out)
		return out, err
	}
	park := func(job contracts.Job, d *wire.Client) contracts.Result {
		if len(job.GitRemotes) != 1 || job.GitRemotes[0] != remotes[0] {
			t.Errorf("the job carries the remotes %+v", job.GitRemotes)
		}
		_, err := fetch(d, "pull origin main")
		note("before approval", err)
		call := contracts.ToolCall{ID: "g1", Name: contracts.ToolGit, Arguments: args}
		return contracts.Result{Stopped: contracts.StopApproval, Pending: &contracts.Pending{
			Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "pull"}}, Call: call}}
	}
	sp := &playSpawner{plays: []func(contracts.Job, *wire.Client) contracts.Result{
		park,
		func(job contracts.Job, d *wire.Client) contracts.Result {
			_, err := fetch(d, "fetch origin main")
			note("other arguments", err)
			_, err = fetch(d, "pull  origin main --ff")
			note("more options", err)
			got, err := fetch(d, "pull origin main")
			note("approved", err)
			if got.Mirror != "/home/s/git-remotes/origin.git" {
				t.Errorf("mirror %q", got.Mirror)
			}
			_, err = fetch(d, "pull origin main")
			note("again", err)
			return contracts.Result{Reply: "done"}
		},
		park,
		func(job contracts.Job, d *wire.Client) contracts.Result {
			_, err := fetch(d, "pull origin main")
			note("denied", err)
			return contracts.Result{Reply: "denied"}
		},
	}}
	c, err := core.New(core.Options{Store: st, Model: &scriptedModel{}, Spawner: sp, Logger: slog.New(slog.DiscardHandler),
		GitRemotes: remotes,
		GitFetch: func(ctx context.Context, nc gitguard.NetCommand) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			fetched = append(fetched, nc)
			return "/home/s/git-remotes/origin.git", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	for _, approve := range []bool{true, false} {
		out, err := c.Send(context.Background(), "chat", "pull", core.Events{})
		if err != nil || len(out.Approvals) != 1 {
			t.Fatalf("turn: %+v, %v", out, err)
		}
		if _, err := c.Decide(context.Background(), out.Approvals[0].ID, approve, "owner", core.Events{}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"before approval: refused", "other arguments: refused", "more options: refused", "approved: ok", "again: refused", "before approval: refused"}
	if len(seen) < len(want) {
		t.Fatalf("calls %q, want %q", seen, want)
	}
	for i, w := range want {
		if seen[i] != w {
			t.Errorf("call %d: %q, want %q", i, seen[i], w)
		}
	}
	for _, s := range seen[len(want):] {
		if s != "denied: refused" {
			t.Errorf("after the denial: %q", s)
		}
	}
	if len(fetched) != 1 || fetched[0].Sub != "pull" || fetched[0].Remote.Host != "git.example:8443" ||
		len(fetched[0].Refs) != 1 || fetched[0].Refs[0].Src != "main" {
		t.Errorf("fetched %+v", fetched)
	}
}

// TestGitPushOnlyAsApproved: the daemon pushes only as the approved call,
// with exactly its arguments, once, and the commits it pushes are the
// ones the approval is bound to (Pending.Binding), whatever the worker
// asks; the fetch method does not serve an approved push.
func TestGitPushOnlyAsApproved(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "shelldon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	remotes := []contracts.GitRemote{{Name: "origin", Scheme: "https", Host: "git.example"}}
	args, err := contracts.CanonicalArgs(`{"args":"push origin main"}`)
	if err != nil {
		t.Fatal(err)
	}
	bound := strings.Repeat("c", 40)
	var mu sync.Mutex
	var pushed [][]string
	var seen []string
	note := func(name string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			seen = append(seen, name+": refused")
		} else {
			seen = append(seen, name+": ok")
		}
	}
	push := func(d *wire.Client, a string) error {
		var out contracts.GitPushed
		return d.Call(context.Background(), wire.MethodGitPush, contracts.GitPush{Args: a}, &out)
	}
	sp := &playSpawner{plays: []func(contracts.Job, *wire.Client) contracts.Result{
		func(job contracts.Job, d *wire.Client) contracts.Result {
			note("before approval", push(d, "push origin main"))
			call := contracts.ToolCall{ID: "p1", Name: contracts.ToolGit, Arguments: args}
			return contracts.Result{Stopped: contracts.StopApproval, Pending: &contracts.Pending{
				Messages: []contracts.Message{{Role: contracts.RoleUser, Text: "push"}}, Call: call,
				Binding: gitguard.PushBinding([]string{bound})}}
		},
		func(job contracts.Job, d *wire.Client) contracts.Result {
			note("other arguments", push(d, "push origin main:dev"))
			var f contracts.GitFetched
			note("as a fetch", d.Call(context.Background(), wire.MethodGitFetch, contracts.GitFetch{Args: "push origin main"}, &f))
			note("approved", push(d, "push origin main"))
			note("again", push(d, "push origin main"))
			return contracts.Result{Reply: "done"}
		},
	}}
	c, err := core.New(core.Options{Store: st, Model: &scriptedModel{}, Spawner: sp, Logger: slog.New(slog.DiscardHandler),
		GitRemotes: remotes,
		GitFetch: func(context.Context, gitguard.NetCommand) (string, error) {
			t.Error("a push was served as a fetch")
			return "", nil
		},
		GitPush: func(ctx context.Context, nc gitguard.NetCommand, commits []string) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			pushed = append(pushed, commits)
			return "ok", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Send(context.Background(), "chat", "push", core.Events{})
	if err != nil || len(out.Approvals) != 1 {
		t.Fatalf("turn: %+v, %v", out, err)
	}
	if _, err := c.Decide(context.Background(), out.Approvals[0].ID, true, "owner", core.Events{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"before approval: refused", "other arguments: refused", "as a fetch: refused", "approved: ok", "again: refused"}
	if strings.Join(seen, "; ") != strings.Join(want, "; ") {
		t.Errorf("calls %q, want %q", seen, want)
	}
	if len(pushed) != 1 || len(pushed[0]) != 1 || pushed[0][0] != bound {
		t.Errorf("pushed %q, want [[%s]]", pushed, bound)
	}
}
