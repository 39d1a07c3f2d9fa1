package provider

import (
	"regexp"
	"slices"
	"strings"

	"github.com/shelldon/shelldon/internal/lazy"
)

// Redacted replaces every secret Redact removes.
const Redacted = "[REDACTED]"

// secretShapes are the token shapes Redact removes, built by its first
// call (see ansiSequence).
func secretShapes() []*regexp.Regexp {
	return secretShapesRe.Get(func() []*regexp.Regexp {
		return []*regexp.Regexp{
			// Bearer tokens, whatever they hold.
			regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9._~+/=\-]+`),
			// Provider keys: sk-..., sk-ant-api03-..., sk-proj-...
			regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{6,}`),
			// key=value and "key": "value" forms of credentials, as in a URL's query.
			regexp.MustCompile(`(?i)\b(x-api-key|api[_-]?key|key|access[_-]?token|token|secret|password)("?\s*[:=]\s*"?)[^\s"',;&}]+`),
		}
	})
}

var secretShapesRe lazy.Value[[]*regexp.Regexp]

// Redact returns s with every occurrence of each non-empty secret, and every
// token shaped like a provider key or a bearer credential, replaced by
// Redacted. Longer secrets are replaced first so that one secret containing
// another is removed whole.
func Redact(s string, secrets ...string) string {
	if s == "" {
		return s
	}
	sorted := slices.Clone(secrets)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range sorted {
		if sec = strings.TrimSpace(sec); sec != "" {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	shapes := secretShapes()
	s = shapes[0].ReplaceAllString(s, "${1} "+Redacted)
	s = shapes[1].ReplaceAllString(s, Redacted)
	s = shapes[2].ReplaceAllString(s, "${1}${2}"+Redacted)
	return s
}
