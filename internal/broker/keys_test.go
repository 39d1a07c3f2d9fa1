package broker_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/broker/anthropic"
	"github.com/shelldon/shelldon/internal/broker/brokertest"
	"github.com/shelldon/shelldon/internal/broker/openai"
	"github.com/shelldon/shelldon/internal/broker/provider"
)

const boundKey = "sk-bound-key-0123456789abcdefghij"

// pinger is an adapter's models listing (the GET doctor makes).
type pinger interface {
	Ping(ctx context.Context) error
}

func adapter(kind string, cfg provider.Config) interface {
	provider.Provider
	pinger
} {
	if kind == "anthropic" {
		return anthropic.New(cfg)
	}
	return openai.New(cfg)
}

// TestNoRedirectIsFollowed: a provider that redirects, to another host or
// its own, gets no second request sent anywhere: Go's http.Client would
// carry x-api-key (and the conversation, on a 307/308) across hosts. The
// canary, another 127.0.0.1 listener standing in for any host, never
// receives a request, and the error says why and is final.
func TestNoRedirectIsFollowed(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"anthropic", "openai"} {
		for _, status := range []int{301, 302, 303, 307, 308} {
			for _, stream := range []bool{false, true} {
				for _, sameHost := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/%d/stream=%v/same=%v", kind, status, stream, sameHost), func(t *testing.T) {
						t.Parallel()
						canary := brokertest.NewServer(t, kind, nil)
						var srv *brokertest.Server
						srv = brokertest.NewServer(t, kind, func(r brokertest.Recorded) brokertest.Reply {
							target := canary.BaseURL()
							if sameHost {
								target = srv.BaseURL() + "/elsewhere"
							}
							return brokertest.Reply{Status: status, Header: http.Header{"Location": {target + r.Path + "?token=" + boundKey}}}
						})
						p := adapter(kind, provider.Config{BaseURL: srv.BaseURL(), Model: "m", APIKey: boundKey, Stream: stream, Timeout: 2 * time.Second})
						_, err := p.Complete(context.Background(), hello, nil)
						var pe *provider.Error
						if !errors.As(err, &pe) || pe.Retryable || !strings.Contains(err.Error(), "redirect") {
							t.Errorf("complete: %v", err)
						}
						if err := p.Ping(context.Background()); err == nil || !strings.Contains(err.Error(), "redirect") {
							t.Errorf("ping: %v", err)
						}
						if err != nil && strings.Contains(err.Error(), boundKey) {
							t.Error("the error holds the key")
						}
						if n := len(canary.Requests()); n != 0 {
							t.Errorf("the canary got %d requests", n)
						}
						if n := len(srv.Requests()); n != 2 {
							t.Errorf("the provider got %d requests, want the two first ones only", n)
						}
					})
				}
			}
		}
	}
}

// TestKeyGoesOnlyToItsOrigins: a key is sent only to an origin it is bound
// to (KeyOrigins, else BaseURL's); to any other the request is refused
// before it is sent. A keyless provider is not restricted.
func TestKeyGoesOnlyToItsOrigins(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"anthropic", "openai"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			canary := brokertest.NewServer(t, kind, nil)
			owner := brokertest.NewServer(t, kind, nil)
			ownerOrigin, _ := provider.Origin(owner.BaseURL())

			// Bound elsewhere: nothing reaches the canary.
			p := adapter(kind, provider.Config{BaseURL: canary.BaseURL(), APIKey: boundKey, KeyOrigins: []string{ownerOrigin}, Timeout: 2 * time.Second})
			_, err := p.Complete(context.Background(), hello, nil)
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Retryable || !strings.Contains(err.Error(), "not sent to") {
				t.Errorf("complete: %v", err)
			}
			if err := p.Ping(context.Background()); err == nil {
				t.Error("ping went through")
			}
			if n := len(canary.Requests()); n != 0 {
				t.Errorf("the canary got %d requests", n)
			}

			// Bound there: the key arrives.
			p = adapter(kind, provider.Config{BaseURL: owner.BaseURL(), APIKey: boundKey, KeyOrigins: []string{"https://api.example.com:443", ownerOrigin}, Timeout: 2 * time.Second})
			if _, err := p.Complete(context.Background(), hello, nil); err != nil {
				t.Fatal(err)
			}
			h := owner.Requests()[0].Header
			if h.Get("X-Api-Key") != boundKey && h.Get("Authorization") != "Bearer "+boundKey {
				t.Errorf("the owner's server did not get the key: %v", h)
			}

			// Keyless: any origin the config names.
			p = adapter(kind, provider.Config{BaseURL: canary.BaseURL(), KeyOrigins: []string{ownerOrigin}, Timeout: 2 * time.Second})
			if _, err := p.Complete(context.Background(), hello, nil); err != nil {
				t.Errorf("keyless: %v", err)
			}
		})
	}
}
