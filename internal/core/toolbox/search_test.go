package toolbox_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/toolbox"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// goLive makes a live tool of each description, called tool_NNN, and one
// called currency_convert that converts amounts of money.
func goLive(t *testing.T, dir *selfcode.Dir, n int) {
	t.Helper()
	live := func(name, desc, params string) {
		m, err := dir.Stage(name, selfcode.Starlark, code, test,
			selfcode.Meta{Description: desc, ParamsSchema: json.RawMessage(params)}, "passed")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dir.Promote(name, m.Hash, "owner"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n - 1 {
		live(fmt.Sprintf("tool_%03d", i), fmt.Sprintf("Does chore number %d on a list of words.", i),
			`{"type":"object","properties":{"words":{"type":"string"}}}`)
	}
	live("currency_convert", "Convert an amount of money from one currency to another.",
		`{"type":"object","properties":{"amount":{"type":"number"},"from":{"type":"string"},"to":{"type":"string"}}}`)
}

func liveNames(tools []contracts.SelfTool) []string {
	out := make([]string, len(tools))
	for i, st := range tools {
		out[i] = st.Name
	}
	return out
}

// TestSelectSmallToolbox: at most SearchThreshold live tools are all
// offered, without find_tools.
func TestSelectSmallToolbox(t *testing.T) {
	t.Parallel()
	tb, dir, _, _ := newToolbox(t, 3)
	goLive(t, dir, toolbox.SearchThreshold)
	got, search := tb.Select("convert 10 euros to dollars", toolbox.SelectK, nil)
	if search || len(got) != toolbox.SearchThreshold {
		t.Errorf("Select = %d tools, search %v; want all %d, no search", len(got), search, toolbox.SearchThreshold)
	}
	if found := tb.Search("currency money", toolbox.FindK, nil); len(found) == 0 || found[0].Name != "currency_convert" {
		t.Errorf("Search = %v", liveNames(found))
	}
}

// TestSelectLargeToolbox: over SearchThreshold, a turn is offered the
// SelectK most relevant tools, the ones it must keep, and find_tools; the
// index follows the live tools; recent use counts.
func TestSelectLargeToolbox(t *testing.T) {
	t.Parallel()
	tb, dir, _, _ := newToolbox(t, 3)
	goLive(t, dir, 100)

	got, search := tb.Select("convert 10 euros to dollars: how much money is it?", toolbox.SelectK, []string{"tool_042"})
	if !search || len(got) > toolbox.SelectK+1 {
		t.Fatalf("Select = %v, search %v; want at most %d tools and search", liveNames(got), search, toolbox.SelectK+1)
	}
	if !slices.Contains(liveNames(got), "currency_convert") || !slices.Contains(liveNames(got), "tool_042") {
		t.Errorf("Select = %v; want currency_convert and the kept tool_042", liveNames(got))
	}

	// Search skips what the turn offers, and finds at most k.
	if found := tb.Search("currency money", toolbox.FindK, []string{"currency_convert"}); slices.Contains(liveNames(found), "currency_convert") {
		t.Errorf("Search offered a skipped tool: %v", liveNames(found))
	}
	if found := tb.Search("chore words", 3, nil); len(found) != 3 {
		t.Errorf("Search(k=3) = %v", liveNames(found))
	}

	// A tool used recently is offered even when the words do not match.
	tb.Used("tool_077")
	tb.Used("not_a_live_tool")
	if got, _ := tb.Select("convert money", toolbox.SelectK, nil); !slices.Contains(liveNames(got), "tool_077") {
		t.Errorf("after a call of tool_077, Select = %v", liveNames(got))
	}

	// The index is rebuilt when the live tools change.
	if err := dir.Remove("currency_convert"); err != nil {
		t.Fatal(err)
	}
	tb.Invalidate()
	if got, _ := tb.Select("convert money", toolbox.SelectK, nil); slices.Contains(liveNames(got), "currency_convert") {
		t.Errorf("a removed tool is still selected: %v", liveNames(got))
	}
	if diff := cmp.Diff(99, len(tb.Discover())); diff != "" {
		t.Errorf("live tools (-want +got):\n%s", diff)
	}
}
