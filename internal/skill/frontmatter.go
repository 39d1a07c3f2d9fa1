package skill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// spec names the rules that come from the Agent Skills specification.
const spec = "the Agent Skills specification"

// ValidName reports which rule of the Agent Skills specification name
// breaks, or nil. It is checked before any path is built from a name.
func ValidName(name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case name == "":
		return fmt.Errorf("the name is empty; %s requires 1 to %d characters", spec, MaxName)
	case n > MaxName:
		return fmt.Errorf("name %s is %d characters; %s allows at most %d", shown(name), n, spec, MaxName)
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return fmt.Errorf("name %s may contain only lowercase letters, digits and hyphens (%s: a-z, 0-9, -); %q is not one",
				shown(name), spec, r)
		}
	}
	switch {
	case name[0] == '-' || name[len(name)-1] == '-':
		return fmt.Errorf("name %q must not start or end with a hyphen (%s)", name, spec)
	case strings.Contains(name, "--"):
		return fmt.Errorf("name %q must not contain consecutive hyphens \"--\" (%s)", name, spec)
	}
	return nil
}

// shown quotes a name for an error, cut when long.
func shown(name string) string {
	if len(name) > 80 {
		return strconv.Quote(name[:80]) + "..."
	}
	return strconv.Quote(name)
}

// yamlLine is the shape of a YAML error's line, compiled on first use: a
// daemon whose skills all parse never compiles it.
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

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
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return fmt.Errorf("line %d: the frontmatter is not valid YAML: %s", n+1, m[2])
	}
	return fmt.Errorf("line 2: the frontmatter is not valid YAML: %s", strings.TrimPrefix(msg, "yaml: "))
}

// plain refuses what YAML can do beyond plain data: anchors, aliases and
// explicit tags (no billion laughs, no typed objects). These are
// shelldon's rules, not the specification's. line is the node's line in
// the file.
func plain(n *yaml.Node, what string) error {
	line := n.Line + 1
	switch {
	case n.Kind == yaml.AliasNode:
		return fmt.Errorf("line %d: %s: YAML aliases (*%s) are not allowed in a skill; write the value out", line, what, n.Value)
	case n.Anchor != "":
		return fmt.Errorf("line %d: %s: YAML anchors (&%s) are not allowed in a skill", line, what, n.Anchor)
	case n.Style&yaml.TaggedStyle != 0:
		return fmt.Errorf("line %d: %s: YAML tags (%s) are not allowed in a skill; write plain text", line, what, n.Tag)
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

// chars refuses a value of more than max characters, a rule of the
// specification.
func chars(v, what string, max int) error {
	if n := utf8.RuneCountInString(v); n > max {
		return fmt.Errorf("%s is %s characters; %s allows at most %s", what, count(n), spec, count(max))
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
		return s, 0, fmt.Errorf("line 2: the frontmatter is empty; %s requires name and description", spec)
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
	var extra []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		line := k.Line + 1
		key, err := mapKey(k)
		if err != nil {
			return s, 0, err
		}
		if prev, dup := seen[key]; dup {
			return s, 0, fmt.Errorf("line %d: %q is given twice (first on line %d)", line, key, prev)
		}
		seen[key] = line
		switch key {
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
				return s, 0, fmt.Errorf("line %d: the description is empty; %s requires 1 to %s characters "+
					"saying what the skill does and when to use it", line, spec, count(MaxDescription))
			}
			if err := chars(s.Description, "the description", MaxDescription); err != nil {
				return s, 0, fmt.Errorf("line %d: %w", line, err)
			}
		case "license":
			if s.License, err = scalar(v, key); err != nil {
				return s, 0, err
			}
			s.License = strings.TrimSpace(s.License)
		case "compatibility":
			if s.Compatibility, err = scalar(v, key); err != nil {
				return s, 0, err
			}
			s.Compatibility = strings.TrimSpace(s.Compatibility)
			if err := chars(s.Compatibility, "compatibility", MaxCompatibility); err != nil {
				return s, 0, fmt.Errorf("line %d: %w", line, err)
			}
		case "allowed-tools":
			if s.AllowedTools, err = allowedTools(v); err != nil {
				return s, 0, err
			}
		case "metadata":
			if s.Metadata, err = metadata(v); err != nil {
				return s, 0, err
			}
		default:
			if err := tree(v, key, 1); err != nil {
				return s, 0, err
			}
			extra = append(extra, k, v)
		}
	}
	switch {
	case seen["name"] == 0:
		return s, 0, fmt.Errorf("line 1: the frontmatter has no name; %s requires name and description", spec)
	case seen["description"] == 0:
		return s, 0, fmt.Errorf("line 1: the frontmatter has no description; %s requires name and description", spec)
	}
	s.Extra = extraYAML(extra)
	return s, nameLine, nil
}

// mapKey reads a key of a map: plain text, no merge key.
func mapKey(k *yaml.Node) (string, error) {
	line := k.Line + 1
	if err := plain(k, "a key"); err != nil {
		return "", err
	}
	if k.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: a key must be plain text, not a list or a map", line)
	}
	if k.Tag == "!!merge" {
		return "", fmt.Errorf("line %d: YAML merge keys (<<) are not allowed in a skill", line)
	}
	if err := checkText(k.Value, 0); err != nil {
		return "", fmt.Errorf("line %d: a key: %w", line, err)
	}
	return k.Value, nil
}

// allowedTools reads allowed-tools, a space-delimited string or a list of
// strings (both are the specification's), as one space-delimited string.
func allowedTools(v *yaml.Node) (string, error) {
	if err := plain(v, "allowed-tools"); err != nil {
		return "", err
	}
	var parts []string
	if v.Kind == yaml.SequenceNode {
		for _, e := range v.Content {
			t, err := scalar(e, "an entry of allowed-tools")
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
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " "), nil
}

// metadata reads the specification's map from string keys to string values.
func metadata(v *yaml.Node) (map[string]string, error) {
	if err := plain(v, "metadata"); err != nil {
		return nil, err
	}
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: metadata must be a map from text keys to text values (%s)", v.Line+1, spec)
	}
	out := map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		line := k.Line + 1
		key, err := mapKey(k)
		if err != nil {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("line %d: metadata key %q is given twice", line, key)
		}
		what := "metadata." + key
		if err := plain(val, what); err != nil {
			return nil, err
		}
		if val.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: %s must be text, not a list or a map: metadata maps text keys to text values (%s)",
				val.Line+1, what, spec)
		}
		text, err := scalar(val, what)
		if err != nil {
			return nil, err
		}
		out[key] = text
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// tree checks the value of a key the specification does not define: plain
// data (no anchors, aliases, tags or merge keys, text keys) at most
// MaxNesting levels deep. depth is the level of n.
func tree(n *yaml.Node, what string, depth int) error {
	if err := plain(n, what); err != nil {
		return err
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return nil
	case yaml.SequenceNode, yaml.MappingNode:
	default:
		return fmt.Errorf("line %d: %s: not plain YAML data", n.Line+1, what)
	}
	if depth > MaxNesting {
		return fmt.Errorf("line %d: %s is nested more than %d levels deep; shelldon reads no deeper (a resource limit)",
			n.Line+1, what, MaxNesting)
	}
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			if _, err := mapKey(c); err != nil {
				return err
			}
			continue
		}
		if err := tree(c, what, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// extraYAML renders the frontmatter keys the specification does not define
// (pairs of key and value nodes) as canonical YAML, without comments and
// in the encoder's own styles, or "" when there are none.
func extraYAML(pairs []*yaml.Node) string {
	if len(pairs) == 0 {
		return ""
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: make([]*yaml.Node, len(pairs))}
	for i, n := range pairs {
		m.Content[i] = bare(n, i%2 == 0)
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	// A tree of plain scalars, lists and maps (checked by tree) encodes.
	_ = enc.Encode(m)
	_ = enc.Close()
	return b.String()
}

// bare copies n without its styles, comments and positions, in one
// spelling that reads back the same: a key is text, a null is null.
func bare(n *yaml.Node, key bool) *yaml.Node {
	c := &yaml.Node{Kind: n.Kind, Tag: n.Tag, Value: n.Value}
	switch {
	case key:
		c.Tag = "!!str"
	case n.Tag == "!!null":
		c.Value = "null"
	}
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, e := range n.Content {
			c.Content[i] = bare(e, n.Kind == yaml.MappingNode && i%2 == 0)
		}
	}
	return c
}

// errNoFrontmatter says what a SKILL.md must start with.
var errNoFrontmatter = errors.New("line 1: SKILL.md must start with a \"---\" line that opens the YAML frontmatter " +
	"(name and description), closed by another \"---\" line before the body (" + spec + ")")
