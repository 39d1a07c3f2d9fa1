package approvals

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/inert"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// Escape shows s as one line with every character that could hide or
// disguise text as a visible escape (inert.Line): control characters
// (newlines and tabs too), zero-width, bidirectional and other invisible
// characters, invalid bytes; a backslash is doubled.
func Escape(s string) string { return inert.Line(s) }

// maxArg bounds each argument on a card, in bytes of the value.
const maxArg = 2000

// fullHint is how the owner sees every byte of request id's arguments.
func fullHint(id string) string { return "`shelldon approvals show " + id + " --full` shows all" }

// Bound keeps a long value readable: its head and tail around a note that
// says which bytes are not shown.
func Bound(s string, max int) string {
	head, tail, cut := inert.Cut(s, max)
	if !cut {
		return s
	}
	return head + " … " + inert.Note(len(head), len(s)-len(tail), len(s), "") + " … " + tail
}

// RenderArgs shows a call's canonical arguments one per key, in key order,
// escaped (inert.Args): a long one as its head and tail around a note
// saying which bytes are not shown and how to see them all.
// Presenters show every byte with inert.Args(args, 0, "").
func RenderArgs(args string) string { return inert.Args(args, maxArg, fullHint("ID")) }

// render is the owner's view of parked call id, built by the daemon from
// the normalized call: the tool, each argument escaped and bounded, the
// daemon's own facts about it (describe), and the model's words labeled as
// such.
func render(ctx context.Context, id string, p contracts.Pending, describe func(context.Context, contracts.ToolCall) []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tool: %s\n", inert.Name(p.Call.Name))
	b.WriteString(inert.Args(p.Call.Arguments, maxArg, fullHint(id)))
	if describe != nil {
		for _, line := range describe(context.WithValue(ctx, bindingKey{}, p.Binding), p.Call) {
			b.WriteString(Escape(line) + "\n")
		}
	}
	if t := strings.TrimSpace(p.ModelText); t != "" {
		b.WriteString("The model's words (not shelldon's): " + Escape(Bound(t, 500)) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

type bindingKey struct{}

// BindingOf is, in Describe's context, the binding of the call described
// (Pending.Binding: what it resolved to when it was checked, which the
// approval covers), "" for none.
func BindingOf(ctx context.Context) string {
	b, _ := ctx.Value(bindingKey{}).(string)
	return b
}

// ParkedReply is a turn's reply when it stopped at the request v.
func ParkedReply(v View) string {
	return fmt.Sprintf("This needs your approval (request %s, expires %s):\n%s",
		v.ID, v.ExpiresAt.Local().Format("15:04"), v.Summary)
}

// renderPromotion is the owner's view of a proposed tool: all of it,
// escaped. onNetwork (nil: none) names the owner's http.allow_hosts entry
// of each host the tool asks for that is on the owner's network.
func renderPromotion(m selfcode.Manifest, p contracts.Proposal, onNetwork func(host string) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "New tool: %s (version %d, %s)\n", inert.Name(m.Name), m.Version, inert.Name(m.Language))
	if m.Imported != nil {
		renderImport(&b, m.Imported)
	}
	fmt.Fprintf(&b, "Description: %s\n", Escape(p.Description))
	fmt.Fprintf(&b, "Parameters: %s\n", Escape(string(p.Parameters)))
	caps := "none"
	if len(p.Capabilities) > 0 {
		raw, _ := json.Marshal(p.Capabilities)
		caps = string(raw)
	}
	fmt.Fprintf(&b, "Capabilities: %s\n", Escape(caps))
	if onNetwork != nil {
		for _, h := range p.Capabilities["http"] {
			if rule := onNetwork(h); rule != "" {
				fmt.Fprintf(&b, "On your network: %s is a host of your network (listed in http.allow_hosts: %s); the tool may reach it there, on those ports only\n", Escape(h), Escape(rule))
			}
		}
	}
	fmt.Fprintf(&b, "Content hash: %s\n", m.Hash)
	fmt.Fprintf(&b, "Gate: %s\n", Escape(p.Gate))
	fmt.Fprintf(&b, "--- code (%d bytes) ---\n%s\n--- test (%d bytes) ---\n%s", len(p.Code), escapeLines(p.Code), len(p.Test), escapeLines(p.Test))
	return b.String()
}

// escapeLines escapes each line of source but keeps the lines (and tabs).
func escapeLines(src string) string { return inert.Block(src, "") }

// renderImport is the part of a promotion card that says the version came
// in a bundle from another machine: the bundle's file, which version it was
// there, and the versions the bundle holds, none approved here. All of it
// is the bundle's word, hostile text: every value is escaped.
func renderImport(b *strings.Builder, imp *selfcode.Import) {
	fmt.Fprintf(b, "Imported from the bundle %s (exported %s, bundle hash %s): version %d there. Not written by the model here; its gate ran here.\n",
		inert.Name(imp.Bundle), imp.ExportedAt.UTC().Format("2006-01-02 15:04 UTC"), Escape(Bound(imp.BundleHash, 64)), imp.SourceVersion)
	fmt.Fprintf(b, "The bundle's history (%d version(s), approved on the other machine, not here):\n", len(imp.History))
	for _, v := range imp.History {
		by := ""
		if v.ApprovedBy != "" {
			by = " by " + Escape(Bound(v.ApprovedBy, 64))
		}
		fmt.Fprintf(b, "  v%d %s, approved there %s%s, hash %s\n", v.Version, inert.Name(v.Language),
			v.ApprovedAt.UTC().Format("2006-01-02 15:04 UTC"), by, Escape(Bound(v.Hash, 64)))
	}
}
