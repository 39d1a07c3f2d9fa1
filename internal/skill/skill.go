// Package skill keeps the agent's skills: written playbooks over the tools
// it already has, in the Agent Skills format. A skill is a folder named for
// it holding SKILL.md, YAML frontmatter between two "---" lines (name,
// description, optionally license, compatibility, allowed-tools and a
// string-to-string metadata map; any other key is refused) followed by a
// markdown body, and optionally files beside it.
//
// Where skills live. Bundled skills come with the binary (an fs.FS, embedded
// by the caller) and are read-only. The owner's live in $SHELLDON_HOME/skills
// (created 0700, files 0600):
//
//	skills/<name>/SKILL.md                the owner's current version
//	skills/.versions/<name>/<n>/SKILL.md  every earlier version kept
//	skills/.removed/<name>-<unix>/        a removed skill and its versions
//	skills/.staged/<name>/SKILL.md        the agent's draft, not in use
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
// Limits. A SKILL.md is at most MaxDocument bytes, its body MaxBody, its
// description MaxDescription characters on one line; names follow the
// Agent Skills rule (lowercase letters, digits, single hyphens, at most
// MaxName) and are validated before any path is built. Control characters
// (but \n and \t), zero-width, bidirectional and other invisible format
// characters are refused anywhere, since a skill is read by the model and
// must read the same to the owner. The frontmatter allows no anchors,
// aliases, merge keys, tags or second document (no billion laughs, no typed
// objects). Nothing inside the skills folder is followed through a symbolic
// link. At most MaxFiles files of at most MaxFileSize bytes are listed
// beside SKILL.md.
//
// Nothing in a skill is executed. A skill is text the model reads; it can
// only call the tools the model already has, under the same tiers and
// approvals. Files beside SKILL.md are listed by name, never run, and
// allowed-tools is kept as written but grants nothing: it never skips an
// approval.
package skill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits of a skill.
const (
	MaxBody        = 16 << 10 // bytes of the markdown body
	MaxDescription = 1024     // characters of the description
	MaxFiles       = 20       // files listed beside SKILL.md
	MaxFileSize    = 64 << 10 // bytes of a file listed beside SKILL.md
	MaxName        = 64       // bytes of a name
	MaxDocument    = 64 << 10 // bytes of a whole SKILL.md
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

// Skill is one parsed skill. Parse fills Name to Body; the library adds
// Files, Source and Version.
type Skill struct {
	Name          string
	Description   string
	License       string            // optional, as written
	Compatibility string            // optional, as written
	AllowedTools  string            // optional, informational only: it grants nothing
	Metadata      map[string]string // optional; nil when empty
	Body          string            // markdown, LF line ends, no leading blank lines or trailing space
	Files         []string          // slash paths of the files beside SKILL.md, sorted
	Source        string            // SourceBundled or SourceOwner
	Version       int               // the owner's version number; 0 for a bundled skill
}

var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidName reports why name cannot be a skill's name, or nil.
func ValidName(name string) error {
	if name == "" {
		return errors.New("the name is empty")
	}
	if len(name) > MaxName || !namePattern.MatchString(name) {
		shown := name
		if len(shown) > 80 {
			shown = shown[:80] + "..."
		}
		return fmt.Errorf("name %q: use 1 to %d lowercase letters, digits and single hyphens, "+
			"not starting or ending with a hyphen (like \"weekly-report\")", shown, MaxName)
	}
	return nil
}

// fieldKeys are the frontmatter keys in canonical order.
var fieldKeys = []string{"name", "description", "license", "compatibility", "allowed-tools", "metadata"}

// Parse reads a SKILL.md. Errors name the line (and column) they are about.
func Parse(data []byte) (Skill, error) {
	s, _, err := parse(data)
	return s, err
}

// position of the name in a parsed document, for the folder check.
type parsed struct{ nameLine int }

func parse(data []byte) (Skill, parsed, error) {
	var p parsed
	if len(data) > MaxDocument {
		return Skill{}, p, fmt.Errorf("SKILL.md is %d bytes; the limit is %d (64 KiB)", len(data), MaxDocument)
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if err := checkText(text, 1); err != nil {
		return Skill{}, p, err
	}
	lines := strings.SplitAfter(text, "\n")
	if strings.TrimRight(lines[0], " \t\n") != "---" {
		return Skill{}, p, errors.New("line 1: SKILL.md must start with a \"---\" line that opens the YAML frontmatter " +
			"(name and description), closed by another \"---\" line before the body")
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
	s, nameLine, err := parseFrontmatter(strings.Join(lines[1:end], ""))
	if err != nil {
		return Skill{}, p, err
	}
	p.nameLine = nameLine
	s.Body = normalizeBody(strings.Join(lines[end+1:], ""))
	bodyLine := end + 2
	switch {
	case s.Body == "":
		return Skill{}, p, fmt.Errorf("line %d: the body is empty; write the skill's instructions below the frontmatter", bodyLine)
	case len(s.Body) > MaxBody:
		return Skill{}, p, fmt.Errorf("line %d: the body is %d bytes; the limit is %d (16 KiB): "+
			"keep the playbook short and put reference material in files beside SKILL.md", bodyLine, len(s.Body), MaxBody)
	}
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

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// decodeYAML decodes one YAML document, refusing a second one.
func decodeYAML(src string) (doc *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, fmt.Errorf("line 2: the frontmatter is not valid YAML (%v)", r)
		}
	}()
	dec := yaml.NewDecoder(strings.NewReader(src))
	var n yaml.Node
	if err := dec.Decode(&n); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, yamlError(err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
	case err != nil:
		return nil, yamlError(err)
	default:
		return nil, fmt.Errorf("line %d: a second YAML document in the frontmatter; only one is allowed", extra.Line+1)
	}
	return &n, nil
}

// yamlError renders a YAML error with the line counted in the file.
func yamlError(err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return fmt.Errorf("line %d: the frontmatter is not valid YAML: %s", n+1, m[2])
	}
	return fmt.Errorf("line 2: the frontmatter is not valid YAML: %s", strings.TrimPrefix(msg, "yaml: "))
}

// plain refuses what YAML can do beyond plain data: anchors, aliases and
// explicit tags. line is the node's line in the file.
func plain(n *yaml.Node, what string) error {
	line := n.Line + 1
	switch {
	case n.Kind == yaml.AliasNode:
		return fmt.Errorf("line %d: %s: YAML aliases (*%s) are not allowed; write the value out", line, what, n.Value)
	case n.Anchor != "":
		return fmt.Errorf("line %d: %s: YAML anchors (&%s) are not allowed", line, what, n.Anchor)
	case n.Style&yaml.TaggedStyle != 0:
		return fmt.Errorf("line %d: %s: YAML tags (%s) are not allowed; write plain text", line, what, n.Tag)
	}
	return nil
}

// scalar returns the text of a scalar value node (a null is "").
func scalar(n *yaml.Node, what string) (string, error) {
	if err := plain(n, what); err != nil {
		return "", err
	}
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: %s must be text, not a list or a map", n.Line+1, what)
	}
	if n.Tag == "!!null" {
		return "", nil
	}
	if err := checkText(n.Value, 0); err != nil {
		return "", fmt.Errorf("line %d: %s: %w", n.Line+1, what, err)
	}
	return n.Value, nil
}

// oneLine refuses a value that spans lines or is too long.
func oneLine(v, what string, line, max int) error {
	if strings.ContainsAny(v, "\n\r") {
		return fmt.Errorf("line %d: %s must be one line", line, what)
	}
	if n := utf8.RuneCountInString(v); n > max {
		return fmt.Errorf("line %d: %s is %d characters; the limit is %d", line, what, n, max)
	}
	return nil
}

func parseFrontmatter(src string) (Skill, int, error) {
	var s Skill
	doc, err := decodeYAML(src)
	if err != nil {
		return s, 0, err
	}
	if doc == nil || len(doc.Content) == 0 {
		return s, 0, errors.New("line 2: the frontmatter is empty; it needs name and description")
	}
	if err := plain(doc, "the frontmatter"); err != nil {
		return s, 0, err
	}
	m := doc.Content[0]
	if err := plain(m, "the frontmatter"); err != nil {
		return s, 0, err
	}
	if m.Kind != yaml.MappingNode {
		return s, 0, fmt.Errorf("line %d: the frontmatter must be a map of keys (name, description, ...)", m.Line+1)
	}
	seen := map[string]int{}
	nameLine := 0
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if err := plain(k, "a key"); err != nil {
			return s, 0, err
		}
		line := k.Line + 1
		if k.Kind != yaml.ScalarNode {
			return s, 0, fmt.Errorf("line %d: a frontmatter key must be plain text", line)
		}
		if k.Tag == "!!merge" {
			return s, 0, fmt.Errorf("line %d: YAML merge keys (<<) are not allowed", line)
		}
		if prev, dup := seen[k.Value]; dup {
			return s, 0, fmt.Errorf("line %d: %q is given twice (first on line %d)", line, k.Value, prev)
		}
		seen[k.Value] = line
		switch k.Value {
		case "name":
			nameLine = line
			if s.Name, err = scalar(v, "name"); err != nil {
				return s, 0, err
			}
			if err := ValidName(s.Name); err != nil {
				return s, 0, fmt.Errorf("line %d: %w", line, err)
			}
		case "description":
			if s.Description, err = scalar(v, "description"); err != nil {
				return s, 0, err
			}
			s.Description = strings.TrimSpace(s.Description)
			if s.Description == "" {
				return s, 0, fmt.Errorf("line %d: the description is empty; say in one line what the skill is for and when to use it", line)
			}
			if err := oneLine(s.Description, "the description", line, MaxDescription); err != nil {
				return s, 0, err
			}
		case "license", "compatibility":
			v, err := scalar(v, k.Value)
			if err != nil {
				return s, 0, err
			}
			v = strings.TrimSpace(v)
			if err := oneLine(v, k.Value, line, MaxDescription); err != nil {
				return s, 0, err
			}
			if k.Value == "license" {
				s.License = v
			} else {
				s.Compatibility = v
			}
		case "allowed-tools":
			if s.AllowedTools, err = allowedTools(v, line); err != nil {
				return s, 0, err
			}
		case "metadata":
			if s.Metadata, err = metadata(v); err != nil {
				return s, 0, err
			}
		default:
			return s, 0, fmt.Errorf("line %d: unknown frontmatter key %q; the keys are %s (put anything else under metadata)",
				line, k.Value, strings.Join(fieldKeys, ", "))
		}
	}
	switch {
	case seen["name"] == 0:
		return s, 0, errors.New("line 1: the frontmatter has no name")
	case seen["description"] == 0:
		return s, 0, errors.New("line 1: the frontmatter has no description")
	}
	return s, nameLine, nil
}

// allowedTools reads allowed-tools, one space-separated string or a list
// of names, as one string.
func allowedTools(v *yaml.Node, line int) (string, error) {
	if err := plain(v, "allowed-tools"); err != nil {
		return "", err
	}
	var parts []string
	if v.Kind == yaml.SequenceNode {
		for _, e := range v.Content {
			t, err := scalar(e, "allowed-tools")
			if err != nil {
				return "", err
			}
			parts = append(parts, t)
		}
	} else {
		t, err := scalar(v, "allowed-tools")
		if err != nil {
			return "", err
		}
		parts = []string{t}
	}
	out := strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	return out, oneLine(out, "allowed-tools", line, MaxDescription)
}

// metadata reads a flat map of strings.
func metadata(v *yaml.Node) (map[string]string, error) {
	if err := plain(v, "metadata"); err != nil {
		return nil, err
	}
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: metadata must be a map of text keys to text values", v.Line+1)
	}
	out := map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		line := k.Line + 1
		if k.Tag == "!!merge" {
			return nil, fmt.Errorf("line %d: YAML merge keys (<<) are not allowed", line)
		}
		key, err := scalar(k, "a metadata key")
		if err != nil {
			return nil, err
		}
		if key == "" || len(key) > MaxName || strings.ContainsAny(key, "\n\r") {
			return nil, fmt.Errorf("line %d: metadata key %q: use one line of 1 to %d bytes", line, key, MaxName)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("line %d: metadata key %q is given twice", line, key)
		}
		what := "metadata." + key
		text, err := scalar(val, what)
		if err != nil {
			return nil, err
		}
		if err := oneLine(text, what, line, MaxDescription); err != nil {
			return nil, err
		}
		out[key] = text
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
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
