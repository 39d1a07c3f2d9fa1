package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// poll receives updates by long polling until ctx ends.
func (b *Bot) poll(ctx context.Context) error {
	offset := b.loadOffset()
	wait := b.minBackoff
	for ctx.Err() == nil {
		var raw []json.RawMessage
		params := getUpdatesParams{Offset: offset, Timeout: int(b.pollTimeout / time.Second), AllowedUpdates: allowedUpdates}
		err := b.api.call(ctx, "getUpdates", params, &raw, b.pollTimeout+15*time.Second)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if fatal(err) {
				return fmt.Errorf("telegram: the Bot API refused the token (check telegram.token_env): %w", err)
			}
			d := wait
			if ra := retryAfter(err); ra > 0 {
				d = ra
			}
			b.log.Warn("telegram: getUpdates failed; retrying", "err", err, "retry_in", d)
			sleep(ctx, d)
			wait = min(wait*2, b.maxBackoff)
			continue
		}
		wait = b.minBackoff
		next := offset
		for _, r := range raw {
			var u update
			if err := json.Unmarshal(r, &u); err != nil {
				// Skip it, but step past its id so that it is not fetched again.
				var id struct {
					UpdateID int64 `json:"update_id"`
				}
				json.Unmarshal(r, &id)
				u = update{UpdateID: id.UpdateID}
				b.log.Warn("telegram: skipping an update that does not decode", "update_id", id.UpdateID, "err", err)
			} else {
				b.handle(u)
			}
			next = max(next, u.UpdateID+1)
		}
		// The offset confirms the updates to Telegram: each is handled at
		// most once, even across a crash.
		if next != offset {
			offset = next
			b.saveOffset(offset)
		}
	}
	return nil
}

func (b *Bot) loadOffset() int64 {
	if b.opts.OffsetFile == "" {
		return 0
	}
	raw, err := os.ReadFile(b.opts.OffsetFile)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	n, perr := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil || perr != nil || n < 0 {
		b.log.Warn("telegram: unreadable offset file; starting from Telegram's oldest unconfirmed update", "path", b.opts.OffsetFile)
		return 0
	}
	return n
}

// saveOffset writes the offset file atomically, mode 0600.
func (b *Bot) saveOffset(n int64) {
	if b.opts.OffsetFile == "" {
		return
	}
	dir := filepath.Dir(b.opts.OffsetFile)
	f, err := os.CreateTemp(dir, ".telegram-offset-*")
	if err == nil {
		_, err = f.WriteString(strconv.FormatInt(n, 10) + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(f.Name(), 0o600)
		}
		if err == nil {
			err = os.Rename(f.Name(), b.opts.OffsetFile)
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}
	if err != nil {
		b.log.Error("telegram: save the update offset", "path", b.opts.OffsetFile, "err", err)
	}
}

// Handler receives the updates Telegram posts in webhook mode. A request
// without the right secret token is refused (401), compared in constant
// time; an update is acknowledged at once and handled in the background.
func (b *Bot) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b.opts.Webhook == nil {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		got := r.Header.Get(secretHeader)
		if subtle.ConstantTimeCompare([]byte(got), []byte(b.opts.Webhook.SecretToken)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if !b.accepting() {
			// Telegram delivers it again later.
			http.Error(w, "not running", http.StatusServiceUnavailable)
			return
		}
		var u update
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxUpdateBody)).Decode(&u); err != nil {
			// Acknowledged all the same: Telegram would only send it again.
			b.log.Warn("telegram: skipping a webhook update that does not decode", "err", err)
			w.WriteHeader(http.StatusOK)
			return
		}
		b.handle(u)
		w.WriteHeader(http.StatusOK)
	})
}

func (b *Bot) accepting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ctx != nil && !b.stopping
}
