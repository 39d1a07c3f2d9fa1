package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/contracts"
)

// BenchmarkHostileRSS measures what a user would see on a board: the
// daemon's peak resident memory (VmHWM) while agent.workers (16, the
// maximum) turns run at once against a provider whose every reply sits
// just under the caps: 1 MiB of text, of control characters (which JSON
// re-encodes six times larger, and the cap counts so), or of tool-call
// arguments. Each case
// starts its own daemon and runs 2 rounds of 16 concurrent turns. Reported
// as peak-rss-MiB (and idle-rss-MiB); scripts/bench.sh hostile writes it
// into docs/PERFORMANCE.md.
func BenchmarkHostileRSS(b *testing.B) {
	const near = 1<<20 - 4096
	cases := []struct {
		name  string
		reply func() brokertest.Reply
	}{
		{"text", func() brokertest.Reply { return brokertest.Reply{Text: strings.Repeat("a", near)} }},
		// Control characters are six bytes each once JSON-escaped, which
		// is what the cap counts (provider.WireSize).
		{"control-text", func() brokertest.Reply { return brokertest.Reply{Text: strings.Repeat("\x01", near/6)} }},
		{"tool-args", func() brokertest.Reply {
			args, _ := json.Marshal(map[string]string{"text": strings.Repeat("a", near-64)})
			return brokertest.Reply{ToolCalls: []contracts.ToolCall{{Name: "echo_back", Arguments: string(args)}}}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			reply := c.reply()
			srv := brokertest.NewServer(b, "openai", func(r brokertest.Recorded) brokertest.Reply {
				if last := r.Request.Messages[len(r.Request.Messages)-1]; last.Role == contracts.RoleTool {
					return brokertest.Reply{Text: "done"}
				}
				return reply
			})
			h := home(b, "openai", srv.BaseURL(), "agent:\n  workers: 16\n  turn_budget: 2m\n")
			d := startServe(b, h)
			idle := vmKB(b, d.cmd.Process.Pid, "VmRSS")
			for b.Loop() {
				for round := range 2 {
					var wg sync.WaitGroup
					for i := range 16 {
						wg.Go(func() {
							status, out := d.do(b, "POST", "/api/chat", d.token, map[string]string{"chat": fmt.Sprintf("r%d-%d", round, i), "text": "hi"})
							if status != 200 {
								b.Errorf("turn: %d %v", status, out)
							}
						})
					}
					wg.Wait()
				}
			}
			b.ReportMetric(float64(idle)/1024, "idle-rss-MiB")
			b.ReportMetric(float64(vmKB(b, d.cmd.Process.Pid, "VmHWM"))/1024, "peak-rss-MiB")
		})
	}
}

// vmKB reads a "Vm…: N kB" line of /proc/<pid>/status.
func vmKB(b *testing.B, pid int, field string) int {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	m := regexp.MustCompile(field + `:\s+(\d+) kB`).FindStringSubmatch(string(data))
	if m == nil {
		b.Fatalf("no %s in /proc/%d/status", field, pid)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
