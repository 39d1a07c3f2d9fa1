package toolsearch

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strings"
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
// each occurrence with the weight of its field).
const (
	k1 = 1.2
	b  = 0.75

	weightName      = 3
	weightDesc      = 1
	weightParamName = 1
	weightParamDesc = 1

	// capPostings bounds the work of a query term: a term in more tools
	// than this is scored through its capPostings best tools and, for tools
	// other terms found, a binary search of its postings.
	capPostings = 256
)

// Index is an inverted index over tools. The tools are numbered in name
// order; the postings of term t are docs[off[t]:off[t+1]] (ascending) with
// the weighted frequencies tfs at the same positions.
type Index struct {
	names  []string
	docLen []uint16 // weighted number of terms, saturated
	avgLen float64
	vocab  map[string]uint32
	off    []uint32
	docs   []uint32
	tfs    []uint16
	top    map[uint32][]uint32 // term -> its capPostings highest-impact docs, for common terms

	noSynonyms bool // for measuring the table's effect
}

// Build indexes tools. Of tools with the same name the first is kept. The
// cost is linear in the total number of terms.
func Build(tools []Tool) *Index {
	sorted := slices.Clone(tools)
	slices.SortStableFunc(sorted, func(x, y Tool) int { return strings.Compare(x.Name, y.Name) })
	sorted = slices.CompactFunc(sorted, func(x, y Tool) bool { return x.Name == y.Name })

	ix := &Index{
		names:  make([]string, len(sorted)),
		docLen: make([]uint16, len(sorted)),
		vocab:  map[string]uint32{},
	}
	type entry struct {
		term uint32
		tf   uint16
	}
	var (
		entries []entry  // every doc's (term, tf), doc after doc
		starts  []uint32 // doc d's entries are entries[starts[d]:starts[d+1]]
		df      []uint32
		total   float64
	)
	tf := map[uint32]uint16{}
	var order []uint32
	for d, t := range sorted {
		ix.names[d] = t.Name
		clear(tf)
		order = order[:0]
		n := 0
		add := func(w uint16) func(string) {
			return func(s string) {
				id, ok := ix.vocab[s]
				if !ok {
					id = uint32(len(ix.vocab))
					ix.vocab[s] = id
					df = append(df, 0)
				}
				if _, seen := tf[id]; !seen {
					order = append(order, id)
				}
				tf[id] = satAdd(tf[id], w)
				n += int(w)
			}
		}
		appendTerms(t.Name, add(weightName))
		appendTerms(t.Description, add(weightDesc))
		for name, desc := range params(t.Parameters) {
			appendTerms(name, add(weightParamName))
			appendTerms(desc, add(weightParamDesc))
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

	// Lay the postings out term by term (a counting sort; docs stay ascending).
	ix.off = make([]uint32, len(df)+1)
	for t, n := range df {
		ix.off[t+1] = ix.off[t] + n
	}
	ix.docs = make([]uint32, len(entries))
	ix.tfs = make([]uint16, len(entries))
	next := slices.Clone(ix.off[:len(df)])
	for d := range sorted {
		for _, e := range entries[starts[d]:starts[d+1]] {
			ix.docs[next[e.term]] = uint32(d)
			ix.tfs[next[e.term]] = e.tf
			next[e.term]++
		}
	}

	for t := range df {
		if df[t] <= capPostings {
			continue
		}
		lo, hi := ix.off[t], ix.off[t+1]
		best := slices.Clone(ix.docs[lo:hi])
		impact := func(i uint32) float64 { return ix.tfNorm(ix.tfs[i], ix.docs[i]) }
		idx := make([]uint32, hi-lo)
		for i := range idx {
			idx[i] = lo + uint32(i)
		}
		slices.SortStableFunc(idx, func(x, y uint32) int { return cmp.Compare(impact(y), impact(x)) })
		for i := range capPostings {
			best[i] = ix.docs[idx[i]]
		}
		if ix.top == nil {
			ix.top = map[uint32][]uint32{}
		}
		ix.top[uint32(t)] = slices.Clip(best[:capPostings])
	}
	return ix
}

func satAdd(a, b uint16) uint16 {
	if a > math.MaxUint16-b {
		return math.MaxUint16
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
func (ix *Index) tfNorm(tf uint16, doc uint32) float64 {
	f := float64(tf)
	return f * (k1 + 1) / (f + k1*(1-b+b*float64(ix.docLen[doc])/ix.avgLen))
}

func (ix *Index) idf(t uint32) float64 {
	n, df := float64(len(ix.names)), float64(ix.off[t+1]-ix.off[t])
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// qterm is a term of a query with its weight (1, or synonymWeight).
type qterm struct {
	id uint32
	w  float64
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

// Rank returns at most k tools that match query, best first (ties in name
// order). Tools that share no term with the query are not returned.
func (ix *Index) Rank(query string, k int) []Match {
	return ix.RankRecent(query, k, Recent{})
}

// RankRecent is Rank with recent use added to each tool's score; a recently
// used tool can be returned without matching the query.
func (ix *Index) RankRecent(query string, k int, recent Recent) []Match {
	if k <= 0 || len(ix.names) == 0 {
		return nil
	}
	var terms []qterm
	add := func(s string, w float64) {
		id, ok := ix.vocab[s]
		if !ok {
			return
		}
		for i := range terms {
			if terms[i].id == id {
				terms[i].w = max(terms[i].w, w)
				return
			}
		}
		terms = append(terms, qterm{id, w})
	}
	appendTerms(query, func(s string) {
		add(s, 1)
		if !ix.noSynonyms {
			for _, syn := range synonyms[s] {
				add(syn, synonymWeight)
			}
		}
	})
	score := map[uint32]float64{}
	// Rare terms: every posting. Common terms: their best tools become
	// candidates here and are scored with the rest below.
	var common []qterm
	for _, t := range terms {
		if best, ok := ix.top[t.id]; ok {
			common = append(common, t)
			for _, d := range best {
				score[d] += 0
			}
			continue
		}
		idf := t.w * ix.idf(t.id)
		for i := ix.off[t.id]; i < ix.off[t.id+1]; i++ {
			score[ix.docs[i]] += idf * ix.tfNorm(ix.tfs[i], ix.docs[i])
		}
	}
	for _, q := range common {
		t := q.id
		idf := q.w * ix.idf(t)
		post := ix.docs[ix.off[t]:ix.off[t+1]]
		for d := range score {
			if i, ok := slices.BinarySearch(post, d); ok {
				score[d] += idf * ix.tfNorm(ix.tfs[ix.off[t]+uint32(i)], d)
			}
		}
	}
	for name, u := range recent.Uses {
		if d, ok := slices.BinarySearch(ix.names, name); ok {
			score[uint32(d)] += recent.boost(u)
		}
	}

	out := make([]struct {
		doc   uint32
		score float64
	}, 0, len(score))
	for d, s := range score {
		if s > 0 {
			out = append(out, struct {
				doc   uint32
				score float64
			}{d, s})
		}
	}
	slices.SortFunc(out, func(x, y struct {
		doc   uint32
		score float64
	}) int {
		if c := cmp.Compare(y.score, x.score); c != 0 {
			return c
		}
		return cmp.Compare(x.doc, y.doc)
	})
	matches := make([]Match, 0, min(k, len(out)))
	for _, o := range out[:min(k, len(out))] {
		matches = append(matches, Match{Name: ix.names[o.doc], Score: o.score})
	}
	return matches
}
