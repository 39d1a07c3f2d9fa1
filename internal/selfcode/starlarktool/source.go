package starlarktool

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.starlark.net/resolve"
	"go.starlark.net/syntax"
)

// MaxSource is the size limit of a tool's source and of its test, in bytes.
const MaxSource = 64 << 10

// File names shown in positions and backtraces.
const (
	toolFile = "tool.star"
	testFile = "tool_test.star"
)

// fileOptions allow set() and nothing else beyond the core language: no
// while loops, no recursion, no top-level if or for, no reassigned globals.
func fileOptions() *syntax.FileOptions { return &syntax.FileOptions{Set: true} }

// maxProblems bounds how many problems one refusal lists.
const maxProblems = 10

// problems collects refusals, each with a line:col when one is known.
type problems struct {
	list []problem
}

type problem struct {
	pos syntax.Position
	msg string
}

func (p *problems) add(pos syntax.Position, format string, args ...any) {
	p.list = append(p.list, problem{pos, fmt.Sprintf(format, args...)})
}

func (p *problems) empty() bool { return len(p.list) == 0 }

// err returns the problems in source order as one error, or nil.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	sort.SliceStable(p.list, func(i, j int) bool {
		a, b := p.list[i].pos, p.list[j].pos
		return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
	})
	var b strings.Builder
	for i, pr := range p.list {
		if i == maxProblems {
			fmt.Fprintf(&b, "\n(and %d more problems)", len(p.list)-maxProblems)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(at(pr.pos))
		b.WriteString(pr.msg)
	}
	return errors.New(b.String())
}

// at renders a position as "line L:C: ", or nothing when it is unknown.
func at(pos syntax.Position) string {
	switch {
	case pos.Line > 0 && pos.Col > 0:
		return fmt.Sprintf("line %d:%d: ", pos.Line, pos.Col)
	case pos.Line > 0:
		return fmt.Sprintf("line %d: ", pos.Line)
	}
	return ""
}

// checkText refuses an oversized source, invalid UTF-8, control characters
// other than \n, \t and \r, and hidden characters, wherever they are.
func checkText(src []byte) error {
	if len(src) > MaxSource {
		return fmt.Errorf("the source is %d bytes; the limit is %d (64 KiB)", len(src), MaxSource)
	}
	var first string
	count := 0
	line, col := 1, 1
	prev := rune(0)
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size == 1 {
			return fmt.Errorf("line %d:%d: invalid UTF-8 (byte 0x%02x); the source must be UTF-8 text", line, col, src[i])
		}
		what := hidden(r)
		if what == "" && isVariationSelector(r) && !(r == 0xFE0E || r == 0xFE0F) || (r == 0xFE0E || r == 0xFE0F) && (prev < 0x80 || isVariationSelector(prev)) {
			// One text or emoji presentation selector after a non-ASCII
			// character is how emoji are written; runs of selectors can
			// carry hidden text.
			what = "the variation selector"
		}
		prev = r
		if what != "" {
			if count == 0 {
				first = fmt.Sprintf("line %d:%d: %s U+%04X is not allowed anywhere in the source, comments and strings included; "+
					"delete it (write \\u%04x in a string if the character is really wanted)", line, col, what, r, r)
			}
			count++
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	switch {
	case count == 1:
		return errors.New(first)
	case count > 1:
		return fmt.Errorf("%s (%d such characters in all)", first, count)
	}
	return nil
}

// hiddenNames names the characters used to hide code from a reader.
var hiddenNames = map[rune]string{
	0x00AD: "the soft hyphen (invisible)",
	0x034F: "the combining grapheme joiner (invisible)",
	0x061C: "the bidirectional control ARABIC LETTER MARK",
	0x115F: "the invisible filler HANGUL CHOSEONG FILLER",
	0x1160: "the invisible filler HANGUL JUNGSEONG FILLER",
	0x180E: "the invisible MONGOLIAN VOWEL SEPARATOR",
	0x200B: "the zero-width character ZERO WIDTH SPACE",
	0x200C: "the zero-width character ZERO WIDTH NON-JOINER",
	0x200D: "the zero-width character ZERO WIDTH JOINER",
	0x200E: "the bidirectional control LEFT-TO-RIGHT MARK",
	0x200F: "the bidirectional control RIGHT-TO-LEFT MARK",
	0x202A: "the bidirectional control LEFT-TO-RIGHT EMBEDDING",
	0x202B: "the bidirectional control RIGHT-TO-LEFT EMBEDDING",
	0x202C: "the bidirectional control POP DIRECTIONAL FORMATTING",
	0x202D: "the bidirectional control LEFT-TO-RIGHT OVERRIDE",
	0x202E: "the bidirectional control RIGHT-TO-LEFT OVERRIDE",
	0x2060: "the zero-width character WORD JOINER",
	0x2066: "the bidirectional control LEFT-TO-RIGHT ISOLATE",
	0x2067: "the bidirectional control RIGHT-TO-LEFT ISOLATE",
	0x2068: "the bidirectional control FIRST STRONG ISOLATE",
	0x2069: "the bidirectional control POP DIRECTIONAL ISOLATE",
	0x3164: "the invisible filler HANGUL FILLER",
	0xFEFF: "the zero-width character ZERO WIDTH NO-BREAK SPACE (byte-order mark)",
	0xFFA0: "the invisible filler HALFWIDTH HANGUL FILLER",
}

// hidden describes r when it may not appear in a source, or returns "".
func hidden(r rune) string {
	switch r {
	case '\n', '\t', '\r':
		return ""
	}
	if name, ok := hiddenNames[r]; ok {
		return name
	}
	switch {
	case unicode.Is(unicode.Cc, r):
		return "the control character"
	case unicode.Is(unicode.Cf, r):
		return "the invisible format character"
	case unicode.In(r, unicode.Zl, unicode.Zp):
		return "the line or paragraph separator"
	case unicode.Is(unicode.Co, r):
		return "the private-use character"
	}
	return ""
}

func isVariationSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF
}

// parse parses src as a Starlark file, the syntax error placed by line.
func parse(filename string, src []byte) (*syntax.File, error) {
	f, err := fileOptions().Parse(filename, src, 0)
	if err != nil {
		var se syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%ssyntax error: %s", at(se.Pos), se.Msg)
		}
		return nil, fmt.Errorf("syntax error: %v", err)
	}
	return f, nil
}

// resolveFile runs the resolver's static checks (undefined names, while,
// top-level control flow, reassigned globals) and adds what it finds.
func resolveFile(f *syntax.File, isPredeclared, isUniversal func(string) bool, p *problems) {
	err := resolve.File(f, isPredeclared, isUniversal)
	var list resolve.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			msg := e.Msg
			if strings.Contains(msg, "while loops") {
				msg += "; use a for loop over a bounded range"
			}
			p.add(e.Pos, "%s", msg)
		}
	} else if err != nil {
		p.add(syntax.Position{}, "%v", err)
	}
}
