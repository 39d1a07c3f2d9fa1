package worker

import (
	"context"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/wire"
)

// GitFetch asks the daemon to carry out the network half of the approved
// git fetch or pull (package risky's git tool) and returns the mirror it
// fetched into.
func (m *daemonClient) GitFetch(ctx context.Context, req contracts.GitFetch) (contracts.GitFetched, error) {
	var out contracts.GitFetched
	if err := m.calls.Call(ctx, wire.MethodGitFetch, req, &out); err != nil {
		return contracts.GitFetched{}, err
	}
	return out, nil
}

// GitPush asks the daemon to carry out the approved git push.
func (m *daemonClient) GitPush(ctx context.Context, req contracts.GitPush) (contracts.GitPushed, error) {
	var out contracts.GitPushed
	if err := m.calls.Call(ctx, wire.MethodGitPush, req, &out); err != nil {
		return contracts.GitPushed{}, err
	}
	return out, nil
}
