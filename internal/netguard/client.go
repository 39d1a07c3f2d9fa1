package netguard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userAgent is sent with every request.
const userAgent = "shelldon"

// Client fetches URLs under the guard. It is safe for concurrent use.
type Client struct {
	opts Options
	hc   *http.Client
	// testHookDial, set by tests only, runs in Control after an address
	// passed every check, just before connect(2); an error refuses it.
	testHookDial func(netip.AddrPort) error
}

// NewClient returns a Client; zero fields of opts take their defaults.
func NewClient(opts Options) *Client {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxRedirects == 0 {
		opts.MaxRedirects = DefaultMaxRedirects
	}
	c := &Client{opts: opts}
	tr := &http.Transport{
		Proxy:                  nil, // never from the environment
		DialContext:            c.dialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		// Every request dials afresh, through the checks, for the hop it
		// belongs to; nothing is pooled between fetches.
		DisableKeepAlives: true,
	}
	c.hc = &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // followed by hand in Get
		},
	}
	return c
}

// hopKey carries the host and port a request may dial, in its context.
type hopKey struct{}

type hop struct{ host, port string }

// Get fetches rawURL with GET, following up to MaxRedirects redirects by
// hand, each one checked again like the first URL (https to http is
// allowed: no cookies or credentials are ever sent). The returned error is a
// sentence for the model; policy refusals match ErrRefused. On an error
// after the first request, the Response still holds URL and Hops so far.
func (c *Client) Get(ctx context.Context, rawURL string) (Response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	u, err := c.check(rawURL)
	if err != nil {
		return Response{}, err
	}
	var res Response
	var from *url.URL
	for redirects := 0; ; redirects++ {
		res.URL = u.String()
		res.Hops = append(res.Hops, res.URL)
		resp, err := c.do(ctx, u)
		if err != nil {
			var r *refusal
			if from != nil && errors.As(err, &r) {
				return res, refusef("refused the redirect from %s to %s: %s", from, u, r.msg)
			}
			return res, err
		}
		loc := resp.Header.Get("Location")
		if isRedirect(resp.StatusCode) && loc != "" && c.opts.MaxRedirects > 0 {
			resp.Body.Close()
			if redirects >= c.opts.MaxRedirects {
				return res, refusef("stopped after %d redirects; %s redirects again to %s", c.opts.MaxRedirects, u, q(loc))
			}
			next, err := c.redirectTarget(u, loc)
			if err != nil {
				return res, err
			}
			from, u = u, next
			continue
		}
		err = c.readBody(resp, &res)
		resp.Body.Close()
		return res, err
	}
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// CheckURL is the package's CheckURL with the client's LAN list (and, in
// tests, its AllowAddr) applied: what Get would refuse before dialing.
func (c *Client) CheckURL(raw string) (*url.URL, error) { return c.check(raw) }

// check is CheckURL with the client's LAN list and AllowAddr applied.
func (c *Client) check(raw string) (*url.URL, error) {
	u, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	if err := checkHost(u, c.opts.AllowAddr, c.opts.LAN); err != nil {
		return nil, err
	}
	return u, nil
}

// redirectTarget resolves a Location header against the URL that sent it
// and checks the result like a new URL.
func (c *Client) redirectTarget(from *url.URL, loc string) (*url.URL, error) {
	wrap := func(err error) error {
		var r *refusal
		if errors.As(err, &r) {
			return refusef("refused the redirect from %s to %s: %s", from, q(loc), r.msg)
		}
		return err
	}
	if err := checkChars(loc); err != nil {
		return nil, wrap(err)
	}
	ref, err := url.Parse(loc)
	if err != nil {
		return nil, refusef("refused the redirect from %s: %s is not a valid URL", from, q(loc))
	}
	next, err := c.check(from.ResolveReference(ref).String())
	if err != nil {
		return nil, wrap(err)
	}
	return next, nil
}

// do sends one GET for a checked URL; the dialer may connect only to its
// host and port.
func (c *Client) do(ctx context.Context, u *url.URL) (*http.Response, error) {
	hctx := context.WithValue(ctx, hopKey{}, hop{host: u.Hostname(), port: effectivePort(u)})
	req, err := http.NewRequestWithContext(hctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("http_get: building the request for %s: %w", u, err)
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := c.hc.Do(req)
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			return nil, r
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("http_get: fetching %s took longer than %s", u, c.opts.Timeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("http_get: fetching %s: %w", u, err)
	}
	return resp, nil
}

// readBody reads at most MaxBytes of decoded body into res. The transport
// decodes gzip itself (it asked for it), so the cap counts decoded bytes
// and a compressed bomb stops at the cap.
func (c *Client) readBody(resp *http.Response, res *Response) error {
	res.Status = resp.StatusCode
	res.ContentType = resp.Header.Get("Content-Type")
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBytes+1))
	if int64(len(body)) > c.opts.MaxBytes {
		body, res.Truncated = body[:c.opts.MaxBytes], true
	}
	res.Body, res.Size = body, int64(len(body))
	if err != nil && !res.Truncated {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("http_get: reading %s took longer than %s (%d bytes read)", res.URL, c.opts.Timeout, len(body))
		}
		return fmt.Errorf("http_get: reading %s: %w (%d bytes read)", res.URL, err, len(body))
	}
	return nil
}

// dialContext dials for one request: only the host and port of the URL
// being fetched, with control checking each address before connect(2).
func (c *Client) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	want, ok := ctx.Value(hopKey{}).(hop)
	if !ok {
		return nil, refusef("a connection to %s was attempted outside a checked request", addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !strings.EqualFold(host, want.host) || port != want.port {
		return nil, refusef("a connection to %s was attempted while fetching from %s", addr, net.JoinHostPort(want.host, want.port))
	}
	d := &net.Dialer{
		Resolver: c.opts.Resolver,
		Control: func(network, address string, _ syscall.RawConn) error {
			return c.control(network, address, want)
		},
	}
	return d.DialContext(ctx, network, addr)
}

// control runs after the socket is created and before connect(2), once per
// address tried: it is the check that counts. want is the hop being
// fetched: its port is the only one dialed, and its host is what the LAN
// rules apply to (each redirect hop with its own).
func (c *Client) control(network, address string, want hop) error {
	wantPort := want.port
	if network != "tcp4" && network != "tcp6" {
		return refusef("refused a %s connection to %s; only TCP is used", network, address)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refusef("refused a connection to %q, which is not an IP address and port", address)
	}
	ip := ap.Addr().WithZone("").Unmap()
	ap = netip.AddrPortFrom(ip, ap.Port())
	if strconv.Itoa(int(ap.Port())) != wantPort {
		return refusef("refused a connection to %s: the URL's port is %s", ap, wantPort)
	}
	if c.opts.AllowAddr == nil || !c.opts.AllowAddr(ap) {
		judged := ip
		if c.opts.JudgeAs != nil {
			judged = c.opts.JudgeAs(ip).WithZone("").Unmap()
		}
		if reason, local, blocked := classify(judged); blocked && !c.opts.LAN.allows(want.host, judged, ap.Port()) {
			return c.lanRefusal(blockedError(judged.String(), reason, local), want, judged, ap.Port())
		}
	}
	if c.testHookDial != nil {
		return c.testHookDial(ap)
	}
	return nil
}

// lanRefusal adds to the refusal of a blocked address what the owner's
// LAN list says of the hop, when it lists the hop's host.
func (c *Client) lanRefusal(err error, want hop, ip netip.Addr, port uint16) error {
	ports := c.opts.LAN.portsOf(want.host)
	if ports == "" {
		return err
	}
	var r *refusal
	errors.As(err, &r)
	if !lanAddr(ip) {
		return refusef("%s (%s is listed in http.allow_hosts, but no list reaches that address)", r.msg, want.host)
	}
	if _, ok := c.opts.LAN.Listed(want.host, port); !ok {
		return refusef("%s (%s is listed in http.allow_hosts only for port %s)", r.msg, want.host, ports)
	}
	return refusef("%s (%s is listed in http.allow_hosts, but not at this address)", r.msg, want.host)
}
