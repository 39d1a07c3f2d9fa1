package config

import (
	"fmt"
)

// Limits on a YAML file of the home, checked on its bytes before it is
// decoded: a mistaken or hostile file (a config nested 10,000 deep is 20 KB)
// is refused at once instead of costing memory out of proportion to its
// size. The config itself nests 4 deep at most (fallback[0].timeout), and a
// file of it is a few KiB.
const (
	// maxYAML caps config.yaml and config.local.yaml. Decoding a YAML file
	// allocates about a hundred times its size in the worst case (a flat
	// list of one-character items), so 128 KiB costs at most ~14 MB.
	maxYAML = 128 << 10
	// maxDepth caps how deeply a YAML file, or a change to it, nests.
	maxDepth = 32
)

// checkShape refuses YAML that is larger than maxYAML or nested deeper
// than maxDepth (yamlDepth), without decoding it.
func checkShape(path string, data []byte) error {
	if len(data) > maxYAML {
		return &Error{File: path, Msg: fmt.Sprintf("is %d bytes; a config file may be at most %s", len(data), ByteSize(maxYAML))}
	}
	if depth, line := yamlDepth(data); depth > maxDepth {
		return &Error{File: path, Line: line, Msg: fmt.Sprintf("nests more than %d levels deep (lists, mappings, brackets); shelldon's config needs at most 4", maxDepth)}
	}
	return nil
}

// yamlDepth is an upper bound on how deeply data nests, and the line where
// it is deepest; it reads the bytes once and allocates only its stack of
// indentation levels. It counts the open block levels (by indentation),
// the compact block entries on a line ("- - x", "? "), and the open flow
// collections ('[' and '{' where YAML reads them as such). Quoted scalars,
// comments and the lines of block scalars (| and >) are skipped. It may
// count more than the parser would (a plain scalar continued on deeper
// lines), never less.
func yamlDepth(data []byte) (depth, atLine int) {
	var (
		indents     []int // indentation of the open block levels
		flow        int   // open '[' and '{'
		quote       byte  // '"' or '\'' inside a quoted scalar, which may span lines
		blockScalar = -1  // indentation of the line that opened a | or > scalar
	)
	line := 0
	for pos := 0; pos < len(data); {
		end := pos
		for end < len(data) && data[end] != '\n' {
			end++
		}
		l := data[pos:end]
		pos = end + 1
		line++
		j, lineInd := 0, -1 // -1: the line continues a quoted scalar
		if quote == 0 {
			for j < len(l) && l[j] == ' ' {
				j++
			}
			ind := j
			for j < len(l) && (l[j] == ' ' || l[j] == '\t' || l[j] == '\r') {
				j++
			}
			if j == len(l) || l[j] == '#' {
				continue // blank or a comment
			}
			if blockScalar >= 0 {
				if ind > blockScalar {
					continue // the block scalar's text
				}
				blockScalar = -1
			}
			if flow == 0 {
				for len(indents) > 0 && indents[len(indents)-1] >= ind {
					indents = indents[:len(indents)-1]
				}
				indents = append(indents, ind)
			}
			j, lineInd = ind, ind
		}
		compact := 0  // "- " and "? " entries after the first on this line
		start := true // at the start of a node: a quote or '[' here opens one
		first := true // no entry indicator seen yet on this line
	scan:
		for ; j < len(l); j++ {
			c := l[j]
			if quote != 0 {
				switch {
				case quote == '"' && c == '\\':
					j++
				case c == quote && quote == '\'' && j+1 < len(l) && l[j+1] == '\'':
					j++
				case c == quote:
					quote, start = 0, false
				}
				continue
			}
			sep := j+1 == len(l) || l[j+1] == ' ' || l[j+1] == '\t' || l[j+1] == '\r'
			switch {
			case c == ' ' || c == '\t' || c == '\r':
			case c == '#' && (j == 0 || l[j-1] == ' ' || l[j-1] == '\t'):
				break scan
			case (c == '"' || c == '\'') && start:
				quote = c
			case (c == '[' || c == '{') && (start || flow > 0):
				flow++
				start = true
			case (c == ']' || c == '}') && flow > 0:
				flow--
				start = false
			case c == ',' && flow > 0:
				start = true
			case (c == '-' || c == '?') && start && sep && flow == 0:
				if !first {
					compact++
				}
				first = false
			case c == ':' && (sep || flow > 0):
				start = true
			case (c == '|' || c == '>') && start && flow == 0:
				blockScalar = max(lineInd, 0)
				break scan
			case (c == '&' || c == '!') && start:
				for j+1 < len(l) && l[j+1] != ' ' && l[j+1] != '\t' {
					j++ // an anchor or a tag: the node follows it
				}
			default:
				start = false
			}
			if d := len(indents) + compact + flow; d > depth {
				depth, atLine = d, line
			}
		}
	}
	return depth, atLine
}

// mapDepth is how deeply a decoded change nests (maps and lists).
func mapDepth(v any) int {
	switch t := v.(type) {
	case map[string]any:
		d := 0
		for _, x := range t {
			d = max(d, mapDepth(x))
		}
		return d + 1
	case []any:
		d := 0
		for _, x := range t {
			d = max(d, mapDepth(x))
		}
		return d + 1
	}
	return 0
}
