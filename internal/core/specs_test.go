package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
)

// TestSpecCacheBounds: the specs the daemon holds for workers to name stay
// within maxSpecs and maxSpecsBytes whatever workers send (when a request
// would pass them, the cache starts again from its specs), a spec over
// maxSpecBytes is never held, and a set a job listed stays whole after
// later ones replace it.
func TestSpecCacheBounds(t *testing.T) {
	t.Parallel()
	spec := func(i, size int) contracts.ToolSpec {
		return contracts.ToolSpec{Name: fmt.Sprintf("tool_%d", i), Description: strings.Repeat("d", size)}
	}
	var c specCache
	var first []contracts.ToolSpec
	for i := range 20 {
		first = append(first, spec(i, 100))
	}
	if _, err := c.resolve(c.current(), first); err != nil {
		t.Fatal(err)
	}
	listed := c.current()
	if n := len(listed.list()); n != 20 {
		t.Fatalf("holds %d specs, want 20", n)
	}
	// Workers that send ever new specs, some too large to hold.
	for round := range 50 {
		var batch []contracts.ToolSpec
		for i := range 10 {
			batch = append(batch, spec(1000+round*10+i, 100))
		}
		batch = append(batch, spec(5000+round, maxSpecBytes))
		if _, err := c.resolve(c.current(), batch); err != nil {
			t.Fatal(err)
		}
		set := c.current()
		if len(set.specs) > maxSpecs || set.bytes > maxSpecsBytes || len(set.digests) != len(set.specs) {
			t.Fatalf("round %d: %d specs, %d bytes, %d digests", round, len(set.specs), set.bytes, len(set.digests))
		}
		for _, s := range set.specs {
			if len(s.Description) >= maxSpecBytes {
				t.Fatalf("holds a spec of %d bytes", len(s.Description))
			}
		}
	}
	var huge []contracts.ToolSpec
	for i := range maxSpecs {
		huge = append(huge, spec(9000+i, maxSpecBytes-100))
	}
	if _, err := c.resolve(c.current(), huge); err != nil {
		t.Fatal(err)
	}
	if set := c.current(); set.bytes > maxSpecsBytes || len(set.specs) == 0 {
		t.Fatalf("after large specs: %d specs, %d bytes", len(set.specs), set.bytes)
	}
	// The set the first job listed still names its specs.
	named := []contracts.ToolSpec{{Name: "tool_3", Digest: contracts.SpecDigest(first[3])}}
	got, err := c.resolve(listed, named)
	if err != nil || got[0].Description != first[3].Description {
		t.Fatalf("resolve against the listed set: %+v, %v", got, err)
	}
}
