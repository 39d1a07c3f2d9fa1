// Package skill keeps the agent's skills: written playbooks over the tools
// it already has, in the Agent Skills format (agentskills.io/specification).
// A skill is a folder named for it holding SKILL.md, YAML frontmatter
// between two "---" lines (name, description, optionally license,
// compatibility, allowed-tools and a string-to-string metadata map; other
// keys are kept, as canonical YAML, and used for nothing) followed by a
// markdown body, which may be empty, and optionally files beside it.
//
// Where skills live. Bundled skills come with the binary (an fs.FS, embedded
// by the caller) and are read-only. The owner's live in $SHELLDON_HOME/skills
// (created 0700, files 0600):
//
//	skills/<name>/SKILL.md                the owner's current version
//	skills/.versions/<name>/<n>/SKILL.md  every earlier version kept
//	skills/.removed/<name>-<unix>/        a removed skill and its versions
//	skills/.staged/<name>/SKILL.md        the agent's draft, not in use
//	skills/.usage.json                    how often and when each skill was loaded
//
// Anything else in the skills folder (a README, a .git folder, a folder
// without SKILL.md) is not a skill and not a problem; a folder meant as a
// skill (with a SKILL.md, in any case) that does not load is (List).
//
// Drafts. What the agent writes is a draft (Stage), in no list, catalog or
// Get, until the owner approves it and Promote makes it the owner's
// version, only if its content hash is still the approved one. Create and
// Update are the owner's own changes: a draft promoted at once.
//
// Copy-on-write. Updating a bundled skill writes the owner's copy (with the
// bundled files beside it); the owner's copy then wins over the bundled one,
// which stays untouched and is offered again once the copy is removed. A
// bundled skill itself cannot be removed.
//
// Versions. Every update of the owner's copy first keeps the current
// SKILL.md as a numbered version; a rollback restores the version before
// the current one and keeps the current one too. Nothing is deleted: removed
// skills are moved aside. Version numbers are derived from the kept
// versions: the current one is the smallest number not kept (see current).
//
// Rules. What the specification accepts is accepted and what it refuses is
// refused, the error naming the rule: a name of 1 to MaxName lowercase
// letters a-z, digits and hyphens, not starting or ending with a hyphen,
// without "--", matching its folder (validated before any path is built);
// a description of 1 to MaxDescription characters (folded, literal or on
// one line); compatibility of at most MaxCompatibility characters; metadata
// a map of text to text. A UTF-8 byte-order mark and CRLF line ends are
// read. shelldon's own rules, for safety: control characters (but \n and
// \t), zero-width, bidirectional and other invisible format characters are
// refused anywhere, since a skill is read by the model and must read the
// same to the owner; the frontmatter allows no anchors, aliases, merge
// keys, tags or second document (no billion laughs, no typed objects).
//
// Limits. Sizes are resource guards, not format rules (the specification
// sets none): a SKILL.md is at most Limits.SkillBytes (DefaultMaxSkillBytes,
// the setting ConfigMaxSkillBytes), its frontmatter MaxFrontmatter bytes
// nested at most MaxNesting deep; at most MaxFiles files of at most
// Limits.FileBytes (DefaultMaxFileBytes, ConfigMaxFileBytes) are listed
// beside SKILL.md. What the library writes from parts (Stage, Create,
// Update) is held tighter, since the owner reads it whole before approving
// it: a description given on one line, a body given of at most MaxDraftBody
// bytes, a new skill with a body. Nothing inside the skills folder is
// followed through a symbolic link.
//
// Progressive disclosure. The catalog (Catalog) names the skills in use
// within a budget, preferring those loaded most and most lately (Used);
// use_skill loads one skill's SKILL.md; ReadFile reads the files beside it
// on demand, as text, jailed to the skill's folder, never a draft's.
//
// Nothing in a skill is executed. A skill is text the model reads; it can
// only call the tools the model already has, under the same tiers and
// approvals. Files beside SKILL.md are listed and read as text, never run
// (a script runs only if the model copies it into the workspace and the
// owner approves the command), and allowed-tools is kept as written but
// grants nothing: it never skips an approval.
package skill

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Sources of a skill.
const (
	SourceBundled = "bundled"
	SourceOwner   = "owner"
)

// Errors the library's callers can tell apart.
var (
	ErrNotFound  = errors.New("no such skill")
	ErrExists    = errors.New("skill already exists")
	ErrBundled   = errors.New("bundled skills are read-only")
	ErrNoVersion = errors.New("no earlier version")
)

// Skill is one parsed skill. Parse fills Name to Extra; the library adds
// Files, Source and Version.
type Skill struct {
	Name          string
	Description   string            // as written, surrounding white space trimmed; may span lines
	License       string            // optional, as written
	Compatibility string            // optional, as written
	AllowedTools  string            // optional, informational only: it grants nothing
	Metadata      map[string]string // optional; nil when empty
	Body          string            // markdown, LF line ends, no leading blank lines or trailing space; may be empty
	Extra         string            // other frontmatter keys, as canonical YAML; kept, used for nothing
	Files         []string          // slash paths of the files beside SKILL.md, sorted
	Source        string            // SourceBundled or SourceOwner
	Version       int               // the owner's version number; 0 for a bundled skill
}

// DescriptionLine is the description on one line, for a list or a catalog:
// line breaks, tabs and control characters become spaces, runs of spaces
// one.
func (s Skill) DescriptionLine() string {
	return strings.Join(strings.Fields(oneLineText(s.Description)), " ")
}

// Parse reads a SKILL.md of at most DefaultMaxSkillBytes. Errors name the
// line (and column) they are about, and the rule.
func Parse(data []byte) (Skill, error) {
	s, _, err := parse(data, Limits{}.withDefaults())
	return s, err
}

// position of the name in a parsed document, for the folder check.
type parsed struct{ nameLine int }

// bom is the UTF-8 byte-order mark some editors put first.
const bom = "\ufeff"

func parse(data []byte, lim Limits) (Skill, parsed, error) {
	var p parsed
	if int64(len(data)) > lim.SkillBytes {
		return Skill{}, p, lim.skill().over(skillFile, int64(len(data)))
	}
	text := strings.TrimPrefix(string(data), bom)
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if err := checkText(text, 1); err != nil {
		return Skill{}, p, err
	}
	lines := strings.SplitAfter(text, "\n")
	if strings.TrimRight(lines[0], " \t\n") != "---" {
		return Skill{}, p, errNoFrontmatter
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t\n") == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return Skill{}, p, errors.New("line 1: the frontmatter opened here is never closed by a \"---\" line")
	}
	front := strings.Join(lines[1:end], "")
	if len(front) > MaxFrontmatter {
		got, max := sizes(int64(len(front)), MaxFrontmatter)
		return Skill{}, p, fmt.Errorf("line 2: the frontmatter is %s; shelldon reads at most %s of it (a resource limit): "+
			"move the rest to the body", got, max)
	}
	s, nameLine, err := parseFrontmatter(front)
	if err != nil {
		return Skill{}, p, err
	}
	p.nameLine = nameLine
	s.Body = normalizeBody(strings.Join(lines[end+1:], ""))
	return s, p, nil
}

// normalizeBody drops leading blank lines and trailing white space.
func normalizeBody(b string) string {
	b = strings.TrimRight(b, " \t\n")
	for b != "" {
		line, rest, found := strings.Cut(b, "\n")
		if strings.Trim(line, " \t") != "" || !found {
			break
		}
		b = rest
	}
	if strings.Trim(b, " \t") == "" {
		return ""
	}
	return b
}

// oneLine refuses a value that spans lines.
func oneLine(v, what string) error {
	if strings.ContainsAny(v, "\n\r") {
		return fmt.Errorf("%s must be one line", what)
	}
	return nil
}

// frontmatter is the canonical order of the keys Format writes.
type frontmatter struct {
	Name          string            `yaml:"name"`
	Description   string            `yaml:"description"`
	License       string            `yaml:"license,omitempty"`
	Compatibility string            `yaml:"compatibility,omitempty"`
	AllowedTools  string            `yaml:"allowed-tools,omitempty"`
	Metadata      map[string]string `yaml:"metadata,omitempty"`
}

// Format renders s as the canonical SKILL.md text; Parse(Format(s)) gives s
// back (without Files, Source and Version) for every s that Parse returns.
func Format(s Skill) []byte {
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	// Encoding a struct of strings and a map of strings cannot fail.
	_ = enc.Encode(frontmatter{
		Name: s.Name, Description: s.Description, License: s.License,
		Compatibility: s.Compatibility, AllowedTools: s.AllowedTools, Metadata: s.Metadata,
	})
	_ = enc.Close()
	if s.Extra != "" {
		b.WriteString(s.Extra)
		if !strings.HasSuffix(s.Extra, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString("---\n")
	if s.Body != "" {
		b.WriteString("\n")
		b.WriteString(s.Body)
		b.WriteString("\n")
	}
	return b.Bytes()
}

// clone copies s so a cached skill is never changed through a copy.
func (s Skill) clone() Skill {
	if s.Metadata != nil {
		m := make(map[string]string, len(s.Metadata))
		for k, v := range s.Metadata {
			m[k] = v
		}
		s.Metadata = m
	}
	s.Files = append([]string(nil), s.Files...)
	if len(s.Files) == 0 {
		s.Files = nil
	}
	return s
}

// sortSkills orders skills by name.
func sortSkills(list []Skill) {
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
}
