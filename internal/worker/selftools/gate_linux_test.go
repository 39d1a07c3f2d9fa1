package selftools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// fakePython reports through the gate's result pipe (fd 3), as the
// checker's refusal, whether it could write /dev/zero, which the sandbox's
// mount view binds writable and its Landlock rules let it only read, and
// whether PID 1 (in GateMode, the helper running the gate) survived its
// signals.
// It also tries to change the code cache, which the gate may only read.
const fakePython = `#!/bin/sh
if echo x 2>/dev/null >/dev/zero; then w=WROTE; else w=DENIED; fi
if echo x 2>/dev/null >>CACHE/pygate.cache; then c=WROTE; else c=DENIED; fi
if echo x 2>/dev/null >CACHE/new.cache; then n=WROTE; else n=DENIED; fi
kill -KILL 1 2>/dev/null; kill -TERM 1 2>/dev/null
printf '{"event":"check","result":{"problems":[{"file":"x.py","line":1,"col":1,"message":"dev-zero %s cache %s new %s"}],"meta":null}}\n' "$w" "$c" "$n" >&3
`

// TestGatePythonIsConfined: the gate runs inside the sandbox helper
// (GateMode), and the python3 it starts there is as confined as a target
// the helper starts: Landlock, which holds only on the helper's one
// confined thread and what it starts, denies it the write the mount view
// would allow. The code cache is read-only to it. Its signals do not end
// the gate either.
func TestGatePythonIsConfined(t *testing.T) {
	t.Parallel()
	r, bin := realSandbox(t)
	gatePythonIsConfined(t, r, bin)
}

func gatePythonIsConfined(t *testing.T, r *sandbox.Runner, bin string) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	if err := os.Chmod(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "pygate.cache"), []byte("cache"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(dir, "python3")
	if err := os.WriteFile(fake, []byte(strings.ReplaceAll(fakePython, "CACHE", cache)), 0o755); err != nil {
		t.Fatal(err)
	}
	// The control: outside the sandbox the writes are allowed, so a
	// denial inside is the sandbox's.
	if out, err := exec.Command("sh", "-c", "echo x >/dev/zero && echo x >>"+cache+"/pygate.cache && echo ok").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("the control cannot write: %s %v", out, err)
	}
	pol := GatePolicy(Env{Binary: bin, PyCache: cache}, selfcode.Python)
	if pol.Mode != GateMode {
		t.Fatalf("the gate's policy runs %q, want the helper's %q mode", pol.Mode, GateMode)
	}
	pol.Env = sandbox.Env()
	for i, kv := range pol.Env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			pol.Env[i] = "PATH=" + dir + ":" + path
		}
	}
	pol.ReadOnly = append(pol.ReadOnly, dir)
	pol.Stdin, _ = json.Marshal(GateRequest{Name: "word_count", Language: "python", Code: "x", Test: "y"})
	res, err := r.Run(context.Background(), pol)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("gate: %+v %v", res, err)
	}
	var g GateResult
	if err := json.Unmarshal(res.Stdout, &g); err != nil {
		t.Fatalf("gate printed %q (%s): %v", res.Stdout, res.Stderr, err)
	}
	t.Logf("the gate's report: %s", g.Report)
	if !strings.Contains(g.Report, "dev-zero DENIED") {
		t.Errorf("the gate's python3 was not confined by Landlock: %s", g.Report)
	}
	if !strings.Contains(g.Report, "cache DENIED new DENIED") {
		t.Errorf("the gate's python3 could change the code cache: %s", g.Report)
	}
	if data, _ := os.ReadFile(filepath.Join(cache, "pygate.cache")); string(data) != "cachex\n" {
		t.Errorf("the cache file was changed: %q", data)
	}
}
