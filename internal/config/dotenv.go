package config

import (
	"strings"
)

// Messages of .env errors. They are fixed strings: an error about a line of
// .env never quotes the line, since it may hold a secret.
const (
	msgEnvNoEquals   = "expected KEY=VALUE"
	msgEnvBadName    = "the name before '=' must be letters, digits and '_', not starting with a digit"
	msgEnvUnterm     = "the quoted value has no closing quote"
	msgEnvAfterQuote = "unexpected text after the closing quote"
	msgEnvNUL        = "the value holds a NUL byte"
)

// parseDotenv parses a .env file: KEY=VALUE lines, an optional "export "
// prefix, '#' comments (whole lines, or after whitespace following an
// unquoted value), blank lines, 'single quoted' values taken literally and
// "double quoted" values with \n, \r, \t, \", \\ and \$ escapes. Values are
// one line each and are not expanded. A later line wins over an earlier
// one. An error names the file, the line and, if it could be read, the key;
// never the value.
func parseDotenv(path string, data []byte) (map[string]string, error) {
	s := strings.TrimPrefix(string(data), "\uFEFF")
	out := map[string]string{}
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSuffix(line, "\r")
		key, val, msg := parseDotenvLine(line)
		if msg != "" {
			return nil, &Error{File: path, Line: i + 1, Key: key, Msg: msg}
		}
		if key != "" {
			out[key] = val
		}
	}
	return out, nil
}

// parseDotenvLine returns the key and value of one line; key "" for a blank
// or comment line. On failure msg says why, and key is set only once it is
// known to be a valid name (so a secret pasted without "KEY=" never shows).
func parseDotenvLine(line string) (key, val, msg string) {
	line = strings.TrimLeft(line, " \t")
	if line == "" || line[0] == '#' {
		return "", "", ""
	}
	if rest, ok := strings.CutPrefix(line, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
		line = strings.TrimLeft(rest, " \t")
	}
	name, rest, ok := strings.Cut(line, "=")
	if !ok {
		return "", "", msgEnvNoEquals
	}
	name = strings.TrimRight(name, " \t")
	if !validEnvName(name) {
		return "", "", msgEnvBadName
	}
	rest = strings.TrimLeft(rest, " \t")
	if rest == "" {
		return name, "", ""
	}
	var after string
	switch rest[0] {
	case '\'':
		end := strings.IndexByte(rest[1:], '\'')
		if end < 0 {
			return name, "", msgEnvUnterm
		}
		val, after = rest[1:1+end], rest[2+end:]
	case '"':
		var b strings.Builder
		i, closed := 1, false
		for ; i < len(rest); i++ {
			c := rest[i]
			if c == '"' {
				closed = true
				break
			}
			if c == '\\' && i+1 < len(rest) {
				i++
				switch e := rest[i]; e {
				case 'n':
					b.WriteByte('\n')
				case 'r':
					b.WriteByte('\r')
				case 't':
					b.WriteByte('\t')
				case '"', '\\', '$':
					b.WriteByte(e)
				default:
					b.WriteByte('\\')
					b.WriteByte(e)
				}
				continue
			}
			b.WriteByte(c)
		}
		if !closed {
			return name, "", msgEnvUnterm
		}
		val, after = b.String(), rest[i+1:]
	default:
		val = rest
		if j := commentStart(val); j >= 0 {
			val = val[:j]
		}
		val = strings.TrimRight(val, " \t")
	}
	if after = strings.TrimLeft(after, " \t"); after != "" && after[0] != '#' {
		return name, "", msgEnvAfterQuote
	}
	if strings.ContainsFunc(val, func(r rune) bool { return r == 0 }) {
		return name, "", msgEnvNUL
	}
	return name, val, ""
}

// commentStart returns the index of a '#' that follows whitespace, or -1.
func commentStart(s string) int {
	for i := 1; i < len(s); i++ {
		if s[i] == '#' && (s[i-1] == ' ' || s[i-1] == '\t') {
			return i
		}
	}
	return -1
}

// validEnvName reports whether s is a portable environment variable name.
func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
