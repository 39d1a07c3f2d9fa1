package openai

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

// TestFailedToolResultSaysErrorOnce: a failed tool result reaches the model
// as one "error: <message>", whether the worker already wrote the prefix
// (as it does for every failure) or not (a result built by hand).
func TestFailedToolResultSaysErrorOnce(t *testing.T) {
	t.Parallel()
	srv := brokertest.NewServer(t, "openai", nil)
	req := contracts.Request{Messages: []contracts.Message{
		{Role: contracts.RoleUser, Text: "read them"},
		{Role: contracts.RoleAssistant, ToolCalls: []contracts.ToolCall{
			{ID: "a", Name: "read_file", Arguments: `{"path":"a"}`},
			{ID: "b", Name: "read_file", Arguments: `{"path":"b"}`},
			{ID: "c", Name: "read_file", Arguments: `{"path":"c"}`},
			{ID: "d", Name: "read_file", Arguments: `{"path":"d"}`},
		}},
		{Role: contracts.RoleTool, ToolResults: []contracts.ToolResult{
			{CallID: "a", Name: "read_file", Content: "error: no such file: a"},
			{CallID: "b", Name: "read_file", Content: "no such file: b"},
			{CallID: "c", Name: "read_file", Content: "Error: no such file: c"},
			{CallID: "d", Name: "read_file", OK: true, Content: "error: is what d holds"},
		}},
	}}
	c := New(provider.Config{Name: "local", BaseURL: srv.BaseURL(), Model: "m"})
	if _, err := c.Complete(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range body.Messages {
		if m.Role == "tool" && m.Content != nil {
			got = append(got, *m.Content)
		}
	}
	want := []string{"error: no such file: a", "error: no such file: b", "Error: no such file: c", "error: is what d holds"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool messages on the wire (-want +got):\n%s", diff)
	}
}
