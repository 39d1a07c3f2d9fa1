// Package redact removes secrets from text before it is stored, logged or
// shown: the values of the secrets it is given (API keys, bot and API
// tokens), and the well-known shapes of credentials (provider API keys,
// GitHub, Slack, AWS and Telegram tokens, bearer tokens, JWTs, PEM private
// keys, passwords in URLs). It depends on the standard library only.
//
// The guarantee: no output of a Redactor contains a secret it was given
// (see New for the ones it cannot protect). Shape matching is best effort.
package redact

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/lazy"
)

// Marker replaces what is removed.
const Marker = "[redacted]"

// MinSecretLen is the shortest secret, in characters, that New accepts;
// shorter ones would redact ordinary words.
const MinSecretLen = 6

// maxRounds bounds the passes String makes before it gives up and returns
// Marker alone (a replacement can, in contrived cases, complete another
// occurrence of a secret).
const maxRounds = 3

// Redactor removes a fixed set of secrets and the well-known credential
// shapes. It is safe for concurrent use. A nil *Redactor is usable and
// removes the shapes only.
type Redactor struct {
	secrets  []string // longest first
	replacer *strings.Replacer
}

// New returns a Redactor for the given secrets. Surrounding white space is
// trimmed; a secret shorter than MinSecretLen characters, or one that is part
// of Marker itself, is ignored.
func New(secrets ...string) *Redactor {
	var keep []string
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if utf8.RuneCountInString(s) < MinSecretLen || strings.Contains(Marker, s) {
			continue
		}
		keep = append(keep, s)
	}
	// Longest first, so that a secret that contains another is replaced
	// whole (strings.Replacer tries its pairs in order at each position).
	slices.SortFunc(keep, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	keep = slices.Compact(keep)
	r := &Redactor{secrets: keep}
	if len(keep) > 0 {
		pairs := make([]string, 0, 2*len(keep))
		for _, s := range keep {
			pairs = append(pairs, s, Marker)
		}
		r.replacer = strings.NewReplacer(pairs...)
	}
	return r
}

// String returns s with every known secret and every credential shape
// replaced by Marker. Applying it twice changes nothing more.
func (r *Redactor) String(s string) string {
	return r.fixed(s, r.once)
}

// fixed applies pass until no known secret is left, at most maxRounds times,
// and returns Marker alone if one still is.
func (r *Redactor) fixed(s string, pass func(string) string) string {
	for range maxRounds {
		s = pass(s)
		if !r.leaks(s) {
			return s
		}
	}
	return Marker
}

func (r *Redactor) once(s string) string {
	if r != nil && r.replacer != nil {
		s = r.replacer.Replace(s)
	}
	for _, p := range shapes() {
		s = p.apply(s)
	}
	return s
}

// leaks reports whether s holds a known secret.
func (r *Redactor) leaks(s string) bool {
	if r == nil {
		return false
	}
	for _, sec := range r.secrets {
		if strings.Contains(s, sec) {
			return true
		}
	}
	return false
}

// pattern is one credential shape.
type pattern struct {
	re *regexp.Regexp
	// hints: the regexp runs only if s contains one of them (cheap skip of
	// large inputs); none means always.
	hints []string
	repl  string                // expansion template, or
	fn    func([]string) string // built from the submatches
}

func (p pattern) apply(s string) string {
	if len(p.hints) > 0 && !slices.ContainsFunc(p.hints, func(h string) bool { return strings.Contains(s, h) }) {
		return s
	}
	if p.fn == nil {
		return p.re.ReplaceAllString(s, p.repl)
	}
	return p.re.ReplaceAllStringFunc(s, func(m string) string { return p.fn(p.re.FindStringSubmatch(m)) })
}

// shapes are the credential shapes String removes. Each leaves its own
// output alone, so String is idempotent. They are compiled on first use,
// not at start: every shelldon process (each turn's worker, each sandbox
// helper) links this package, and most never redact anything.
func shapes() []pattern {
	return shapesOnce.Get(func() []pattern {
		return []pattern{
			// PEM private key blocks, also when the END line was cut off.
			{
				re:    regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*PRIVATE KEY[A-Z ]*)-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|[\s\S]*)`),
				hints: []string{"-----BEGIN "},
				repl:  "-----BEGIN ${1}-----\n" + Marker + "\n-----END ${1}-----",
			},
			// scheme://user:password@host: the password, up to the last '@' before
			// the path.
			{
				re:    regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@"'<>]*:)[^\s/"'<>` + "`" + `]+@`),
				hints: []string{"://"},
				repl:  "${1}" + Marker + "@",
			},
			{
				re:   regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9\-._~+/]{8,}=*`),
				repl: "${1}" + Marker,
			},
			{
				re:   regexp.MustCompile(`(?i)\b(authorization:\s*basic\s+)[A-Za-z0-9+/]{4,}=*`),
				repl: "${1}" + Marker,
			},
			// OpenAI sk-..., sk-proj-..., sk-svcacct-...; Anthropic sk-ant-...
			{
				re:    regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{20,}`),
				hints: []string{"sk-"},
				repl:  Marker,
			},
			{
				re:    regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`),
				hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
				repl:  Marker,
			},
			{
				re:    regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9\-]{10,}`),
				hints: []string{"xox"},
				repl:  Marker,
			},
			{
				re:    regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),
				hints: []string{"AKIA", "ASIA"},
				repl:  Marker,
			},
			// Telegram bot tokens; no \b in front, since API URLs write /bot<token>.
			{
				re:    regexp.MustCompile(`[0-9]{6,12}:[A-Za-z0-9_\-]{30,}`),
				hints: []string{":"},
				repl:  Marker,
			},
			// JWTs: base64url JSON header and payload, and a signature (empty for
			// alg none).
			{
				re:    regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]+\.eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*`),
				hints: []string{"eyJ"},
				repl:  Marker,
			},
		}
	})
}

var shapesOnce lazy.Value[[]pattern]
