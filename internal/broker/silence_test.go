package broker_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker"
	"github.com/shelldon/shelldon/internal/broker/anthropic"
	"github.com/shelldon/shelldon/internal/broker/openai"
	"github.com/shelldon/shelldon/internal/broker/provider"
)

// silentServer accepts connections on loopback and reads what comes, but
// never answers. It returns the base URL.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); io.Copy(io.Discard, c) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String()
}

// stallingServer answers with headers (and, for a stream, the start of a
// reply), then sends nothing more until the client leaves.
func stallingServer(t *testing.T, start string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if start == "" {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, start)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestSilentProviderIsNamed: when the caller's deadline comes while a
// provider has sent nothing, the chain answers a margin before that
// deadline (so its caller can still read it) with an error that names the
// provider, its host, how long it waited and what never came; the same
// when the attempt's own timeout ends the wait.
func TestSilentProviderIsNamed(t *testing.T) {
	t.Parallel()
	silent := silentServer(t)
	host := strings.TrimPrefix(silent, "http://")
	tests := []struct {
		name     string
		url      string
		stream   bool
		deadline time.Duration // of the caller; 0: none, the attempt's timeout ends it
		timeout  time.Duration // of one attempt
		want     []string
	}{
		{"no answer at the caller's deadline", silent, false, time.Second, time.Minute,
			[]string{"local (1 attempt): sent no answer within ", "(" + host + ", waiting for the response headers)"}},
		{"no answer within the attempt's timeout", silent, true, 0, 300 * time.Millisecond,
			[]string{"local (1 attempt): sent no answer within 300ms (" + host + ", waiting for the response headers)"}},
		{"headers but no body", "", false, time.Second, time.Minute,
			[]string{"local (1 attempt): sent headers but no reply within ", "waiting for the reply's body"}},
		{"a stream that stops", "data: {\"choices\":[]}\n\n", true, time.Second, time.Minute,
			[]string{"local (1 attempt): stopped answering: the reply was not complete after ", "22 bytes received"}},
	}
	for _, tt := range tests {
		for _, kind := range []string{openai.Kind, anthropic.Kind} {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				url := tt.url
				if !strings.HasPrefix(url, "http://") {
					url = stallingServer(t, tt.url) // tt.url is the start of the reply
				}
				cfg := provider.Config{Name: "local", BaseURL: url, Model: "m", Stream: tt.stream, Timeout: tt.timeout}
				var p provider.Provider = openai.New(cfg)
				if kind == anthropic.Kind {
					p = anthropic.New(cfg)
				}
				// A margin wide enough for a loaded machine under -race;
				// the default (a tenth of the time left, at most 1s) is
				// what the end-to-end test in internal/app uses.
				chain := broker.NewChain([]provider.Provider{p}, broker.Options{MaxAttempts: 1, AnswerMargin: 400 * time.Millisecond})
				checkSilence(t, chain, tt.deadline, tt.want)
			})
		}
	}
}

func checkSilence(t *testing.T, chain *broker.Chain, deadline time.Duration, want []string) {
	t.Helper()
	ctx := context.Background()
	if deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, deadline)
		defer cancel()
	}
	_, err := chain.Complete(ctx, hello, nil)
	if err == nil {
		t.Fatal("a silent provider answered")
	}
	if deadline > 0 && ctx.Err() != nil {
		t.Errorf("the chain returned after its caller's deadline: %v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v is not a deadline", err)
	}
}
