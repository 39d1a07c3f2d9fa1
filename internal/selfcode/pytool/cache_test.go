//go:build unix

package pytool

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// builtCache makes the gate's code cache in a new directory and returns the directory.
func builtCache(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pygate")
	path, err := BuildGateCache(context.Background(), python, dir)
	if err != nil {
		t.Fatalf("BuildGateCache: %v", err)
	}
	if path != CacheFile(dir) {
		t.Fatalf("BuildGateCache = %s, want %s", path, CacheFile(dir))
	}
	return dir
}

// TestBuildGateCache: the cache is written once, read-only, whole; a second build keeps
// it; a gate with it answers as a gate without it, passing and refusing alike.
func TestBuildGateCache(t *testing.T) {
	needPython(t)
	t.Parallel()
	dir := builtCache(t)
	path := CacheFile(dir)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o444 {
		t.Errorf("the cache's mode is %v, want read-only", fi.Mode().Perm())
	}
	if _, ok := readCache(path); !ok {
		t.Fatal("the cache just built does not read back")
	}
	if again, err := BuildGateCache(context.Background(), python, dir); err != nil || again != path {
		t.Fatalf("second BuildGateCache = %s, %v", again, err)
	}
	if fi2, _ := os.Stat(path); !os.SameFile(fi, fi2) {
		t.Error("a second build replaced a cache that was whole")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the cache's directory holds %d entries, want the cache alone", len(entries))
	}

	refused := header + "import os\n"
	for _, tc := range []struct{ name, code, test string }{
		{"passes", readTestdata(t, "word_count.py"), readTestdata(t, "test_word_count.py")},
		{"fails its test", header, "from word_count import run\n\n\ndef test_wrong():\n    assert run(\"a b\") == \"3\"\n"},
		{"refused", refused, goodTest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gate := func(cacheDir string) string {
				meta, rep, err := Gate(context.Background(), python, cacheDir, t.TempDir(), "word_count", []byte(tc.code), []byte(tc.test), 10*time.Second)
				rep.Duration = 0
				return fmt.Sprintf("%+v %s\n%+v\n%v", meta.Description, meta.ParamsSchema, rep, err)
			}
			if without, with := gate(""), gate(dir); without != with {
				t.Errorf("without the cache:\n%s\nwith it:\n%s", without, with)
			}
		})
	}
}

// plantedChecker is a checker that refuses everything with a marker: a cache compiled
// from it shows whether a gate ran the cache's code or compiled the real sources.
const plantedChecker = `
def check_request(req):
    return {"problems": [{"file": "x.py", "line": 1, "col": 1, "message": "FROM-THE-CACHE"}], "meta": None}
`

// TestGateCacheFallsBack: a gate runs the cache's code only when the cache was made from
// this binary's scripts, is whole and names this interpreter; a missing, stale,
// truncated, altered or foreign cache, or one whose code does not load, is passed over
// and the sources are compiled: the gate's answer is then the real checker's. The cache
// here is compiled from a planted checker that refuses everything, so running it shows.
func TestGateCacheFallsBack(t *testing.T) {
	needPython(t)
	t.Parallel()
	body, err := compileGate(context.Background(), python, gateMain(), checkerScript()+plantedChecker, allowedModules)
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := gateSources()
	head, code, _ := bytes.Cut(body, []byte("\n"))
	head = append(head, '\n')
	flipped := bytes.Clone(body)
	flipped[len(flipped)/2] ^= 0x40
	for _, tc := range []struct {
		name  string
		write func(path string) // nil: no file
		used  bool
	}{
		{name: "whole", used: true, write: func(p string) { must(t, writeCache(p, sum, body)) }},
		{name: "missing"},
		{name: "stale", write: func(p string) { must(t, writeCache(p, strings.Repeat("0", 64), body)) }},
		{name: "altered", write: func(p string) {
			must(t, writeCache(p, sum, body))
			data, _ := os.ReadFile(p)
			i := bytes.IndexByte(data, '\n') + 1
			rewrite(t, p, append(data[:i:i], flipped...))
		}},
		{name: "truncated", write: func(p string) {
			must(t, writeCache(p, sum, body))
			data, _ := os.ReadFile(p)
			rewrite(t, p, data[:len(data)-100])
		}},
		{name: "empty", write: func(p string) { must(t, os.WriteFile(p, nil, 0o644)) }},
		{name: "not ours", write: func(p string) { must(t, os.WriteFile(p, []byte("garbage\n"+string(body)), 0o644)) }},
		// Whole as far as the Go side can tell, but not this interpreter's: load.py's check.
		{name: "another python", write: func(p string) {
			must(t, writeCache(p, sum, append([]byte("0a0d0d0a 30b00f0 cpython-399\n"), code...)))
		}},
		// This interpreter's header over what is not its code objects: load.py falls back.
		{name: "bad marshal", write: func(p string) {
			must(t, writeCache(p, sum, append(bytes.Clone(head), []byte("\xff\xfenot marshal")...)))
		}},
		{name: "marshal of other values", write: func(p string) {
			must(t, writeCache(p, sum, append(bytes.Clone(head), []byte(")\x02\xe9\x01\x00\x00\x00\xe9\x02\x00\x00\x00")...)))
		}},
		{name: "a directory", write: func(p string) { must(t, os.Mkdir(p, 0o755)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tc.write != nil {
				tc.write(CacheFile(dir))
			}
			meta, rep, err := Gate(context.Background(), python, dir, t.TempDir(), "word_count",
				[]byte(readTestdata(t, "word_count.py")), []byte(readTestdata(t, "test_word_count.py")), 10*time.Second)
			ran := err != nil && strings.Contains(err.Error(), "FROM-THE-CACHE")
			if ran != tc.used {
				t.Fatalf("the cache's code ran: %v, want %v (err %v)", ran, tc.used, err)
			}
			if !tc.used && (err != nil || !rep.Passed || meta.Description == "") {
				t.Errorf("the gate without a usable cache: %+v %+v %v", meta, rep, err)
			}
		})
	}
}

// TestGateCacheDigest: readCache takes only a file whose first line names these scripts
// and whose body has the digest that line gives.
func TestGateCacheDigest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := CacheFile(dir)
	sum, _ := gateSources()
	body := []byte("any body\n\x00\x01")
	must(t, writeCache(path, sum, body))
	got, ok := readCache(path)
	if !ok || !cmp.Equal(got, body) {
		t.Fatalf("readCache = %q, %v", got, ok)
	}
	data, _ := os.ReadFile(path)
	d := sha256.Sum256(body)
	if want := fmt.Sprintf("%s %s %x\n", cacheMagic, sum, d); !strings.HasPrefix(string(data), want) {
		t.Errorf("first line %q, want %q", data, want)
	}
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 1
		rewrite(t, path, bad)
		if _, ok := readCache(path); ok {
			t.Fatalf("a cache with byte %d changed was taken", i)
		}
	}
}

// TestCacheFileNamesTheScripts: another binary's scripts have another cache file.
func TestCacheFileNamesTheScripts(t *testing.T) {
	t.Parallel()
	sum, short := gateSources()
	if len(sum) != 64 || !strings.HasPrefix(sum, short) || filepath.Base(CacheFile("/x")) != "pygate-"+short+".cache" {
		t.Errorf("sum %s, short %s, file %s", sum, short, CacheFile("/x"))
	}
}

// rewrite replaces the file at path (a cache is read-only) with data.
func rewrite(t *testing.T, path string, data []byte) {
	t.Helper()
	must(t, os.Remove(path))
	must(t, os.WriteFile(path, data, 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestGateCollectorOffForChecksOnly: the checks run with the garbage collector off
// (load.py), the test with it on again (gate.py): a tool's test that makes cyclic garbage
// is collected as in mode "test". A cache compiled from probes shows it: the checker's
// description and the runner's one test name say what gc.isenabled() was.
func TestGateCollectorOffForChecksOnly(t *testing.T) {
	needPython(t)
	t.Parallel()
	checker := checkerScript() + `
_real_check_request = check_request
def check_request(req):
    import gc
    out = _real_check_request(req)
    out["meta"]["description"] = "gc=%s" % gc.isenabled()
    return out
`
	runner := `
import gc, os
for ev in (b'{"event": "start", "name": "gc_%s"}' % str(gc.isenabled()).encode(),
           b'{"event": "result", "name": "gc_%s", "ok": true, "message": ""}' % str(gc.isenabled()).encode(),
           b'{"event": "done"}'):
    os.write(3, ev + b"\n")
`
	body, err := compileGate(context.Background(), python, gateScript+"\n"+runner, checker, allowedModules)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, _ := gateSources()
	must(t, writeCache(CacheFile(dir), sum, body))
	meta, rep, err := Gate(context.Background(), python, dir, t.TempDir(), "word_count",
		[]byte(readTestdata(t, "word_count.py")), []byte(readTestdata(t, "test_word_count.py")), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Description != "gc=False" || len(rep.Tests) != 1 || rep.Tests[0].Name != "gc_True" {
		t.Errorf("the checks ran with %s, the test with %+v; want gc=False, then gc_True", meta.Description, rep.Tests)
	}
}
