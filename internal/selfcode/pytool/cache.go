package pytool

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The gate's code cache. Compiling the gate's scripts (the checker is 80 KiB of Python)
// was a third of a gate's time, paid again on every gate. The daemon, which runs no
// model code, compiles them once with the same python3 the gates use (BuildGateCache)
// into a file of a directory that the gates' sandboxes see read-only; a gate reads it,
// checks that it was made from this binary's scripts and is whole, and hands it to
// python3 through load.py, which uses it only if it names that very interpreter. Any
// doubt and the gate compiles the sources, as without a cache: a missing, stale,
// truncated or corrupt cache costs time, never a different answer. Nothing the gate runs
// can write the cache: its directory is read-only in every sandbox, and the file is
// written by the daemon alone.
//
// The same file holds the analyses of the allowed modules' sources (check_reflect.py:
// which of their callables are reflective), the other large cost of a gate whose tool
// imports collections or typing (about 70 ms each). An analysis depends only on the
// module's name, its source, the checker and the interpreter: the file is named by the
// checker's digest, load.py takes it only for the interpreter that built it, and each
// entry is keyed by the SHA-256 of the module's source, which the gate reads anyway and
// hashes before taking an entry. A module whose source changed since (an upgraded
// Python), or one the cache lacks, is analysed by the gate as without a cache.

//go:embed py/load.py
var loadScript string

// cacheMagic starts a cache file's first line.
const cacheMagic = "shelldon-pygate-cache 2"

// maxCache bounds the cache file read by a gate; the compiled scripts are ~200 KiB, the
// analyses ~3 KiB.
const maxCache = 4 << 20

// buildTimeout bounds a cache's build: importing and analysing every allowed module takes
// about a second on a desktop, several on a Raspberry Pi Zero 2.
const buildTimeout = 2 * time.Minute

// gateMain is the gate's script: its prelude followed by the runner.
func gateMain() string { return gateScript + "\n" + runnerScript }

// gateSources are the sources a cache is compiled from, and their digest, which names
// the cache file: another binary's scripts make another file. The digest covers the
// script that builds the cache and the one that reads it too (buildScript, load.py), and
// the allowed modules, which the analyses cover: they define what the file holds.
var gateSources = sync.OnceValues(func() (string, string) {
	h := sha256.New()
	for _, s := range []string{gateMain(), checkerScript(), buildScript, loadScript, strings.Join(allowedModules, "\n")} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		io.WriteString(h, s)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	return sum, sum[:16]
})

// CacheFile is the path of the gate's code cache of this binary's scripts in dir.
func CacheFile(dir string) string {
	_, short := gateSources()
	return filepath.Join(dir, "pygate-"+short+".cache")
}

// buildScript compiles the gate's script and the checker's, read from stdin as load.py
// reads them (without the cache section), runs the checker's cached_analyses over the
// allowed modules (the third section, one name a line), and writes the cache's body: a
// line naming the interpreter as load.py checks it, then marshal of both code objects and
// the analyses (none if they fail: the code is worth caching alone). The checker's code
// runs here only to analyse the standard library's sources: no tool's code is read.
const buildScript = `import marshal, sys
data = sys.stdin.buffer.read()
parts = []
for _ in range(3):
    n = int.from_bytes(data[:8], "big")
    parts.append(data[8:8 + n])
    data = data[8 + n:]
magic = sys.modules["_frozen_importlib_external"].MAGIC_NUMBER
head = ("%s %x %s\n" % (magic.hex(), sys.hexversion, sys.implementation.cache_tag)).encode()
codes = (compile(parts[0].decode("utf-8"), "<string>", "exec"),
         compile(parts[1].decode("utf-8"), "<shelldon-check>", "exec"))
try:
    checker = {"__name__": "shelldon_check"}
    exec(codes[1], checker)
    analyses = checker["cached_analyses"](parts[2].decode("utf-8").split())
except Exception:
    analyses = {}  # the compiled code is worth caching without them
sys.stdout.buffer.write(head + marshal.dumps(codes + (analyses,)))
`

// BuildGateCache makes sure dir holds the gate's code cache of this binary's scripts,
// compiled by python (the python3 the gates run: the one the sandbox's PATH finds), with
// the analyses of the allowed modules' sources, and returns its path. A cache already
// there and whole is kept. The file is written to a temporary name and renamed into
// place, read-only, so a gate reads either no file or a whole one. Only the daemon calls this, outside any sandbox: python compiles shelldon's
// own embedded scripts and runs only the checker's analysis of the allowed modules, which
// it imports: the standard library's code, never a tool's.
func BuildGateCache(ctx context.Context, python, dir string) (string, error) {
	path := CacheFile(dir)
	if _, ok := readCache(path); ok {
		return path, nil
	}
	body, err := compileGate(ctx, python, gateMain(), checkerScript(), allowedModules)
	if err != nil {
		return "", err
	}
	sum, _ := gateSources()
	if err := writeCache(path, sum, body); err != nil {
		return "", err
	}
	return path, nil
}

// compileGate runs buildScript with python on the two sources and the allowed modules.
func compileGate(ctx context.Context, python, main, checker string, allowed []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	cmd := command(ctx, python, "", append(pythonFlags, "-c", buildScript)...)
	cmd.Stdin = bytes.NewReader(sections(main, checker, strings.Join(allowed, "\n")))
	stdout := &capWriter{max: maxCache}
	stderr := &capWriter{max: MaxResult}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Start()
	if err == nil {
		// The build (a second of CPU on a desktop, several on a Pi Zero 2) runs beside
		// the daemon's first turns: let them have the CPU first.
		lowerPriority(cmd.Process.Pid)
		err = cmd.Wait()
	}
	if err != nil {
		return nil, fmt.Errorf("pytool: compile the gate's scripts: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if stdout.dropped > 0 || stdout.buf.Len() == 0 {
		return nil, errors.New("pytool: compile the gate's scripts: no output, or too much")
	}
	return stdout.buf.Bytes(), nil
}

// writeCache writes a cache file for the sources of digest sum: its first line, then
// body, by a temporary file renamed over path.
func writeCache(path, sum string, body []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("pytool: gate cache: %w", err)
	}
	digest := sha256.Sum256(body)
	data := append([]byte(fmt.Sprintf("%s %s %x\n", cacheMagic, sum, digest)), body...)
	f, err := os.CreateTemp(filepath.Dir(path), ".pygate-*.tmp")
	if err != nil {
		return fmt.Errorf("pytool: gate cache: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o444)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("pytool: gate cache: %w", err)
	}
	return nil
}

// readCache reads the cache file at path and returns its body, the part load.py reads,
// if the file was made from this binary's scripts and its digest holds; ok is false for
// a file missing, stale, truncated or altered.
func readCache(path string) (body []byte, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCache+1))
	if err != nil || len(data) > maxCache {
		return nil, false
	}
	line, body, found := bytes.Cut(data, []byte("\n"))
	sum, _ := gateSources()
	fields := strings.Fields(string(line))
	if !found || len(fields) != 4 || fields[0]+" "+fields[1] != cacheMagic || fields[2] != sum {
		return nil, false
	}
	digest := sha256.Sum256(body)
	if fields[3] != hex.EncodeToString(digest[:]) {
		return nil, false
	}
	return body, true
}

// sections frames strings as load.py and buildScript read them: each an 8-byte big-endian
// length and its bytes.
func sections(parts ...string) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		b.Write(n[:])
		b.WriteString(p)
	}
	return b.Bytes()
}

// gateInput is the gate's stdin for load.py: the cache found in cacheDir (or nothing), the
// gate's script, the checker's, then the request.
func gateInput(cacheDir string, req []byte) []byte {
	var cache []byte
	if cacheDir != "" {
		cache, _ = readCache(CacheFile(cacheDir))
	}
	return append(sections(string(cache), gateMain(), checkerScript()), req...)
}
