package lazy

import (
	"sync"
	"sync/atomic"
	"testing"
)

// The value is built once, by the first Get, however many goroutines ask.
func TestValueBuiltOnce(t *testing.T) {
	var v Value[*int]
	var builds atomic.Int32
	build := func() *int {
		builds.Add(1)
		n := 42
		return &n
	}
	if builds.Load() != 0 {
		t.Fatal("built before the first Get")
	}
	var wg sync.WaitGroup
	got := make([]*int, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = v.Get(build)
		}()
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Fatalf("built %d times, want once", n)
	}
	for _, p := range got {
		if p != got[0] || *p != 42 {
			t.Fatalf("Get returned %p (%d), want the one value %p", p, *p, got[0])
		}
	}
}
