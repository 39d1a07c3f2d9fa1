package toolsearch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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
		recall(t, "held-out "+c.name, c.ix, reqs, c.text, ks)
	}
}
