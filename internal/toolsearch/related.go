package toolsearch

import (
	_ "embed"
	"strings"
)

// The weights of a term a query gains from the related table. The table
// is general English, not written for tool names, so its links are looser
// than the synonyms': a word the toolbox knows gains its relatives at
// relatedWeight, well below its own weight, so they reorder rather than
// swamp its matches; a word the toolbox does not know ("quakes", "telly")
// matches nothing itself, so its relatives are all it has and weigh as
// much as a synonym. Chosen on the three labeled sets pooled (217
// requests), among 0 to 0.5 for each: the figures moved by one or two
// requests only, so the choice is weakly determined.
const (
	relatedWeight    = 0.15
	relatedWeightOOV = 0.5

	// relatedShare: a related term counts only if at most this share of
	// the tools have it (and never more than capPostings, so that each
	// costs at most its postings): a relative that many tools share
	// ("place", "set", "name") is too general to tell tools apart, and
	// it is the costly kind. 1/32 of the tools rather than capPostings
	// alone gained one request of the 217, and each query has fewer,
	// rarer terms to score.
	relatedShare = 32
)

// relatedMaxDF is the most tools a related term may be in to count (in a
// toolbox of under 2·relatedShare tools, one).
func (ix *Index) relatedMaxDF() uint32 {
	return uint32(min(capPostings, max(1, len(ix.names)/relatedShare)))
}

// addRelated adds the related terms of query term s (known: the index
// has s itself) that are specific enough (relatedMaxDF).
func (ix *Index) addRelated(s string, known bool, add func(uint32, float64)) {
	w := relatedWeight
	if !known {
		w = relatedWeightOOV
	}
	maxDF := ix.relatedMaxDF()
	for rest := related(s); rest != ""; {
		var r string
		r, rest, _ = strings.Cut(rest, " ")
		if id, ok := ix.lookup(r); ok && ix.off[id+1]-ix.off[id] <= maxDF {
			add(id, w)
		}
	}
}

// relatedData is the related-terms table, derived from WordNet 3.0 by
// TestRelatedTable (wordnet_test.go; licence in WORDNET-LICENSE): one
// line per term, "term rel rel ...", in byte order, all terms stemmed.
// It stays in the binary's read-only data and is searched in place (a
// binary search over its lines), so it costs no heap and no start-up time.
//
//go:embed related.txt
var relatedData string

// related returns the terms related to term t, space-separated ("" if none).
func related(t string) string {
	// Binary search by byte position: lo is a line start, and the lines
	// left are those that start in [lo, hi). The line probed is the first
	// to start at or after the middle (found by a forward scan, which is
	// faster than a backward one).
	lo, hi := 0, len(relatedData)
	for lo < hi {
		s := lo + (hi-lo)/2
		if s > lo {
			s += strings.IndexByte(relatedData[s-1:], '\n') // -1 (none) cannot be: the table ends in one
		}
		if s >= hi {
			hi = lo + (hi-lo)/2 // no line starts in [middle, hi)
			continue
		}
		e := s + strings.IndexByte(relatedData[s:], '\n')
		key, rest, _ := strings.Cut(relatedData[s:e], " ")
		switch {
		case key == t:
			return rest
		case key < t:
			lo = e + 1
		default:
			hi = s
		}
	}
	return ""
}
