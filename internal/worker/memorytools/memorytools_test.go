package memorytools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/worker"
)

// recorder is a Daemon that records the requests and answers "ok".
type recorder struct{ reqs []contracts.MemoryRequest }

func (r *recorder) Memory(_ context.Context, req contracts.MemoryRequest) (string, error) {
	r.reqs = append(r.reqs, req)
	return "ok", nil
}

// TestToolsAskTheDaemon: remember and recall are FREE and each is one
// request to the daemon with the model's words as they came.
func TestToolsAskTheDaemon(t *testing.T) {
	t.Parallel()
	d := &recorder{}
	reg := worker.NewRegistry()
	if err := Register(reg, d); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, args string }{
		{contracts.ToolRemember, `{"fact":"The owner's cat is Tom."}`},
		{contracts.ToolRecall, `{"query":"cat NOT dog","limit":3}`},
		{contracts.ToolRecall, `{"query":"cat"}`},
	} {
		tool, ok := reg.Get(c.tool)
		if !ok || tool.Tier != contracts.TierFree {
			t.Fatalf("%s: %v %v", c.tool, ok, tool)
		}
		if out, err := tool.Run(t.Context(), json.RawMessage(c.args)); err != nil || out != "ok" {
			t.Errorf("%s: %q, %v", c.tool, out, err)
		}
	}
	want := []contracts.MemoryRequest{
		{Op: contracts.MemoryRemember, Text: "The owner's cat is Tom."},
		{Op: contracts.MemoryRecall, Query: "cat NOT dog", Limit: 3},
		{Op: contracts.MemoryRecall, Query: "cat"},
	}
	if diff := cmp.Diff(want, d.reqs); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
