package core

import (
	"fmt"
	"sync"

	"github.com/shelldon/shelldon/internal/contracts"
)

// The bounds of the tool specs the daemon holds for workers to name: a
// turn offers some twenty to thirty, each of a few hundred bytes, and a
// toolbox searched (toolbox.SelectK) changes a few of them per turn. A
// spec over maxSpecBytes is never held (it is sent each time).
const (
	maxSpecs      = 128
	maxSpecBytes  = 16 << 10
	maxSpecsBytes = 512 << 10
)

// specCache holds the tool specs that workers sent whole, by their digest
// (contracts.SpecDigest, computed here, not taken from the worker), so
// the next turns' workers may name them instead (contracts.ToolSpec.Digest).
// Each set is never changed once made: a turn names specs from the set its
// job listed, whatever later turns add.
type specCache struct {
	mu  sync.Mutex
	set *specSet
}

// specSet is one state of the cache.
type specSet struct {
	specs   map[string]contracts.ToolSpec
	digests []string // the keys of specs, for a job
	bytes   int
}

// current is the set in force now: nil when empty.
func (c *specCache) current() *specSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.set
}

// list names the specs of set, for a job (contracts.Job.Specs).
func (set *specSet) list() []string {
	if set == nil {
		return nil
	}
	return set.digests
}

// resolve puts back, in tools (a request's), the specs named by digest,
// from set (the one the turn's job listed), and adds the ones sent whole
// to c. A digest set does not hold, one held under another name, or a
// named spec that also carries a description or parameters refuses the
// request.
func (c *specCache) resolve(set *specSet, tools []contracts.ToolSpec) ([]contracts.ToolSpec, error) {
	var whole []contracts.ToolSpec
	for i, t := range tools {
		if t.Digest == "" {
			whole = append(whole, t)
			continue
		}
		var held contracts.ToolSpec
		ok := set != nil
		if ok {
			held, ok = set.specs[t.Digest]
		}
		if !ok || held.Name != t.Name || t.Description != "" || len(t.Parameters) != 0 {
			return nil, fmt.Errorf("the request names tool %.64q by a digest the daemon did not list", t.Name)
		}
		tools[i] = held
	}
	c.add(whole)
	return tools, nil
}

// add holds the specs of whole that it does not hold yet. When the cache
// would grow over its bounds, it starts again from whole alone.
func (c *specCache) add(whole []contracts.ToolSpec) {
	if len(whole) == 0 {
		return
	}
	type named struct {
		digest string
		spec   contracts.ToolSpec
	}
	var fresh []named
	c.mu.Lock()
	old := c.set
	c.mu.Unlock()
	for _, t := range whole {
		size := len(t.Name) + len(t.Description) + len(t.Parameters)
		if size > maxSpecBytes {
			continue
		}
		d := contracts.SpecDigest(t)
		if old != nil {
			if _, ok := old.specs[d]; ok {
				continue
			}
		}
		fresh = append(fresh, named{d, contracts.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	if len(fresh) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	base := c.set
	next := &specSet{specs: map[string]contracts.ToolSpec{}}
	if base != nil && len(base.specs)+len(fresh) <= maxSpecs {
		for d, t := range base.specs {
			next.specs[d] = t
		}
		next.digests = append(next.digests, base.digests...)
		next.bytes = base.bytes
	}
	for _, f := range fresh {
		if _, ok := next.specs[f.digest]; ok {
			continue
		}
		size := len(f.spec.Name) + len(f.spec.Description) + len(f.spec.Parameters)
		if len(next.specs) == maxSpecs || next.bytes+size > maxSpecsBytes {
			break
		}
		next.specs[f.digest] = f.spec
		next.digests = append(next.digests, f.digest)
		next.bytes += size
	}
	c.set = next
}
