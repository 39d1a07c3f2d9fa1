package telegram

import "context"

// Notify sends the daemon's own words (a spent budget, core.Core.OnBudget)
// to the private chat of every allowed user: no message asked for them.
// It reports whether anyone is to get them (false without allowed users,
// or when the bot is stopping; the caller logs them anyway). Before Run
// it waits for Run. The text goes through formatText, inert like a reply.
func (b *Bot) Notify(text string) bool {
	ids := append([]int64(nil), b.opts.AllowedUsers...)
	if len(ids) == 0 {
		return false
	}
	return b.unasked(func(ctx context.Context) {
		for _, id := range ids {
			b.sendText(ctx, id, text)
		}
	})
}

// unasked runs f, which sends what no message asked for, in the bot's
// work: at once while the bot runs, when Run starts before that. It
// reports false when the bot is stopping (f never runs).
func (b *Bot) unasked(f func(ctx context.Context)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx == nil && !b.stopping {
		b.later = append(b.later, f)
		return true
	}
	return b.spawnLocked(f)
}
