package app

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// How a daemon stops (Daemon.Run when its context ends): it takes no new
// work (the listener closes, a request on an open connection is answered
// 503, Telegram stops receiving, the approvals' ticker stops), gives the
// work in flight (chat and decisions over the API, Telegram's turns and
// decisions, approvals being carried out) Daemon.Grace to finish, then
// cancels what is left, which core ends and commits (a cancelled turn is
// committed as such within core's own cancel grace), and waits up to
// cancelWait for it. Run returns only then, so whoever closes the App
// after Run (serve does) closes the store last. Telegram messages waiting
// behind a running turn are not started: they stay in the bot's queue
// for the next start.
const (
	// defaultGrace is Daemon.Grace when it is 0.
	defaultGrace = 10 * time.Second
	// cancelWait bounds the wait for cancelled work to end: core gives a
	// cancelled worker 2 s to return what it has, then commits.
	cancelWait = 5 * time.Second
)

// flight counts the work in flight; once closed it admits no more.
type flight struct {
	mu     sync.Mutex
	n      int
	closed bool
	idle   chan struct{} // closed when closed and n is 0
}

func newFlight() *flight { return &flight{idle: make(chan struct{})} }

// enter admits one piece of work, unless the flight is closed.
func (f *flight) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.n++
	return true
}

func (f *flight) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.closed && f.n == 0 {
		close(f.idle)
	}
}

// close admits no more work and returns a channel closed once the work
// admitted has left.
func (f *flight) close() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		if f.n == 0 {
			close(f.idle)
		}
	}
	return f.idle
}

// run runs work in a goroutine counted by the flight, even when closed
// (the daemon's own duties, started with it).
func (f *flight) run(work func()) {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	go func() {
		defer f.leave()
		work()
	}()
}

// admit wraps the daemon's HTTP handler: each request is work in flight,
// with a context that also ends when work is cancelled; once the flight
// is closed a request is refused with 503 and the connection closed.
func admit(next http.Handler, f *flight, work context.Context) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.enter() {
			w.Header().Set("Connection", "close")
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusServiceUnavailable)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "unavailable", "message": "shelldon is shutting down"}})
			return
		}
		defer f.leave()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(work, cancel)()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// drain stops the daemon's intake and waits for its work: see the comment
// at the top of this file. cancelWork cancels the work's context; bot is
// done when the Telegram transport's Run has returned (closed at once
// without Telegram).
func (d *Daemon) drain(f *flight, cancelWork context.CancelFunc, botDone <-chan struct{}) {
	log := d.app.Log
	grace := d.Grace
	if grace <= 0 {
		grace = defaultGrace
	}
	start := time.Now()
	gctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	idle := f.close()
	httpStopped := make(chan struct{})
	go func() {
		defer close(httpStopped)
		if err := d.srv.Shutdown(gctx); err != nil {
			log.Debug("http shutdown", "err", err)
		}
	}()
	if d.bot != nil {
		// Its end is botDone; at the end of the grace it cancels its own
		// turns (as cancelWork does).
		go d.bot.Shutdown(gctx)
	}
	all := make(chan struct{})
	go func() {
		<-idle
		<-botDone
		close(all)
	}()
	select {
	case <-all:
	case <-gctx.Done():
		log.Warn("work still running at the end of the grace is cancelled", "grace", grace)
		cancelWork()
		select {
		case <-all:
		case <-time.After(cancelWait):
			log.Error("work did not end after it was cancelled; stopping anyway", "waited", cancelWait)
		}
	}
	cancelWork()
	if err := d.srv.Close(); err != nil {
		log.Debug("http close", "err", err)
	}
	cancel() // the HTTP server's Shutdown returns now
	<-httpStopped
	log.Info("stopped", "took", time.Since(start).Round(time.Millisecond))
}
