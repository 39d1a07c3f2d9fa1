//go:build unix

package pytool

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"
)

// importsTool is word_count as a tool that imports what tools often do: the checker then
// reads those modules' sources (check_reflect.py) and imports them, the test imports them.
const importsTool = `import collections
import json
import re
import typing

DESCRIPTION = "Count the words in a text."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
CAPABILITIES = {}


def run(text):
    counts = collections.Counter(re.findall(r"[a-z]+", text))
    return json.dumps(typing.cast(dict, counts))
`

const importsTest = `from word_count import run


def test_counts():
    assert run("a b a") == '{"a": 2, "b": 1}'
`

// BenchmarkGatePython is Gate without the sandbox, with the code cache, as the gate's
// sandbox runs it: python3's start, the checks and the test. "plain" imports nothing (the
// cost of the gate itself); "imports" imports collections, json, re and typing.
func BenchmarkGatePython(b *testing.B) {
	if !canRun {
		b.Skip("no runner on this platform")
	}
	cache := b.TempDir()
	if _, err := BuildGateCache(context.Background(), python, cache); err != nil {
		b.Skipf("no python: %v", err)
	}
	for _, tc := range []struct{ name, code, test string }{
		{"plain", header, goodTest},
		{"imports", importsTool, importsTest},
	} {
		b.Run(tc.name, func(b *testing.B) {
			samples := make([]time.Duration, 0, b.N)
			for range b.N {
				start := time.Now()
				_, rep, err := Gate(context.Background(), python, cache, b.TempDir(), "word_count", []byte(tc.code), []byte(tc.test), 10*time.Second)
				if err != nil || !rep.Passed {
					b.Fatalf("Gate: %v %+v", err, rep)
				}
				samples = append(samples, time.Since(start))
			}
			slices.Sort(samples)
			b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(samples[len(samples)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchmarkBuildGateCache is the daemon's build of the gate's cache (BuildGateCache), in the
// background after its first worker starts: compiling the scripts, importing the allowed
// modules and analysing their sources. It reports the cache file's size.
func BenchmarkBuildGateCache(b *testing.B) {
	if !canRun {
		b.Skip("no runner on this platform")
	}
	samples := make([]time.Duration, 0, b.N)
	var size int64
	for range b.N {
		dir := b.TempDir()
		start := time.Now()
		path, err := BuildGateCache(context.Background(), python, dir)
		if err != nil {
			b.Skipf("no python: %v", err)
		}
		samples = append(samples, time.Since(start))
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		size = fi.Size()
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(size), "cache-bytes")
}
