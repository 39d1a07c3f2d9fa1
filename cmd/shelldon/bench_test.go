package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
)

// Benchmarks of the real binary. scripts/bench.sh runs them and writes
// docs/PERFORMANCE.md; nothing here asserts a timing.

// percentiles reports p50 and p99 of the samples as metrics, in ms.
func percentiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	at := func(q float64) float64 {
		i := int(q * float64(len(samples)-1))
		return float64(samples[i].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkServeTurn is the per-turn overhead of the daemon: POST /api/chat
// in to reply out, with a fake provider on loopback that answers at once.
// It includes the worker spawn, the model call over the pipe, SQLite commits.
func BenchmarkServeTurn(b *testing.B) {
	srv := brokertest.NewServer(b, "openai", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Text: "ok"}
	})
	h := home(b, "openai", srv.BaseURL(), "  stream: false\n")
	d := startServe(b, h)
	body, _ := json.Marshal(map[string]string{"chat": "bench", "text": "hi"})
	post := func() {
		req, _ := http.NewRequest("POST", "http://"+d.addr+"/api/chat", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+d.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("chat: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	post() // warm up
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		post()
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	percentiles(b, samples)
}

// BenchmarkDaemonIdleRSS reports the resident memory of `shelldon serve`
// idle after start and after one turn.
func BenchmarkDaemonIdleRSS(b *testing.B) {
	srv := brokertest.NewServer(b, "openai", func(brokertest.Recorded) brokertest.Reply { return brokertest.Reply{Text: "ok"} })
	for range b.N {
		h := home(b, "openai", srv.BaseURL(), "")
		d := startServe(b, h)
		time.Sleep(time.Second)
		rss, anon := procRSS(b, d.cmd.Process.Pid)
		b.ReportMetric(rss, "VmRSS-MB")
		b.ReportMetric(anon, "RssAnon-MB")
		d.do(b, "POST", "/api/chat", d.token, map[string]string{"text": "hi"})
		time.Sleep(time.Second)
		rss, anon = procRSS(b, d.cmd.Process.Pid)
		b.ReportMetric(rss, "VmRSS-after-turn-MB")
		b.ReportMetric(anon, "RssAnon-after-turn-MB")
	}
}

func procRSS(b *testing.B, pid int) (rss, anon float64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "RssAnon:":
			anon = kb / 1024
		}
	}
	return rss, anon
}

// BenchmarkVersionColdStart runs `shelldon version` as a new process.
func BenchmarkVersionColdStart(b *testing.B) {
	samples := make([]time.Duration, 0, b.N)
	for range b.N {
		start := time.Now()
		if out, err := exec.Command(binary, "version").CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		samples = append(samples, time.Since(start))
	}
	percentiles(b, samples)
}

// BenchmarkChatOneShot runs `shelldon chat -m` end to end: config, store,
// one turn with a worker, exit. It reports the wall time and the peak RSS of
// the shelldon process (its worker is a separate, shorter-lived process).
func BenchmarkChatOneShot(b *testing.B) {
	srv := brokertest.NewServer(b, "openai", func(brokertest.Recorded) brokertest.Reply { return brokertest.Reply{Text: "ok"} })
	h := home(b, "openai", srv.BaseURL(), "")
	samples := make([]time.Duration, 0, b.N)
	var peak int64
	for range b.N {
		cmd := exec.Command(binary, "chat", "-m", "hi")
		cmd.Env = env(h)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		samples = append(samples, time.Since(start))
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss)
		}
	}
	percentiles(b, samples)
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
}

// BenchmarkBinarySize builds stripped binaries for the release targets.
func BenchmarkBinarySize(b *testing.B) {
	targets := []struct{ name, goos, goarch, goarm string }{
		{"linux-amd64", "linux", "amd64", ""},
		{"linux-arm64", "linux", "arm64", ""},
		{"linux-armv7", "linux", "arm", "7"},
	}
	dir := b.TempDir()
	for range b.N {
		for _, tg := range targets {
			out := filepath.Join(dir, "shelldon-"+tg.name)
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+tg.goos, "GOARCH="+tg.goarch, "GOARM="+tg.goarm)
			if msg, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("build %s: %v\n%s", tg.name, err, msg)
			}
			fi, err := os.Stat(out)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(fi.Size())/(1<<20), tg.name+"-MB")
		}
	}
}
