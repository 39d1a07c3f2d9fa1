package app

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/gitguard"
	"github.com/shelldon/shelldon/internal/netguard"
	"github.com/shelldon/shelldon/internal/worker/risky"
	"github.com/shelldon/shelldon/internal/workspace"
)

// describer adds the daemon's own facts to the owner's view of a RISKY
// call: what the call will touch, found by the daemon, not said by the
// model. It runs while the call waits for the owner, so it sends nothing
// anywhere: no DNS query, no connection (a lookup of a name like
// <secret>.attacker.example would leak the secret even if the owner
// denies the call). Local facts, such as the path a write resolves to,
// are fine.
type describer struct {
	workspace string
	home      string
	environ   []string
	// lan returns the owner's http.allow_hosts in force, for http_get's
	// card; nil means none.
	lan func() netguard.LAN
	// remotes returns the owner's git.remotes in force, for git fetch
	// and pull's card; nil means none.
	remotes func() []gitguard.Remote
	// git runs a guarded git command line in the workspace, in the
	// sandbox, with a remote's mirror visible (App.sandboxGit), for the
	// push card; nil means the card cannot list commits.
	git func(ctx context.Context, argv []string, mirror string) (string, error)
}

func (d describer) describe(ctx context.Context, call contracts.ToolCall) []string {
	var args map[string]any
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
		return nil
	}
	str := func(k string) string { s, _ := args[k].(string); return s }
	switch call.Name {
	case contracts.ToolWriteFile:
		lines := []string{fmt.Sprintf("Content size: %d bytes", len(str("content")))}
		root, err := workspace.Open(d.workspace)
		if err != nil {
			return append(lines, "Workspace: "+err.Error())
		}
		defer root.Close()
		rel, err := root.CheckWrite(str("path"))
		if err != nil {
			return append(lines, "Would be refused: "+err.Error())
		}
		return append(lines, "Resolved path: "+filepath.Join(d.workspace, rel))
	case contracts.ToolHTTPGet:
		// The URL as it will be requested, from the URL alone: nothing is
		// looked up or contacted before the owner decides (see
		// netguard.Card).
		var lan netguard.LAN
		if d.lan != nil {
			lan = d.lan()
		}
		card, err := lan.DescribeURL(str("url"))
		if err != nil {
			return []string{"Would be refused: " + err.Error()}
		}
		return card.Lines()
	case contracts.ToolGit:
		var remotes []gitguard.Remote
		if d.remotes != nil {
			remotes = d.remotes()
		}
		if nc, ok, err := risky.GitNet(str("args"), remotes); ok {
			if err != nil {
				return []string{"Would be refused: " + err.Error()}
			}
			lines := append([]string{"Runs exactly: " + gitguard.RenderNet(nc)}, gitguard.NetCard(nc)...)
			if nc.Sub == "push" {
				return append(lines, d.pushCard(ctx, nc)...)
			}
			return append(lines, "shelldon fetches from the remote into its own copy ("+filepath.Join(gitMirrors(d.home), nc.Remote.Name+".git")+"), outside the sandbox, with the remote's credential offered to that host only; git in the sandbox, with no network, then fetches from that copy into "+d.workspace)
		}
		argv, err := risky.GitArgv(str("args"))
		if err != nil {
			return []string{"Would be refused: " + err.Error()}
		}
		return []string{"Runs exactly: " + argv, "In the sandbox, in " + d.workspace + ", with hooks, pagers, editors and external programs disabled, and the repository's own configuration reduced to settings that name no program"}
	case contracts.ToolUpdateConfig:
		// The agent's path, as App.configure will take it: nothing here
		// depends on whether a variable is set or what a secret holds.
		changes, _ := args["changes"].(map[string]any)
		o, err := config.PrepareAgentOverlay(d.home, d.environ, changes)
		if err != nil {
			return []string{"Would be refused: " + err.Error()}
		}
		return configCard(o)
	case contracts.ToolSchedule:
		// The next runs are the daemon's computation, in the zone in
		// force; nothing here is the model's but the arguments above.
		return scheduleCard(d.home, d.environ, str("when"), timeNow())
	case contracts.ToolRunShell:
		return []string{
			"Runs: /bin/sh -c <command>, in the sandbox (no network, only the workspace writable)",
			"Working directory: " + d.workspace,
		}
	}
	return nil
}

// lan is the owner's http.allow_hosts in force, for http_get's card; nil
// before a config is in force.
func (a *App) lan() netguard.LAN {
	if cfg := a.current(); cfg != nil {
		return cfg.LAN()
	}
	return nil
}

// onNetwork names the entry of the owner's http.allow_hosts that lists
// host by name (what a self-coded tool's CAPABILITIES hold), for its
// promotion card; "" when none does.
func (a *App) onNetwork(host string) string {
	var rules []string
	for _, r := range a.lan().For(host) {
		rules = append(rules, r.String())
	}
	return strings.Join(rules, "; ")
}
