package toolsearch

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// Tool is what the index reads of a tool.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON schema: {"properties": {name: {"description": ...}}}
}

// Match is a ranked tool.
type Match struct {
	Name  string
	Score float64
}

// BM25 parameters and field weights (a term's frequency in a tool counts
// each occurrence with the weight of its field), chosen on requests.json
// only (k1 made little difference; a lower b and a heavier name helped).
const (
	k1 = 1.2
	b  = 0.3

	weightName      = 6
	weightDesc      = 1
	weightParamName = 1
	weightParamDesc = 1

	// capPostings bounds the work of a query term: a term in more tools
	// than this is scored through its capPostings best tools (its head)
	// and, for tools other terms found, a binary search of its postings
	// (see RankRecent). 128 rather than 256 halved Rank's time at 10,000
	// tools; 64 made the binary searches cost more than it saved.
	capPostings = 128
)

// Index is an inverted index over tools. The tools are numbered in name
// order and the terms in byte order (term t is the string
// vocab[vocabOff[t]:vocabOff[t+1]], so a prefix is a range of terms); the
// postings of term t are docs[off[t]:off[t+1]] (ascending) with the
// weighted frequencies tfs at the same positions.
type Index struct {
	names    []string
	docLen   []uint16 // weighted number of terms, saturated
	avgLen   float64
	vocab    string
	vocabOff []uint32
	off      []uint32
	docs     []uint32
	tfs      []uint8            // saturated
	top      map[uint32]topList // for terms in more than capPostings tools
	pool     *sync.Pool         // of *scratch, sized for this index

	noSynonyms bool // for measuring the table's effect
	noPrefixes bool // for measuring prefix matching's effect
	noRelated  bool // for measuring the related table's effect
}

// topList is the impact-ordered head of a common term's postings.
type topList struct {
	pos   []uint32 // positions in docs/tfs of the capPostings highest-impact postings, best first
	floor float64  // the lowest tfNorm among them, which bounds every other posting's
}

// Build indexes tools. Of tools with the same name the first is kept. The
// cost is linear in the total number of terms (and n log n in the vocabulary).
func Build(tools []Tool) *Index {
	sorted := slices.Clone(tools)
	slices.SortStableFunc(sorted, func(x, y Tool) int { return strings.Compare(x.Name, y.Name) })
	sorted = slices.CompactFunc(sorted, func(x, y Tool) bool { return x.Name == y.Name })

	ix := &Index{
		names:  make([]string, len(sorted)),
		docLen: make([]uint16, len(sorted)),
	}
	type entry struct {
		term uint32
		tf   uint8
	}
	var (
		ids     = map[string]uint32{} // term -> id in order of appearance
		entries []entry               // every doc's (term, tf), doc after doc
		starts  []uint32              // doc d's entries are entries[starts[d]:starts[d+1]]
		df      []uint32
		total   float64
	)
	tf := map[uint32]uint8{}
	st := stems{}
	var order []uint32
	for d, t := range sorted {
		ix.names[d] = t.Name
		clear(tf)
		order = order[:0]
		n := 0
		add := func(w uint8) func(string) {
			return func(s string) {
				id, ok := ids[s]
				if !ok {
					id = uint32(len(ids))
					ids[s] = id
					df = append(df, 0)
				}
				if _, seen := tf[id]; !seen {
					order = append(order, id)
				}
				tf[id] = satAdd(tf[id], w)
				n += int(w)
			}
		}
		appendTerms(t.Name, st, add(weightName))
		appendTerms(t.Description, st, add(weightDesc))
		for name, desc := range params(t.Parameters) {
			appendTerms(name, st, add(weightParamName))
			appendTerms(desc, st, add(weightParamDesc))
		}
		ix.docLen[d] = uint16(min(n, math.MaxUint16))
		total += float64(n)
		starts = append(starts, uint32(len(entries)))
		for _, id := range order {
			entries = append(entries, entry{id, tf[id]})
			df[id]++
		}
	}
	starts = append(starts, uint32(len(entries)))
	if len(sorted) > 0 {
		ix.avgLen = total / float64(len(sorted))
	}

	// Number the terms in byte order and lay their strings end to end.
	words := make([]string, len(ids))
	for s, id := range ids {
		words[id] = s
	}
	byWord := make([]uint32, len(words)) // sorted id -> first id
	for i := range byWord {
		byWord[i] = uint32(i)
	}
	slices.SortFunc(byWord, func(x, y uint32) int { return strings.Compare(words[x], words[y]) })
	renum := make([]uint32, len(words)) // first id -> sorted id
	var vocab strings.Builder
	ix.vocabOff = make([]uint32, len(words)+1)
	for t, id := range byWord {
		renum[id] = uint32(t)
		vocab.WriteString(words[id])
		ix.vocabOff[t+1] = uint32(vocab.Len())
	}
	ix.vocab = vocab.String()

	// Lay the postings out term by term (a counting sort; docs stay ascending).
	ix.off = make([]uint32, len(df)+1)
	for t, id := range byWord {
		ix.off[t+1] = ix.off[t] + df[id]
	}
	ix.docs = make([]uint32, len(entries))
	ix.tfs = make([]uint8, len(entries))
	next := slices.Clone(ix.off[:len(df)])
	for d := range sorted {
		for _, e := range entries[starts[d]:starts[d+1]] {
			t := renum[e.term]
			ix.docs[next[t]] = uint32(d)
			ix.tfs[next[t]] = e.tf
			next[t]++
		}
	}

	for t := range len(df) {
		lo, hi := ix.off[t], ix.off[t+1]
		if hi-lo <= capPostings {
			continue
		}
		pos, floor := ix.head(lo, hi)
		if ix.top == nil {
			ix.top = map[uint32]topList{}
		}
		ix.top[uint32(t)] = topList{pos: pos, floor: floor}
	}
	n := len(sorted)
	ix.pool = &sync.Pool{New: func() any {
		return &scratch{score: make([]float64, n), mask: make([]uint16, n)}
	}}
	return ix
}

// head selects the capPostings highest-impact postings of docs[lo:hi]
// (of equal impact, the earlier tool), best first, and the lowest impact
// among them: a bounded heap, so a term in many tools costs its number
// of tools, not that times its logarithm.
func (ix *Index) head(lo, hi uint32) ([]uint32, float64) {
	type posting struct {
		impact float64
		pos    uint32
	}
	better := func(x, y posting) bool { return x.impact > y.impact || x.impact == y.impact && x.pos < y.pos }
	h := make([]posting, 0, capPostings) // a heap whose root is the worst kept
	for p := lo; p < hi; p++ {
		h = keep(h, posting{ix.tfNorm(ix.tfs[p], ix.docs[p]), p}, capPostings, better)
	}
	slices.SortFunc(h, func(x, y posting) int {
		if better(x, y) {
			return -1
		}
		return 1
	})
	pos := make([]uint32, len(h))
	for i, c := range h {
		pos[i] = c.pos
	}
	return pos, h[len(h)-1].impact
}

// term is the string of term t.
func (ix *Index) term(t int) string { return ix.vocab[ix.vocabOff[t]:ix.vocabOff[t+1]] }

// nterms is the size of the vocabulary.
func (ix *Index) nterms() int { return len(ix.vocabOff) - 1 }

// lookup finds a term by its string.
func (ix *Index) lookup(s string) (uint32, bool) {
	t := ix.lowerBound(s)
	return uint32(t), t < ix.nterms() && ix.term(t) == s
}

// lowerBound is the first term not before s in byte order.
func (ix *Index) lowerBound(s string) int {
	lo, hi := 0, ix.nterms()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ix.term(m) < s {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func satAdd(a, b uint8) uint8 {
	if a > math.MaxUint8-b {
		return math.MaxUint8
	}
	return a + b
}

// params reads the parameter names and descriptions of a JSON schema; a
// schema that is not one yields none.
func params(schema json.RawMessage) map[string]string {
	if len(schema) == 0 {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := make(map[string]string, len(s.Properties))
	for name, p := range s.Properties {
		out[name] = p.Description
	}
	return out
}

// Len is the number of tools indexed.
func (ix *Index) Len() int { return len(ix.names) }

// tfNorm is BM25's saturated, length-normalized term frequency.
func (ix *Index) tfNorm(tf uint8, doc uint32) float64 {
	f := float64(tf)
	return f * (k1 + 1) / (f + k1*(1-b+b*float64(ix.docLen[doc])/ix.avgLen))
}

func (ix *Index) idf(t uint32) float64 {
	n, df := float64(len(ix.names)), float64(ix.off[t+1]-ix.off[t])
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// Use is how a tool was used recently.
type Use struct {
	Last  time.Time
	Count int
}

// Recent is the recent use of tools, for RankRecent. A tool used at Now
// gains Weight·ln(1+Count), halved every HalfLife since.
type Recent struct {
	Uses     map[string]Use
	Now      time.Time
	HalfLife time.Duration // 0: one hour
	Weight   float64       // 0: 1
}

func (r Recent) boost(u Use) float64 {
	half, w := r.HalfLife, r.Weight
	if half <= 0 {
		half = time.Hour
	}
	if w == 0 {
		w = 1
	}
	age := max(r.Now.Sub(u.Last), 0)
	return w * math.Exp2(-float64(age)/float64(half)) * math.Log1p(float64(max(u.Count, 0)))
}
