package toolsearch

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStem checks the stemmer against examples from Porter's paper and
// the words of tools that must meet.
func TestStem(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		// Porter (1980), steps 1 to 5.
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled",
		"motoring": "motor", "sing": "sing", "conflated": "conflat", "troubled": "troubl",
		"sized": "size", "hopping": "hop", "tanned": "tan", "falling": "fall", "hissing": "hiss",
		"fizzed": "fizz", "failing": "fail", "filing": "file", "happy": "happi", "sky": "sky",
		"relational": "relat", "conditional": "condit", "rational": "ration", "valenci": "valenc",
		"digitizer": "digit", "conformabli": "conform", "radicalli": "radic",
		"differentli": "differ", "vileli": "vile", "analogousli": "analog",
		"vietnamization": "vietnam", "predication": "predic", "operator": "oper",
		"feudalism": "feudal", "decisiveness": "decis", "hopefulness": "hope",
		"callousness": "callous", "formaliti": "formal", "sensitiviti": "sensit",
		"sensibiliti": "sensibl", "triplicate": "triplic", "formative": "form",
		"formalize": "formal", "electriciti": "electr", "electrical": "electr",
		"hopeful": "hope", "goodness": "good", "revival": "reviv", "allowance": "allow",
		"inference": "infer", "airliner": "airlin", "gyroscopic": "gyroscop",
		"adjustable": "adjust", "defensible": "defens", "irritant": "irrit",
		"replacement": "replac", "adjustment": "adjust", "dependent": "depend",
		"adoption": "adopt", "homologou": "homolog", "communism": "commun", "activate": "activ",
		"angulariti": "angular", "homologous": "homolog", "effective": "effect",
		"bowdlerize": "bowdler", "probate": "probat", "rate": "rate", "cease": "ceas",
		"controll": "control", "roll": "roll", "generalizations": "gener", "oscillators": "oscil",
		// Forms that must meet, and words left alone.
		"converted": "convert", "converter": "convert", "converts": "convert", "converting": "convert",
		"valid": "valid", "validate": "valid", "validation": "valid",
		"words": "word", "queries": "queri", "query": "queri", "users": "user",
		"is": "is", "é": "é", "Words": "Words", "naïve": "naïve",
	} {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTerms(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"convert_celsius_to_fahrenheit", []string{"convert", "celsiu", "fahrenheit"}},
		{"fetchRSSTitles", []string{"fetch", "rsstitl"}},
		{"parseCsvColumn", []string{"pars", "csv", "column"}},
		{"How many words are in this paragraph?", []string{"word", "paragraph"}},
		{"what's 30°C in °F", []string{"celsiu", "fahrenheit"}},
		{"451 F is 30c, not 10k", []string{"fahrenheit", "celsiu"}},
		{"grade F", []string{"grade"}},
		{"20°Celsius", []string{"celsiu"}},
		{"$20 in € or £, ¥?", []string{"usd", "eur", "gbp", "jpy"}},
		{"5kg in lbs", []string{"kilogram", "pound"}},
		{"120 km/h is how many mph", []string{"kmh", "mph"}},
		{"2 cups is 473ml", []string{"cup", "millilit"}},
		{"dollars to euros", []string{"usd", "eur"}},
		{"the 4th at 3pm", nil},
		{"unpack a .tgz, a 7z and a .jpg", []string{"unpack", "tar", "gz", "seven", "zip", "jpeg"}},
		{"mp3 sha256 base64", []string{"mp3", "sha256", "base64"}},
		{"lint deploy.sh, notes.MD and a .py", []string{"lint", "deploi", "sh", "shell", "note", "md", "markdown", "py", "python"}},
		{"my JS and TS code", []string{"javascript", "ts", "code"}},
		{"an e-book, two check-ins, x-10", []string{"book", "ebook", "two", "check", "check-in"}},
		{"every 15 min for 2h, 30sec, the min value", []string{"minut", "hour", "second", "min", "valu"}},
		{"", nil},
	} {
		if diff := cmp.Diff(c.want, Terms(c.in)); diff != "" {
			t.Errorf("Terms(%q) (-want +got):\n%s", c.in, diff)
		}
	}
}

func TestRank(t *testing.T) {
	t.Parallel()
	ix := Build([]Tool{
		{Name: "word_count", Description: "Counts the words of a text.", Parameters: []byte(`{"properties":{"text":{"description":"the text"}}}`)},
		{Name: "convert_celsius_to_fahrenheit", Description: "Temperature conversion.", Parameters: []byte(`{"properties":{"celsius":{"description":"degrees"}}}`)},
		{Name: "fetch_rss_titles", Description: "Headlines of a feed.", Parameters: []byte(`not json`)},
		{Name: "word_count", Description: "a duplicate, ignored"},
	})
	if ix.Len() != 3 {
		t.Fatalf("Len = %d, want 3", ix.Len())
	}
	names := func(ms []Match) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	for _, c := range []struct {
		q    string
		k    int
		want []string
	}{
		{"how many words?", 5, []string{"word_count"}},
		{"30 degrees celsius", 5, []string{"convert_celsius_to_fahrenheit"}},
		{"rss feed titles", 1, []string{"fetch_rss_titles"}},
		{"the weather", 5, nil},
		{"words", 0, nil},
	} {
		if diff := cmp.Diff(c.want, names(ix.Rank(c.q, c.k))); diff != "" {
			t.Errorf("Rank(%q, %d) (-want +got):\n%s", c.q, c.k, diff)
		}
	}
	if got := Build(nil).Rank("anything", 3); got != nil {
		t.Errorf("empty index ranked %v", got)
	}
}

func TestRankRecent(t *testing.T) {
	t.Parallel()
	ix := Build([]Tool{
		{Name: "count_words", Description: "Counts words."},
		{Name: "count_lines", Description: "Counts lines."},
		{Name: "fetch_rss_titles", Description: "Headlines of a feed."},
	})
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	recent := Recent{Now: now, Uses: map[string]Use{
		"count_lines":      {Last: now.Add(-time.Minute), Count: 3},
		"fetch_rss_titles": {Last: now.Add(-48 * time.Hour), Count: 3},
		"gone":             {Last: now, Count: 9},
	}}
	got := ix.RankRecent("count", 3, recent)
	if len(got) != 3 || got[0].Name != "count_lines" || got[1].Name != "count_words" {
		t.Fatalf("RankRecent = %v, want count_lines first, then count_words", got)
	}
	if got[2].Name != "fetch_rss_titles" || got[2].Score > 1e-6 {
		t.Errorf("a use two days old should have decayed to nothing: %v", got[2])
	}
	if b := (Recent{Now: now}).boost(Use{Last: now.Add(-time.Hour), Count: 1}); b < 0.34 || b > 0.35 {
		t.Errorf("boost after one half-life = %v, want ln2/2", b)
	}
}

// TestRankBoundedCandidates checks that a query of one very common term
// looks at no more than capPostings tools, however many share it, and
// that asking for all of them still finds all.
func TestRankBoundedCandidates(t *testing.T) {
	t.Parallel()
	tools := scaled(loadTools(t), 10000)
	ix := Build(tools)
	ix.noRelated = true // one term: not "conversion", "exchange"... too
	sc := ix.pool.Get().(*scratch)
	ms := ix.rank("convert", offered, Recent{}, sc)
	if n := len(sc.touched); n > capPostings {
		t.Errorf("a common term looked at %d tools, want at most %d", n, capPostings)
	}
	if len(ms) != offered {
		t.Errorf("a common term ranked %d tools, want %d", len(ms), offered)
	}
	t0, _ := ix.lookup("convert")
	if df := int(ix.off[t0+1] - ix.off[t0]); df <= capPostings {
		t.Fatalf("convert is in %d tools: not a common term, the test means nothing", df)
	} else if n := len(ix.Rank("convert", 100000)); n != df {
		t.Errorf("all matches of a common term: %d, want %d", n, df)
	}
}

// scaled grows the labeled corpus to n tools: copies with a made-up word
// in the name and two in the description, so the vocabulary grows too.
func scaled(base []Tool, n int) []Tool {
	out := make([]Tool, 0, n)
	for i := range n {
		t := base[i%len(base)]
		if i >= len(base) {
			w1, w2 := pseudoWord(i), pseudoWord(i*7+3)
			t.Name = fmt.Sprintf("%s_%s", t.Name, w1)
			t.Description = t.Description + " Variant " + w1 + " for " + w2 + "."
		}
		if len(out) < n {
			out = append(out, t)
		}
	}
	return out[:min(n, len(out))]
}

func pseudoWord(i int) string {
	const cons, vow = "bdfgklmnprstvz", "aeiou"
	var b []byte
	for range 3 {
		b = append(b, cons[i%len(cons)], vow[(i/len(cons))%len(vow)])
		i = i/(len(cons)*len(vow)) + i*31 + 7
		i &= 0xffffff
	}
	return string(b)
}

var sizes = []int{10, 100, 1000, 10000}

func BenchmarkBuild(b *testing.B) {
	base := loadTools(b)
	for _, n := range sizes {
		tools := scaled(base, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			var ix *Index
			for b.Loop() {
				ix = Build(tools)
			}
			b.ReportMetric(float64(heapOf(func() any { return Build(tools) }))/float64(n), "index-B/tool")
			_ = ix
		})
	}
}

func BenchmarkRank(b *testing.B) {
	base, reqs := loadTools(b), loadRequests(b)
	for _, n := range sizes {
		ix := Build(scaled(base, n))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				ix.Rank(reqs[i%len(reqs)].Request, offered)
				i++
			}
		})
	}
}

// heapOf is the live heap a value built by f holds.
func heapOf(f func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return after.HeapAlloc - before.HeapAlloc
}
