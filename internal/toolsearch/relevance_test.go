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

// offered is the number of self-coded tools a model request carries.
const offered = 8

type request struct {
	Request string `json:"request"` // the owner's message
	Query   string `json:"query"`   // what the model would pass to find_tools
	Tool    string `json:"tool"`    // the one right tool
}

func loadTools(t testing.TB) []Tool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var specs []toolSpec
	if err := json.Unmarshal(b, &specs); err != nil {
		t.Fatal(err)
	}
	tools := make([]Tool, len(specs))
	for i, s := range specs {
		tools[i] = Tool{Name: s.Name, Description: s.Description, Parameters: s.Parameters}
	}
	return tools
}

func loadRequests(t testing.TB) []request {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "requests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rs []request
	if err := json.Unmarshal(b, &rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

// rankOf is the 1-based position of tool among the matches, 0 if absent.
func rankOf(ms []Match, tool string) int {
	return slices.IndexFunc(ms, func(m Match) bool { return m.Name == tool }) + 1
}

// TestRelevance measures recall@k on the labeled tuning set: from the
// owner's message alone the right tool must be among the offered ones for
// at least 95% of requests (the issue asks 90%; the floor sits under the
// measured figure), and after the model's find_tools query for all.
func TestRelevance(t *testing.T) {
	tools, reqs := loadTools(t), loadRequests(t)
	if len(tools) < 1000 || len(reqs) < 50 {
		t.Fatalf("labeled set too small: %d tools, %d requests", len(tools), len(reqs))
	}
	ix := Build(tools)
	for _, r := range reqs {
		if _, ok := slices.BinarySearch(ix.names, r.Tool); !ok {
			t.Fatalf("request %q is labeled with %q, which is not in the corpus", r.Request, r.Tool)
		}
	}
	ks := []int{1, 3, 5, 8, 16}
	bare := *ix
	bare.noSynonyms = true
	for _, c := range []struct {
		name string
		ix   *Index
		text func(request) string
		want float64
	}{
		// Floors a little under the measured figures (98.4% and 87.1% at
		// 8, issue 15), so that a change that loses ground fails.
		{"message", ix, func(r request) string { return r.Request }, 0.95},
		{"find_tools", ix, func(r request) string { return r.Query }, 1},
		{"message without synonyms", &bare, func(r request) string { return r.Request }, 0.85},
		{"find_tools without synonyms", &bare, func(r request) string { return r.Query }, 1},
	} {
		hits := recall(t, c.name, c.ix, reqs, c.text, ks)
		got := hits[slices.Index(ks, offered)]
		if got < c.want {
			t.Errorf("%s: recall@%d = %.3f, want >= %.2f", c.name, offered, got, c.want)
		}
	}
}

// recall ranks each request's text (text picks the message or the
// find_tools query) and returns, for each k in ks, the share of requests
// whose tool is in the top k; it logs the misses (not offered) and the
// figures under name.
func recall(t *testing.T, name string, ix *Index, reqs []request, text func(request) string, ks []int) []float64 {
	t.Helper()
	hits := make([]int, len(ks))
	for _, r := range reqs {
		ms := ix.Rank(text(r), ks[len(ks)-1])
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
			t.Logf("%s miss: %q -> %s at %d; top: %s", name, text(r), r.Tool, pos, strings.Join(top, ", "))
		}
	}
	shares := make([]float64, len(ks))
	var row []string
	for i, k := range ks {
		shares[i] = float64(hits[i]) / float64(len(reqs))
		row = append(row, fmt.Sprintf("@%d %.1f%%", k, 100*shares[i]))
	}
	t.Logf("recall (%s, %d requests, %d tools): %s", name, len(reqs), ix.Len(), strings.Join(row, "  "))
	return shares
}
