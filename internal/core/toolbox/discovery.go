package toolbox

import (
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/toolsearch"
)

// Tool search: a toolbox of at most SearchThreshold live tools is offered
// whole; a larger one offers the SelectK tools most relevant to the turn
// (and find_tools for the rest), so a model request does not grow with
// the toolbox.
const (
	SearchThreshold = 24
	SelectK         = 8
	FindK           = 8 // the most tools one find_tools call adds
	// bigToolbox is the size from which a rebuild of the cache returns
	// the memory it used to the system at once.
	bigToolbox = 1000
)

// discovery caches the live tools between turns, with their search index;
// a promotion, quarantine, restore, rollback or removal through the
// toolbox invalidates it, and a change of the live directory's entries
// (another process) is seen by its modification time. used counts the
// calls of each live tool (in this process), for the ranking.
type discovery struct {
	mu    sync.Mutex
	stamp string
	tools []contracts.SelfTool
	index *toolsearch.Index
	used  map[string]toolsearch.Use
}

// Invalidate drops the cached list of live tools.
func (t *Toolbox) Invalidate() {
	t.disc.mu.Lock()
	t.disc.stamp = ""
	t.disc.mu.Unlock()
}

// Discover lists the live self-coded tools for a turn.
func (t *Toolbox) Discover() []contracts.SelfTool {
	t.disc.mu.Lock()
	defer t.disc.mu.Unlock()
	return t.discover()
}

// discover refreshes the cache when the live tools changed; disc.mu is held.
func (t *Toolbox) discover() []contracts.SelfTool {
	if t.dir == nil {
		return nil
	}
	stamp := t.dir.Stamp()
	if stamp != "" && stamp == t.disc.stamp {
		return t.disc.tools
	}
	list, err := t.dir.List(selfcode.StateLive)
	if err != nil {
		t.log.Error("discover self-coded tools", "err", err)
		return nil
	}
	tools := make([]contracts.SelfTool, 0, len(list))
	docs := make([]toolsearch.Tool, 0, len(list))
	for _, m := range list {
		tools = append(tools, contracts.SelfTool{
			Name: m.Name, Version: m.Version, Language: m.Language, Hash: m.Hash,
			Description: m.Meta.Description, Parameters: m.Meta.ParamsSchema, Capabilities: m.Meta.Capabilities,
			Dir: t.dir.VersionDir(selfcode.StateLive, m.Name),
		})
		docs = append(docs, toolsearch.Tool{Name: m.Name, Description: m.Meta.Description, Parameters: m.Meta.ParamsSchema})
	}
	t.disc.stamp, t.disc.tools = stamp, tools
	t.disc.index = nil
	if len(tools) > SearchThreshold {
		t.disc.index = toolsearch.Build(docs)
	}
	if len(list) >= bigToolbox {
		// Reading a large toolbox's manifests left garbage several times
		// the size of what is kept: give it back to the system now rather
		// than keep the daemon's footprint at that peak.
		list, docs = nil, nil
		debug.FreeOSMemory()
	}
	return tools
}

// Select is the live self-coded tools a turn about query offers: all of
// them when there are at most SearchThreshold, else the k most relevant
// (by name, description and parameters, and recent use) and those named
// in keep; search says whether some were left out (the turn then offers
// find_tools).
func (t *Toolbox) Select(query string, k int, keep []string) (tools []contracts.SelfTool, search bool) {
	t.disc.mu.Lock()
	defer t.disc.mu.Unlock()
	all := t.discover()
	if len(all) <= SearchThreshold || t.disc.index == nil {
		return all, false
	}
	// The chosen few are looked up by name (all is in name order), so a
	// turn's cost does not grow with the toolbox.
	names := slices.Clone(keep)
	for _, m := range t.disc.index.RankRecent(query, k, t.recent()) {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if i, ok := slices.BinarySearchFunc(all, name, byName); ok {
			tools = append(tools, all[i])
		}
	}
	return tools, true
}

// Search is the (at most k) live self-coded tools most relevant to query,
// best first, other than those named in skip.
func (t *Toolbox) Search(query string, k int, skip []string) []contracts.SelfTool {
	t.disc.mu.Lock()
	defer t.disc.mu.Unlock()
	all := t.discover()
	if k <= 0 || len(all) == 0 {
		return nil
	}
	ix := t.disc.index
	if ix == nil {
		docs := make([]toolsearch.Tool, len(all))
		for i, st := range all {
			docs[i] = toolsearch.Tool{Name: st.Name, Description: st.Description, Parameters: st.Parameters}
		}
		ix = toolsearch.Build(docs)
	}
	var out []contracts.SelfTool
	for _, m := range ix.Rank(query, k+len(skip)) {
		if len(out) == k {
			break
		}
		if slices.Contains(skip, m.Name) {
			continue
		}
		// all is in name order, as the index numbers the tools.
		if i, ok := slices.BinarySearchFunc(all, m.Name, byName); ok {
			out = append(out, all[i])
		}
	}
	return out
}

func byName(st contracts.SelfTool, name string) int { return strings.Compare(st.Name, name) }

// Used notes a call of the self-coded tool name, for Select's ranking.
// Only live tools are counted, so the counter stays as small as the
// toolbox.
func (t *Toolbox) Used(name string) {
	t.disc.mu.Lock()
	defer t.disc.mu.Unlock()
	if _, live := slices.BinarySearchFunc(t.disc.tools, name, byName); !live {
		return
	}
	if t.disc.used == nil {
		t.disc.used = map[string]toolsearch.Use{}
	}
	u := t.disc.used[name]
	t.disc.used[name] = toolsearch.Use{Last: t.now(), Count: u.Count + 1}
}

// recent is the recent use of the live tools; disc.mu is held.
func (t *Toolbox) recent() toolsearch.Recent {
	if len(t.disc.used) == 0 {
		return toolsearch.Recent{}
	}
	return toolsearch.Recent{Uses: t.disc.used, Now: t.now(), HalfLife: 24 * time.Hour}
}
