package inert

import (
	"fmt"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/hidden"
)

// Raw names the first thing in out that a person's screen would act on or
// that hides text (a control, bidirectional, zero-width or other invisible
// character, or invalid UTF-8), or returns "" when out is inert. Newlines
// and tabs are allowed unless oneLine. Tests of presenters use it.
func Raw(out string, oneLine bool) string {
	if !utf8.ValidString(out) {
		return "invalid UTF-8"
	}
	for _, r := range out {
		if (r == '\n' || r == '\t') && !oneLine {
			continue
		}
		if r == '\n' || r == '\t' || hidden.Describe(r) != "" {
			return fmt.Sprintf("U+%04X (%s)", r, describe(r))
		}
	}
	return ""
}

func describe(r rune) string {
	switch r {
	case '\n':
		return "a newline"
	case '\t':
		return "a tab"
	}
	return hidden.Describe(r)
}
