package provider

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
	"time"
)

// The stages of one attempt, in order: what it waits for next.
const (
	stageConnect int32 = iota // a connection to the host
	stageSend                 // the request to be written
	stageHeaders              // the response headers
	stageBody                 // the reply's body (bytes counts what came)
)

// waiting follows an attempt through its stages, so that an attempt that
// gets no answer can say what it was waiting for: a provider that never
// answers is named with its host and the part of the answer that never
// came, not reported as a turn that merely ran out of time.
type waiting struct {
	start time.Time
	host  string
	stage atomic.Int32
	bytes atomic.Int64 // of the reply's body, counted as it is read
}

// trace returns ctx with a client trace that moves w through the stages
// before the response headers.
func (w *waiting) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:      func(httptrace.GotConnInfo) { w.reached(stageSend) },
		WroteRequest: func(httptrace.WroteRequestInfo) { w.reached(stageHeaders) },
	})
}

// reached records that the attempt now waits for stage (never going back).
func (w *waiting) reached(stage int32) {
	for {
		cur := w.stage.Load()
		if cur >= stage || w.stage.CompareAndSwap(cur, stage) {
			return
		}
	}
}

// silence says what the attempt waited for in vain, for d, naming the
// host: "sent no answer within 24s (127.0.0.1:8080, waiting for the
// response headers)".
func (w *waiting) silence(d time.Duration) string {
	switch w.stage.Load() {
	case stageConnect:
		return fmt.Sprintf("could not connect within %s (%s)", d, w.host)
	case stageSend:
		return fmt.Sprintf("did not take the request within %s (%s, connected)", d, w.host)
	case stageHeaders:
		return fmt.Sprintf("sent no answer within %s (%s, waiting for the response headers)", d, w.host)
	}
	if n := w.bytes.Load(); n > 0 {
		return fmt.Sprintf("stopped answering: the reply was not complete after %s (%s, %s received)", d, w.host, Size(int(n)))
	}
	return fmt.Sprintf("sent headers but no reply within %s (%s, waiting for the reply's body)", d, w.host)
}

// roundWait shows a wait to a tenth of a second, or to the hundredth
// under a second.
func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}

// hostOf is the host (and port, if any) of rawURL, for the owner; never its
// path or query.
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "an unusable URL"
	}
	return u.Host
}
