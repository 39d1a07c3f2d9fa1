//go:build unix

package pytool

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// analysesProbe runs in python with the checker: it reads a cache's body on stdin, and for
// every allowed module and every submodule of an allowed package that importing them
// loads, whose source is installed, prints the module's Reflective (names in order, methods sorted) as the checker
// finds it without the cache and with it, and whether the cache held its analysis. With
// the cache, the analysis itself is made to fail: a result can only come from the cache.
const analysesProbe = `
import marshal
_body = sys.stdin.buffer.read()
_head, _, _rest = _body.partition(b"\n")
ANALYSES_TABLE = marshal.loads(_rest)[2]

def _dump(r):
    return [list(r.names.items()), sorted(r.methods)]

_fresh, _cached = {}, {}
load_modules(sys.argv[1].split(","))
for _n in ALLOWED_MODULES:
    MODULES.get(_n)
_mods = [m for m in list(sys.modules.values()) if isinstance(m, types.ModuleType) and allowed_module(m)]
for _m in _mods:
    _r = Reflective()
    _src = module_source(_m)
    if _src is None:
        continue  # a C module: nothing to analyse, nothing cached
    analyse_source(_m.__name__, _src, _r)
    _fresh.setdefault(_m.__name__ + " " + str(getattr(_m, "__file__", None)), _dump(_r))
_real_analyse = analyse
def analyse(tree, modname, result):
    raise AssertionError("analysed " + modname)
ANALYSES = ANALYSES_TABLE
_hits = 0
for _m in _mods:
    _r = Reflective()
    _src = module_source(_m)
    if _src is not None and cached_analysis(_m.__name__, _src, _r):
        _hits += 1
        _cached[_m.__name__ + " " + str(getattr(_m, "__file__", None))] = _dump(_r)
# reflective() itself, through the cache, as the gate calls it
REFLECTIVE.clear()
_through = {m.__name__: _dump(reflective(m)) for m in _mods if module_source(m) is not None}
print(json.dumps({"fresh": _fresh, "cached": _cached, "through": _through, "table": len(ANALYSES_TABLE)}))
`

// TestCachedAnalysesMatch: for every allowed module (and every submodule of an allowed
// package they load), the analysis the cache holds is the one the checker makes from the
// module's source, name for name and reason for reason, in the same order; and the cache
// holds one for each module whose source is installed.
func TestCachedAnalysesMatch(t *testing.T) {
	needPython(t)
	t.Parallel()
	dir := builtCache(t)
	body, ok := readCache(CacheFile(dir))
	if !ok {
		t.Fatal("the cache does not read back")
	}
	cmd := exec.Command(python, append(slices.Clone(pythonFlags), "-c", "import json\n"+checkSource+"\n"+checkReflect+analysesProbe, strings.Join(allowedModules, ","))...)
	cmd.Env = cleanEnv
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the probe: %v\n%s", err, stderr.String())
	}
	var got struct {
		Fresh, Cached map[string]json.RawMessage
		Through       map[string]json.RawMessage
		Table         int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the probe's output: %v\n%s", err, out)
	}
	if len(got.Fresh) < len(allowedModules)/2 {
		t.Fatalf("only %d modules with a source: %v", len(got.Fresh), got.Fresh)
	}
	found := 0
	for mod, fresh := range got.Fresh {
		if string(fresh) != `[[], []]` {
			found++
		}
		cached, ok := got.Cached[mod]
		if !ok {
			t.Errorf("%s: not in the cache", mod)
			continue
		}
		if !bytes.Equal(cached, fresh) {
			t.Errorf("%s: cached %s, analysed %s", mod, cached, fresh)
		}
	}
	if len(got.Cached) != len(got.Fresh) {
		t.Errorf("%d cached results for %d modules", len(got.Cached), len(got.Fresh))
	}
	// The analysis finds something in some modules (collections, typing, functools...):
	// an empty cache would match an analysis that found nothing.
	if found < 3 {
		t.Errorf("the analysis found reflective callables in only %d modules", found)
	}
	for name, through := range got.Through {
		same := false
		for k, fresh := range got.Fresh {
			same = same || strings.HasPrefix(k, name+" ") && bytes.Equal(fresh, through)
		}
		if !same {
			t.Errorf("reflective(%s) through the cache = %s, not an analysis of it", name, through)
		}
	}
	t.Logf("%d modules, %d with reflective callables, %d entries in the cache", len(got.Fresh), found, got.Table)
}

// plantAnalyses rewrites a cache's body with python: edit, Python statements, changes
// the analyses table T (a dict); SRC(name) is the source of module name, DIGEST(b) its
// SHA-256. It returns the new body.
func plantAnalyses(t *testing.T, body []byte, edit string) []byte {
	t.Helper()
	script := `import hashlib, importlib, marshal, sys
data = sys.stdin.buffer.read()
head, _, rest = data.partition(b"\n")
main, check, T = marshal.loads(rest)
def SRC(name):
    with open(importlib.import_module(name).__file__, "rb") as f:
        return f.read()
def DIGEST(b):
    return hashlib.sha256(b).digest()
` + edit + `
sys.stdout.buffer.write(head + b"\n" + marshal.dumps((main, check, T)))
`
	cmd := exec.Command(python, append(slices.Clone(pythonFlags), "-c", script)...)
	cmd.Env = cleanEnv
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("planting: %v\n%s", err, stderr.String())
	}
	return out
}

// TestCachedAnalysesFallBack: a gate takes a module's analysis from the cache only when
// the cache is whole, this interpreter's, and holds an entry for that module's very source;
// otherwise (no cache, a corrupt one, another Python's, an entry made for another source,
// a malformed entry or table) it analyses the module itself, as without a cache. A planted
// entry that calls json.dumps reflective shows which: the gate refuses a tool that uses it
// only when it took the entry.
func TestCachedAnalysesFallBack(t *testing.T) {
	needPython(t)
	t.Parallel()
	body, err := compileGate(context.Background(), python, gateMain(), checkerScript(), allowedModules)
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := gateSources()
	const planted = `("dumps", "it FROM-THE-CACHE")`
	key := `("json", DIGEST(SRC("json")))`
	whole := plantAnalyses(t, body, `T[`+key+`] = ((`+planted+`,), ())`)
	_, code, _ := bytes.Cut(whole, []byte("\n"))
	flipped := bytes.Clone(whole)
	flipped[len(flipped)-len(flipped)/4] ^= 0x40
	for _, tc := range []struct {
		name  string
		write func(path string) // nil: no file
		used  bool
	}{
		{name: "whole", used: true, write: func(p string) { must(t, writeCache(p, sum, whole)) }},
		{name: "missing"},
		{name: "corrupt", write: func(p string) {
			must(t, writeCache(p, sum, whole))
			data, _ := os.ReadFile(p)
			i := bytes.IndexByte(data, '\n') + 1
			rewrite(t, p, append(data[:i:i], flipped...))
		}},
		{name: "another python", write: func(p string) {
			must(t, writeCache(p, sum, append([]byte("0a0d0d0a 30b00f0 cpython-399\n"), code...)))
		}},
		// The entry for another source of json (as if Python were upgraded since the
		// build): the gate's digest of json's source finds nothing.
		{name: "another source", write: func(p string) {
			must(t, writeCache(p, sum, plantAnalyses(t, body,
				`del T[`+key+`]
T[("json", DIGEST(SRC("json") + b"\n# changed\n"))] = ((`+planted+`,), ())`)))
		}},
		{name: "malformed entry", write: func(p string) {
			must(t, writeCache(p, sum, plantAnalyses(t, body, `T[`+key+`] = ([`+planted+`], ())`)))
		}},
		{name: "malformed reason", write: func(p string) {
			must(t, writeCache(p, sum, plantAnalyses(t, body, `T[`+key+`] = ((("dumps", 1),), ())`)))
		}},
		{name: "table not a dict", write: func(p string) {
			must(t, writeCache(p, sum, plantAnalyses(t, body, `T = [(`+key+`, ((`+planted+`,), ()))]`)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tc.write != nil {
				tc.write(CacheFile(dir))
			}
			meta, rep, err := Gate(context.Background(), python, dir, t.TempDir(), "word_count",
				[]byte(importsTool), []byte(importsTest), 10*time.Second)
			took := err != nil && strings.Contains(err.Error(), "json.dumps is not allowed: it FROM-THE-CACHE")
			if took != tc.used {
				t.Fatalf("the cache's analysis was taken: %v, want %v (err %v)", took, tc.used, err)
			}
			if !tc.used && (err != nil || !rep.Passed || meta.Description == "") {
				t.Errorf("the gate without a usable analysis: %+v %+v %v", meta, rep, err)
			}
		})
	}
}

// TestBuildAnalysesDegrade: the build's analyses cover what this Python has (a module of
// the list that is not installed is left out, the others kept); if they fail altogether,
// the cache still holds the compiled code, with no analyses, and a gate with it passes
// what a gate without it passes.
func TestBuildAnalysesDegrade(t *testing.T) {
	needPython(t)
	t.Parallel()
	entries := func(body []byte) string {
		cmd := exec.Command(python, append(slices.Clone(pythonFlags), "-c", `import marshal, sys
head, _, rest = sys.stdin.buffer.read().partition(b"\n")
main, check, T = marshal.loads(rest)
print(" ".join(sorted(name for name, digest in T)))`)...)
		cmd.Env = cleanEnv
		cmd.Stdin = bytes.NewReader(body)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("reading the analyses: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	body, err := compileGate(context.Background(), python, gateMain(), checkerScript(), []string{"no_such_module", "copy", "bisect"})
	if err != nil {
		t.Fatal(err)
	}
	if got := entries(body); got != "bisect copy" {
		t.Errorf("analyses of %q, want bisect and copy", got)
	}
	broken := checkerScript() + "\ndef cached_analyses(allowed):\n    raise RuntimeError('broken')\n"
	body, err = compileGate(context.Background(), python, gateMain(), broken, allowedModules)
	if err != nil {
		t.Fatalf("a build whose analyses fail: %v", err)
	}
	if got := entries(body); got != "" {
		t.Errorf("analyses of %q, want none", got)
	}
	dir := t.TempDir()
	sum, _ := gateSources()
	must(t, writeCache(CacheFile(dir), sum, body))
	meta, rep, err := Gate(context.Background(), python, dir, t.TempDir(), "word_count", []byte(importsTool), []byte(importsTest), 10*time.Second)
	if err != nil || !rep.Passed || meta.Description == "" {
		t.Errorf("a gate with a cache without analyses: %+v %+v %v", meta, rep, err)
	}
}
