package starlarktool

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"go.starlark.net/resolve"
	"go.starlark.net/syntax"

	"github.com/shelldon/shelldon/internal/hidden"
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
		what := hiddenChar(r)
		if what == "" && hidden.IsVariationSelector(r) && !(r == 0xFE0E || r == 0xFE0F) || (r == 0xFE0E || r == 0xFE0F) && (prev < 0x80 || hidden.IsVariationSelector(prev)) {
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

// hiddenChar describes r when a source may not hold it, or returns ""; a
// carriage return is allowed (CRLF sources).
func hiddenChar(r rune) string {
	if r == '\r' {
		return ""
	}
	return hidden.Describe(r)
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
