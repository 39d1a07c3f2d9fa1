// Package netguard is the guard behind the http_get tool: it fetches a URL
// from the public internet and refuses everything else.
//
// The address check lives in the dialer, on the address actually dialed:
// net.Dialer.Control sees every ip:port just before connect(2), unmaps
// IPv4-in-IPv6, and refuses special-purpose ranges (see Blocked) and any port
// other than the URL's. A name that resolves to 10.0.0.1, or starts to after
// the owner approved it, is therefore refused without a packet sent to it.
// Everything before the dial (CheckURL, the early refusal of IP literals and
// local-only names) is there for clear messages, not for safety.
//
// Nothing is looked up before the dial either: DescribeURL renders a URL
// for the owner's approval card from the URL alone (the host in ASCII and
// Unicode, with warnings for mixed scripts and look-alike letters, the
// port, the path and query as sent), because a DNS query made while a call
// waits for the owner would carry data out whatever the owner decides.
//
// Hosts of the owner's own network are refused too, except those the owner
// listed (Options.LAN, http.allow_hosts), on the ports listed; a rule
// applies by the URL's host, and loopback, link-local and the metadata
// ranges stay refused whatever it says (see LANRule).
//
// Other rules: http and https only; no credentials in URLs; redirects
// followed by hand, each hop checked again; no proxy from the environment; no
// cookies; the body capped while it streams, on decoded bytes.
package netguard

import (
	"errors"
	"net"
	"net/netip"
	"time"
)

// Defaults for the zero fields of Options.
const (
	DefaultMaxBytes     = 1 << 20
	DefaultTimeout      = 20 * time.Second
	DefaultMaxRedirects = 5
)

// ErrRefused is wrapped by every error that refuses a URL or an address on
// policy grounds (as opposed to a network failure). Match it with errors.Is.
var ErrRefused = errors.New("http_get: refused")

// refusal is a policy refusal: "http_get: " and msg is the sentence the
// model reads, and it matches ErrRefused.
type refusal struct{ msg string }

func (e *refusal) Error() string        { return "http_get: " + e.msg }
func (e *refusal) Is(target error) bool { return target == ErrRefused }

// Options configures a Client. The zero value is production-ready.
type Options struct {
	// MaxBytes caps the body, counted on decoded bytes while they stream;
	// default 1 MiB. A longer body is cut and Response.Truncated is set.
	MaxBytes int64
	// Timeout bounds the whole request, redirects and body included;
	// default 20s.
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed; default 5. A negative
	// value follows none (the 3xx response is returned).
	MaxRedirects int
	// AllowAddr, for tests only, lets through exactly the addresses it
	// returns true for (e.g. a test server's 127.0.0.1:port), which would
	// otherwise be blocked. It sees the unmapped address. nil in production.
	AllowAddr func(netip.AddrPort) bool
	// Resolver resolves host names at dial time; nil means
	// net.DefaultResolver.
	Resolver *net.Resolver
	// LAN is the owner's http.allow_hosts: the hosts on the owner's
	// network that may be reached (see LANRule); nil reaches none. It
	// comes from the owner's config, never from the model.
	LAN LAN
	// JudgeAs, for tests only, is the address a dialed address is judged
	// as (e.g. 127.0.0.1 as 192.168.1.10), so that a loopback server can
	// stand in for a host of the owner's network; the connection still
	// goes to the real address. It sees the unmapped address. nil in
	// production.
	JudgeAs func(netip.Addr) netip.Addr
}

// Response is the outcome of a fetch.
type Response struct {
	URL         string   // the final URL, after redirects
	Status      int      // HTTP status code of the final response
	ContentType string   // the final response's Content-Type header
	Body        []byte   // at most MaxBytes decoded bytes
	Truncated   bool     // the body was longer than MaxBytes
	Size        int64    // len(Body): decoded body bytes kept
	Hops        []string // each URL fetched, in order (the first is the request)
}
