package toolsearch

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHeldout reports recall@k on testdata/heldout.json, a labeled set
// written after the synonym table and without looking at rankings, so
// its figures estimate how the ranking does on requests the tuning never
// saw. It asserts only that the set parses and names existing tools:
// the figures are reported, not tuned against, and must stay that way.
func TestHeldout(t *testing.T) {
	tools := loadTools(t)
	b, err := os.ReadFile(filepath.Join("testdata", "heldout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reqs []request
	if err := json.Unmarshal(b, &reqs); err != nil {
		t.Fatal(err)
	}
	if len(reqs) < 50 {
		t.Fatalf("held-out set too small: %d requests", len(reqs))
	}
	ix := Build(tools)
	for _, r := range reqs {
		if r.Request == "" || r.Query == "" {
			t.Fatalf("held-out entry for %q lacks a request or query", r.Tool)
		}
		if _, ok := slices.BinarySearch(ix.names, r.Tool); !ok {
			t.Fatalf("held-out request %q is labeled with %q, which is not in the corpus", r.Request, r.Tool)
		}
	}
	ks := []int{1, 3, 5, 8, 16}
	bare := *ix
	bare.noSynonyms = true
	for _, c := range []struct {
		name string
		ix   *Index
		text func(request) string
	}{
		{"message", ix, func(r request) string { return r.Request }},
		{"find_tools", ix, func(r request) string { return r.Query }},
		{"message without synonyms", &bare, func(r request) string { return r.Request }},
		{"find_tools without synonyms", &bare, func(r request) string { return r.Query }},
	} {
		hits := make([]int, len(ks))
		for _, r := range reqs {
			ms := c.ix.Rank(c.text(r), ks[len(ks)-1])
			pos := rankOf(ms, r.Tool)
			for i, k := range ks {
				if pos > 0 && pos <= k {
					hits[i]++
				}
			}
			if pos == 0 || pos > offered {
				var top []string
				for _, m := range ms[:min(len(ms), 3)] {
					top = append(top, m.Name)
				}
				t.Logf("held-out miss (%s): %q -> %s at %d; top: %s", c.name, c.text(r), r.Tool, pos, strings.Join(top, ", "))
			}
		}
		var row []string
		for i, k := range ks {
			row = append(row, fmt.Sprintf("@%d %.1f%%", k, 100*float64(hits[i])/float64(len(reqs))))
		}
		t.Logf("held-out recall (%s, %d requests, %d tools): %s", c.name, len(reqs), c.ix.Len(), strings.Join(row, "  "))
	}
}
