package pytool

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBuildGateCacheYields: the cache's build runs at a lower priority (nice 10) than the
// daemon, so the turns it runs beside come first. A stand-in for python reports its own
// niceness (waiting for the build to set it, which it does once the process started).
func TestBuildGateCacheYields(t *testing.T) {
	t.Parallel()
	if stat, err := os.ReadFile("/proc/self/stat"); err == nil {
		// after the command's ")" come the fields from the 3rd (state) on: nice is the 19th
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 16 {
			if n, _ := strconv.Atoi(f[16]); n >= 10 {
				t.Skipf("this test runs at nice %d already: the build cannot be made nicer than 10", n)
			}
		}
	}
	fake := filepath.Join(t.TempDir(), "python3")
	script := `#!/bin/sh
i=0
while [ $i -lt 100 ]; do
    n=$(cut -d' ' -f19 /proc/$$/stat)
    [ "$n" != 0 ] && break
    sleep 0.05
    i=$((i + 1))
done
echo "nice=$n" >&2
exit 1
`
	must(t, os.WriteFile(fake, []byte(script), 0o755))
	_, err := BuildGateCache(context.Background(), fake, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "nice=10") {
		t.Fatalf("BuildGateCache = %v, want the stand-in's nice=10", err)
	}
}
