package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core/toolbox"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/worker/selftools"
)

// BenchmarkGate is the gate of one proposal per language: the sandboxed
// child's static checks and test run, as propose_tool pays it. Besides the
// wall time it reports the CPU time (user and system) of the whole sandboxed
// tree per gate, from this process's children's rusage, which other load on
// the machine does not inflate the way it does wall time.
func BenchmarkGate(b *testing.B) {
	r, err := sandbox.NewRunner(binary)
	if err != nil {
		b.Fatal(err)
	}
	// The Python gate's code cache, as the daemon builds it at start.
	pyCache := b.TempDir()
	if _, err := toolbox.BuildPyGateCache(context.Background(), pyCache); err != nil && !errors.Is(err, toolbox.ErrNoPython) {
		b.Fatal(err)
	}
	for _, tc := range []struct{ lang, code, test string }{
		{"starlark", wordCountStar, wordCountStarTest},
		{"python", wordCountPy, wordCountPyTest},
		// A tool that imports json and re: the checker reads their sources, or
		// takes its analyses of them from the cache.
		{"python-imports", wordCountPyImports, wordCountPyTest},
	} {
		b.Run(tc.lang, func(b *testing.B) {
			lang, _, _ := strings.Cut(tc.lang, "-")
			req, _ := json.Marshal(selftools.GateRequest{Name: "word_count", Language: lang, Code: tc.code, Test: tc.test, PyCache: pyCache})
			samples := make([]time.Duration, 0, b.N)
			cpu := make([]time.Duration, 0, b.N)
			for range b.N {
				cpu0 := childrenCPU()
				start := time.Now()
				pol := selftools.GatePolicy(selftools.Env{Binary: binary, PyCache: pyCache}, lang)
				pol.Stdin = req
				res, err := r.Run(context.Background(), pol)
				var g selftools.GateResult
				if err != nil || json.Unmarshal(res.Stdout, &g) != nil || !g.Passed {
					b.Fatalf("gate: %v %s %s", err, res.Stdout, res.Stderr)
				}
				samples = append(samples, time.Since(start))
				cpu = append(cpu, childrenCPU()-cpu0)
			}
			percentiles(b, samples)
			slices.Sort(cpu)
			b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds())/1000, "cpu-p50-ms")
		})
	}
}

// wordCountPyImports is wordCountPy with json and re, as tools often import.
const wordCountPyImports = `import json
import re

DESCRIPTION = "Count the words in a text."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
CAPABILITIES = {}


def run(text):
    return json.dumps(len(re.findall(r"\S+", text)))
`

// childrenCPU is the user and system time of this process's waited-for
// children and their descendants.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
