package web

import (
	"strings"
	"testing"
)

// TestLineDiff: applying the diff's kept and added lines gives the new
// text, its kept and removed ones the old, and unchanged lines are kept.
func TestLineDiff(t *testing.T) {
	cases := [][2]string{
		{"", ""},
		{"", "a\nb\n"},
		{"a\nb\n", ""},
		{"a\nb\nc\n", "a\nc\n"},
		{"a\nb\nc\n", "a\nB\nc\nd\n"},
		{"def f():\n    return 1\n", "def f():\n    return 2\n\ndef g():\n    return 3\n"},
		{"x\nx\nx\n", "x\ny\nx\n"},
	}
	for _, c := range cases {
		d, ok := lineDiff(c[0], c[1])
		if !ok {
			t.Fatalf("%q -> %q: refused", c[0], c[1])
		}
		var old, new []string
		kept := 0
		for _, l := range d {
			switch l.Op {
			case ' ':
				old, new = append(old, l.Text), append(new, l.Text)
				kept++
			case '-':
				old = append(old, l.Text)
			case '+':
				new = append(new, l.Text)
			}
		}
		if strings.Join(old, "\n") != strings.Join(splitLines(c[0]), "\n") || strings.Join(new, "\n") != strings.Join(splitLines(c[1]), "\n") {
			t.Errorf("%q -> %q: diff %v does not give both texts back", c[0], c[1], d)
		}
	}
	if d, _ := lineDiff("a\nb\nc\n", "a\nB\nc\n"); len(d) != 4 || d[0].Op != ' ' || d[3].Op != ' ' {
		t.Errorf("one changed line: %v", d)
	}
	big := strings.Repeat("x\n", maxDiffLines+1)
	if _, ok := lineDiff(big, "x\n"); ok {
		t.Error("a text over the cap was diffed")
	}
}
