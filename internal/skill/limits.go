package skill

import (
	"fmt"
	"strconv"
)

// Rules of the Agent Skills specification (agentskills.io/specification).
const (
	MaxName          = 64   // characters of a name
	MaxDescription   = 1024 // characters of a description
	MaxCompatibility = 500  // characters of compatibility
)

// Resource limits: guards on what shelldon reads and writes, not format
// rules (the specification sets no size for SKILL.md, its body or the
// files beside it; 500 lines and 5,000 tokens are recommendations). The
// first two are the defaults of Limits.
const (
	DefaultMaxSkillBytes = 256 << 10 // bytes of a SKILL.md
	DefaultMaxFileBytes  = 1 << 20   // bytes of a file listed beside SKILL.md
	MaxFrontmatter       = 64 << 10  // bytes of the frontmatter
	MaxNesting           = 10        // levels of lists and maps in a frontmatter value
	MaxFiles             = 20        // files listed beside SKILL.md
	MaxDraftBody         = 16 << 10  // bytes of a body written through the library (Stage, Create, Update)
)

// The configuration keys the app sets Limits from; errors name them so the
// owner knows what to raise.
const (
	ConfigMaxSkillBytes = "skills.max_skill_bytes"
	ConfigMaxFileBytes  = "skills.max_file_bytes"
)

// Limits are the library's resource limits; a zero field takes its default.
type Limits struct {
	SkillBytes int64 // a SKILL.md, read or written; DefaultMaxSkillBytes
	FileBytes  int64 // a file listed (and copied) beside SKILL.md; DefaultMaxFileBytes
}

// withDefaults fills the zero (or negative) fields.
func (lim Limits) withDefaults() Limits {
	if lim.SkillBytes <= 0 {
		lim.SkillBytes = DefaultMaxSkillBytes
	}
	if lim.FileBytes <= 0 {
		lim.FileBytes = DefaultMaxFileBytes
	}
	return lim
}

func (lim Limits) skill() sizeLimit { return sizeLimit{lim.SkillBytes, ConfigMaxSkillBytes} }
func (lim Limits) file() sizeLimit  { return sizeLimit{lim.FileBytes, ConfigMaxFileBytes} }

// sizeLimit is a limit in bytes and the setting that raises it.
type sizeLimit struct {
	max int64
	key string
}

// over is the error for what, of n bytes, over the limit.
func (l sizeLimit) over(what string, n int64) error {
	got, max := sizes(n, l.max)
	return fmt.Errorf("%s is %s; the limit (%s) is %s", what, got, l.key, max)
}

// sizes renders a size n over a limit max for a person, in bytes when
// rounded they would read alike.
func sizes(n, max int64) (string, string) {
	if n-max < max/50 {
		return count(n) + " bytes", count(max) + " bytes"
	}
	return size(n), size(max)
}

// size renders n bytes for a person: 300 KiB, 1.5 MiB, 900 bytes.
func size(n int64) string {
	unit, name := int64(1), " bytes"
	switch {
	case n >= 1<<20:
		unit, name = 1<<20, " MiB"
	case n >= 1<<10:
		unit, name = 1<<10, " KiB"
	}
	if n%unit == 0 || n >= 10*unit {
		return count((n+unit/2)/unit) + name
	}
	return strconv.FormatFloat(float64(n)/float64(unit), 'f', 1, 64) + name
}

// count renders n with thousands separators: 1,024.
func count[T int | int64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := ""
	if s[0] == '-' {
		neg, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return neg + s
}
