package approvals

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/hidden"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// Escape shows every character that could hide or disguise text as a
// visible escape: control characters (newlines and tabs too, so one value
// stays one line), zero-width characters, and bidirectional controls.
func Escape(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden.Describe(r) != "":
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Bound keeps a long value readable: its head and tail around the size.
func Bound(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := max*2/3, max/3
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return fmt.Sprintf("%s … [%d bytes in all, %d not shown] … %s", s[:head], len(s), start-head, s[start:])
}

// RenderArgs shows a call's canonical arguments one per line, escaped and
// bounded, in key order.
func RenderArgs(args string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		return "  arguments: " + Bound(Escape(args), 2000) + "\n"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v, ok := m[k].(string)
		if !ok {
			raw, _ := json.Marshal(m[k])
			v = string(raw)
		}
		fmt.Fprintf(&b, "  %s: %s\n", Escape(k), Bound(Escape(v), 2000))
	}
	return b.String()
}

// render is the owner's view of a parked call, built by the daemon from the
// normalized call: the tool, each argument escaped and bounded, the
// daemon's own facts about it (describe), and the model's words labeled as
// such.
func render(ctx context.Context, p contracts.Pending, describe func(context.Context, contracts.ToolCall) []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tool: %s\n", p.Call.Name)
	b.WriteString(RenderArgs(p.Call.Arguments))
	if describe != nil {
		for _, line := range describe(ctx, p.Call) {
			b.WriteString(Escape(line) + "\n")
		}
	}
	if t := strings.TrimSpace(p.ModelText); t != "" {
		b.WriteString("The model's words (not shelldon's): " + Bound(Escape(t), 500) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// ParkedReply is a turn's reply when it stopped at the request v.
func ParkedReply(v View) string {
	return fmt.Sprintf("This needs your approval (request %s, expires %s):\n%s",
		v.ID, v.ExpiresAt.Local().Format("15:04"), v.Summary)
}

// renderPromotion is the owner's view of a proposed tool: all of it, escaped.
func renderPromotion(m selfcode.Manifest, p contracts.Proposal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "New tool: %s (version %d, %s)\n", m.Name, m.Version, m.Language)
	fmt.Fprintf(&b, "Description: %s\n", Escape(p.Description))
	fmt.Fprintf(&b, "Parameters: %s\n", Escape(string(p.Parameters)))
	caps := "none"
	if len(p.Capabilities) > 0 {
		raw, _ := json.Marshal(p.Capabilities)
		caps = string(raw)
	}
	fmt.Fprintf(&b, "Capabilities: %s\n", Escape(caps))
	fmt.Fprintf(&b, "Content hash: %s\n", m.Hash)
	fmt.Fprintf(&b, "Gate: %s\n", Escape(p.Gate))
	fmt.Fprintf(&b, "--- code (%d bytes) ---\n%s\n--- test (%d bytes) ---\n%s", len(p.Code), escapeLines(p.Code), len(p.Test), escapeLines(p.Test))
	return b.String()
}

// escapeLines escapes each line of source but keeps the lines.
func escapeLines(src string) string {
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return strings.Join(lines, "\n")
}
