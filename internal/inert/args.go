package inert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ArgGutter is the gutter of a multi-line argument's lines in Args.
const ArgGutter = "    | "

// Args shows a call's arguments (a JSON object) one per key, in key order,
// each line starting with two spaces: a one-line value as "key: value"
// (Line), a string holding newlines as "key: (N lines, M bytes)" followed
// by its lines behind ArgGutter (Block). A value longer than max bytes
// shows its head and tail around a note that says how many bytes are not
// shown and which, ending with hint (how to see them all); max < 1 shows
// every byte. Arguments that are not a JSON object are shown as one value.
func Args(args string, max int, hint string) string {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil || dec.More() {
		var b strings.Builder
		value(&b, "arguments", args, max, hint)
		return b.String()
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
			v = compactJSON(m[k])
		}
		value(&b, k, v, max, hint)
	}
	return b.String()
}

// compactJSON is v as compact JSON, without HTML escapes.
func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// value writes one argument.
func value(b *strings.Builder, key, v string, max int, hint string) {
	head, tail, cut := Cut(v, max)
	if !strings.Contains(v, "\n") {
		fmt.Fprintf(b, "  %s: %s", Line(key), Line(head))
		if cut {
			fmt.Fprintf(b, " … %s … %s", Note(len(head), len(v)-len(tail), len(v), hint), Line(tail))
		}
		b.WriteString("\n")
		return
	}
	fmt.Fprintf(b, "  %s: (%s lines, %s bytes)\n", Line(key), Count(strings.Count(v, "\n")+1), Count(len(v)))
	b.WriteString(Block(head, ArgGutter) + "\n")
	if cut {
		fmt.Fprintf(b, "    %s\n%s\n", Note(len(head), len(v)-len(tail), len(v), hint), Block(tail, ArgGutter))
	}
}

// Cut splits a value longer than max bytes into its head and tail, about
// max/2 bytes each, never inside a UTF-8 character; cut is false, and
// head the whole value, when it fits or max < 1.
func Cut(v string, max int) (head, tail string, cut bool) {
	if max < 1 || len(v) <= max {
		return v, "", false
	}
	h, start := max/2, len(v)-max/2
	// Move off a character's continuation bytes (at most three: past
	// that, the bytes are invalid and shown one by one anyway).
	for i := 0; i < utf8.UTFMax-1 && h > 0 && !utf8.RuneStart(v[h]); i++ {
		h--
	}
	for i := 0; i < utf8.UTFMax-1 && start < len(v) && !utf8.RuneStart(v[start]); i++ {
		start++
	}
	return v[:h], v[start:], true
}

// Note says plainly what a cut value leaves out: the bytes [from, to) of
// total, numbered from 1 as a person counts them, and hint.
func Note(from, to, total int, hint string) string {
	s := fmt.Sprintf("[%s bytes not shown: bytes %s-%s of %s", Count(to-from), Count(from+1), Count(to), Count(total))
	if hint != "" {
		s += "; " + Line(hint)
	}
	return s + "]"
}

// Count writes n with thousands separators: 6,000.
func Count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
