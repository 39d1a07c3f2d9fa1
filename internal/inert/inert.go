// Package inert shows text that a model, a tool or anyone but shelldon
// controls so that a person reads it as text and nothing else: no control
// character reaches a terminal (an escape sequence cannot clear the screen
// or draw a fake card), no bidirectional control reorders what is shown,
// no zero-width or invisible character hides a difference, and invalid
// UTF-8 shows as the bytes it is. Each presenter escapes at its own sink;
// data (the store, the JSON API) stays as it was.
//
// There is one function per kind of sink:
//   - Line, Short and Name: a one-line field (a tool name, a table cell):
//     newlines and tabs are escaped too, and backslashes doubled, so the
//     field stays one line and reads back unambiguously.
//   - Block: a multi-line value shown as lines (an argument, code, a
//     skill): newlines and tabs keep their shape, each line behind an
//     optional gutter that no line of the value can forge; backslashes
//     are doubled.
//   - Text: prose a person reads but does not approve (the model's reply):
//     lines and tabs kept, backslashes kept, everything else as in Block.
//   - HTML: Text for Telegram's parse_mode HTML.
//
// Args lays out a call's arguments with Line and Block, bounded with a
// note saying which bytes are not shown. The characters are those
// internal/hidden names, plus every control character and invalid byte.
package inert

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/hidden"
	"github.com/shelldon/shelldon/internal/lazy"
)

// mode is how newlines, tabs and backslashes are shown.
type mode int

const (
	oneLine mode = iota // newline and tab escaped, backslash doubled
	lines               // newline and tab kept, backslash doubled
	prose               // newline and tab kept, backslash kept
)

// escapeRune is the visible form of r in mode m, or "" when r is shown as
// itself.
func escapeRune(r rune, m mode) string {
	switch {
	case r == '\n' && m == oneLine:
		return `\n`
	case r == '\t' && m == oneLine:
		return `\t`
	case r == '\n' || r == '\t':
		return ""
	case r == '\r':
		return `\r`
	case r == '\\' && m != prose:
		return `\\`
	case r < 0x80 && hidden.Describe(r) != "": // C0 and DEL
		return fmt.Sprintf(`\x%02x`, r)
	case hidden.Describe(r) != "": // C1, format (bidi, zero-width), separators, private use, fillers
		if r > 0xffff {
			return fmt.Sprintf(`\U%08x`, r)
		}
		return fmt.Sprintf(`\u%04x`, r)
	}
	return ""
}

// each calls f with the visible form of each character of s, in order:
// an invalid byte is shown as \xHH (a C1 character, which is valid, as
// \u00HH, so the two never read alike).
func each(s string, m mode, f func(piece string) bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		piece := s[i : i+size]
		if r == utf8.RuneError && size == 1 {
			piece = fmt.Sprintf(`\x%02x`, s[i])
		} else if e := escapeRune(r, m); e != "" {
			piece = e
		}
		if !f(piece) {
			return
		}
		i += size
	}
}

func render(s string, m mode) string {
	if clean(s, m) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	each(s, m, func(p string) bool { b.WriteString(p); return true })
	return b.String()
}

// clean reports whether s shows as itself in mode m.
func clean(s string, m mode) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c < 0x20 || c == 0x7f || c == '\\' && m != prose {
			return false
		}
	}
	return true
}

// Line shows s as one line: every control character (newline and tab
// too), bidirectional and zero-width character, other invisible character
// and invalid byte is escaped, and a backslash is doubled.
func Line(s string) string { return render(s, oneLine) }

// Short is Line cut to at most max characters, ending in "…" when cut;
// an escape is never cut in two. max < 1 means no bound.
func Short(s string, max int) string {
	if max < 1 {
		return Line(s)
	}
	// Write up to max characters, remembering where max-1 ended (room for
	// the ellipsis); stop as soon as the whole cannot fit.
	var b strings.Builder
	n, keep, over := 0, 0, false
	each(s, oneLine, func(p string) bool {
		w := utf8.RuneCountInString(p)
		if n+w > max {
			over = true
			return false
		}
		if n+w <= max-1 {
			keep = b.Len() + len(p)
		}
		n += w
		b.WriteString(p)
		return true
	})
	if !over {
		return b.String()
	}
	return b.String()[:keep] + "…"
}

// maxName bounds a name shown by Name, in characters.
const maxName = 64

// Name shows a name (a tool, a chat, a skill, a request id) as itself when
// it is a plain name (1 to 64 letters, digits and _.:@-), and otherwise
// quoted, escaped and bounded, so that a name the model made up can
// neither pass for another nor carry text of its own.
func Name(s string) string {
	if plainName(s) {
		return s
	}
	return `"` + strings.ReplaceAll(Short(s, maxName), `"`, `\"`) + `"`
}

func plainName(s string) bool {
	if s == "" || len(s) > maxName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.:@-", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// Block shows s as lines, each behind gutter ("" for none): newlines and
// tabs keep their shape, everything else is escaped as in Line. Since
// every line of s gets the gutter, no line can pass for text outside the
// block. A carriage return shows as \r, also before a newline.
func Block(s, gutter string) string {
	body := render(s, lines)
	if gutter == "" {
		return body
	}
	return gutter + strings.ReplaceAll(body, "\n", "\n"+gutter)
}

// Text shows prose that a person reads but does not approve (a model's
// reply): lines and tabs kept, backslashes kept (so code in a reply reads
// as written), every other control, bidirectional, zero-width or
// invisible character and invalid byte escaped. Text of text is the same
// text.
func Text(s string) string { return render(s, prose) }

// HTML shows s as Text in a Telegram parse_mode HTML message: the three
// characters its parser reads as markup are escaped as entities.
func HTML(s string) string { return htmlEscaper().Replace(Text(s)) }

// htmlEscaper is built on first use: a package-level replacer is init work
// for every process of the binary, the idle daemon included (package lazy).
func htmlEscaper() *strings.Replacer {
	return htmlEscaperOnce.Get(func() *strings.Replacer {
		return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	})
}

var htmlEscaperOnce lazy.Value[*strings.Replacer]
