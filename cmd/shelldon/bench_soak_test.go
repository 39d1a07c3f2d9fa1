package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
)

// soakEarly is the turn the soak's first reading is taken at; soakWindow
// is how many turns each reading spans: the resident memory is read after
// each turn of the window, and the median and the range of those readings
// are reported, so one garbage collection more or less does not decide the
// figure.
const (
	soakEarly  = 200
	soakWindow = 21
)

// BenchmarkSoakRSS runs SHELLDON_SOAK_TURNS turns (default 8,000) through
// one `shelldon serve`, one after another, against a scripted provider on
// 127.0.0.1, and reports the daemon's VmRSS and RssAnon (from
// /proc/<pid>/status) around turn 200 and around the last turn: the median
// and the range of the readings after each of the soakWindow turns ending
// there, and the difference of the two medians. scripts/bench.sh runs it
// (`scripts/bench.sh soak`); nothing asserts on it.
func BenchmarkSoakRSS(b *testing.B) {
	turns := 8000
	if s := os.Getenv("SHELLDON_SOAK_TURNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < soakEarly+soakWindow {
			b.Fatalf("SHELLDON_SOAK_TURNS=%q: want a number of turns of at least %d", s, soakEarly+soakWindow)
		}
		turns = n
	}
	srv := brokertest.NewServer(b, "openai", func(r brokertest.Recorded) brokertest.Reply {
		return brokertest.Reply{Text: "ok: a reply of a few words, as a model gives"}
	})
	h := home(b, "openai", srv.BaseURL(), "  stream: false\n")
	for range b.N {
		d := startServe(b, h)
		pid := d.cmd.Process.Pid
		var early, earlyAnon, late, lateAnon []float64
		var took []time.Duration
		start := time.Now()
		for i := 1; i <= turns; i++ {
			body, _ := json.Marshal(map[string]string{"chat": fmt.Sprintf("soak-%d", i%4), "text": fmt.Sprintf("message %d of the soak", i)})
			req, _ := http.NewRequest("POST", "http://"+d.addr+"/api/chat", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+d.token)
			t0 := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("turn %d: %v %v", i, resp, err)
			}
			io.Copy(io.Discard, resp.Body) // read whole: the connection is kept
			resp.Body.Close()
			took = append(took, time.Since(t0))
			switch {
			case i > soakEarly-soakWindow && i <= soakEarly:
				rss, anon := procRSS(b, pid)
				early, earlyAnon = append(early, rss), append(earlyAnon, anon)
			case i > turns-soakWindow:
				rss, anon := procRSS(b, pid)
				late, lateAnon = append(late, rss), append(lateAnon, anon)
			}
		}
		report := func(name string, xs []float64) float64 {
			slices.Sort(xs)
			med := xs[len(xs)/2]
			b.ReportMetric(med, name+"-p50-MB")
			b.ReportMetric(xs[0], name+"-min-MB")
			b.ReportMetric(xs[len(xs)-1], name+"-max-MB")
			return med
		}
		e, ea := report("VmRSS-early", early), report("RssAnon-early", earlyAnon)
		l, la := report("VmRSS-late", late), report("RssAnon-late", lateAnon)
		b.ReportMetric(l-e, "VmRSS-growth-MB")
		b.ReportMetric(la-ea, "RssAnon-growth-MB")
		b.ReportMetric(float64(turns), "turns")
		b.ReportMetric(time.Since(start).Minutes(), "soak-min")
		percentiles(b, took)
	}
}
