package toolsearch

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// prefixWeight is the weight of a term a query gains by prefix: a
	// longer indexed term that starts with a query term ("week" finds
	// "weekday"), or a shorter one that a query term starts with.
	prefixWeight = 0.5
	// minPrefix is the shortest term matched by prefix: shorter ones
	// ("log", "add") start too many unrelated words.
	minPrefix = 4
	// maxExpand is the most longer terms a query term expands to; a term
	// that starts more is too unspecific a prefix and expands to none.
	maxExpand = 8
	// maxCommon is the most common (capped) terms of a query whose
	// postings beyond their best capPostings are still searched; the
	// rest count through their best tools only. One bit of scratch.mask
	// each; the top bit, seenBit, marks a tool as a candidate.
	maxCommon = 15
	seenBit   = 1 << 15
	// maxQueryTerms bounds the terms of one query (a pasted page would
	// otherwise make a query as costly as its length): the first ones,
	// where a request usually says what it wants, are kept.
	maxQueryTerms = 64
	// maxAcronym is the longest acronym looked up: three or four words.
	maxAcronym = 4
	// lightWeight scales a light word of the query (see light) and the
	// terms it adds. 0.5 rather than 1 gained one request at 8 (of the
	// four labeled sets pooled, 317 requests) and eight at 1, 3 or 5, and
	// lost none; 0.3 did as well at 8 and lost one at 1.
	lightWeight = 0.5
)

// light tells whether term s is a light word: an adverb particle, the
// second word of a phrasal verb ("pull out", "break up", "take off"), or
// a light verb, one whose meaning comes from its object ("make it
// smaller", "keep a record", "take a note"). Alone such a word says
// little of what is meant, while a tool's text has it in phrases of its
// own ("stands out", "makes"); the phrases table gives the meaning of
// the common pairs. "Off" names half the switches ("turn_off_tv"), which
// still differ by it from those that say "on" (a stop word).
func light(s string) bool {
	switch s {
	case "out", "up", "down", "off", "back", "awai", // "awai": Stem("away")
		"make", "made", "take", "took", "taken", "keep", "kept", "come", "came":
		return true
	}
	return false
}

// qterm is a term of a query with its weight (1, synonymWeight,
// relatedWeight, relatedWeightOOV or prefixWeight; times lightWeight for
// a light word's terms).
type qterm struct {
	id uint32
	w  float64
}

// queryTerms are the terms of a query that the index knows, with the
// terms its phrases, acronyms, pasted values (shapeTerms), synonyms,
// related words and prefixes add.
func (ix *Index) queryTerms(query string) []qterm {
	var terms []qterm
	addAll := func(id uint32, w float64) {
		for i := range terms {
			if terms[i].id == id {
				terms[i].w = max(terms[i].w, w)
				return
			}
		}
		if len(terms) < maxQueryTerms {
			terms = append(terms, qterm{id, w})
		}
	}
	add := addAll
	if !ix.noSynonyms {
		ix.addPhrases(query, add)
	}
	ix.addAcronyms(query, add)
	shapeTerms(query, func(w string) {
		appendTerms(w, nil, func(s string) {
			if id, ok := ix.lookup(s); ok {
				add(id, synonymWeight)
			}
		})
	})
	appendTerms(query, nil, func(s string) {
		// A light word weighs less, and so do the terms it adds.
		add := add
		if light(s) {
			add = func(id uint32, w float64) { addAll(id, lightWeight*w) }
		}
		id, known := ix.lookup(s)
		if known {
			add(id, 1)
		}
		if !ix.noSynonyms {
			for _, syn := range synonyms()[s] {
				if id, ok := ix.lookup(syn); ok {
					add(id, synonymWeight)
				}
			}
		}
		if !ix.noRelated {
			ix.addRelated(s, known, add)
		}
		if len(s) < minPrefix || ix.noPrefixes {
			return
		}
		lo := ix.lowerBound(s)
		hi := lo
		for hi < ix.nterms() && hi-lo <= maxExpand+1 && strings.HasPrefix(ix.term(hi), s) {
			hi++
		}
		if n := hi - lo; n <= maxExpand || n == maxExpand+1 && ix.term(lo) == s {
			for t := lo; t < hi; t++ {
				// A compound ("reading-eas") is no longer form of its
				// first part.
				if strings.IndexByte(ix.term(t), '-') < 0 {
					add(uint32(t), prefixWeight)
				}
			}
		}
		for n := minPrefix; n < len(s); n++ {
			if id, ok := ix.lookup(s[:n]); ok {
				add(id, prefixWeight)
			}
		}
	})
	return terms
}

// addAcronyms adds the acronyms of query's word runs that the index
// knows ("body mass index" finds "bmi"): the initials of three or four
// words in a row, with nothing but spaces between them, none of them a
// stop word or a number, and the acronym not a word of its own (the
// related table does not know it). Initials across a stop word or a
// punctuation mark ("example.com up? ping" is not "cup") or forming an
// ordinary word ("come up tomorrow" is not "cut") are chance.
func (ix *Index) addAcronyms(query string, add func(uint32, float64)) {
	var initials [maxAcronym]byte
	run := 0 // words in the current run
	var word []byte
	gap := false // a separator other than spaces since the last word
	flush := func() {
		if len(word) == 0 {
			return
		}
		w := string(word)
		word = word[:0]
		if gap || stopWords()[w] || len(w) < 2 {
			run = 0
		}
		gap = false
		if stopWords()[w] || len(w) < 2 {
			return
		}
		copy(initials[:], initials[1:])
		initials[maxAcronym-1] = w[0]
		run++
		for n := 3; n <= min(run, maxAcronym); n++ {
			a := string(initials[maxAcronym-n:])
			if id, ok := ix.lookup(a); ok && related(a) == "" {
				add(id, 1)
			}
		}
	}
	for _, r := range query {
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
			word = append(word, byte(unicode.ToLower(r)))
		case r == ' ':
			flush()
		default:
			flush()
			gap = true
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				// A word with a digit or a non-ASCII letter ends the run.
				run = 0
			}
		}
	}
	flush()
}

// addPhrases adds the terms of the phrases (see phrases) in query.
func (ix *Index) addPhrases(query string, add func(uint32, float64)) {
	b := make([]byte, 1, len(query)+2)
	b[0] = ' '
	for _, r := range query {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b = utf8.AppendRune(b, unicode.ToLower(r))
		case b[len(b)-1] != ' ':
			b = append(b, ' ')
		}
	}
	if b[len(b)-1] != ' ' {
		b = append(b, ' ')
	}
	q := string(b)
	for _, p := range phrases() {
		if strings.Contains(q, p.words) {
			if id, ok := ix.lookup(p.term); ok {
				add(id, synonymWeight)
			}
		}
	}
}

// scratch is the per-query state of RankRecent, reused through the
// index's pool so that a query allocates no per-tool map: score and mask
// are indexed by tool and zero outside touched.
type scratch struct {
	score   []float64
	mask    []uint16 // bit j: common term j counted; seenBit: in touched
	touched []uint32
	best    []cand
}

type cand struct {
	doc   uint32
	score float64
}

// better orders candidates best first: higher score, then name order.
func better(x, y cand) bool {
	return x.score > y.score || x.score == y.score && x.doc < y.doc
}

func (sc *scratch) touch(d uint32) {
	if sc.mask[d]&seenBit == 0 {
		sc.mask[d] |= seenBit
		sc.touched = append(sc.touched, d)
	}
}

// topK leaves the k best touched tools with a positive score in sc.best
// as a heap whose root is the worst of them, in O(touched·log k).
func (sc *scratch) topK(k int) {
	h := sc.best[:0]
	for _, d := range sc.touched {
		if c := (cand{d, sc.score[d]}); c.score > 0 {
			h = keep(h, c, k, better)
		}
	}
	sc.best = h
}

func (sc *scratch) reset() {
	for _, d := range sc.touched {
		sc.score[d], sc.mask[d] = 0, 0
	}
	sc.touched, sc.best = sc.touched[:0], sc.best[:0]
}

// lookupScore is the contribution of term t (idf already weighted) to tool
// d, found by a binary search of its postings.
func (ix *Index) lookupScore(t uint32, idf float64, d uint32) float64 {
	lo := ix.off[t]
	if i, ok := slices.BinarySearch(ix.docs[lo:ix.off[t+1]], d); ok {
		return idf * ix.tfNorm(ix.tfs[lo+uint32(i)], d)
	}
	return 0
}

// Rank returns at most k tools that match query, best first (ties in name
// order). Tools that share no term with the query are not returned.
func (ix *Index) Rank(query string, k int) []Match {
	return ix.RankRecent(query, k, Recent{})
}

// RankRecent is Rank with recent use added to each tool's score; a recently
// used tool can be returned without matching the query.
//
// Its cost is bounded by the query, not the toolbox: a rare term adds its
// postings (at most capPostings), a common one the capPostings best of
// them (its head, impact-ordered); a candidate missing a common term is
// looked up in that term's postings (a binary search) only if the term's
// bound (the lowest impact in its head) could lift it into the top k.
// Only when the bounds of several common terms together could lift a tool
// that no list reached are those terms' postings read in full (MaxScore),
// which keeps the result exact; with k = 8 it is rare. A query of more
// than maxCommon common terms counts the others through their heads only.
func (ix *Index) RankRecent(query string, k int, recent Recent) []Match {
	if k <= 0 || len(ix.names) == 0 {
		return nil
	}
	sc := ix.pool.Get().(*scratch)
	defer func() {
		sc.reset()
		ix.pool.Put(sc)
	}()
	return ix.rank(query, k, recent, sc)
}

// rank is RankRecent with its scratch state, which it leaves dirty: the
// tools it looked at are sc.touched.
func (ix *Index) rank(query string, k int, recent Recent, sc *scratch) []Match {
	terms := ix.queryTerms(query)

	type common struct {
		id    uint32
		idf   float64
		bound float64 // idf times the term's floor
	}
	var commons []common
	var all uint16 // the bits of commons
	for _, q := range terms {
		idf := q.w * ix.idf(q.id)
		if tl, ok := ix.top[q.id]; ok {
			var bit uint16
			if len(commons) < maxCommon {
				bit = 1 << len(commons)
				all |= bit
				commons = append(commons, common{q.id, idf, idf * tl.floor})
			}
			for _, p := range tl.pos {
				d := ix.docs[p]
				sc.touch(d)
				sc.score[d] += idf * ix.tfNorm(ix.tfs[p], d)
				sc.mask[d] |= bit
			}
			continue
		}
		for p := ix.off[q.id]; p < ix.off[q.id+1]; p++ {
			d := ix.docs[p]
			sc.touch(d)
			sc.score[d] += idf * ix.tfNorm(ix.tfs[p], d)
		}
	}
	for name, u := range recent.Uses {
		if d, ok := slices.BinarySearch(ix.names, name); ok {
			if b := recent.boost(u); b > 0 {
				sc.touch(uint32(d))
				sc.score[d] += b
			}
		}
	}

	if len(commons) > 0 {
		// The k-th best score so far only grows; a candidate whose bound
		// stays below it cannot make the top k.
		sc.topK(k)
		var theta float64
		if len(sc.best) == k {
			theta = sc.best[0].score
		}
		for _, d := range sc.touched {
			missing := all &^ sc.mask[d]
			if missing == 0 {
				continue
			}
			bound := sc.score[d]
			for j, c := range commons {
				if missing&(1<<j) != 0 {
					bound += c.bound
				}
			}
			if bound < theta {
				continue
			}
			for j, c := range commons {
				if missing&(1<<j) == 0 {
					continue
				}
				sc.score[d] += ix.lookupScore(c.id, c.idf, d)
			}
		}

		// A tool no term's postings or head reached has only common
		// terms, each adding at most its bound. The terms whose bounds,
		// smallest first, stay below the k-th score together cannot lift
		// a tool into the top k alone (MaxScore); the postings of the
		// others are read in full for such tools. With k below
		// capPostings this is rare: it takes several common terms.
		sc.topK(k)
		theta = 0
		if len(sc.best) == k {
			theta = sc.best[0].score
		}
		slices.SortFunc(commons, func(x, y common) int { return cmp.Compare(x.bound, y.bound) })
		sum := 0.0
		for e, c := range commons {
			if sum += c.bound; sum < theta {
				continue
			}
			for _, ce := range commons[e:] {
				for p := ix.off[ce.id]; p < ix.off[ce.id+1]; p++ {
					d := ix.docs[p]
					if sc.mask[d]&seenBit != 0 {
						continue
					}
					sc.touch(d)
					for _, c := range commons {
						sc.score[d] += ix.lookupScore(c.id, c.idf, d)
					}
				}
			}
			break
		}
	}

	sc.topK(k)
	slices.SortFunc(sc.best, func(x, y cand) int {
		if c := cmp.Compare(y.score, x.score); c != 0 {
			return c
		}
		return cmp.Compare(x.doc, y.doc)
	})
	if len(sc.best) == 0 {
		return nil
	}
	matches := make([]Match, len(sc.best))
	for i, c := range sc.best {
		matches[i] = Match{Name: ix.names[c.doc], Score: c.score}
	}
	return matches
}
