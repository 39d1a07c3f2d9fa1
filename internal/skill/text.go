package skill

import (
	"fmt"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/hidden"
)

// checkText refuses invalid UTF-8, control characters other than \n and
// \t, and characters that hide or reorder text: zero-width, bidirectional
// and other invisible format characters, line and paragraph separators,
// private-use characters and runs of variation selectors. When firstLine
// is above 0 the error starts with "line L:C: ", counted from firstLine.
func checkText(s string, firstLine int) error {
	line, col := firstLine, 1
	prev := rune(0)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		where := func() string {
			if firstLine > 0 {
				return fmt.Sprintf("line %d:%d: ", line, col)
			}
			return ""
		}
		if r == utf8.RuneError && size == 1 {
			return fmt.Errorf("%sinvalid UTF-8 (byte 0x%02x); a skill must be UTF-8 text", where(), s[i])
		}
		what := hiddenChar(r)
		if what == "" && hidden.IsVariationSelector(r) && (prev < 0x80 || hidden.IsVariationSelector(prev) || r > 0xFE0F) {
			// One selector after a non-ASCII character is how emoji are
			// written; runs of them can carry hidden text.
			what = "the variation selector"
		}
		if what != "" {
			return fmt.Errorf("%s%s U+%04X is not allowed in a skill; delete it", where(), what, r)
		}
		prev = r
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return nil
}

// hiddenChar describes r when a skill may not hold it, or returns "".
func hiddenChar(r rune) string { return hidden.Describe(r) }
