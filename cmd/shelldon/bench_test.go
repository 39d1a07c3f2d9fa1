package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// warmModes are the daemon with agent.warm_worker on and off, as the
// extra config of home.
var warmModes = []struct{ name, config string }{
	{"warm", "agent:\n  warm_worker: true\n"},
	{"cold", "agent:\n  warm_worker: false\n"},
}

// BenchmarkServeTurn is the per-turn overhead of the daemon: POST /api/chat
// in to reply out, with a fake provider on loopback that answers at once.
// It includes the worker spawn (or the hand-over of the worker started
// ahead), the model call over the pipe, SQLite commits. It runs with the
// warm worker on and off, with turns back to back and at a person's pace
// (20 ms between a reply and the next message, not timed), where the next
// worker has had time to start. Besides each turn's time it reports it net
// of the fake provider's own time (brokertest.Server.Took).
//
// The conversation is at its steady state: messages of a person's length
// and replies of a model's, and a history at agent.history_chars (warm-up
// turns fill it before the timed ones).
func BenchmarkServeTurn(b *testing.B) {
	for _, mode := range warmModes {
		for _, pace := range []struct {
			name string
			gap  time.Duration
		}{{"back-to-back", 0}, {"paced", 20 * time.Millisecond}} {
			b.Run(mode.name+"/"+pace.name, func(b *testing.B) { serveTurns(b, mode.config, pace.gap, false) })
		}
	}
}

// BenchmarkTurnProfile is BenchmarkServeTurn's warm, paced turns with the
// daemon logging at debug level, for its turn profiles: it reports the
// median of each step. Logging them costs the daemon some CPU (each line
// is redacted), so the turns' own figures come from BenchmarkServeTurn.
func BenchmarkTurnProfile(b *testing.B) {
	serveTurns(b, warmModes[0].config, 20*time.Millisecond, true)
}

// benchReply is the fake model's answer in the per-turn benchmarks: a
// reply of a model's usual length (about 500 characters).
var benchReply = strings.Repeat("Here is what I found about that, in a few plain sentences. ", 8)

// benchMessage is the owner's nth message: about 100 characters.
func benchMessage(n int) string {
	return fmt.Sprintf("Message %d: could you remind me what we said about the garden, and what is left to do this week?", n)
}

// historyFill is how many warm-up turns fill agent.history_chars (24,000
// by default) with benchMessage and benchReply.
const historyFill = 45

func serveTurns(b *testing.B, config string, gap time.Duration, profiled bool) {
	srv := brokertest.NewServer(b, "openai", func(brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Text: benchReply}
	})
	if profiled {
		config += "log:\n  level: debug\n"
	}
	h := home(b, "openai", srv.BaseURL(), "  stream: false\n"+config)
	d := startServe(b, h)
	post := func(n int) {
		body, _ := json.Marshal(map[string]string{"chat": "bench", "text": benchMessage(n)})
		req, _ := http.NewRequest("POST", "http://"+d.addr+"/api/chat", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+d.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("chat: %v %v", resp, err)
		}
		// The reply is read whole, as its reader would, which also lets the
		// client keep its connection for the next turn (one closed early
		// is dropped, and the next turn would dial anew).
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for i := range historyFill {
		post(i)
		time.Sleep(gap)
	}
	samples := make([]time.Duration, 0, b.N)
	net := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		time.Sleep(gap)
		before := len(srv.Requests())
		b.StartTimer()
		start := time.Now()
		post(historyFill + i)
		took := time.Since(start)
		b.StopTimer()
		samples = append(samples, took)
		for _, p := range srv.Took()[before:] {
			took -= p
		}
		net = append(net, took)
		b.StartTimer()
	}
	b.StopTimer()
	percentiles(b, samples)
	slices.Sort(net)
	b.ReportMetric(msOf(net[len(net)/2]), "net-p50-ms")
	b.ReportMetric(msOf(net[(len(net)-1)*99/100]), "net-p99-ms")
	b.ReportMetric(idleRoundTrip(b, d, gap), "healthz-p50-ms")
	if profiled {
		reportProfile(b, d.log(), b.N)
	}
}

// idleRoundTrip is the p50, in ms, of GET /healthz to d (an HTTP
// exchange in which the daemon does nothing) from the same client at the
// same pace as the turns: the part of a turn's time that is the owner's
// request and its answer crossing loopback and waking both processes.
func idleRoundTrip(b *testing.B, d *daemon, gap time.Duration) float64 {
	var took []time.Duration
	for range 50 {
		time.Sleep(gap)
		start := time.Now()
		resp, err := http.Get("http://" + d.addr + "/healthz")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	return msOf(took[len(took)/2])
}

// reportProfile reports, for each step of the last n turn profiles in
// the daemon's log (core's "turn profile" lines, at debug level), the
// median of when it ended, in ms since the turn began, as a metric
// "at-<step>-ms" (a step a turn repeats is numbered: "model answered 2"),
// and the median of the turn's time inside the daemon as "daemon-p50-ms".
// Ordered by those medians, the steps show where a turn's time goes,
// whatever order overlapping steps ended in, turn by turn.
func reportProfile(b *testing.B, log string, n int) {
	var lines []string
	for l := range strings.SplitSeq(log, "\n") {
		if strings.Contains(l, `msg="turn profile"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) < n {
		b.Fatalf("%d turn profiles in the daemon's log, want %d", len(lines), n)
	}
	lines = lines[len(lines)-n:]
	stepsRe := regexp.MustCompile(`steps="([^"]*)"`)
	msRe := regexp.MustCompile(` ms=([0-9.]+)`)
	at := map[string][]float64{}
	var total []float64
	for _, l := range lines {
		m := stepsRe.FindStringSubmatch(l)
		t := msRe.FindStringSubmatch(l)
		if m == nil || t == nil {
			b.Fatalf("turn profile without steps: %q", l)
		}
		v, _ := strconv.ParseFloat(t[1], 64)
		total = append(total, v)
		seen := map[string]int{}
		sum := 0.0
		for item := range strings.SplitSeq(m[1], ", ") {
			name, ms, _ := strings.Cut(item, " +")
			d, err := strconv.ParseFloat(ms, 64)
			if err != nil {
				b.Fatalf("step %q of %q", item, l)
			}
			sum += d
			seen[name]++
			if seen[name] > 1 {
				name = fmt.Sprintf("%s %d", name, seen[name])
			}
			at[name] = append(at[name], sum)
		}
	}
	median := func(v []float64) float64 {
		slices.Sort(v)
		return v[len(v)/2]
	}
	unit := regexp.MustCompile(`[^a-z0-9]+`)
	for name, v := range at {
		b.ReportMetric(median(v), "at-"+strings.Trim(unit.ReplaceAllString(name, "-"), "-")+"-ms")
	}
	b.ReportMetric(median(total), "daemon-p50-ms")
}

// BenchmarkDaemonIdleRSS reports the resident memory of `shelldon serve`
// idle after start and after one turn, and of its children then (the
// worker started ahead, with the warm worker on), with the warm worker on
// and off; then idle again after a restart on the same home.
func BenchmarkDaemonIdleRSS(b *testing.B) {
	srv := brokertest.NewServer(b, "openai", func(brokertest.Recorded) brokertest.Reply { return brokertest.Reply{Text: "ok"} })
	for _, mode := range warmModes {
		b.Run(mode.name, func(b *testing.B) {
			for range b.N {
				h := home(b, "openai", srv.BaseURL(), mode.config)
				d := startServe(b, h)
				time.Sleep(time.Second)
				rss, anon := procRSS(b, d.cmd.Process.Pid)
				b.ReportMetric(rss, "VmRSS-MB")
				b.ReportMetric(anon, "RssAnon-MB")
				rss, anon = childrenRSS(b, d.cmd.Process.Pid)
				b.ReportMetric(rss, "children-VmRSS-MB")
				b.ReportMetric(anon, "children-RssAnon-MB")
				d.do(b, "POST", "/api/chat", d.token, map[string]string{"text": "hi"})
				time.Sleep(time.Second)
				rss, anon = procRSS(b, d.cmd.Process.Pid)
				b.ReportMetric(rss, "VmRSS-after-turn-MB")
				b.ReportMetric(anon, "RssAnon-after-turn-MB")
				rss, anon = childrenRSS(b, d.cmd.Process.Pid)
				b.ReportMetric(rss, "children-VmRSS-after-turn-MB")
				b.ReportMetric(anon, "children-RssAnon-after-turn-MB")
				// The same home started again: what a daemon holds idle on
				// every start but its first, with its database made and
				// migrated already.
				d.stop(b)
				d = startServe(b, h)
				time.Sleep(time.Second)
				rss, anon = procRSS(b, d.cmd.Process.Pid)
				b.ReportMetric(rss, "VmRSS-restart-MB")
				b.ReportMetric(anon, "RssAnon-restart-MB")
			}
		})
	}
}

// childrenRSS sums the resident memory of pid's descendants (the children
// of each of its threads).
func childrenRSS(b *testing.B, pid int) (rss, anon float64) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			child, _ := strconv.Atoi(f)
			r, a := procRSS(b, child)
			cr, ca := childrenRSS(b, child)
			rss, anon = rss+r+cr, anon+a+ca
		}
	}
	return rss, anon
}

func procRSS(b testing.TB, pid int) (rss, anon float64) {
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
