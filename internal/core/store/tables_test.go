package store

import (
	"os"
	"testing"
)

// migrationName reads exactly the names the regexp it replaced,
// ^([0-9]{4})_([a-z0-9_]+)\.sql$, accepted.
func TestMigrationName(t *testing.T) {
	for file, want := range map[string]struct {
		v    int
		name string
		ok   bool
	}{
		"0001_init.sql":       {1, "init", true},
		"0042_a_b9.sql":       {42, "a_b9", true},
		"1234__.sql":          {1234, "_", true},
		"0001_.sql":           {},
		"001_init.sql":        {},
		"00012_init.sql":      {},
		"0001-init.sql":       {},
		"0001_Init.sql":       {},
		"0001_in-it.sql":      {},
		"0001_init.sql.bak":   {},
		"0001_init.SQL":       {},
		"a001_init.sql":       {},
		"0001_init":           {},
		"":                    {},
		"0001_init\n.sql":     {},
		"0001_ünit.sql":       {},
		"٠٠٠١_init.sql":       {},
		"0001_init.sql\x00":   {},
		"0001_init .sql":      {},
		"0001_two_words_.sql": {1, "two_words_", true},
	} {
		v, name, ok := migrationName(file)
		if v != want.v || name != want.name || ok != want.ok {
			if !want.ok && !ok {
				continue // what a refused name splits into is unused
			}
			t.Errorf("migrationName(%q) = %d, %q, %v; want %d, %q, %v", file, v, name, ok, want.v, want.name, want.ok)
		}
	}
	// Every embedded migration is read.
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		t.Fatalf("migrations() = %d, %v", len(ms), err)
	}
}

// finalStatus accepts each status that ends a turn and no other.
func TestFinalStatus(t *testing.T) {
	for _, s := range []string{StatusOK, StatusToolLimit, StatusDeadline, StatusCancelled, StatusError, StatusApproval} {
		if !finalStatus(s) {
			t.Errorf("finalStatus(%q) = false", s)
		}
	}
	for _, s := range []string{StatusRunning, "", Interrupted, "OK", "great"} {
		if finalStatus(s) {
			t.Errorf("finalStatus(%q) = true", s)
		}
	}
}

// selfStart is this process's start time, as processStart reads it.
func TestSelfStart(t *testing.T) {
	st, ok := processStart(os.Getpid())
	if !ok {
		t.Skip("the system does not tell a process's start time")
	}
	if got := selfStart(); got != st || selfStart() != got {
		t.Fatalf("selfStart() = %d, want %d", got, st)
	}
}
