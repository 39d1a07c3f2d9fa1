package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/lazy"
)

// MaxArgs caps the output of JSONArgs, in bytes.
const MaxArgs = 4 << 10

// sensitiveWords mark a key whose value is a credential, matched within the
// key case-folded, with '-', '_', '.' and spaces removed ("X-Api-Key" holds
// "apikey").
var sensitiveWords = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey",
	"authorization", "cookie", "credential", "privatekey",
}

// SensitiveKey reports whether a value stored under this key (a JSON key, an
// HTTP header, a variable name) is a credential. "auth" counts, "author" does
// not.
func SensitiveKey(key string) bool {
	k := strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(key))
	for _, w := range sensitiveWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return strings.Contains(strings.ReplaceAll(k, "author", ""), "auth")
}

// JSONArgs redacts a tool call's arguments for the audit log and for display.
// If args is a JSON object or array, every value under a SensitiveKey becomes
// Marker and every other string goes through String and the assignment
// patterns (NAME=value, "key": "value" with a sensitive name); the result is
// compact JSON with the keys in their original order. Anything else (the
// model may send broken JSON) is treated as text the same way. The output is
// at most MaxArgs bytes, cut on a character boundary and marked
// "…[truncated N bytes]".
func (r *Redactor) JSONArgs(args string) string {
	out, ok := r.walkJSON(args)
	if !ok {
		out = r.text(args)
	} else if r.leaks(out) {
		// A secret spelled across JSON syntax; give up the structure.
		out = r.String(out)
	}
	out = capBytes(out, MaxArgs)
	if r.leaks(out) { // the cut marker completed a secret
		return Marker
	}
	return out
}

// text is String plus the assignment patterns, for argument text, where
// mangling code that merely looks like an assignment is acceptable.
func (r *Redactor) text(s string) string {
	return r.fixed(s, func(s string) string {
		s = r.once(s)
		for _, p := range assignments() {
			s = p.apply(s)
		}
		return s
	})
}

// assignments are credentials given by name: "password": "x" (also with the
// closing quote cut off), PGPASSWORD=x, token: x.
func assignments() []pattern {
	return assignmentsOnce.Get(func() []pattern {
		return []pattern{
			{
				re:    regexp.MustCompile(`"((?:[^"\\]|\\.){1,64})"(\s*:\s*")(?:[^"\\]|\\.)*`),
				hints: []string{`"`},
				fn: func(m []string) string {
					if !SensitiveKey(m[1]) {
						return m[0]
					}
					return `"` + m[1] + `"` + m[2] + Marker
				},
			},
			{
				re:    regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_.\-]{0,63})(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s"'&;,\[\]{}()<>]+)`),
				hints: []string{"=", ":"},
				fn: func(m []string) string {
					if !SensitiveKey(m[1]) || strings.HasPrefix(m[3], "//") { // scheme://
						return m[0]
					}
					return m[1] + m[2] + Marker
				},
			},
		}
	})
}

var assignmentsOnce lazy.Value[[]pattern]

// walkJSON rewrites a JSON object or array token by token, redacting as
// JSONArgs describes. It reports false if args is not one.
func (r *Redactor) walkJSON(args string) (string, bool) {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" || (trimmed[0] != '{' && trimmed[0] != '[') || !json.Valid([]byte(trimmed)) {
		return "", false
	}
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	w := newWriter()

	type frame struct {
		object  bool
		wantKey bool // in an object, before a key
		n       int  // members written
	}
	var (
		stack     []frame
		sensitive bool // the next value is under a sensitive key
		skip      int  // depth inside a sensitive value being dropped
	)
	valueDone := func() {
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", false
		}
		d, isDelim := tok.(json.Delim)
		if skip > 0 {
			if isDelim && (d == '{' || d == '[') {
				skip++
			} else if isDelim {
				skip--
			}
			if skip == 0 {
				valueDone()
			}
			continue
		}
		if isDelim && (d == '}' || d == ']') {
			w.b.WriteByte(byte(d))
			stack = stack[:len(stack)-1]
			valueDone()
			continue
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			key, _ := tok.(string) // json.Valid: a key is a string
			if top.n > 0 {
				w.b.WriteByte(',')
			}
			top.n++
			top.wantKey = false
			w.str(r.text(key))
			w.b.WriteByte(':')
			sensitive = SensitiveKey(key)
			continue
		}
		if top != nil && !top.object {
			if top.n > 0 {
				w.b.WriteByte(',')
			}
			top.n++
		}
		if sensitive {
			sensitive = false
			w.str(Marker)
			if isDelim {
				skip = 1
			} else {
				valueDone()
			}
			continue
		}
		switch v := tok.(type) {
		case json.Delim:
			w.b.WriteByte(byte(v))
			stack = append(stack, frame{object: v == '{', wantKey: v == '{'})
			continue
		case string:
			w.str(r.text(v))
		case json.Number:
			if red := r.String(string(v)); red != string(v) {
				w.str(red)
			} else {
				w.b.WriteString(string(v))
			}
		case bool:
			fmt.Fprint(&w.b, v)
		case nil:
			w.b.WriteString("null")
		}
		valueDone()
	}
	return w.b.String(), true
}

// writer builds compact JSON; strings are escaped as encoding/json does, but
// without escaping <, > and &.
type writer struct {
	b   strings.Builder
	tmp bytes.Buffer
	enc *json.Encoder
}

func newWriter() *writer {
	w := &writer{}
	w.enc = json.NewEncoder(&w.tmp)
	w.enc.SetEscapeHTML(false)
	return w
}

func (w *writer) str(s string) {
	w.tmp.Reset()
	_ = w.enc.Encode(s) // a string always encodes
	w.b.Write(bytes.TrimSuffix(w.tmp.Bytes(), []byte("\n")))
}

// capBytes cuts s to at most limit bytes, marker included, on a character
// boundary.
func capBytes(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	marker := func(n int) string { return fmt.Sprintf("…[truncated %d bytes]", n) }
	keep := limit - len(marker(len(s)))
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	keep = max(keep, 0)
	return s[:keep] + marker(len(s)-keep)
}
