package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v3"

	"github.com/shelldon/shelldon/internal/budget"
	"github.com/shelldon/shelldon/internal/lazy"
)

// maxFile caps the size of a file in the home that Load reads.
const maxFile = 1 << 20

// readOptional reads path; ok is false when it does not exist. A path that
// cannot be read (a directory, no permission, not a directory on the way) is
// an *Error naming it and what to do.
func readOptional(path string) (data []byte, ok bool, err error) {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case errors.Is(err, fs.ErrPermission):
		return nil, false, &Error{File: path, Msg: "cannot be read by this user (permission denied): chmod 600 it, or run shelldon as its owner"}
	case errors.Is(err, syscall.ENOTDIR):
		return nil, false, &Error{File: path, Msg: "cannot be read: a part of the path before it is a file, not a directory (is the home a file?)"}
	case err != nil:
		return nil, false, &Error{File: path, Msg: "cannot be opened: " + errText(err)}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		what := "not a regular file"
		if fi.IsDir() {
			what = "a directory, not a file"
		}
		return nil, false, &Error{File: path, Msg: what + ": move it away (shelldon reads this name as a file)"}
	}
	data, err = io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, false, &Error{File: path, Msg: "cannot be read: " + errText(err)}
	}
	if len(data) > maxFile {
		return nil, false, &Error{File: path, Msg: fmt.Sprintf("larger than %s", ByteSize(maxFile))}
	}
	return data, true, nil
}

// errText is err's message without the path an *fs.PathError repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// sources remembers which file each YAML node came from.
type sources map[*yaml.Node]string

var yamlErrLineRe lazy.Value[*regexp.Regexp]

func yamlErrLine() *regexp.Regexp {
	return yamlErrLineRe.Get(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: (?:line (\d+): )?`) })
}

// parse parses one YAML file into its top-level mapping, or nil when the
// file holds no document (empty or only comments). It records every node's
// file and rejects duplicate keys.
func (src sources) parse(path string, data []byte) (*yaml.Node, error) {
	if err := checkShape(path, data); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, nil
	} else if err != nil {
		return nil, syntaxError(path, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: path, Line: extra.Line, Msg: "holds more than one YAML document (a second \"---\")"}
	} else if !errors.Is(err, io.EOF) {
		return nil, syntaxError(path, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if isNull(root) {
		return nil, nil
	}
	if resolve(root).Kind != yaml.MappingNode {
		return nil, &Error{File: path, Line: root.Line, Msg: "must be a mapping of keys (like \"provider:\")"}
	}
	if err := src.mark(path, root, ""); err != nil {
		return nil, err
	}
	return root, nil
}

func syntaxError(path string, err error) error {
	msg := err.Error()
	line := 0
	if m := yamlErrLine().FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	return &Error{File: path, Line: line, Msg: "YAML syntax: " + msg}
}

// mark records path as the origin of n and everything under it, and
// rejects a key set twice in one mapping.
func (src sources) mark(path string, n *yaml.Node, key string) error {
	if n == nil || src[n] != "" {
		return nil // nil, or an anchor already visited
	}
	src[n] = path
	switch n.Kind {
	case yaml.MappingNode:
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			child := joinKey(key, k.Value)
			if first, dup := seen[k.Value]; dup {
				return &Error{File: path, Key: child, Line: k.Line, Msg: fmt.Sprintf("set twice (first on line %d)", first)}
			}
			seen[k.Value] = k.Line
			src[k] = path
			if err := src.mark(path, n.Content[i+1], child); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := src.mark(path, c, fmt.Sprintf("%s[%d]", key, i)); err != nil {
				return err
			}
		}
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := src.mark(path, c, key); err != nil {
				return err
			}
		}
	}
	return nil
}

// merge deep-merges over onto base as maps would merge: keys of over win,
// two mappings merge recursively, anything else (lists, scalars, null) in
// over replaces what base had.
func (src sources) merge(base, over *yaml.Node) *yaml.Node {
	if base == nil {
		return over
	}
	if over == nil {
		return base
	}
	b, o := resolve(base), resolve(over)
	if b.Kind != yaml.MappingNode || o.Kind != yaml.MappingNode {
		return over
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: o.Tag, Line: o.Line, Column: o.Column,
		Content: slices.Clone(b.Content)}
	src[out] = src[o]
	for i := 0; i+1 < len(o.Content); i += 2 {
		k, v := o.Content[i], o.Content[i+1]
		j := -1
		for x := 0; x+1 < len(out.Content); x += 2 {
			if out.Content[x].Value == k.Value {
				j = x
				break
			}
		}
		if j < 0 {
			out.Content = append(out.Content, k, v)
			continue
		}
		out.Content[j] = k
		out.Content[j+1] = src.merge(out.Content[j+1], v)
	}
	return out
}

// resolve follows an alias to its anchor.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || n.Kind == 0 ||
		n.Kind == yaml.DocumentNode && len(n.Content) == 0 ||
		n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func joinKey(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// decoder decodes a merged YAML tree into a Go value strictly: an unknown
// key is an error, and every error names the key and the file it came from.
// It records where each key was set, for later validation errors.
type decoder struct {
	src  sources
	locs map[string]location
	show func(string) string
	errs []error
}

var (
	durationType = reflect.TypeFor[Duration]()
	sizeType     = reflect.TypeFor[ByteSize]()
	costType     = reflect.TypeFor[budget.Cost]()
)

func (d *decoder) fail(n *yaml.Node, key, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.src[resolve(n)], Key: key, Line: n.Line,
		Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, key string) {
	line := n.Line
	n = resolve(n)
	if isNull(n) {
		return // absent: the zero value, then the default
	}
	if key != "" {
		d.locs[key] = location{file: d.src[n], line: line}
	}
	switch {
	case v.Type() == durationType:
		var dur Duration
		if n.Kind != yaml.ScalarNode {
			d.fail(n, key, "must be a duration (like \"25s\" or \"1m\")")
		} else if dur.UnmarshalText([]byte(n.Value)) != nil {
			d.fail(n, key, "%s is not a duration (like \"25s\" or \"1m\")", d.show(n.Value))
		} else {
			v.Set(reflect.ValueOf(dur))
		}
	case v.Type() == sizeType:
		if n.Kind != yaml.ScalarNode {
			d.fail(n, key, "must be a size (like \"512MiB\" or \"1GiB\")")
		} else if size, err := ParseByteSize(n.Value); err != nil {
			d.fail(n, key, "%s is not a size (like \"512MiB\", \"1GiB\" or a number of bytes)", d.show(n.Value))
		} else {
			v.Set(reflect.ValueOf(size))
		}
	case v.Type() == costType:
		if n.Kind != yaml.ScalarNode {
			d.fail(n, key, "must be an amount of dollars (like 5 or 2.50)")
		} else if cost, err := budget.ParseUSD(n.Value); err != nil {
			d.fail(n, key, "%s is not an amount of dollars (like 5 or 2.50, at most six decimals)", d.show(n.Value))
		} else {
			v.Set(reflect.ValueOf(cost))
		}
	case v.Kind() == reflect.Struct:
		d.decodeStruct(n, v, key)
	case v.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.fail(n, key, "must be a list")
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", key, i))
		}
		v.Set(s)
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
		if n.Kind != yaml.MappingNode {
			d.fail(n, key, "must be a mapping (indented \"key: value\" lines)")
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			e := reflect.New(v.Type().Elem()).Elem()
			d.decode(val, e, joinKey(key, k.Value))
			m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), e)
		}
		v.Set(m)
	case v.Kind() == reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		d.decode(n, p.Elem(), key)
		v.Set(p)
	default:
		if n.Kind != yaml.ScalarNode || n.Decode(v.Addr().Interface()) != nil {
			d.fail(n, key, "%s", wantMsg(v.Kind()))
		}
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, key string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, key, "must be a mapping (indented \"key: value\" lines)")
		return
	}
	fields := yamlFields(v.Type())
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		child := joinKey(key, k.Value)
		idx, ok := fields[k.Value]
		switch {
		case ok:
			d.decode(val, v.Field(idx), child)
		case k.Tag == "!!merge":
			d.fail(k, child, "YAML merge keys (<<) are not supported")
		default:
			d.fail(k, child, "unknown key%s", suggest(k.Value, fields))
		}
	}
}

// yamlFields maps the YAML names of t's fields to their index.
func yamlFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = strings.ToLower(f.Name)
		}
		m[name] = i
	}
	return m
}

func wantMsg(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "must be a whole number"
	case reflect.Bool:
		return "must be true or false"
	default:
		return "must be a single value, not a list or mapping"
	}
}

// suggest names the known key closest to name, if one is close.
func suggest(name string, fields map[string]int) string {
	best, bestDist := "", 3
	for f := range fields {
		if dist := editDistance(name, f); dist < bestDist || dist == bestDist && f < best {
			best, bestDist = f, dist
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
