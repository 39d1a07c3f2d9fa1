package core

import (
	"errors"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core/toolbox"
)

// selfTools is the live self-coded tools a turn about text offers (all of
// them in a small toolbox, else the most relevant: toolbox.Select), and
// whether it offers find_tools for the rest. A resumed turn keeps offering
// the self-coded tools its parked messages called.
func (c *Core) selfTools(text string, resume *contracts.Resume) ([]contracts.SelfTool, bool) {
	var keep []string
	if resume != nil {
		for _, m := range resume.Messages {
			for _, call := range m.ToolCalls {
				keep = append(keep, call.Name)
			}
		}
		keep = append(keep, resume.Call.Name)
	}
	return c.tools.Select(text, toolbox.SelectK, keep)
}

// errNoToolSearch answers find_tools in a turn that was offered every
// live tool.
var errNoToolSearch = errors.New("find_tools is not offered in this turn: every tool is")

// findTools serves find_tools: the live self-coded tools most relevant to
// the query that the turn does not offer yet (at most toolbox.FindK), which
// the worker adds to the turn and which count as the turn's own from then
// on (a failed call of one is a strike).
func (c *Core) findTools(job contracts.Job, req contracts.FindTools, filed *turnFiled) ([]contracts.SelfTool, error) {
	if !job.ToolSearch {
		return nil, errNoToolSearch
	}
	var skip []string
	for _, st := range filed.offered(job).SelfTools {
		skip = append(skip, st.Name)
	}
	found := c.tools.Search(req.Query, toolbox.FindK, skip)
	filed.found = append(filed.found, found...)
	return found, nil
}

// offered is job with the self-coded tools find_tools added to its turn.
func (f *turnFiled) offered(job contracts.Job) contracts.Job {
	if len(f.found) > 0 {
		job.SelfTools = append(job.SelfTools[:len(job.SelfTools):len(job.SelfTools)], f.found...)
	}
	return job
}
