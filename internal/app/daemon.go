package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/transport/telegram"
	"github.com/shelldon/shelldon/internal/transport/web"
)

// Daemon is `shelldon serve` over an App opened ForDaemon: the HTTP API on
// a listener, Telegram when configured, and the approvals' duties (those a
// restart interrupted are carried out at start, expired ones closed every
// ExpireEvery). It is built and run without the command line, so tests
// drive it directly.
type Daemon struct {
	app     *App
	ln      net.Listener // the connection-capped listener (web.Listener)
	serveOn net.Listener // ln, or TLS over it (server.tls_cert)
	srv     *http.Server
	bot     *telegram.Bot
	source  string // where the API token came from

	// ExpireEvery is how often expired approvals are closed and the work a
	// dead holder left (an 'approvals approve' killed beside the daemon)
	// is taken over; default 5s, so recovery comes within 10 s of a death.
	ExpireEvery time.Duration
	// Grace is how long a stopping daemon waits for the work in flight
	// before it cancels it (see drain.go); 0 means 10 s.
	Grace time.Duration
}

// NewDaemon listens on listen ("" means server.listen) and builds the
// transports over a. It does not serve until Run.
func NewDaemon(a *App, listen string) (*Daemon, error) {
	if a.Core == nil {
		return nil, errors.New("a daemon needs an App opened for turns, not for reading")
	}
	cfg := a.current()
	if listen == "" {
		listen = cfg.Server.Listen
	}
	token, source, err := APIToken(cfg)
	if err != nil {
		return nil, err
	}
	api, err := web.New(web.Options{Chat: a.Core, Approvals: a.Core, Tools: a.Core, Skills: a, Settings: a, Audit: a.Core, Memory: a.Core, Schedules: a, Usage: a.Core, Token: token, Logger: a.Log,
		Conversations: a.Core, Sessions: a.Store, SessionIdle: cfg.Server.SessionIdle.D(), AllowedHosts: allowedHosts(listen, cfg.Server.AllowedHosts),
		Metrics: a.metrics()})
	if err != nil {
		return nil, err
	}
	// A token replaced in the settings serves from the next request on.
	a.OnAPIToken(func(token string) {
		if err := api.SetToken(context.Background(), token); err != nil {
			a.Log.Error("the API could not take the new token", "err", err)
		}
	})
	bot, err := a.telegramBot()
	if err != nil {
		return nil, err
	}
	// A decision recovery carries on (its decider stopped) has no one
	// waiting for its turn: its reply goes to the chat's channel.
	a.Core.OnRecovered(func(chat string, out core.Outcome) {
		if bot != nil && bot.Deliver(chat, out) {
			return
		}
		a.Log.Info("recovery finished a decided request's turn; its reply is in the chat's history", "chat", chat, "turn", out.Turn)
	})
	// A spent budget stops self-driven turns: the owner is told once per
	// budget and period, on Telegram when it is on, and in the log.
	a.Core.OnBudget(func(msg string) {
		if bot != nil && bot.Notify(msg) {
			return
		}
		a.Log.Warn("a budget is spent; see shelldon usage", "notice", msg)
	})
	var handler http.Handler = api
	if bot != nil && cfg.Telegram.WebhookURL != "" {
		// The webhook's exact path, everything else to the API; not a
		// ServeMux, which would redirect an unclean path to an HTML page.
		webhook := bot.Handler()
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/telegram/webhook" && r.URL.RawPath == "" {
				webhook.ServeHTTP(w, r)
				return
			}
			api.ServeHTTP(w, r)
		})
	}
	// Connections take descriptors: the cap follows the open-file limit,
	// raised first to the hard limit.
	maxConns := web.MaxConns
	if nofile := raiseOpenFiles(a.Log); nofile > 0 {
		maxConns = web.MaxConnsFor(nofile)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", listen, err)
	}
	srv, limited := web.NewHTTPServer(ln, handler, maxConns, a.Log)
	var serveOn net.Listener = limited
	if cfg.Server.TLSCert != "" {
		if serveOn, err = web.TLSListener(limited, cfg.Server.TLSCert, cfg.Server.TLSKey); err != nil {
			ln.Close()
			return nil, err
		}
	} else if !loopbackListen(listen) {
		a.Log.Warn("the API listens beyond this machine over plain HTTP: the token and a browser's session cross the network readable; set server.tls_cert and server.tls_key, or put a TLS proxy in front", "addr", listen)
	}
	a.Log.Info("http limits", "max_conns", maxConns, "header_timeout", web.HeaderTimeout, "read_timeout", web.ReadTimeout,
		"idle_timeout", web.IdleTimeout, "write_timeout", web.WriteTimeout, "max_header_bytes", web.MaxHeaderBytes)
	return &Daemon{
		app: a, ln: limited, serveOn: serveOn, bot: bot, source: source, ExpireEvery: 5 * time.Second,
		srv: srv,
	}, nil
}

// Addr is the address the API listens on.
func (d *Daemon) Addr() net.Addr { return d.ln.Addr() }

// Run serves until ctx is done or the server fails, then drains (see
// drain.go): it takes no new work, waits up to Grace for the work in
// flight, cancels what is left and waits for it to end. It returns only
// then, so the App (and its store) can be closed after it.
func (d *Daemon) Run(ctx context.Context) error {
	a := d.app
	cfg := a.current()
	// The work runs under its own context, which the drain cancels after
	// the grace; ctx's end only stops the intake.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	f := newFlight()
	d.srv.Handler = admit(d.srv.Handler, f, work)
	botDone := make(chan struct{})
	if d.bot != nil {
		go func() {
			defer close(botDone)
			if err := d.bot.Run(work); err != nil {
				a.Log.Error("telegram stopped", "err", err)
			}
		}()
	} else {
		close(botDone)
	}
	a.Log.Info("shelldon serving", "addr", d.ln.Addr().String(), "tls", d.serveOn != d.ln, "token_from", d.source,
		"provider", cfg.Provider.Kind, "model", cfg.Provider.Model, "version", versionString())
	a.Warm()
	errc := make(chan error, 1)
	go func() { errc <- d.srv.Serve(d.serveOn) }()
	f.run(func() { d.approvalDuties(ctx, work) })
	f.run(func() { d.runSchedules(ctx, work) })
	var err error
	select {
	case err = <-errc:
		err = fmt.Errorf("serve: %w", err)
		a.Log.Error("shutting down: the server failed", "err", err)
	case <-ctx.Done():
		a.Log.Info("shutting down")
	}
	d.drain(f, cancelWork, botDone)
	a.stopWarm()
	return err
}

// approvalDuties finishes the requests a restart left between a decision
// and its end, then closes expired ones every ExpireEvery until stop ends;
// the work itself runs under work.
func (d *Daemon) approvalDuties(stop, work context.Context) {
	a := d.app
	if err := a.Core.RecoverTools(work); err != nil {
		a.Log.Error("recover self-coded tools", "err", err)
	}
	if n, err := a.Core.RecoverApprovals(work); err != nil {
		a.Log.Error("recover approvals", "err", err)
	} else if n > 0 {
		a.Log.Warn("resumed approvals a restart interrupted", "count", n)
	}
	tick := time.NewTicker(d.ExpireEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop.Done():
			return
		case <-tick.C:
			// Expires what is due, and takes over only what a dead holder
			// left: this daemon's own work in flight holds its lease.
			if n, err := a.Core.RecoverApprovals(work); err != nil {
				a.Log.Error("recover approvals", "err", err)
			} else if n > 0 {
				a.Log.Warn("took over approvals whose holder stopped", "count", n)
			}
		}
	}
}

// Close stops listening; a Daemon that never ran is released this way.
// After Run it has nothing left to do: Run drained before it returned.
func (d *Daemon) Close() error {
	if err := d.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// allowedHosts are the names a request's Host may carry (besides
// loopback's, which the API always allows): the owner's list and the host
// of the listen address, unless that is a wildcard (0.0.0.0, ::, none).
func allowedHosts(listen string, owner []string) []string {
	out := slices.Clone(owner)
	if h, _, err := net.SplitHostPort(listen); err == nil {
		if ip, err := netip.ParseAddr(h); h != "" && (err != nil || !ip.IsUnspecified()) {
			out = append(out, h)
		}
	}
	return out
}

// loopbackListen says whether listen, host:port, is on loopback only: a
// loopback address or "localhost". A wildcard or any other host is not.
func loopbackListen(listen string) bool {
	h, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}
