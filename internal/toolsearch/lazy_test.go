package toolsearch

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestTablesLazy checks that the package's tables (synonyms, aliases,
// stop words, phrases) are built on first use, not at start-up: a daemon
// that never ranks must not hold them. A fresh process (this test binary,
// running only the child test) measures the heap that building them adds;
// built at init, it would add nothing.
func TestTablesLazy(t *testing.T) {
	if os.Getenv("TOOLSEARCH_LAZY_CHILD") == "1" {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tables := []any{synonyms(), aliases(), stopWords(), phrases(), unitForms()}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(tables)
		os.Stdout.WriteString("\nLAZY-HEAP " + strconv.FormatUint(after.HeapAlloc-min(before.HeapAlloc, after.HeapAlloc), 10) + "\n")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTablesLazy$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TOOLSEARCH_LAZY_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	_, rest, ok := strings.Cut(string(out), "LAZY-HEAP ")
	if !ok {
		t.Fatalf("child printed no figure:\n%s", out)
	}
	n, err := strconv.ParseUint(strings.Fields(rest)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("building the tables on first use took %d bytes of heap", n)
	// The tables hold some 28 KiB; 8 KiB leaves room for the runtime's own noise.
	if n < 8<<10 {
		t.Errorf("building the tables took %d bytes: were they built at start-up?", n)
	}
}
