package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

// Caps on what an attempt reads.
const (
	// MaxReplyBody caps a plain (non-streamed) reply: as much as a
	// streamed reply may hold at the default Caps (1 MiB of text and 1 MiB
	// of tool calls). Reading it costs about twice that while the buffer
	// grows; the decoded reply is then held to its Caps like a streamed one.
	MaxReplyBody = 2 << 20
	MaxErrorBody = 64 << 10 // the body of an error reply
)

var errAttemptTimeout = errors.New("attempt timed out")

// HTTP sends the requests of one adapter and turns every failure into an
// *Error that carries no secret. It sends its key only to the key's
// origins, and follows no redirect: Go's http.Client would carry custom
// headers such as x-api-key to another host on a redirect, and the
// conversation with them.
type HTTP struct {
	Provider string       // name used in errors
	Client   *http.Client // never nil; follows no redirect
	Timeout  time.Duration
	Secrets  []string // redacted from every error

	key        string   // the API key, "" for a keyless provider
	keyOrigins []string // where key may go
}

// errRedirect is what the client's CheckRedirect answers: no redirect is
// followed, whatever its target.
var errRedirect = errors.New("redirect not followed")

// NewHTTP returns the HTTP of a provider named name, configured by cfg
// (defaults applied). The client is a copy of cfg's whose CheckRedirect
// refuses every redirect.
func NewHTTP(name string, cfg Config) *HTTP {
	cfg = cfg.WithDefaults()
	client := *cfg.HTTPClient
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return errRedirect }
	origins := cfg.KeyOrigins
	if len(origins) == 0 {
		if o, err := Origin(cfg.BaseURL); err == nil {
			origins = []string{o}
		}
	}
	return &HTTP{Provider: name, Client: &client, Timeout: cfg.Timeout, Secrets: []string{cfg.APIKey},
		key: cfg.APIKey, keyOrigins: origins}
}

// checkKeyOrigin refuses a request that would carry the key to an origin
// it is not bound to.
func (h *HTTP) checkKeyOrigin(rawURL string) *Error {
	if h.key == "" {
		return nil
	}
	o, err := Origin(rawURL)
	if err == nil && slices.Contains(h.keyOrigins, o) {
		return nil
	}
	if err != nil {
		o = "an unusable URL"
	}
	return NewError(h.Provider, 0, false, fmt.Sprintf("the API key is not sent to %s: it is bound to %s (the owner sets base_url and api_key_env)",
		o, strings.Join(h.keyOrigins, ", ")), h.Secrets...)
}

// Attempt is one HTTP exchange whose reply status was 2xx. Read Body, pass
// any failure through Fail, and Close it.
type Attempt struct {
	Header http.Header
	Body   io.Reader

	h      *HTTP
	parent context.Context
	ctx    context.Context
	stop   func()
	wait   waiting // what the attempt waits for, to say so when no answer comes
}

// Do sends one request. With stream set, the timeout bounds the wait for the
// reply to start and every pause in it; otherwise it bounds the whole
// exchange. A non-2xx reply is read (capped) and returned as an *Error.
func (h *HTTP) Do(ctx context.Context, method, url string, header http.Header, body []byte, stream bool) (*Attempt, error) {
	if e := h.checkKeyOrigin(url); e != nil {
		return nil, e
	}
	actx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(h.Timeout, func() { cancel(errAttemptTimeout) })
	a := &Attempt{h: h, parent: ctx, ctx: actx, wait: waiting{start: time.Now(), host: hostOf(url)}}
	var rc io.ReadCloser
	a.stop = func() {
		timer.Stop()
		cancel(nil)
		if rc != nil {
			rc.Close()
		}
	}
	var rdr io.Reader
	if body != nil {
		rdr = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(a.wait.trace(actx), method, url, rdr)
	if err != nil {
		a.stop()
		return nil, NewError(h.Provider, 0, false, "build request: "+err.Error(), h.Secrets...)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := h.Client.Do(req)
	if errors.Is(err, errRedirect) && resp != nil {
		a.stop()
		return nil, NewError(h.Provider, resp.StatusCode, false, fmt.Sprintf("redirect to %s not followed: it would carry the key and the conversation elsewhere (set base_url to the final address)",
			redirectTarget(resp)), h.Secrets...)
	}
	if err != nil {
		e := a.Fail(err)
		a.stop()
		return nil, e
	}
	rc = resp.Body
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
		a.stop()
		return nil, StatusError(h.Provider, resp, data, h.Secrets...)
	}
	a.wait.reached(stageBody)
	a.Header = resp.Header
	reply := &attemptBody{r: resp.Body, wait: &a.wait}
	if stream {
		reply.timer, reply.idle = timer, h.Timeout
	}
	a.Body = reply
	return a, nil
}

// ReadAll reads the whole (plain) reply, up to MaxReplyBody.
func (a *Attempt) ReadAll() ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(a.Body, MaxReplyBody+1))
	if err != nil {
		return nil, a.Fail(err)
	}
	if len(data) > MaxReplyBody {
		return nil, a.Fail(OverCapError(fmt.Sprintf("the model's reply exceeded %s", Size(MaxReplyBody))))
	}
	return data, nil
}

// StreamDecoder decodes a streamed reply held to caps, passing its text to
// onText as it comes.
type StreamDecoder func(r io.Reader, caps Caps, onText func(string)) (contracts.Completion, error)

// Decode reads the reply into a Completion: through stream when a stream was
// asked for and the server sent one, else as one JSON body through plain,
// whose result is then checked against caps. A decoding failure is
// classified with Fail.
func (a *Attempt) Decode(wantStream bool, caps Caps, onText func(string),
	stream StreamDecoder,
	plain func(data []byte) (contracts.Completion, error),
) (contracts.Completion, error) {
	var comp contracts.Completion
	var err error
	caps = caps.WithDefaults()
	if wantStream && StreamedReply(a.Header) {
		comp, err = stream(a.Body, caps, onText)
	} else {
		var data []byte
		if data, err = a.ReadAll(); err == nil {
			if comp, err = plain(data); err == nil {
				err = CheckCompletion(comp, caps)
			}
		}
	}
	if err != nil {
		return contracts.Completion{}, a.Fail(err)
	}
	return comp, nil
}

// Close ends the attempt and releases its connection.
func (a *Attempt) Close() { a.stop() }

// Fail classifies err, a failure met while sending or reading. An *Error
// passes through with its provider name set and its message redacted again;
// a cancelled caller is not retryable; a timeout or a network error is. A
// deadline (the caller's, or the attempt's own timeout) says what the
// attempt was still waiting for, from which host, and for how long.
func (a *Attempt) Fail(err error) *Error {
	h := a.h
	var pe *Error
	switch {
	case errors.As(err, &pe):
		c := *pe
		c.Provider = h.Provider
		c.Message = Clean(c.Message, h.Secrets...)
		return &c
	case errors.Is(a.parent.Err(), context.DeadlineExceeded):
		e := NewError(h.Provider, 0, false, a.wait.silence(roundWait(time.Since(a.wait.start))))
		e.cause = context.DeadlineExceeded
		return e
	case a.parent.Err() != nil:
		e := NewError(h.Provider, 0, false, "request abandoned: "+a.parent.Err().Error())
		e.cause = a.parent.Err()
		return e
	case context.Cause(a.ctx) == errAttemptTimeout:
		waited := h.Timeout // nothing came: the whole timeout went by
		if a.wait.bytes.Load() > 0 {
			waited = roundWait(time.Since(a.wait.start))
		}
		e := NewError(h.Provider, 0, true, a.wait.silence(waited))
		e.cause = context.DeadlineExceeded
		return e
	}
	return NewError(h.Provider, 0, true, "network: "+err.Error(), h.Secrets...)
}

// attemptBody is a reply's body: it counts what arrives, for Fail, and for
// a streamed reply restarts the attempt's timer on every read that brings
// data.
type attemptBody struct {
	r     io.Reader
	wait  *waiting
	timer *time.Timer   // nil: a plain reply, bounded as a whole
	idle  time.Duration // the pause a stream may take
}

func (b *attemptBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.wait.bytes.Add(int64(n))
		if b.timer != nil {
			b.timer.Reset(b.idle)
		}
	}
	return n, err
}

// Complete posts payload (encoded as JSON) to url and decodes the reply,
// streamed or plain, into a Completion labelled with the provider and
// model: the part of a model call both wire formats share.
func (h *HTTP) Complete(ctx context.Context, cfg Config, kind, url string, header http.Header, payload any, onText func(string),
	stream StreamDecoder,
	plain func(data []byte) (contracts.Completion, error),
) (contracts.Completion, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return contracts.Completion{}, NewError(h.Provider, 0, false, "encode request: "+err.Error(), h.Secrets...)
	}
	a, err := h.Do(ctx, http.MethodPost, url, header, body, cfg.Stream)
	if err != nil {
		return contracts.Completion{}, err
	}
	defer a.Close()
	comp, err := a.Decode(cfg.Stream, cfg.Caps, onText, stream, plain)
	if err != nil {
		return contracts.Completion{}, err
	}
	comp.Provider = cfg.CompletionProvider(kind)
	if comp.Model == "" {
		comp.Model = cfg.Model
	}
	return comp, nil
}

// Ping checks that the API answers and accepts the key: a GET of url
// (the models list), drained and discarded.
func (h *HTTP) Ping(ctx context.Context, url string, header http.Header) error {
	a, err := h.Do(ctx, http.MethodGet, url, header, nil, false)
	if err != nil {
		return err
	}
	defer a.Close()
	if _, err := io.Copy(io.Discard, io.LimitReader(a.Body, MaxReplyBody)); err != nil {
		return a.Fail(err)
	}
	return nil
}

// redirectTarget is the host and path a redirect points to, for the
// owner; never its query, which may carry a token.
func redirectTarget(resp *http.Response) string {
	loc, err := resp.Location()
	if err != nil {
		return "an unreadable location"
	}
	return loc.Scheme + "://" + loc.Host + loc.Path
}
