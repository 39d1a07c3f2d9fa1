package core

import (
	"context"

	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// The read models transports show. They are core's, so no transport
// imports the store or the tools directory (repo_test.go).

// AuditEntry is one row of the audit trail.
type AuditEntry = store.AuditEntry

// AuditQuery selects audit entries; zero fields select everything.
type AuditQuery = store.AuditQuery

// ToolDetail is one version of a self-coded tool with its source.
type ToolDetail = selfcode.Tool

// Errors of the tool commands.
var (
	ErrNoSuchTool = selfcode.ErrNotFound  // no tool of that name in that state
	ErrNoVersion  = selfcode.ErrNoVersion // no earlier version to roll back to
)

// Audit reads the audit trail, newest first.
func (c *Core) Audit(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	return c.opts.Store.Audit(ctx, q)
}

// FindTool returns the self-coded tool called name: its live version, else
// the one waiting for approval, else the quarantined one, and that state.
func (c *Core) FindTool(name string) (ToolDetail, string, error) {
	return c.tools.Find(name)
}
