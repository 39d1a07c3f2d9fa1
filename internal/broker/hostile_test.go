package broker_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker"
	"github.com/shelldon/shelldon/internal/broker/anthropic"
	"github.com/shelldon/shelldon/internal/broker/openai"
	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

// A hostile provider: a server on 127.0.0.1 that writes what a generator
// makes until the generator stops or the client goes away. The generators
// write tens of MB; the broker must stop at its caps long before.

// gen writes a reply to w; it returns early when a write fails (the client
// hung up).
type gen func(w *bufio.Writer) error

// hostile starts a server whose every reply is g's, as an event stream (or
// JSON when plain).
func hostile(t testing.TB, plain bool, g gen) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if plain {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		bw := bufio.NewWriterSize(w, 64<<10)
		if g(bw) == nil {
			bw.Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// repeat writes s until n bytes are written or a write fails.
func repeat(w *bufio.Writer, s string, n int) error {
	for written := 0; written < n; written += len(s) {
		if _, err := w.WriteString(s); err != nil {
			return err
		}
	}
	return nil
}

func write(w *bufio.Writer, parts ...string) error {
	for _, p := range parts {
		if _, err := w.WriteString(p); err != nil {
			return err
		}
	}
	return nil
}

const (
	aStart     = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{}}}\n\n"
	aTextBlock = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	aToolBlock = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"read_file\",\"input\":{}}}\n\n"
	aStop      = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

func aText(s string) string {
	return `event: content_block_delta` + "\ndata: " + `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + s + "\"}}\n\n"
}

func aArgs(s string) string {
	return `event: content_block_delta` + "\ndata: " + `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"` + s + "\"}}\n\n"
}

func oText(s string) string {
	return `data: {"choices":[{"index":0,"delta":{"content":"` + s + "\"}}]}\n\n"
}

func oArgs(s string) string {
	return `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"read_file","arguments":"` + s + "\"}}]}}]}\n\n"
}

const oDone = "data: [DONE]\n\n"

var chunk = strings.Repeat("a", 16<<10)

// The hostile replies of both wire formats, each with the words its error
// must hold.
var floods = []struct {
	name  string
	kind  string
	plain bool
	gen   gen
	want  string
}{
	{"anthropic 60 MB of text", anthropic.Kind, false, func(w *bufio.Writer) error {
		if err := write(w, aStart, aTextBlock); err != nil {
			return err
		}
		return repeat(w, aText(chunk), 60<<20)
	}, "the model's reply exceeded 1 MiB of text"},
	{"openai 60 MB of text", openai.Kind, false, func(w *bufio.Writer) error {
		return repeat(w, oText(chunk), 60<<20)
	}, "the model's reply exceeded 1 MiB of text"},
	{"anthropic 30 MB of tool arguments", anthropic.Kind, false, func(w *bufio.Writer) error {
		if err := write(w, aStart, aToolBlock); err != nil {
			return err
		}
		return repeat(w, aArgs(chunk), 30<<20)
	}, "the model's reply exceeded 1 MiB of tool-call arguments"},
	{"openai 30 MB of tool arguments", openai.Kind, false, func(w *bufio.Writer) error {
		return repeat(w, oArgs(chunk), 30<<20)
	}, "the model's reply exceeded 1 MiB of tool-call arguments"},
	{"anthropic a line that never ends", anthropic.Kind, false, func(w *bufio.Writer) error {
		if err := write(w, aStart, aTextBlock, `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`); err != nil {
			return err
		}
		return repeat(w, chunk, 60<<20)
	}, "a line of the model's reply exceeded 256 KiB"},
	{"openai an event of many lines", openai.Kind, false, func(w *bufio.Writer) error {
		return repeat(w, "data: "+chunk+"\n", 60<<20)
	}, "an event of the model's reply exceeded 256 KiB"},
	{"anthropic millions of tiny events", anthropic.Kind, false, func(w *bufio.Writer) error {
		if err := write(w, aStart, aTextBlock); err != nil {
			return err
		}
		return repeat(w, "event: ping\ndata: {\"type\":\"ping\"}\n\n"+aText(""), 200<<20)
	}, "the model's reply exceeded 64 MiB as streamed"},
	{"openai millions of one-byte deltas", openai.Kind, false, func(w *bufio.Writer) error {
		return repeat(w, oText("a"), 200<<20)
	}, "the model's reply exceeded"},
	{"anthropic thousands of tool calls", anthropic.Kind, false, func(w *bufio.Writer) error {
		if err := write(w, aStart); err != nil {
			return err
		}
		for i := range 100_000 {
			if err := write(w, fmt.Sprintf("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t%d\",\"name\":\"read_file\",\"input\":{}}}\n\n", i, i)); err != nil {
				return err
			}
		}
		return write(w, aStop)
	}, "the model's reply exceeded 64 tool calls"},
	{"openai thousands of tool calls", openai.Kind, false, func(w *bufio.Writer) error {
		for i := range 100_000 {
			if err := write(w, fmt.Sprintf(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"c%d","function":{"name":"f","arguments":"{}"}}]}}]}`+"\n\n", i, i)); err != nil {
				return err
			}
		}
		return write(w, oDone)
	}, "the model's reply exceeded 64 tool calls"},
	{"openai a name in a million pieces", openai.Kind, false, func(w *bufio.Writer) error {
		if err := write(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f"}}]}}]}`+"\n\n"); err != nil {
			return err
		}
		return repeat(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"x"}}]}}]}`+"\n\n", 100<<20)
	}, "a tool call's name in the model's reply exceeded 256 bytes"},
	{"anthropic plain 60 MB", anthropic.Kind, true, func(w *bufio.Writer) error {
		if err := write(w, `{"type":"message","model":"m","content":[{"type":"text","text":"`); err != nil {
			return err
		}
		if err := repeat(w, chunk, 60<<20); err != nil {
			return err
		}
		return write(w, `"}],"stop_reason":"end_turn","usage":{}}`)
	}, "the model's reply exceeded 2 MiB"},
	{"openai plain 1.5 MiB of text", openai.Kind, true, func(w *bufio.Writer) error {
		if err := write(w, `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"`); err != nil {
			return err
		}
		if err := repeat(w, chunk, 3<<19); err != nil {
			return err
		}
		return write(w, `"},"finish_reason":"stop"}]}`)
	}, "the model's reply exceeded 1 MiB of text"},
}

func newProvider(kind, url string, stream bool) provider.Provider {
	cfg := provider.Config{Kind: kind, BaseURL: url, Model: "m", Stream: stream, Timeout: time.Minute}
	if kind == anthropic.Kind {
		return anthropic.New(cfg)
	}
	return openai.New(cfg)
}

// heapObjects is the bytes of the heap's objects, live or not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapPeak runs f with the collector at GOGC=10, so that the heap's
// objects stay close to what is live, and returns the peak of the heap
// above where it stood before, sampled every 100µs. A peak the sampler
// misses is short; the test reports, it does not time anything.
func heapPeak(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	base := heapObjects()
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			if h := heapObjects(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	<-sampled
	if h := heapObjects(); h > peak.Load() {
		peak.Store(h)
	}
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// TestHostileReplies sends each flood through a real chain and checks that
// the call fails at once with an error naming the cap, and that the heap
// grew by a small multiple of the caps, not by the flood.
func TestHostileReplies(t *testing.T) {
	// Not parallel: it measures the process's heap.
	for _, tt := range floods {
		t.Run(tt.name, func(t *testing.T) {
			if testing.Short() && strings.Contains(tt.name, "millions") {
				t.Skip("a few seconds of tiny events")
			}
			url := hostile(t, tt.plain, tt.gen)
			var calls atomic.Int32
			chain := broker.NewChain([]provider.Provider{newProvider(tt.kind, url, !tt.plain), countCalls(newProvider(tt.kind, url, !tt.plain), &calls)},
				broker.Options{Sleep: func(context.Context, time.Duration) error { return nil }})
			var err error
			var streamed int
			grew := heapPeak(func() {
				_, err = chain.Complete(t.Context(), hello, func(d string) { streamed += len(d) })
			})
			t.Logf("heap grew %.1f MiB; %d bytes of text streamed", float64(grew)/(1<<20), streamed)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
			if !errors.Is(err, provider.ErrReplyTooLarge) {
				t.Errorf("err = %v, want ErrReplyTooLarge", err)
			}
			// Core knows the cap by this method alone (it never imports the broker).
			var over interface{ ReplyOverCap() bool }
			if !errors.As(err, &over) || !over.ReplyOverCap() {
				t.Errorf("err = %v: core cannot tell it is a reply over its caps", err)
			}
			if calls.Load() != 0 {
				t.Errorf("the chain fell back to the next provider %d times after a reply over its caps", calls.Load())
			}
			if streamed > provider.DefaultMaxText {
				t.Errorf("%d bytes of text streamed to the owner, cap %d", streamed, provider.DefaultMaxText)
			}
			// The reply's caps (1 MiB text, 1 MiB tool calls) and the
			// reader's buffers (256 KiB each), times a small factor.
			if limit := uint64(8 << 20); grew > limit {
				t.Errorf("the heap grew by %d bytes, want under %d", grew, limit)
			}
		})
	}
}

// countCalls is a provider that counts the calls it gets.
func countCalls(p provider.Provider, n *atomic.Int32) provider.Provider {
	return countingProvider{p, n}
}

type countingProvider struct {
	provider.Provider
	n *atomic.Int32
}

func (c countingProvider) Complete(ctx context.Context, req contracts.Request, onText func(string)) (contracts.Completion, error) {
	c.n.Add(1)
	return c.Provider.Complete(ctx, req, onText)
}

// atCap writes a reply just under both caps: what costs the most memory
// and still succeeds, so the broker hands the whole of it on.
func atCap(kind string) gen {
	text := provider.DefaultMaxText - 1
	args := provider.DefaultMaxArgs - 64
	return func(w *bufio.Writer) error {
		if kind == anthropic.Kind {
			if err := write(w, aStart, aTextBlock); err != nil {
				return err
			}
			for n := 0; n < text; n += len(chunk) {
				if err := write(w, aText(chunk[:min(len(chunk), text-n)])); err != nil {
					return err
				}
			}
			if err := write(w, aToolBlock); err != nil {
				return err
			}
			for n := 0; n < args; n += len(chunk) {
				if err := write(w, aArgs(chunk[:min(len(chunk), args-n)])); err != nil {
					return err
				}
			}
			return write(w, aStop)
		}
		for n := 0; n < text; n += len(chunk) {
			if err := write(w, oText(chunk[:min(len(chunk), text-n)])); err != nil {
				return err
			}
		}
		for n := 0; n < args; n += len(chunk) {
			if err := write(w, oArgs(chunk[:min(len(chunk), args-n)])); err != nil {
				return err
			}
		}
		return write(w, oDone)
	}
}

// plainAtCap writes a plain reply just under MaxReplyBody with 1 MiB of
// text and the rest in one tool call's arguments.
func plainAtCap(kind string) gen {
	text := strings.Repeat("a", provider.DefaultMaxText-1)
	args := strings.Repeat("b", provider.MaxReplyBody-provider.DefaultMaxText-1024)
	return func(w *bufio.Writer) error {
		if kind == anthropic.Kind {
			return write(w, `{"type":"message","model":"m","content":[{"type":"text","text":"`, text,
				`"},{"type":"tool_use","id":"t","name":"f","input":{"a":"`, args, `"}}],"stop_reason":"tool_use","usage":{}}`)
		}
		return write(w, `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"`, text,
			`","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"`, args, `"}}]},"finish_reason":"tool_calls"}]}`)
	}
}

// maxWorkers is agent.workers' upper bound (internal/config): the most
// model calls the daemon makes at once.
const maxWorkers = 16

// concurrentPeak runs maxWorkers chains at once, half of each wire format,
// each against its own hostile server, and returns the heap's peak growth
// and the calls' errors. The completions are kept until all are done, as
// core holds each while it sends it to its worker.
func concurrentPeak(t testing.TB, g func(kind string) gen, stream bool) (uint64, []error) {
	urls := make([]string, maxWorkers)
	kinds := make([]string, maxWorkers)
	for i := range maxWorkers {
		kinds[i] = anthropic.Kind
		if i%2 == 1 {
			kinds[i] = openai.Kind
		}
		urls[i] = hostile(t, !stream, g(kinds[i]))
	}
	comps := make([]contracts.Completion, maxWorkers)
	errs := make([]error, maxWorkers)
	grew := heapPeak(func() {
		var wg sync.WaitGroup
		for i := range maxWorkers {
			wg.Go(func() {
				chain := broker.NewChain([]provider.Provider{newProvider(kinds[i], urls[i], stream)}, broker.Options{})
				comps[i], errs[i] = chain.Complete(context.Background(), hello, func(string) {})
			})
		}
		wg.Wait()
	})
	runtime.KeepAlive(comps)
	return grew, errs
}

// TestHostileConcurrent is the daemon's worst case: every worker slot's
// model call against a hostile provider at once. Each reply at its caps
// holds 2 MiB that the broker must hand on; the heap must stay within a
// small factor of that.
func TestHostileConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("sends some 200 MB over 127.0.0.1")
	}
	perCall := uint64(provider.DefaultMaxText + provider.DefaultMaxArgs)
	for _, tt := range []struct {
		name   string
		gen    func(kind string) gen
		ok     bool
		stream bool
	}{
		{"replies at the caps", atCap, true, true},
		{"plain replies at the caps", plainAtCap, true, false},
		{"floods over the caps", func(kind string) gen {
			if kind == anthropic.Kind {
				return floods[0].gen
			}
			return floods[3].gen
		}, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			grew, errs := concurrentPeak(t, tt.gen, tt.stream)
			for i, err := range errs {
				if (err == nil) != tt.ok {
					t.Errorf("call %d: err = %v", i, err)
				}
			}
			t.Logf("%d concurrent calls: heap peak +%.1f MiB (%.1f× the %d calls' caps of %.0f MiB)",
				maxWorkers, float64(grew)/(1<<20), float64(grew)/float64(maxWorkers*perCall), maxWorkers, float64(perCall)/(1<<20))
			if limit := 3 * maxWorkers * perCall; grew > limit {
				t.Errorf("the heap grew by %d bytes, want under %d (3× the caps)", grew, limit)
			}
		})
	}
}

// BenchmarkHostileConcurrent reports the heap's peak growth with every
// worker slot's model call at its caps at once (go test -bench
// HostileConcurrent -run ^$ ./internal/broker).
func BenchmarkHostileConcurrent(b *testing.B) {
	var peak uint64
	for b.Loop() {
		grew, errs := concurrentPeak(b, atCap, true)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		peak = max(peak, grew)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
