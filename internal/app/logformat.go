package app

import (
	"io"
	"log/slog"
	"strings"
	"unicode"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/hidden"
	"github.com/shelldon/shelldon/internal/inert"
)

// newLogHandler is the daemon's log handler in the configured format
// (log.format): slog's text or JSON handler behind the redactingHandler,
// which takes the secrets out of every message and attribute alike in
// both.
func newLogHandler(w io.Writer, format string, level slog.Level, red *liveRedactor) slog.Handler {
	opts := &slog.HandlerOptions{Level: level}
	if format == config.LogJSON {
		return &redactingHandler{Handler: slog.NewJSONHandler(w, opts), red: red, inert: inertJSON}
	}
	return &redactingHandler{Handler: slog.NewTextHandler(w, opts), red: red, inert: inertLog}
}

// inertJSON escapes s whole (inert.Line) when it holds a character that
// hides or reorders text and that slog's JSON handler writes raw: the JSON
// encoder escapes only the C0 controls, quotes, backslashes, <, >, & and
// the line and paragraph separators, so DEL, the C1 controls (a terminal
// reads U+009B as CSI), bidirectional and zero-width characters would reach
// whoever reads the journal as they are. Anything else the encoder
// escapes itself, and a JSON reader gets the string back.
func inertJSON(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool {
		return r >= 0x20 && (!unicode.IsPrint(r) || hidden.Describe(r) != "")
	}) {
		return inert.Line(s)
	}
	return s
}
