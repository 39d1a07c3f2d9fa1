package core

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/hidden"
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
