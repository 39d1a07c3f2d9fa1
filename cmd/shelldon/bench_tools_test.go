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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/selfcode"
)

// toolSizes are the toolbox sizes of BenchmarkToolbox.
var toolSizes = []int{10, 100, 1000, 10000}

// labeledTools are the 1,000 tools of internal/toolsearch's labeled set
// (testdata/tools.json): names, descriptions and parameter schemas
// written as an owner's toolbox would hold them.
func labeledTools(b *testing.B) []namedTool {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "toolsearch", "testdata", "tools.json"))
	if err != nil {
		b.Fatal(err)
	}
	var tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(data, &tools); err != nil {
		b.Fatal(err)
	}
	out := make([]namedTool, len(tools))
	for i, t := range tools {
		out[i] = namedTool{t.Name, selfcode.Meta{Description: t.Description, ParamsSchema: t.Parameters}}
	}
	return out
}

// namedTool is a tool's name and its manifest's description and schema.
type namedTool struct {
	Name string
	selfcode.Meta
}

// synthetic is the ith tool beyond the labeled set: a distinct name and a
// description made of an action, an object and a detail, none of them
// about counting words.
func synthetic(i int) namedTool {
	actions := []string{"convert", "fetch", "parse", "format", "list", "summarize", "validate", "extract", "translate",
		"schedule", "archive", "compare", "rename", "merge", "split", "encode", "decode", "score", "rank", "filter"}
	objects := []string{"invoice", "recipe", "calendar_event", "weather_report", "stock_quote", "playlist", "receipt",
		"contact_card", "shipping_label", "meter_reading", "bus_timetable", "garden_log", "tax_form", "flight_status",
		"sensor_reading", "bank_statement", "grocery_list", "workout_plan", "book_note", "energy_bill"}
	details := []string{"for a date range", "by category", "from a CSV export", "as a table", "in metric units",
		"for the household", "from the local network", "as JSON", "for the current month", "by priority",
		"from a photo caption", "with totals", "in the owner's time zone", "for a given year", "by location",
		"with a summary line", "from plain text", "as a checklist", "by amount", "for a named person",
		"across two files", "with the latest first", "in a short sentence", "for a postcode", "by week"}
	a, o := actions[i%len(actions)], objects[(i/len(actions))%len(objects)]
	d := details[(i/(len(actions)*len(objects)))%len(details)]
	name := fmt.Sprintf("%s_%s_%d", a, o, i)
	return namedTool{name, selfcode.Meta{Description: fmt.Sprintf("%s the %s %s.", strings.ToUpper(a[:1])+a[1:], strings.ReplaceAll(o, "_", " "), d),
		ParamsSchema: json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"the ` +
			strings.ReplaceAll(o, "_", " ") + `"}},"required":["input"]}`)}}
}

// makeToolbox puts n live Starlark tools in a home's tools directory:
// count_words, the tool the benchmark calls, and n-1 others from the
// labeled set, then synthetic ones. All run the word counter's code;
// only count_words is ever called. Each size is made once per test
// binary (the testing package runs a benchmark twice), or once in
// $SHELLDON_BENCH_TOOLBOXES, and copied.
func makeToolbox(b *testing.B, h string, n int) {
	b.Helper()
	cache := os.Getenv("SHELLDON_BENCH_TOOLBOXES") // to keep them between runs
	if cache == "" {
		cache = filepath.Dir(binary)
	}
	made := filepath.Join(cache, fmt.Sprintf("toolbox-%d", n))
	if _, err := os.Stat(made); err != nil {
		writeToolbox(b, made+".tmp", n)
		if err := os.Rename(made+".tmp", made); err != nil {
			b.Fatal(err)
		}
	}
	if out, err := exec.Command("cp", "-a", made, filepath.Join(h, "tools")).CombinedOutput(); err != nil {
		b.Fatalf("copy the toolbox: %v %s", err, out)
	}
}

// writeToolbox makes makeToolbox's n tools in dir.
func writeToolbox(b *testing.B, dir string, n int) {
	b.Helper()
	os.RemoveAll(dir)
	d, err := selfcode.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	labeled := labeledTools(b)
	metas := []namedTool{}
	for _, m := range labeled {
		if m.Name == "count_words" {
			metas = append(metas, m)
		}
	}
	for i := 0; len(metas) < n; i++ {
		switch {
		case i < len(labeled) && labeled[i].Name == "count_words":
		case i < len(labeled):
			metas = append(metas, labeled[i])
		default:
			metas = append(metas, synthetic(i))
		}
	}
	for _, meta := range metas {
		m, err := d.Stage(meta.Name, selfcode.Starlark, wordCountStar, wordCountStarTest,
			selfcode.Meta{Description: meta.Description, ParamsSchema: meta.ParamsSchema}, "PASSED")
		if err != nil {
			b.Fatalf("stage %s: %v", meta.Name, err)
		}
		if _, err := d.Promote(meta.Name, m.Hash, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolbox is the cost of the toolbox's size, with 10, 100, 1,000
// and 10,000 live self-coded tools, through the real daemon: a turn that
// calls no tool, its model request's size, and a turn that calls one
// self-coded tool (count_words: two model requests and a sandboxed call
// in between). Each turn is a new chat, so no history grows; turns come
// at a person's pace (20 ms apart, not timed).
func BenchmarkToolbox(b *testing.B) {
	for _, n := range toolSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			srv := brokertest.NewServer(b, "openai", func(r brokertest.Recorded) brokertest.Reply {
				msgs := r.Request.Messages
				last := msgs[len(msgs)-1]
				if last.Role != contracts.RoleUser || !strings.HasPrefix(last.Text, "How many words") || len(last.ToolResults) > 0 {
					return brokertest.Reply{Text: benchReply}
				}
				for _, t := range r.Request.Tools {
					if t.Name == "count_words" {
						return brokertest.Reply{ToolCalls: []contracts.ToolCall{{Name: "count_words",
							Arguments: `{"text":"the quick brown fox jumps"}`}}}
					}
				}
				return brokertest.Reply{Text: "count_words was not offered"}
			})
			h := home(b, "openai", srv.BaseURL(), "  stream: false\nlog:\n  level: debug\n")
			makeToolbox(b, h, n)
			d := startServe(b, h)
			post := func(chat, text string) string {
				body, _ := json.Marshal(map[string]string{"chat": chat, "text": text})
				req, _ := http.NewRequest("POST", "http://"+d.addr+"/api/chat", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+d.token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil || resp.StatusCode != 200 {
					b.Fatalf("chat: %v %v", resp, err)
				}
				defer resp.Body.Close()
				var out struct {
					Reply string `json:"reply"`
				}
				json.NewDecoder(resp.Body).Decode(&out)
				io.Copy(io.Discard, resp.Body) // to its end: the connection is kept
				return out.Reply
			}
			call := "How many words are in: the quick brown fox jumps?"
			post("warm-up-1", "Good morning, what can you do for me today?")
			if reply := post("warm-up-2", call); !strings.Contains(reply, benchReply[:20]) {
				b.Fatalf("the call's turn replied %q", reply)
			}
			turns := make([]time.Duration, 0, b.N)
			calls := make([]time.Duration, 0, b.N)
			var sizes []float64
			var offered []float64
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				time.Sleep(20 * time.Millisecond)
				before := len(srv.Requests())
				b.StartTimer()
				start := time.Now()
				post(fmt.Sprintf("turn-%d", i), "Good morning, what can you do for me today?")
				turns = append(turns, time.Since(start))
				b.StopTimer()
				first := srv.Requests()[before]
				sizes = append(sizes, float64(len(first.Body)))
				offered = append(offered, float64(len(first.Request.Tools)))
				time.Sleep(20 * time.Millisecond)
				b.StartTimer()
				start = time.Now()
				reply := post(fmt.Sprintf("call-%d", i), call)
				calls = append(calls, time.Since(start))
				if !strings.Contains(reply, benchReply[:20]) {
					b.Fatalf("the call's turn replied %q", reply)
				}
			}
			b.StopTimer()
			if os.Getenv("ZZ") != "" {
				os.WriteFile("/tmp/tt/toolbox.log", []byte(d.log()), 0o644)
			}
			rss, _ := procRSS(b, d.cmd.Process.Pid)
			b.ReportMetric(rss, "daemon-VmRSS-MB")
			b.ReportMetric(msOf(median(turns)), "turn-p50-ms")
			b.ReportMetric(msOf(median(calls)), "call-p50-ms")
			slices.Sort(sizes)
			b.ReportMetric(sizes[len(sizes)/2], "request-bytes")
			slices.Sort(offered)
			b.ReportMetric(offered[len(offered)/2], "tools-offered")
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkSelfCodeRoundTrip is a tool's whole way in, through the real
// daemon, per language: the turn in which the model proposes it (the
// gate's checks and test in the sandbox included), the owner's approval
// over the API (the promotion), and the first turn that calls it. Each
// round trip has a new home and daemon, started before the clock runs.
func BenchmarkSelfCodeRoundTrip(b *testing.B) {
	for _, tc := range []struct{ language, code, test string }{
		{"starlark", wordCountStar, wordCountStarTest},
		{"python", wordCountPy, wordCountPyTest},
	} {
		b.Run(tc.language, func(b *testing.B) {
			srv := brokertest.NewServer(b, "openai", selfScript(tc.language, tc.code, tc.test))
			var propose, approve, first, total []time.Duration
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				d := startServe(b, home(b, "openai", srv.BaseURL(), "  stream: false\n"))
				b.StartTimer()
				start := time.Now()
				status, out := d.do(b, "POST", "/api/chat", d.token, map[string]string{"text": "make me a word counter"})
				proposed := time.Now()
				if status != 200 || !strings.Contains(fmt.Sprint(out["reply"]), "PASSED") {
					b.Fatalf("propose: %d %v", status, out)
				}
				list, _ := out["approvals"].([]any)
				if len(list) != 1 {
					b.Fatalf("the turn filed %v", out["approvals"])
				}
				id := fmt.Sprint(list[0].(map[string]any)["id"])
				status, out = d.do(b, "POST", "/api/approvals/"+id, d.token, map[string]bool{"approve": true})
				approved := time.Now()
				if status != 200 || !strings.Contains(fmt.Sprint(out["reply"]), "is live") {
					b.Fatalf("approve: %d %v", status, out)
				}
				_, out = d.do(b, "POST", "/api/chat", d.token, map[string]string{"text": "count one two three four"})
				called := time.Now()
				if !strings.Contains(fmt.Sprint(out["reply"]), "word_count ok=true 4") {
					b.Fatalf("first call: %v", out)
				}
				propose = append(propose, proposed.Sub(start))
				approve = append(approve, approved.Sub(proposed))
				first = append(first, called.Sub(approved))
				total = append(total, called.Sub(start))
				b.StopTimer()
				d.stop(b)
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(msOf(median(propose)), "propose-p50-ms")
			b.ReportMetric(msOf(median(approve)), "approve-p50-ms")
			b.ReportMetric(msOf(median(first)), "first-call-p50-ms")
			b.ReportMetric(msOf(median(total)), "round-trip-p50-ms")
		})
	}
}
