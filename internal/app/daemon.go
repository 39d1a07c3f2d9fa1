package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/shelldon/shelldon/internal/transport/telegram"
	"github.com/shelldon/shelldon/internal/transport/web"
)

// Daemon is `shelldon serve` over an App opened ForDaemon: the HTTP API on
// a listener, Telegram when configured, and the approvals' duties (those a
// restart interrupted are carried out at start, expired ones closed every
// ExpireEvery). It is built and run without the command line, so tests
// drive it directly.
type Daemon struct {
	app    *App
	ln     net.Listener
	srv    *http.Server
	bot    *telegram.Bot
	source string // where the API token came from

	// ExpireEvery is how often expired approvals are closed; default 30s.
	ExpireEvery time.Duration
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
	api, err := web.New(web.Options{Chat: a.Core, Approvals: a.Core, Tools: a.Core, Settings: a, Audit: a.Core, Token: token, Logger: a.Log})
	if err != nil {
		return nil, err
	}
	bot, err := a.telegramBot()
	if err != nil {
		return nil, err
	}
	var handler http.Handler = api
	if bot != nil && cfg.Telegram.WebhookURL != "" {
		mux := http.NewServeMux()
		mux.Handle("/telegram/webhook", bot.Handler())
		mux.Handle("/", api)
		handler = mux
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", listen, err)
	}
	return &Daemon{
		app: a, ln: ln, bot: bot, source: source, ExpireEvery: 30 * time.Second,
		srv: &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(a.Log.Handler(), slog.LevelWarn)},
	}, nil
}

// Addr is the address the API listens on.
func (d *Daemon) Addr() net.Addr { return d.ln.Addr() }

// Run serves until ctx is done (then shuts down gracefully, waiting up to
// 30 s for requests in flight) or the server fails.
func (d *Daemon) Run(ctx context.Context) error {
	a := d.app
	cfg := a.current()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d.bot != nil {
		go func() {
			if err := d.bot.Run(ctx); err != nil {
				a.Log.Error("telegram stopped", "err", err)
			}
		}()
	}
	a.Log.Info("shelldon serving", "addr", d.ln.Addr().String(), "token_from", d.source,
		"provider", cfg.Provider.Kind, "model", cfg.Provider.Model, "version", versionString())
	errc := make(chan error, 1)
	go func() { errc <- d.srv.Serve(d.ln) }()
	go d.approvalDuties(ctx)
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	a.Log.Info("shutting down")
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer scancel()
	return d.srv.Shutdown(sctx)
}

// approvalDuties finishes the requests a restart left between a decision
// and its end, then closes expired ones every ExpireEvery until ctx ends.
func (d *Daemon) approvalDuties(ctx context.Context) {
	a := d.app
	if n, err := a.Core.RecoverApprovals(ctx); err != nil {
		a.Log.Error("recover approvals", "err", err)
	} else if n > 0 {
		a.Log.Warn("resumed approvals a restart interrupted", "count", n)
	}
	tick := time.NewTicker(d.ExpireEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if _, err := a.Core.ExpireApprovals(ctx); err != nil {
				a.Log.Error("expire approvals", "err", err)
			}
		}
	}
}

// Close stops listening; a Daemon that never ran is released this way.
func (d *Daemon) Close() error {
	if err := d.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
