package gitguard

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrRefused is wrapped by every error of Split and Parse that refuses the
// model's arguments (as opposed to a PathCheck error, which is wrapped as
// it came). The message says what was refused and why, for the model.
var ErrRefused = errors.New("refused")

// maxInput bounds the argument string, maxWords the words in it.
const (
	maxInput = 64 << 10
	maxWords = 256
)

// refusef returns an error wrapping ErrRefused with a message for the model.
func refusef(format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...)}
}

type refusal struct{ msg string }

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return ErrRefused }

const noShell = "no shell runs the git tool: its argument is only split into words (quotes and backslashes work as in sh), nothing is expanded or redirected"

// Split splits the git tool's argument string into words the way a POSIX
// shell would split a simple command, without expanding anything: single
// quotes keep everything literally; double quotes keep everything but
// \" \\ \$ and \` (which stand for the second character); a backslash
// outside quotes keeps the next character literally. What a shell would
// treat as an operator or an expansion (; | & ` < > ( ) $( ${ $name, a
// leading # or ~) is refused rather than passed on as text, so that the
// words the owner approves mean what the model meant. Control characters
// other than space and tab (newline, NUL, ...) are refused anywhere, as is
// invalid UTF-8; other Unicode is kept. A leading word "git" is dropped.
func Split(args string) ([]string, error) {
	words, err := split(args)
	if err != nil {
		return nil, fmt.Errorf("git: %w", err)
	}
	return words, nil
}

func split(args string) ([]string, error) {
	if len(args) > maxInput {
		return nil, refusef("the argument is %d bytes; at most %d", len(args), maxInput)
	}
	if !utf8.ValidString(args) {
		return nil, refusef("the argument is not valid UTF-8")
	}
	var (
		words  []string
		word   strings.Builder
		inWord bool
	)
	end := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	const (
		outside = iota
		single
		double
	)
	state := outside
	for i := 0; i < len(args); {
		r, size := utf8.DecodeRuneInString(args[i:])
		if err := checkControl(r, i); err != nil {
			return nil, err
		}
		next := args[i+size:]
		switch state {
		case single:
			if r == '\'' {
				state = outside
			} else {
				word.WriteRune(r)
			}
		case double:
			switch {
			case r == '"':
				state = outside
			case r == '\\' && next != "" && strings.ContainsRune("\"\\$`", rune(next[0])):
				word.WriteByte(next[0])
				size++
			case r == '`':
				return nil, refusef("` at byte %d would run a command in a shell; %s", i, noShell)
			case r == '$' && expands(next, true):
				return nil, refusef("%q at byte %d would be expanded by a shell; %s; use single quotes for a literal $", "$"+firstRune(next), i, noShell)
			default:
				word.WriteRune(r)
			}
		default:
			switch {
			case r == ' ' || r == '\t':
				end()
			case r == '\'':
				state, inWord = single, true
			case r == '"':
				state, inWord = double, true
			case r == '\\':
				if next == "" {
					return nil, refusef("the argument ends with a lone backslash")
				}
				nr, nsize := utf8.DecodeRuneInString(next)
				if err := checkControl(nr, i+size); err != nil {
					return nil, err
				}
				word.WriteRune(nr)
				inWord = true
				size += nsize
			case strings.ContainsRune(";|&`<>()", r):
				return nil, refusef("%q at byte %d would be a shell operator; %s; quote it if it is meant as text", string(r), i, noShell)
			case r == '$' && expands(next, false):
				return nil, refusef("%q at byte %d would be expanded by a shell; %s; use single quotes for a literal $", "$"+firstRune(next), i, noShell)
			case (r == '#' || r == '~') && !inWord:
				what := "start a comment"
				if r == '~' {
					what = "be expanded to a home directory"
				}
				return nil, refusef("%q at the start of a word would %s in a shell; %s; quote it if it is meant as text", string(r), what, noShell)
			default:
				word.WriteRune(r)
				inWord = true
			}
		}
		i += size
	}
	if state != outside {
		q := "'"
		if state == double {
			q = `"`
		}
		return nil, refusef("unbalanced %s quote", q)
	}
	end()
	if len(words) > 0 && words[0] == "git" {
		words = words[1:]
	}
	if len(words) > maxWords {
		return nil, refusef("%d words; at most %d", len(words), maxWords)
	}
	return words, nil
}

// checkControl refuses control characters other than space and tab: C0,
// DEL and C1.
func checkControl(r rune, at int) error {
	switch {
	case r == ' ' || r == '\t':
		return nil
	case r == 0:
		return refusef("NUL at byte %d", at)
	case r == '\n' || r == '\r':
		return refusef("a line break at byte %d: one git command per call; %s", at, noShell)
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return refusef("control character %U at byte %d", r, at)
	}
	return nil
}

// expands reports whether a "$" followed by s would expand in a shell:
// $name, ${...}, $(...), $[...] and the special parameters; outside double
// quotes also $'...' and $"...".
func expands(s string, inDouble bool) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if c == '\'' || c == '"' {
		return !inDouble
	}
	return c == '_' || c == '{' || c == '(' || c == '[' ||
		('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') ||
		strings.IndexByte("?*@#!$-", c) >= 0
}

func firstRune(s string) string {
	_, n := utf8.DecodeRuneInString(s)
	return s[:n]
}
