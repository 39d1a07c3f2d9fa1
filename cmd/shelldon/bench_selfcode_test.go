package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/sandbox"
	"github.com/shelldon/shelldon/internal/selfcode"
	"github.com/shelldon/shelldon/internal/worker"
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
	for _, tc := range []struct{ lang, code, test string }{
		{"starlark", wordCountStar, wordCountStarTest},
		{"python", wordCountPy, wordCountPyTest},
	} {
		b.Run(tc.lang, func(b *testing.B) {
			req, _ := json.Marshal(selftools.GateRequest{Name: "word_count", Language: tc.lang, Code: tc.code, Test: tc.test})
			samples := make([]time.Duration, 0, b.N)
			cpu := make([]time.Duration, 0, b.N)
			for range b.N {
				cpu0 := childrenCPU()
				start := time.Now()
				pol := selftools.GatePolicy(selftools.Env{Binary: binary})
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

// childrenCPU is the user and system time of this process's waited-for
// children and their descendants.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// liveTools makes n live Starlark tools in a home's tools directory.
func liveTools(b *testing.B, h string, n int) {
	d, err := selfcode.Open(filepath.Join(h, "tools"), nil)
	if err != nil {
		b.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	for i := range n {
		name := fmt.Sprintf("tool_%04d", i)
		m, err := d.Stage(name, selfcode.Starlark, wordCountStar, wordCountStarTest, selfcode.Meta{Description: "Count words", ParamsSchema: schema}, "PASSED")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.Promote(name, m.Hash, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTurnWithLiveTools is the per-turn overhead with 10, 100 and
// 1,000 live self-coded tools: discovery, the job carrying them, and the
// worker registering them (the fake model answers at once and calls none).
func BenchmarkTurnWithLiveTools(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			srv := brokertest.NewServer(b, "openai", func(brokertest.Recorded) brokertest.Reply { return brokertest.Reply{Text: "ok"} })
			h := home(b, "openai", srv.BaseURL(), "  stream: false\n")
			liveTools(b, h, n)
			d := startServe(b, h)
			body, _ := json.Marshal(map[string]string{"text": "hi"})
			post := func() {
				req, _ := http.NewRequest("POST", "http://"+d.addr+"/api/chat", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+d.token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil || resp.StatusCode != 200 {
					b.Fatalf("chat: %v %v", resp, err)
				}
				resp.Body.Close()
			}
			post()
			if got := len(srv.Requests()[0].Request.Tools); got < n {
				b.Fatalf("the model was offered %d tools, want at least %d", got, n)
			}
			samples := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				post()
				samples = append(samples, time.Since(start))
			}
			b.StopTimer()
			percentiles(b, samples)
		})
	}
}

// BenchmarkSelfToolCall is one call of a live self-coded tool as the worker
// makes it: a sandboxed child that reads the tool, checks its hash and runs
// it, talking to the worker over its channel.
func BenchmarkSelfToolCall(b *testing.B) {
	r, err := sandbox.NewRunner(binary)
	if err != nil {
		b.Fatal(err)
	}
	h := b.TempDir()
	liveTools(b, h, 1)
	d, _ := selfcode.Open(filepath.Join(h, "tools"), nil)
	t, err := d.Load(selfcode.StateLive, "tool_0000")
	if err != nil {
		b.Fatal(err)
	}
	st := contracts.SelfTool{Name: t.Name, Version: t.Version, Language: t.Language, Hash: t.Hash, Dir: t.Dir,
		Parameters: t.Meta.ParamsSchema}
	reg := worker.NewRegistry()
	if err := selftools.Register(reg, selftools.Env{Sandbox: r, Binary: binary, Tools: []contracts.SelfTool{st}}); err != nil {
		b.Fatal(err)
	}
	tool, _ := reg.Get(st.Name)
	samples := make([]time.Duration, 0, b.N)
	for range b.N {
		start := time.Now()
		out, err := tool.Run(context.Background(), json.RawMessage(`{"text":"a b c"}`))
		if err != nil || out != "3" {
			b.Fatalf("call: %q %v", out, err)
		}
		samples = append(samples, time.Since(start))
	}
	percentiles(b, samples)
}
