package web

import "strings"

// diffLine is one line of a line diff: Op is ' ' (in both), '-' (only in
// the old text) or '+' (only in the new one).
type diffLine struct {
	Op   byte
	Text string
}

// maxDiffLines caps each side of a diff: a longest-common-subsequence
// table of n×m cells is built, so two texts of this many lines cost a
// few megabytes at most, once.
const maxDiffLines = 1500

// lineDiff is the line diff from old to new, or ok false when either has
// more than maxDiffLines lines (the page then shows both whole).
func lineDiff(old, new string) (out []diffLine, ok bool) {
	a, b := splitLines(old), splitLines(new)
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		return nil, false
	}
	// Common prefix and suffix first: most versions differ in a few lines.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	for _, l := range a[:pre] {
		out = append(out, diffLine{' ', l})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	// lcs[i][j] is the length of the longest common subsequence of ma[i:]
	// and mb[j:].
	n, m := len(ma), len(mb)
	lcs := make([]int32, (n+1)*(m+1))
	at := func(i, j int) *int32 { return &lcs[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case ma[i] == mb[j]:
				*at(i, j) = *at(i+1, j+1) + 1
			case *at(i+1, j) >= *at(i, j+1):
				*at(i, j) = *at(i+1, j)
			default:
				*at(i, j) = *at(i, j+1)
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && ma[i] == mb[j]:
			out = append(out, diffLine{' ', ma[i]})
			i, j = i+1, j+1
		case j < m && (i == n || *at(i, j+1) >= *at(i+1, j)):
			out = append(out, diffLine{'+', mb[j]})
			j++
		default:
			out = append(out, diffLine{'-', ma[i]})
			i++
		}
	}
	for _, l := range a[len(a)-suf:] {
		out = append(out, diffLine{' ', l})
	}
	return out, true
}

// splitLines splits s into lines, without a last empty one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
