package telegram

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/inert"
)

const (
	// maxMessage bounds one message's HTML in UTF-16 code units, the way
	// Telegram counts, with room to spare under its 4096 limit. The markup
	// only adds to the count, so the visible text is shorter still.
	maxMessage = 4000
	// docThreshold is the reply size (bytes) above which it goes as a file.
	docThreshold = 12 << 10
	// captionMax bounds a document's caption (Telegram: 1024).
	captionMax = 1000
)

// escapeHTML makes s safe as text in a parse_mode HTML message
// (inert.HTML): controls, bidirectional, zero-width and other invisible
// characters and invalid bytes are shown escaped, and the three characters
// Telegram's parser reads as markup are entities.
func escapeHTML(s string) string { return inert.HTML(s) }

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escapedLen is the length of r escaped, in UTF-16 code units.
func escapedLen(r rune) int {
	switch r {
	case '&':
		return 5
	case '<', '>':
		return 4
	}
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// fitEscaped escapes s, cut (with an ellipsis) so that the result is at
// most max UTF-16 code units. It never cuts inside an entity.
func fitEscaped(s string, max int) string {
	s = inert.Text(s)
	n := 0
	for _, r := range s {
		n += escapedLen(r)
	}
	if n <= max {
		return escapeHTML(s)
	}
	var b strings.Builder
	n = 0
	for _, r := range s {
		if n+escapedLen(r) > max-1 {
			break
		}
		n += escapedLen(r)
		b.WriteString(htmlEscaper.Replace(string(r)))
	}
	return b.String() + "…"
}

// isFence reports a Markdown code fence line (```, optionally with a language).
func isFence(line string) bool {
	return strings.HasPrefix(strings.TrimSpace(line), "```")
}

// formatText turns plain text (a model's reply, a command's output) into
// parse_mode HTML messages of at most limit UTF-16 code units each. All of
// the text is escaped; the lines between Markdown code fences become
// <pre> blocks. Messages are cut on line boundaries (a line longer than a
// message is cut between characters); each message is complete HTML on its
// own: a <pre> block cut in two is closed and reopened, and no entity is
// ever split, since each piece is escaped on its own.
func formatText(text string, limit int) []string {
	text = inert.Text(strings.ReplaceAll(text, "\r\n", "\n"))
	text = strings.TrimRightFunc(strings.TrimLeft(text, "\n"), unicode.IsSpace)
	var p packer
	p.limit = limit
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if isFence(line) {
			fence = !fence
			continue
		}
		for _, piece := range cutLine(line, limit-len("<pre></pre>")-1) {
			p.add(fence, escapeHTML(piece), strings.TrimSpace(piece) != "")
		}
	}
	p.flush()
	return p.out
}

// cutLine cuts a line whose escaped form is longer than max into pieces
// that fit, between characters.
func cutLine(line string, max int) []string {
	line = inert.Text(line)
	n := 0
	for _, r := range line {
		n += escapedLen(r)
	}
	if n <= max {
		return []string{line}
	}
	var out []string
	start, n := 0, 0
	for i, r := range line {
		if n+escapedLen(r) > max {
			out = append(out, line[start:i])
			start, n = i, 0
		}
		n += escapedLen(r)
	}
	return append(out, line[start:])
}

// packer fills messages with escaped lines, grouped in plain and <pre>
// segments.
type packer struct {
	limit   int
	out     []string
	segs    []segment
	size    int
	visible bool // the current message shows something besides blanks
}

type segment struct {
	pre   bool
	lines []string
}

func (p *packer) add(pre bool, esc string, visible bool) {
	cost := func() int {
		c := utf16Len(esc) + 1
		if pre && (len(p.segs) == 0 || !p.segs[len(p.segs)-1].pre) {
			c += len("<pre></pre>")
		}
		return c
	}
	if p.size > 0 && p.size+cost() > p.limit {
		p.flush()
	}
	p.size += cost()
	if n := len(p.segs); n > 0 && p.segs[n-1].pre == pre {
		p.segs[n-1].lines = append(p.segs[n-1].lines, esc)
	} else {
		p.segs = append(p.segs, segment{pre: pre, lines: []string{esc}})
	}
	p.visible = p.visible || visible
}

func (p *packer) flush() {
	if p.visible {
		var b strings.Builder
		for i, s := range p.segs {
			if i > 0 {
				b.WriteByte('\n')
			}
			body := strings.Join(s.lines, "\n")
			if s.pre {
				body = "<pre>" + body + "</pre>"
			}
			b.WriteString(body)
		}
		p.out = append(p.out, strings.Trim(b.String(), "\n"))
	}
	p.segs, p.size, p.visible = nil, 0, false
}

// headLines is the start of s: whole lines, at most max bytes, and whether
// anything was left out.
func headLines(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := strings.LastIndexByte(s[:max], '\n')
	if cut <= 0 {
		cut = max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	return s[:cut], true
}

// oneLine flattens s to one line of at most max runes, everything
// escaped as inert.Text shows it.
func oneLine(s string, max int) string {
	s = inert.Text(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}
