package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/core/coretest"
	"github.com/shelldon/shelldon/internal/core/toolbox"
	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/worker"
	"github.com/shelldon/shelldon/internal/worker/selftools"
)

// searchBuilder is coretest's echo and self-coded stand-ins, with the
// real find_tools (adding stand-ins) when the job offers tool search.
func searchBuilder(job contracts.Job, d worker.Daemon) (*worker.Registry, func(), error) {
	reg, done, err := coretest.Builder(coretest.Echo("echo"), coretest.SelfTools)(job, d)
	if err != nil || !job.ToolSearch {
		return reg, done, err
	}
	finder, _ := d.(worker.ToolFinder)
	ft, err := selftools.FindTool(reg, finder, func(st contracts.SelfTool) *worker.Tool {
		return coretest.SelfTools(contracts.Job{SelfTools: []contracts.SelfTool{st}}, d)[0]
	})
	if err != nil {
		return nil, nil, err
	}
	return reg, done, reg.Add(ft)
}

// liveTools makes n live self-coded tools: n-1 chores and currency_convert.
func liveTools(t *testing.T, dir *selfcode.Dir, n int) {
	t.Helper()
	live := func(name, desc string) {
		m, err := dir.Stage(name, selfcode.Starlark, countStar, countStarTest,
			selfcode.Meta{Description: desc, ParamsSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}, "passed")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dir.Promote(name, m.Hash, "owner"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n - 1 {
		live(fmt.Sprintf("chore_%03d", i), fmt.Sprintf("Does chore number %d on a list of words.", i))
	}
	live("currency_convert", "Convert an amount of money from one currency to another.")
}

// selfOffered is the self-coded tools (chore_*, currency_convert) a request offered.
func selfOffered(req contracts.Request) []string {
	var out []string
	for _, n := range coretest.Offered(req) {
		if strings.HasPrefix(n, "chore_") || n == "currency_convert" {
			out = append(out, n)
		}
	}
	return out
}

// TestToolSearchLargeToolbox: with 100 live self-coded tools a turn is
// offered the built-ins, at most SelectK of them and find_tools; the tools
// find_tools finds are offered from the next model call on, run, and a
// failed call of one is a strike like any other's.
func TestToolSearchLargeToolbox(t *testing.T) {
	bubble(t, func(t *testing.T) {
		sp := &coretest.Spawner{Build: searchBuilder}
		u := newUnit(t, func(o *core.Options) { o.Spawner = sp })
		liveTools(t, u.tools, 100)

		u.model.Script(
			coretest.Reply("", coretest.Call("f", contracts.ToolFindTools, `{"query":"convert money to another currency"}`)),
			coretest.Reply("", coretest.Call("c1", "currency_convert", `{"text":"10 EUR"}`),
				coretest.Call("c2", "currency_convert", `{"fail":true}`)),
			coretest.Results)
		out, err := u.core.Send(context.Background(), "c", "plan my trip", core.Events{})
		if err != nil {
			t.Fatal(err)
		}
		reqs := u.model.Requests()
		if len(reqs) != 3 {
			t.Fatalf("%d model calls", len(reqs))
		}
		first := coretest.Offered(reqs[0])
		if self := selfOffered(reqs[0]); len(self) > toolbox.SelectK || slices.Contains(self, "currency_convert") {
			t.Errorf("the first request offered the self-coded tools %v", self)
		}
		if !slices.Contains(first, contracts.ToolFindTools) || !slices.Contains(first, "echo") {
			t.Errorf("the first request offered %v; want echo and find_tools", first)
		}
		if !slices.Contains(coretest.Offered(reqs[1]), "currency_convert") {
			t.Errorf("after find_tools the request offered %v", coretest.Offered(reqs[1]))
		}
		if n := len(selfOffered(reqs[1])); n > toolbox.SelectK+toolbox.FindK {
			t.Errorf("after find_tools the request offered %d self-coded tools", n)
		}
		found := reqs[1].Messages[len(reqs[1].Messages)-1].ToolResults
		if len(found) != 1 || !found[0].OK || !strings.Contains(found[0].Content, "- currency_convert: Convert an amount of money") {
			t.Errorf("find_tools answered %+v", found)
		}
		if !strings.HasPrefix(out.Reply, "RESULTS: currency_convert ok=true 10 EUR | currency_convert ok=false") {
			t.Errorf("reply %q", out.Reply)
		}
		if kinds := u.auditKinds(t, "c"); !slices.Contains(kinds, "tool_strike:currency_convert") {
			t.Errorf("a failed call of a found tool is no strike: %v", kinds)
		}
		if job := sp.Jobs()[0]; !job.ToolSearch || len(job.SelfTools) > toolbox.SelectK {
			t.Errorf("the job offered %d self-coded tools, tool search %v", len(job.SelfTools), job.ToolSearch)
		}
	})
}

// TestToolSearchSmallToolbox: a toolbox of a few tools is offered whole,
// without find_tools, as before tool search.
func TestToolSearchSmallToolbox(t *testing.T) {
	bubble(t, func(t *testing.T) {
		sp := &coretest.Spawner{Build: searchBuilder}
		u := newUnit(t, func(o *core.Options) { o.Spawner = sp })
		liveTools(t, u.tools, 5)
		u.model.Script(coretest.Reply("done"))
		if _, err := u.core.Send(context.Background(), "c", "plan my trip", core.Events{}); err != nil {
			t.Fatal(err)
		}
		req := u.model.Requests()[0]
		if self := selfOffered(req); len(self) != 5 || slices.Contains(coretest.Offered(req), contracts.ToolFindTools) {
			t.Errorf("offered %v", coretest.Offered(req))
		}
		if job := sp.Jobs()[0]; job.ToolSearch {
			t.Error("the job offers tool search")
		}
	})
}
