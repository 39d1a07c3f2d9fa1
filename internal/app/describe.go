package app

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/netguard"
	"github.com/shelldon/shelldon/internal/worker/risky"
	"github.com/shelldon/shelldon/internal/workspace"
)

// describer adds the daemon's own facts to the owner's view of a RISKY
// call: what the call will touch, found by the daemon, not said by the
// model.
type describer struct {
	workspace string
	home      string
	environ   []string
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
		t, err := netguard.Describe(ctx, str("url"), nil)
		if t.URL == "" {
			return []string{"Would be refused: " + errString(err)}
		}
		lines := []string{"Host as it will be dialed: " + t.Host + ", port " + t.Port}
		if len(t.Addresses) > 0 {
			lines = append(lines, "Resolves now to: "+strings.Join(t.Addresses, ", "))
		} else if err != nil {
			lines = append(lines, "Does not resolve now: "+err.Error())
		}
		for _, b := range t.Blocked {
			lines = append(lines, "Would be refused at connect: "+b)
		}
		return lines
	case contracts.ToolGit:
		argv, err := risky.GitArgv(str("args"))
		if err != nil {
			return []string{"Would be refused: " + err.Error()}
		}
		return []string{"Runs exactly: " + argv, "In the sandbox, in " + d.workspace + ", with hooks, pagers, editors and external programs disabled"}
	case contracts.ToolUpdateConfig:
		changes, _ := args["changes"].(map[string]any)
		o, err := config.PrepareOverlay(d.home, d.environ, changes)
		if err != nil {
			return []string{"Would be refused: " + err.Error()}
		}
		diff := o.Diff()
		if len(diff) == 0 {
			return []string{"Changes nothing in the effective config"}
		}
		return append([]string{"Changes to the effective config (written to config.local.yaml, applied from the next turn):"}, diff...)
	case contracts.ToolRunShell:
		return []string{
			"Runs: /bin/sh -c <command>, in the sandbox (no network, only the workspace writable)",
			"Working directory: " + d.workspace,
		}
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return "unknown reason"
	}
	return err.Error()
}
