package config

import (
	"strings"
	"testing"
)

// TestMemoryContextBytes: memory.context_bytes defaults to 2KiB, takes a
// size from 0 (no facts in the prompt) to 64KiB, and refuses one beyond,
// naming the key.
func TestMemoryContextBytes(t *testing.T) {
	t.Parallel()
	env := "ANTHROPIC_API_KEY=" + anthropicKey
	for _, tc := range []struct {
		yaml string
		want ByteSize
		err  string
	}{
		{"", 2 << 10, ""},
		{"memory:\n  context_bytes: 4KiB\n", 4 << 10, ""},
		{"memory:\n  context_bytes: 0\n", 0, ""},
		{"memory:\n  context_bytes: 65536\n", 64 << 10, ""},
		{"memory:\n  context_bytes: 65KiB\n", 0, "memory.context_bytes: 65KiB is out of range: must be from 0 to 64KiB"},
		{"memory:\n  context_bytes: lots\n", 0, "memory.context_bytes"},
	} {
		c, err := load(t, map[string]string{FileConfig: tc.yaml}, env)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want an error with %q", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil || c.Memory.ContextBytes != tc.want {
			t.Errorf("%q: %v, %v; want %v", tc.yaml, c.Memory.ContextBytes, err, tc.want)
		}
	}
}

// TestAgentChangesMemoryContext: memory.context_bytes is a context size,
// like agent.history_chars: the agent may propose it (the owner approves
// the diff), within its bounds.
func TestAgentChangesMemoryContext(t *testing.T) {
	t.Parallel()
	h := ownerHome(t)
	o, err := PrepareAgentOverlay(h, ownerEnv, changesOf(t, `{"memory": {"context_bytes": "8KiB"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := strings.Join(o.Diff(), "\n"); !strings.Contains(d, "memory.context_bytes") || !strings.Contains(d, "8KiB") {
		t.Errorf("diff = %q", d)
	}
	if err := o.Write(); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(h, ownerEnv); err != nil || c.Memory.ContextBytes != 8<<10 {
		t.Errorf("after the change: %v, %v", c.Memory.ContextBytes, err)
	}
	if _, err := PrepareAgentOverlay(h, ownerEnv, changesOf(t, `{"memory": {"context_bytes": "1MiB"}}`)); err == nil || !strings.Contains(err.Error(), "memory.context_bytes") {
		t.Errorf("1MiB: %v", err)
	}
	if _, err := PrepareAgentOverlay(h, ownerEnv, changesOf(t, `{"memory": {"max_facts": 5}}`)); err == nil {
		t.Error("the agent changed a key memory does not have")
	}
}
