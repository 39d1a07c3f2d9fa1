package starlarkjson

import (
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

func TestNesting(t *testing.T) {
	t.Parallel()
	cases := map[string]int{`{}`: 1, `[[1],[2,[3]]]`: 3, `"[[["`: 0, `{"a":"\"[["}`: 1, ``: 0}
	for in, want := range cases {
		if got := Nesting(in); got != want {
			t.Errorf("Nesting(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestDecodeRefusesDeepNesting(t *testing.T) {
	t.Parallel()
	m := Module(10)
	thread := &starlark.Thread{}
	decode := m.Members["decode"]
	if _, err := starlark.Call(thread, decode, starlark.Tuple{starlark.String(strings.Repeat("[", 1000))}, nil); err == nil || !strings.Contains(err.Error(), "nesting deeper than 10") {
		t.Fatalf("deep: %v", err)
	}
	v, err := starlark.Call(thread, decode, starlark.Tuple{starlark.String(`{"a": [1, 2]}`)}, nil)
	if err != nil || v.String() != `{"a": [1, 2]}` {
		t.Fatalf("shallow: %v %v", v, err)
	}
}
