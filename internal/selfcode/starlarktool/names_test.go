package starlarktool

import (
	"regexp"
	"testing"
)

// TestUpperConst: upperConst accepts exactly the names of the pattern it
// replaced (^_*[A-Z][A-Z0-9_]*$), and toolPredeclared the three host
// modules.
func TestUpperConst(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^_*[A-Z][A-Z0-9_]*$`)
	names := []string{"", "_", "__", "A", "_A", "__A_1", "MAX", "MAX_SIZE", "V2", "A-B", "a", "Ab", "_a", "1A", "_1",
		"A B", "ÉTAT", "AÉ", "A\x00", "LIMIT_", "X__Y", "run", "DESCRIPTION", "PARAMS_SCHEMA", "Z9", "[A]", "@A"}
	for _, n := range names {
		if got, want := upperConst(n), re.MatchString(n); got != want {
			t.Errorf("upperConst(%q) = %v, the pattern says %v", n, got, want)
		}
	}
	for _, n := range []string{"json", "math", "http"} {
		if !toolPredeclared(n) {
			t.Errorf("toolPredeclared(%q) = false", n)
		}
	}
	for _, n := range []string{"", "os", "JSON", "time", "https"} {
		if toolPredeclared(n) {
			t.Errorf("toolPredeclared(%q) = true", n)
		}
	}
}

// FuzzUpperConst compares upperConst with the pattern on any name.
func FuzzUpperConst(f *testing.F) {
	re := regexp.MustCompile(`^_*[A-Z][A-Z0-9_]*$`)
	for _, s := range []string{"A", "_A1", "a", "__", "ÀB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := upperConst(s), re.MatchString(s); got != want {
			t.Errorf("upperConst(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}
