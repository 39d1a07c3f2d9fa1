// Package broker is the only place that holds provider credentials and talks
// to model providers. The broker holds credentials and executes nothing: it
// turns a contracts.Request into a contracts.Completion through the adapters
// (packages anthropic and openai) and never runs a tool, a command or
// anything a model wrote.
//
// A Chain tries its providers in order, retrying each on transient failures
// with exponential backoff and falling back to the next one otherwise.
//
// A reply over one of its caps (provider.Caps) ends the call: it is neither
// retried nor passed to the next provider, and the error is
// provider.ErrReplyTooLarge.
//
// Streaming and retries: once an attempt has delivered text to onText, the
// chain neither retries it nor falls back. The reader has already seen part
// of an answer, and a second answer appended to it would read as one garbled
// reply; buffering instead would give up streaming. The failure is returned
// at once, wrapping ErrStreamInterrupted, and the caller may ask again.
package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shelldon/shelldon/internal/broker/provider"
	"github.com/shelldon/shelldon/internal/contracts"
)

// Defaults of Options.
const (
	DefaultMaxAttempts = 3
	DefaultBaseBackoff = 500 * time.Millisecond
	DefaultMaxBackoff  = 8 * time.Second
	// MaxRetryAfter is the longest Retry-After the chain waits for; a
	// provider that asks for more is passed over for the next one.
	MaxRetryAfter = time.Minute
)

var (
	// ErrNoProvider is returned by a Chain that has no provider.
	ErrNoProvider = errors.New("broker: no provider configured")
	// ErrStreamInterrupted marks a failure after part of the answer was
	// already streamed; such an attempt is neither retried nor passed on.
	ErrStreamInterrupted = errors.New("broker: stream interrupted after text was delivered")
)

// Options tune a Chain. Zero values mean the defaults.
type Options struct {
	MaxAttempts int           // attempts per provider
	BaseBackoff time.Duration // wait before the first retry, doubled each time
	MaxBackoff  time.Duration // cap of the doubled wait (not of Retry-After)
	// Sleep waits d or until ctx is done; tests inject a fake.
	Sleep  func(ctx context.Context, d time.Duration) error
	Logger *slog.Logger
	// AnswerMargin is how long before the caller's deadline the chain
	// stops waiting on a provider, to say in time which provider left it
	// waiting, at which host, and for what. Zero means a tenth of the time
	// left when the call starts, at most MaxAnswerMargin.
	AnswerMargin time.Duration
	// Stats, when set, counts each provider attempt: its outcome and how
	// long it took (stats.go).
	Stats *Stats
}

// MaxAnswerMargin bounds the default Options.AnswerMargin.
const MaxAnswerMargin = time.Second

// Chain is a provider.Provider made of providers tried in order.
type Chain struct {
	providers []provider.Provider
	opts      Options
}

var _ provider.Provider = (*Chain)(nil)

// NewChain returns a chain over providers, tried in the given order.
func NewChain(providers []provider.Provider, opts Options) *Chain {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.BaseBackoff <= 0 {
		opts.BaseBackoff = DefaultBaseBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Chain{providers: append([]provider.Provider(nil), providers...), opts: opts}
}

// Name lists the chain's providers, such as "chain(anthropic:x,openai:y)".
func (c *Chain) Name() string {
	names := make([]string, len(c.providers))
	for i, p := range c.providers {
		names[i] = p.Name()
	}
	return "chain(" + strings.Join(names, ",") + ")"
}

// Failure is how one provider of a chain failed.
type Failure struct {
	Provider string
	Attempts int
	Err      error
}

// ChainError is the error of a Chain whose providers all failed. It unwraps
// to the last provider's error.
type ChainError struct {
	Failures []Failure
}

func (e *ChainError) Error() string {
	var b strings.Builder
	b.WriteString("broker: every provider failed: ")
	for i, f := range e.Failures {
		if i > 0 {
			b.WriteString("; ")
		}
		attempts := "attempts"
		if f.Attempts == 1 {
			attempts = "attempt"
		}
		msg := strings.TrimPrefix(f.Err.Error(), f.Provider+": ")
		fmt.Fprintf(&b, "%s (%d %s): %s", f.Provider, f.Attempts, attempts, provider.Redact(msg))
	}
	return b.String()
}

// Unwrap returns the last provider's error.
func (e *ChainError) Unwrap() error {
	if len(e.Failures) == 0 {
		return nil
	}
	return e.Failures[len(e.Failures)-1].Err
}

// Complete asks each provider in turn until one answers. A retryable failure
// is retried after a backoff (or the provider's Retry-After) as long as
// attempts remain and the wait ends before ctx's deadline; any other failure
// moves on to the next provider. The error names every provider tried and
// wraps the last failure.
//
// With a deadline on ctx, the chain stops waiting on its providers a margin
// before it (Options.AnswerMargin) and returns their failures then: the
// provider that sent nothing says so, with its host and what never came,
// while the caller is still there to read it. Otherwise a provider that
// never answers would leave the caller with nothing but its own deadline.
func (c *Chain) Complete(ctx context.Context, req contracts.Request, onText func(delta string)) (contracts.Completion, error) {
	if len(c.providers) == 0 {
		return contracts.Completion{}, ErrNoProvider
	}
	ctx, cancel := c.answerBy(ctx)
	defer cancel()
	failed := &ChainError{}
	for _, p := range c.providers {
		comp, attempts, err := c.try(ctx, p, req, onText)
		if err == nil {
			if len(failed.Failures) > 0 {
				c.opts.Logger.Info("broker: fallback provider answered", "provider", p.Name(), "failed_providers", len(failed.Failures))
			}
			return comp, nil
		}
		failed.Failures = append(failed.Failures, Failure{Provider: p.Name(), Attempts: attempts, Err: err})
		if errors.Is(err, provider.ErrReplyTooLarge) {
			// Not the provider's outage but a reply past its caps: the
			// next provider would be asked the same and cost as much.
			c.opts.Logger.Warn("broker: the model's reply went over a cap; the call is stopped", "provider", p.Name(), "err", provider.Redact(err.Error()))
			break
		}
		if ctx.Err() != nil || errors.Is(err, ErrStreamInterrupted) {
			break
		}
	}
	return contracts.Completion{}, failed
}

// answerBy returns ctx with the deadline by which the chain answers: the
// caller's, less the margin.
func (c *Chain) answerBy(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	margin := c.opts.AnswerMargin
	if margin <= 0 {
		margin = min(time.Until(deadline)/10, MaxAnswerMargin)
	}
	return context.WithDeadline(ctx, deadline.Add(-margin))
}

// try runs the attempts of one provider and returns how many it made.
func (c *Chain) try(ctx context.Context, p provider.Provider, req contracts.Request, onText func(string)) (contracts.Completion, int, error) {
	log := c.opts.Logger.With("provider", p.Name())
	for attempt := 1; ; attempt++ {
		var delivered atomic.Bool
		sink := onText
		if onText != nil {
			sink = func(d string) {
				if d != "" {
					delivered.Store(true)
				}
				onText(d)
			}
		}
		began := time.Now()
		comp, err := p.Complete(ctx, req, sink)
		c.opts.Stats.Observe(p.Name(), time.Since(began), err)
		if err == nil {
			return comp, attempt, nil
		}
		var pe *provider.Error
		isPE := errors.As(err, &pe)
		attrs := []any{"attempt", attempt, "err", provider.Redact(err.Error())}
		if isPE {
			attrs = append(attrs, "status", pe.Status, "retryable", pe.Retryable)
		}
		log.Warn("broker: provider attempt failed", attrs...)
		switch {
		case ctx.Err() != nil:
			return comp, attempt, err
		case delivered.Load():
			return comp, attempt, fmt.Errorf("%w: %w", ErrStreamInterrupted, err)
		case !isPE || !pe.Retryable || attempt >= c.opts.MaxAttempts:
			return comp, attempt, err
		}
		wait := pe.RetryAfter
		if wait <= 0 {
			wait = c.backoff(attempt)
		}
		if wait > MaxRetryAfter {
			log.Warn("broker: retry-after too long, trying the next provider", "wait", wait)
			return comp, attempt, err
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= wait {
			log.Warn("broker: no time left to retry, trying the next provider", "wait", wait)
			return comp, attempt, err
		}
		if serr := c.opts.Sleep(ctx, wait); serr != nil {
			return comp, attempt, fmt.Errorf("%w (stopped waiting to retry: %w)", err, serr)
		}
	}
}

// backoff returns the wait after the given failed attempt: BaseBackoff
// doubled per attempt, capped at MaxBackoff, with the upper half jittered.
func (c *Chain) backoff(attempt int) time.Duration {
	d := c.opts.BaseBackoff
	for i := 1; i < attempt && d < c.opts.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.opts.MaxBackoff)
	half := d / 2
	return half + rand.N(d-half+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
