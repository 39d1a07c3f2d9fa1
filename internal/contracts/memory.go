package contracts

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The operations of a MemoryRequest, one per memory tool.
const (
	MemoryRemember = "remember" // remember(fact)
	MemoryRecall   = "recall"   // recall(query, limit)
)

// MemoryRequest is a memory tool's request to the daemon, which keeps the
// facts (in its store, outside the worker's view).
type MemoryRequest struct {
	Op    string `json:"op"`              // one of Memory*
	Text  string `json:"text,omitempty"`  // remember: the fact
	Query string `json:"query,omitempty"` // recall: words to look for
	Limit int    `json:"limit,omitempty"` // recall: how many facts at most; 0: the daemon's default
}

// Fact is one remembered fact as a turn sees it: the daemon selects the
// facts most relevant to the turn into its Job, and the worker shows them
// to the model as quoted data, never as instructions.
type Fact struct {
	ID   int64     `json:"id"`
	Text string    `json:"text"`
	At   time.Time `json:"at"` // when it was stored or last edited
}

// FactLine is how a fact reads in a prompt and in a recall: its number,
// the day it was stored or last edited, and its text as a JSON string,
// which keeps it on one line and marks it as quoted data. For example,
// fact 12 reads `- #12 (2025-03-01): "The owner's cat is called Tom."`.
func FactLine(f Fact) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(f.Text) // a string always encodes
	return fmt.Sprintf("- #%d (%s): %s", f.ID, f.At.UTC().Format(time.DateOnly), strings.TrimSuffix(b.String(), "\n"))
}
