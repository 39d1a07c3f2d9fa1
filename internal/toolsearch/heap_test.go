package toolsearch

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeep: after any sequence of items, the heap holds the k best of
// them, with the worst kept at its root.
func TestKeep(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	greater := func(x, y int) bool { return x > y }
	for _, k := range []int{0, 1, 2, 7, 32} {
		for range 50 {
			var h, all []int
			for range r.IntN(100) {
				v := r.IntN(50)
				all = append(all, v)
				h = keep(h, v, k, greater)
			}
			slices.SortFunc(all, func(x, y int) int { return y - x })
			want := all[:min(k, len(all))]
			got := slices.Clone(h)
			slices.SortFunc(got, func(x, y int) int { return y - x })
			if !slices.Equal(got, want) {
				t.Fatalf("k=%d: kept %v, want %v", k, got, want)
			}
			if len(h) > 0 && h[0] != want[len(want)-1] {
				t.Fatalf("k=%d: root %d, want the worst kept %d", k, h[0], want[len(want)-1])
			}
		}
	}
}
