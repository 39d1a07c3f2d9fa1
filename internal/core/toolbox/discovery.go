package toolbox

import (
	"sync"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// discovery caches the live tools between turns; a promotion, quarantine,
// restore, rollback or removal through the toolbox invalidates it, and a
// change of the live directory's entries (another process) is seen by
// its modification time.
type discovery struct {
	mu    sync.Mutex
	stamp string
	tools []contracts.SelfTool
}

// Invalidate drops the cached list of live tools.
func (t *Toolbox) Invalidate() {
	t.disc.mu.Lock()
	t.disc.stamp = ""
	t.disc.mu.Unlock()
}

// Discover lists the live self-coded tools for a turn.
func (t *Toolbox) Discover() []contracts.SelfTool {
	if t.dir == nil {
		return nil
	}
	stamp := t.dir.Stamp()
	t.disc.mu.Lock()
	defer t.disc.mu.Unlock()
	if stamp != "" && stamp == t.disc.stamp {
		return t.disc.tools
	}
	list, err := t.dir.List(selfcode.StateLive)
	if err != nil {
		t.log.Error("discover self-coded tools", "err", err)
		return nil
	}
	tools := make([]contracts.SelfTool, 0, len(list))
	for _, m := range list {
		tools = append(tools, contracts.SelfTool{
			Name: m.Name, Version: m.Version, Language: m.Language, Hash: m.Hash,
			Description: m.Meta.Description, Parameters: m.Meta.ParamsSchema, Capabilities: m.Meta.Capabilities,
			Dir: t.dir.VersionDir(selfcode.StateLive, m.Name),
		})
	}
	t.disc.stamp, t.disc.tools = stamp, tools
	return tools
}
