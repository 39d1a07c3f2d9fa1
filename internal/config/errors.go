package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Error is one problem with the configuration. Messages quote a value only
// when it is not a secret.
type Error struct {
	File string // full path; "" when the key came from no file (a default)
	Key  string // dotted key, like "agent.turn_budget" or "fallback[1].kind"
	Line int    // 1-based; 0 if unknown
	Msg  string
}

// Error formats as "<file>:<line>: <key>: <msg>", leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// errAt returns an *Error for key, located where the key was set, if it was.
func (c *Config) errAt(key, format string, args ...any) *Error {
	loc := c.locs[key]
	return &Error{File: loc.file, Key: key, Line: loc.line, Msg: fmt.Sprintf(format, args...)}
}

// maxShown caps how much of a bad value an error message quotes.
const maxShown = 60

// show quotes v for an error message: shortened, and hidden when it looks
// like or contains a secret we know of.
func (c *Config) show(v string) string {
	if c.forAgent {
		// "hidden: it matches a secret" would tell the agent that what it
		// wrote is part of a key: a way to guess one piece by piece.
		return "(value not shown)"
	}
	for _, s := range c.knownSecrets() {
		if len(s) >= 4 && strings.Contains(v, s) || len(v) >= 8 && strings.Contains(s, v) {
			return "(value hidden: it matches a secret)"
		}
	}
	if len(v) > maxShown {
		v = v[:maxShown] + "..."
	}
	return strconv.Quote(v)
}

// knownSecrets is Secrets plus the values of environment variables whose
// names look secret, for use while the config is still being loaded.
func (c *Config) knownSecrets() []string {
	out := c.Secrets()
	for k, v := range c.env {
		if v != "" && secretName(k) {
			out = append(out, v)
		}
	}
	return out
}

func secretName(k string) bool {
	k = strings.ToUpper(k)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
