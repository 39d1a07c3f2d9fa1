package toolsearch

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"testing"
	"time"
)

// bruteRank scores every tool with every posting of every query term:
// what RankRecent computes without its bounds.
func bruteRank(ix *Index, query string, k int, recent Recent) []Match {
	score := make([]float64, ix.Len())
	for _, q := range ix.queryTerms(query) {
		idf := q.w * ix.idf(q.id)
		for p := ix.off[q.id]; p < ix.off[q.id+1]; p++ {
			score[ix.docs[p]] += idf * ix.tfNorm(ix.tfs[p], ix.docs[p])
		}
	}
	for name, u := range recent.Uses {
		if d, ok := slices.BinarySearch(ix.names, name); ok {
			score[d] += recent.boost(u)
		}
	}
	var out []Match
	for d, s := range score {
		if s > 0 {
			out = append(out, Match{ix.names[d], s})
		}
	}
	slices.SortStableFunc(out, func(x, y Match) int { return cmp.Compare(y.Score, x.Score) })
	return out[:min(k, len(out))]
}

// TestRankExact checks that the bounded ranking (impact-ordered heads of
// common terms, bound-driven lookups) returns what scoring every posting
// does, on toolboxes where many terms are common.
func TestRankExact(t *testing.T) {
	t.Parallel()
	base, reqs := loadTools(t), loadRequests(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, n := range []int{1000, 10000} {
		ix := Build(scaled(base, n))
		if len(ix.top) == 0 {
			t.Fatalf("%d tools: no common term, the test would not exercise the bounds", n)
		}
		recent := Recent{Now: now, Uses: map[string]Use{
			ix.names[3]: {Last: now, Count: 2}, ix.names[n/2]: {Last: now.Add(-time.Hour), Count: 9},
		}}
		for _, r := range reqs {
			for _, q := range []string{r.Request, r.Query} {
				for _, k := range []int{1, offered, 32} {
					got, want := ix.RankRecent(q, k, recent), bruteRank(ix, q, k, recent)
					if len(got) != len(want) {
						t.Fatalf("%d tools, %q, k=%d: %d matches, want %d", n, q, k, len(got), len(want))
					}
					for i := range got {
						// Equal scores may come in either order; the scores must agree.
						if math.Abs(got[i].Score-want[i].Score) > 1e-9*want[i].Score {
							t.Fatalf("%d tools, %q, k=%d: match %d is %v, want %v", n, q, k, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestRankConcurrent ranks from many goroutines at once (the scratch
// state comes from a pool); run with -race.
func TestRankConcurrent(t *testing.T) {
	t.Parallel()
	ix := Build(scaled(loadTools(t), 2000))
	reqs := loadRequests(t)
	want := make([][]Match, len(reqs))
	for i, r := range reqs {
		want[i] = ix.Rank(r.Request, offered)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range reqs {
				i = (i + g*7) % len(reqs)
				if got := ix.Rank(reqs[i].Request, offered); !slices.Equal(got, want[i]) {
					t.Errorf("concurrent Rank(%q) = %v, want %v", reqs[i].Request, got, want[i])
				}
			}
		})
	}
	wg.Wait()
}

// TestQueryExpansion checks each way a query reaches a tool whose words
// it does not use, on a toolbox where only that way leads there.
func TestQueryExpansion(t *testing.T) {
	t.Parallel()
	ix := Build([]Tool{
		{Name: "weekday_of_date", Description: "Returns the name of the day a calendar date falls on."},
		{Name: "calculate_bmi", Description: "Weight divided by the square of height."},
		{Name: "count_words", Description: "Counts the words of a text."},
		{Name: "convert_usd_to_eur", Description: "Converts an amount."},
		{Name: "convert_kilograms_to_pounds", Description: "Converts a weight."},
		{Name: "validate_yaml", Description: "Reports syntax errors of a YAML document."},
		{Name: "grayscale_image", Description: "Removes the colour from a picture."},
		{Name: "resize_image", Description: "Scales a picture."},
		{Name: "watch_stock_price", Description: "Alerts when a price moves."},
		{Name: "reverse_text", Description: "Reverses a text."},
		{Name: "misc_tool", Description: "Filler words: text picture amount price."},
		{Name: "fetch_earthquakes", Description: "Lists recent seismic events."},
		{Name: "lint_shell_script", Description: "Checks a script."},
		{Name: "lint_python_code", Description: "Checks a script."},
		{Name: "split_epub", Description: "Splits an e-book into chapters."},
		{Name: "decode_url", Description: "Decodes a percent-escaped string."},
		{Name: "roman_to_integer", Description: "Reads a numeral."},
		{Name: "cut_video", Description: "Shortens a clip."},
	})
	for _, c := range []struct{ q, want string }{
		{"what week was it", "weekday_of_date"},        // prefix: a longer term
		{"weekdays", "weekday_of_date"},                // Porter: weekdays -> weekdai
		{"my body mass index", "calculate_bmi"},        // acronym
		{"how many in this text", "count_words"},       // phrase
		{"$40 in €", "convert_usd_to_eur"},             // currency signs
		{"5 kg in lbs", "convert_kilograms_to_pounds"}, // unit abbreviations
		{"is this yaml valid", "validate_yaml"},        // Porter: validate -> valid
		{"black and white picture", "grayscale_image"}, // phrase over a shared word
		{"monitor my shares", "watch_stock_price"},     // vocabulary bridge
		{"any quakes in Chile", "fetch_earthquakes"},   // related (WordNet): quake -> earthquake
		{"lint deploy.sh", "lint_shell_script"},        // a file name's extension
		{"my ebook", "split_epub"},                     // a hyphenated compound as one word
		{"caf%C3%A9%20menu", "decode_url"},             // a pasted value's shape
		{"what's XLII", "roman_to_integer"},            // likewise
	} {
		ms := ix.Rank(c.q, 1)
		if len(ms) == 0 || ms[0].Name != c.want {
			t.Errorf("Rank(%q) = %v, want %s first", c.q, ms, c.want)
		}
	}
	// Initials across a punctuation mark or a stop word, or forming a
	// word, are no acronym.
	for _, q := range []string{"come up tomorrow", "my body, mass index", "body of mass index"} {
		if ms := ix.Rank(q, 1); len(ms) != 0 {
			t.Errorf("Rank(%q) = %v, want none", q, ms)
		}
	}
	noPrefix := *ix
	noPrefix.noPrefixes = true
	if ms := noPrefix.Rank("what week was it", 1); len(ms) != 0 {
		t.Errorf("without prefixes, %q found %v", "what week was it", ms)
	}
	noRel := *ix
	noRel.noRelated = true
	if ms := noRel.Rank("any quakes in Chile", 1); len(ms) != 0 {
		t.Errorf("without the related table, %q found %v", "any quakes in Chile", ms)
	}
	noSyn := *ix
	noSyn.noSynonyms = true
	for _, c := range []struct{ q, want string }{
		{"how many in this text", "count_words"},
		{"black and white picture", "grayscale_image"},
		{"monitor my shares", "watch_stock_price"},
	} {
		if ms := noSyn.Rank(c.q, 1); len(ms) > 0 && ms[0].Name == c.want {
			t.Errorf("without phrases and synonyms, %q still found %s: the case tests nothing", c.q, c.want)
		}
	}
}
