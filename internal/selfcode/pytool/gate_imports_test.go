//go:build unix

package pytool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// gateHeavyModules are modules the gate's own scripts once imported, each with its
// imports a few ms of every gate: a tool that imports none of them must not pay for them.
var gateHeavyModules = []string{
	"re", "enum", "functools", "collections", "operator", "contextlib", "json", "json.decoder",
	"tokenize", "traceback", "linecache", "textwrap", "ast", "symtable", "weakref", "string",
	"signal", "unicodedata", "math",
}

var importLine = regexp.MustCompile(`^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)\s*$`)

// pythonImports runs python with the gate's flags and -X importtime on args and stdin, fd 3
// its result pipe, and returns the modules it imported, in order, and what it wrote on fd 3.
func pythonImports(t *testing.T, dir string, stdin []byte, args ...string) ([]string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := command(ctx, python, dir, append(slices.Clone(pythonFlags), append([]string{"-X", "importtime"}, args...)...)...)
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	var results bytes.Buffer
	_, _ = results.ReadFrom(r)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var mods []string
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		if m := importLine.FindStringSubmatch(sc.Text()); m != nil {
			mods = append(mods, m[1])
		}
	}
	return mods, results.String()
}

// TestGateImportsOnlyWhatItNeeds: a gate of a tool that imports nothing imports, beyond
// what python3 imports to start, only small modules: none of re, enum, json, ast,
// symtable, traceback... (the list a gate used to pay for). The modules are listed in
// the log.
func TestGateImportsOnlyWhatItNeeds(t *testing.T) {
	needPython(t)
	t.Parallel()
	startup, _ := pythonImports(t, "", nil, "-c", "pass")
	dir := stage(t, "word_count", header, goodTest)
	req, err := json.Marshal(newCheckerRequest("word_count", []byte(header), []byte(goodTest)))
	if err != nil {
		t.Fatal(err)
	}
	mods, results := pythonImports(t, dir, gateInput("", req), "-c", loadScript, "gate", "word_count", "5", "0",
		strings.Join(allowedModules, ","))
	if !strings.Contains(results, `"event": "check"`) || !strings.HasSuffix(results, "{\"event\": \"done\"}\n") {
		t.Fatalf("the gate did not run its checks and test:\n%s", results)
	}
	var added []string
	for _, m := range mods {
		if !slices.Contains(startup, m) && m != "word_count" && m != "test_word_count" {
			added = append(added, m)
		}
	}
	t.Logf("python3 at start: %s", strings.Join(startup, ", "))
	t.Logf("the gate adds: %s", strings.Join(added, ", "))
	for _, m := range gateHeavyModules {
		if slices.Contains(added, m) {
			t.Errorf("the gate imports %s", m)
		}
	}
}
