package childproc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/shelldon/shelldon/internal/contracts"
)

// noDaemon is a worker.Daemon that is never asked anything here: building
// the tools calls none of its methods.
type noDaemon struct{}

func (noDaemon) Propose(context.Context, contracts.Proposal) (contracts.Proposed, error) {
	return contracts.Proposed{}, errors.New("not here")
}

func (noDaemon) Configure(context.Context, json.RawMessage) ([]string, error) {
	return nil, errors.New("not here")
}

func (noDaemon) Skill(context.Context, contracts.SkillRequest) (string, error) {
	return "", errors.New("not here")
}

func (noDaemon) Memory(context.Context, contracts.MemoryRequest) (string, error) {
	return "", errors.New("not here")
}

// TestRegistryIsTheCatalogue: the registry the worker builds for a turn
// holds exactly the catalogue's built-in tools, each with the catalogue's
// tier, parameter names and description file, plus the live self-coded
// tools the job lists, none of which may take a built-in's place;
// find_tools only when the job says the toolbox is larger than that.
func TestRegistryIsTheCatalogue(t *testing.T) {
	t.Parallel()
	self := func(name string) contracts.SelfTool {
		return contracts.SelfTool{Name: name, Version: 1, Language: "starlark", Hash: "0123",
			Description: "a self-coded tool", Parameters: json.RawMessage(`{"type":"object"}`), Dir: t.TempDir()}
	}
	cases := []struct {
		name   string
		self   []contracts.SelfTool
		search bool     // the job's ToolSearch
		want   []string // the self-coded tools offered
	}{
		{"no self-coded tools", nil, false, nil},
		{"a self-coded tool", []contracts.SelfTool{self("word_count")}, false, []string{"word_count"}},
		{"a self-coded tool named like a built-in", []contracts.SelfTool{self(contracts.ToolRunShell), self("word_count")}, false, []string{"word_count"}},
		{"some of a larger toolbox", []contracts.SelfTool{self("word_count")}, true, []string{"word_count"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg, done, err := buildTools(contracts.Job{Workspace: t.TempDir(), SelfTools: tc.self, ToolSearch: tc.search}, noDaemon{})
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			selfTools := map[string]bool{}
			for _, st := range tc.self {
				selfTools[st.Name] = true
			}
			var offeredSelf []string
			for _, tool := range reg.Tools() {
				if _, ok := contracts.Builtin(tool.Name); !ok {
					offeredSelf = append(offeredSelf, tool.Name)
					if !selfTools[tool.Name] || tool.Tier != contracts.TierFree {
						t.Errorf("the registry holds %s (%s), neither catalogued nor self-coded and FREE", tool.Name, tool.Tier)
					}
				}
			}
			if !slices.Equal(offeredSelf, tc.want) {
				t.Errorf("self-coded tools offered = %v, want %v", offeredSelf, tc.want)
			}
			for _, b := range contracts.BuiltinTools() {
				tool, ok := reg.Get(b.Name)
				if b.Name == contracts.ToolFindTools && !tc.search {
					if ok {
						t.Errorf("the registry holds %s, for a toolbox offered whole", b.Name)
					}
					continue
				}
				if !ok {
					t.Errorf("the registry lacks %s", b.Name)
					continue
				}
				if tool.Tier != b.Tier {
					t.Errorf("%s: tier %s, the catalogue says %s", b.Name, tool.Tier, b.Tier)
				}
				desc, err := os.ReadFile(filepath.Join("..", "..", b.DescriptionFile))
				if err != nil || tool.Description != string(desc) {
					t.Errorf("%s: the description is not %s (%v)", b.Name, b.DescriptionFile, err)
				}
				var schema struct {
					Properties map[string]json.RawMessage `json:"properties"`
				}
				if err := json.Unmarshal(tool.Spec().Parameters, &schema); err != nil {
					t.Fatalf("%s: %v", b.Name, err)
				}
				var params []string
				for p := range schema.Properties {
					params = append(params, p)
				}
				if want := slices.Sorted(slices.Values(b.Params)); !slices.Equal(slices.Sorted(slices.Values(params)), want) {
					t.Errorf("%s: parameters %v, the catalogue says %v", b.Name, params, b.Params)
				}
			}
		})
	}
}
