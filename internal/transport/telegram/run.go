package telegram

import (
	"context"
	"errors"
	"fmt"
)

// Run registers the commands, takes up the work a previous run left in
// QueueDir, and then receives updates, by long polling or through the
// webhook, until ctx ends or Shutdown is called; it then waits for the
// work in hand. When ctx ends the running turns are cancelled; Shutdown
// lets them finish first. Transient API failures are retried with
// backoff; only a token the API refuses ends it early, with an error.
func (b *Bot) Run(ctx context.Context) error {
	ctx, cancelWork := context.WithCancel(ctx)
	defer cancelWork()
	recv, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	b.mu.Lock()
	if b.ctx != nil {
		b.mu.Unlock()
		return errors.New("telegram: Run was already called")
	}
	b.ctx, b.cancelWork, b.stopRecv = ctx, cancelWork, stopRecv
	if b.stopping { // Shutdown came first
		stopRecv()
	}
	for _, f := range b.later {
		b.spawnLocked(f)
	}
	b.later = nil
	b.mu.Unlock()
	defer close(b.done)
	defer func() {
		b.mu.Lock()
		b.stopping = true
		b.mu.Unlock()
		b.wg.Wait()
	}()
	if err := b.journal.open(); err != nil {
		return err
	}
	if len(b.allowed) == 0 {
		b.log.Warn("telegram: telegram.allowed_users is empty, so the bot answers nobody; add your user id (a stranger's id is logged when they write)")
	}
	me, err := b.getMe(recv)
	if err != nil || recv.Err() != nil {
		return err
	}
	b.mu.Lock()
	b.username = me.Username
	b.mu.Unlock()
	mode := "long polling"
	if b.opts.Webhook != nil {
		mode = "webhook"
	}
	b.log.Info("telegram: bot connected", "bot", "@"+me.Username, "mode", mode, "allowed_users", len(b.allowed))
	last := b.resume()
	if err := b.api.do(recv, "setMyCommands", setMyCommandsParams{Commands: commands}, nil); err != nil && recv.Err() == nil {
		b.log.Warn("telegram: register the commands", "err", err)
	}
	if w := b.opts.Webhook; w != nil {
		params := setWebhookParams{URL: w.URL, SecretToken: w.SecretToken, AllowedUpdates: allowedUpdates}
		if err := b.until(recv, "setWebhook", func() error { return b.api.call(recv, "setWebhook", params, nil, 0) }); err != nil {
			return err
		}
		<-recv.Done()
		return nil
	}
	// getUpdates is refused while a webhook is set.
	if err := b.until(recv, "deleteWebhook", func() error {
		return b.api.call(recv, "deleteWebhook", deleteWebhookParams{}, nil, 0)
	}); err != nil {
		return err
	}
	return b.poll(recv, last)
}

// Shutdown stops receiving updates and starting work (what waits in the
// queue stays there for the next start), waits for the running turns and
// decisions until ctx ends, then cancels them and waits for Run to
// return. It returns ctx's error when it had to cancel.
func (b *Bot) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	b.stopping = true
	stop, cancel := b.stopRecv, b.cancelWork
	b.mu.Unlock()
	if stop == nil {
		return nil // Run was never called
	}
	stop()
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
	}
	cancel()
	<-b.done
	return ctx.Err()
}

// resume takes up the work the journal holds: messages queue in order
// (those whose turn a restart cut short too: the core runs a message once,
// see Bot.work), presses are decided again. It returns the highest update
// id held, 0 for none.
func (b *Bot) resume() int64 {
	list, err := b.journal.load(func(name string, err error) {
		b.log.Error("telegram: dropping an unreadable file from the queue", "file", name, "err", err)
	})
	if err != nil {
		b.log.Error("telegram: the work a previous run left cannot be read", "err", err)
		return 0
	}
	var last int64
	resumed, interrupted := 0, 0
	for _, e := range list {
		last = max(last, e.u.UpdateID)
		b.duplicate(e.u.UpdateID)
		switch {
		case e.u.CallbackQuery != nil:
			b.spawnPress(e.u.UpdateID, e.u.CallbackQuery)
			resumed++
		case e.u.Message != nil:
			b.enqueue(&work{id: e.u.UpdateID, m: e.u.Message})
			if e.started {
				interrupted++
			} else {
				resumed++
			}
		}
	}
	if resumed+interrupted > 0 {
		b.log.Warn("telegram: taking up the work a restart left", "queued", resumed, "interrupted", interrupted)
	}
	return last
}

func (b *Bot) getMe(ctx context.Context) (user, error) {
	var me user
	err := b.until(ctx, "getMe", func() error { return b.api.call(ctx, "getMe", struct{}{}, &me, 0) })
	return me, err
}

// until retries f with backoff until it succeeds, fails fatally (the token
// is refused) or ctx ends (nil then).
func (b *Bot) until(ctx context.Context, what string, f func() error) error {
	wait := b.minBackoff
	for {
		err := f()
		switch {
		case err == nil, ctx.Err() != nil:
			return nil
		case fatal(err):
			return fmt.Errorf("telegram: the Bot API refused the token (check telegram.token_env): %w", err)
		}
		d := wait
		if ra := retryAfter(err); ra > 0 {
			d = ra
		}
		b.log.Warn("telegram: API call failed; retrying", "method", what, "err", err, "retry_in", d)
		if !sleep(ctx, d) {
			return nil
		}
		wait = min(wait*2, b.maxBackoff)
	}
}
