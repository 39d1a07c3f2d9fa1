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

// writeEscaped writes r to b, as an entity if Telegram's HTML parser reads
// it as markup. A switch rather than a package-level strings.Replacer:
// that would be built at init by every process of the binary, the idle
// daemon without Telegram included.
func writeEscaped(b *strings.Builder, r rune) {
	switch r {
	case '&':
		b.WriteString("&amp;")
	case '<':
		b.WriteString("&lt;")
	case '>':
		b.WriteString("&gt;")
	default:
		b.WriteRune(r)
	}
}

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
		writeEscaped(&b, r)
	}
	return b.String() + "…"
}

// isFence reports a Markdown code fence line (```, optionally with a language).
func isFence(line string) bool {
	return strings.HasPrefix(strings.TrimSpace(line), "```")
}

// formatText turns plain text (a model's reply, a command's output) into
// parse_mode HTML messages of at most limit UTF-16 code units each (the
// HTML, markup included, so the text Telegram counts is shorter still).
// All of the text is escaped; the lines between Markdown code fences
// become <pre> blocks.
//
// A text that needs more than one message is cut where a reader expects
// it: at a paragraph (a blank line) when one ends the message at least
// half full, else at a line; a line longer than a message at a space, and
// between two characters only inside a word longer than a message. A
// character is never cut (not a UTF-8 sequence, not a surrogate pair: the
// text is cut between runes). Each message is complete HTML on its own: a
// <pre> block cut in two is closed and reopened, and no entity is ever
// split, since each piece is escaped on its own.
func formatText(text string, limit int) []string {
	text = inert.Text(strings.ReplaceAll(text, "\r\n", "\n"))
	text = strings.TrimRightFunc(strings.TrimLeft(text, "\n"), unicode.IsSpace)
	p := packer{limit: limit}
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if isFence(line) {
			fence = !fence
			continue
		}
		for i, pc := range cutLine(line, limit-len("<pre></pre>")-1) {
			p.add(item{pre: fence, esc: escapeHTML(pc.text), blank: strings.TrimSpace(pc.text) == "", cont: i > 0, sep: pc.sep})
		}
	}
	p.flush()
	return p.out
}

// piece is a part of a line cut by cutLine: its text, and what the cut
// took out before it (the spaces it was cut at, "" inside a word).
type piece struct{ text, sep string }

// cutLine cuts a line whose escaped form is longer than max UTF-16 code
// units into pieces that fit. A piece ends where the characters that fit
// end, when that is the end of a word, else before the last run of spaces
// among them; only a word that would not fit in a piece of its own is cut
// between two characters, as late as it fits.
func cutLine(line string, max int) []piece {
	line = inert.Text(line)
	var out []piece
	sep := ""
	for {
		end, space := fit(line, max)
		if end == len(line) {
			return append(out, piece{line, sep})
		}
		if isSpace(rune(line[end])) { // the characters that fit end a word
			space = end
			for space > 0 && isSpace(rune(line[space-1])) {
				space--
			}
		} else if space > 0 {
			// Cut at the space only if the word cut there fits whole.
			word := line[space:]
			word = strings.TrimLeftFunc(word, isSpace)
			if i := strings.IndexFunc(word, isSpace); i >= 0 {
				word = word[:i]
			}
			if w, _ := fit(word, max); w < len(word) {
				space = -1
			}
		}
		cut, next := end, end
		if space > 0 {
			cut, next = space, space
			for next < len(line) && isSpace(rune(line[next])) {
				next++
			}
		}
		out = append(out, piece{line[:cut], sep})
		if next == len(line) { // nothing but spaces after the cut
			return out
		}
		sep, line = line[cut:next], line[next:]
	}
}

// fit returns where the characters of s whose escaped form fits in max
// UTF-16 code units end (at least one character), and where the last run
// of spaces among them starts (-1 for none).
func fit(s string, max int) (end, space int) {
	n := 0
	space = -1
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		if n+escapedLen(r) > max && end > 0 {
			break
		}
		if isSpace(r) && (end == 0 || !isSpace(rune(s[end-1]))) {
			space = end
		}
		n += escapedLen(r)
		end += size
	}
	return end, space
}

// isSpace reports a character a line may be cut at (dropped at the cut).
func isSpace(r rune) bool { return r == ' ' || r == '\t' }

// item is one escaped line, or piece of a line, of a message.
type item struct {
	pre   bool   // inside a code block
	esc   string // the line, escaped
	blank bool   // shows nothing: a paragraph break
	cont  bool   // a piece after the first of a line (see cutLine)
	sep   string // for cont, what goes between it and the piece before when they share a message
}

// packer fills messages with items, cutting them where formatText says.
type packer struct {
	limit int
	out   []string
	items []item // the current message
	size  int    // its length in UTF-16 code units, markup included
}

// cost is what it takes to add it after prev (nil: first) to a message:
// the line and what separates it (at least a newline), and <pre></pre>
// when it opens a code block.
func cost(prev *item, it item) int {
	c := utf16Len(it.esc) + max(1, utf16Len(it.sep))
	if it.pre && (prev == nil || !prev.pre) {
		c += len("<pre></pre>")
	}
	return c
}

func size(items []item) int {
	n := 0
	for i := range items {
		var prev *item
		if i > 0 {
			prev = &items[i-1]
		}
		n += cost(prev, items[i])
	}
	return n
}

func (p *packer) add(it item) {
	var prev *item
	if n := len(p.items); n > 0 {
		prev = &p.items[n-1]
	}
	p.size += cost(prev, it)
	p.items = append(p.items, it)
	for p.size > p.limit && len(p.items) > 1 {
		// The message ends before the new item, or at the last paragraph
		// break when that leaves it at least half full.
		head := p.items[:len(p.items)-1]
		cut := len(head)
		for i := len(head) - 1; i > 0; i-- {
			if head[i].blank {
				if size(head[:i]) >= p.limit/2 {
					cut = i
				}
				break
			}
		}
		p.emit(head[:cut])
		rest := p.items[cut:]
		for len(rest) > 1 && rest[0].blank {
			rest = rest[1:]
		}
		p.items = append([]item(nil), rest...)
		p.size = size(p.items)
	}
}

func (p *packer) flush() {
	p.emit(p.items)
	p.items, p.size = nil, 0
}

// emit makes one message of items, unless they show nothing.
func (p *packer) emit(items []item) {
	visible := false
	for _, it := range items {
		visible = visible || !it.blank
	}
	if !visible {
		return
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			switch {
			case it.cont:
				b.WriteString(escapeHTML(it.sep))
			case items[i-1].pre && !it.pre:
				b.WriteString("</pre>\n")
			default:
				b.WriteByte('\n')
			}
		}
		if it.pre && (i == 0 || !items[i-1].pre) {
			b.WriteString("<pre>")
		}
		b.WriteString(it.esc)
	}
	if items[len(items)-1].pre {
		b.WriteString("</pre>")
	}
	p.out = append(p.out, strings.Trim(b.String(), "\n"))
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
