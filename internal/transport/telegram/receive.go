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

// Pacing of the polls a Bot API server answers at once with nothing (see
// poll): the first pause, doubled at each such answer up to the last.
// The cap bounds how late a message is seen at such a server, and keeps
// its idle polling to a few calls a minute.
const (
	firstPace = time.Second
	maxPace   = 10 * time.Second
)

// poll receives updates by long polling until ctx ends; last is the
// highest update id the journal holds.
//
// A server that holds each poll up to the timeout (Telegram) is polled
// again at once, and so is one that answers with updates. A server that
// answers at once with nothing (one that ignores the timeout: some
// emulators and proxies) would be polled in a tight loop; after such an
// answer the next poll waits, firstPace at first and doubling to
// maxPace, until a poll brings updates or is held.
func (b *Bot) poll(ctx context.Context, last int64) error {
	offset := b.loadOffset()
	if last > 0 {
		offset = max(offset, last+1)
	}
	wait := b.minBackoff
	var pace time.Duration // the pause after a quick empty answer; 0 after a normal one
	warned := false        // the owner was told about the pacing
	for ctx.Err() == nil {
		var raw []json.RawMessage
		params := getUpdatesParams{Offset: offset, Timeout: int(b.pollTimeout / time.Second), AllowedUpdates: allowedUpdates}
		start := time.Now()
		err := b.api.call(ctx, "getUpdates", params, &raw, b.pollTimeout+15*time.Second)
		quick := err == nil && len(raw) == 0 && time.Since(start) < b.pollTimeout/2
		if err == nil {
			var batch []received
			var next int64
			batch, next, err = b.receive(raw, offset)
			if next != offset {
				offset = next
				b.saveOffset(offset)
			}
			for _, r := range batch {
				b.after(r.u, r.v)
			}
		}
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
		if !quick {
			pace = 0
			continue
		}
		pace = min(max(pace*2, firstPace), maxPace)
		if pace == maxPace && !warned {
			warned = true
			b.log.Warn("telegram: the Bot API at telegram.api_base answers getUpdates at once instead of holding the long poll; polling it every " + maxPace.String() + " while nothing arrives, so a message may wait that long")
		}
		sleep(ctx, pace)
	}
	return nil
}

// received is an update accepted and waiting for its confirmation.
type received struct {
	u update
	v verdict
}

// receive accepts a batch of updates (see accept) and returns them with
// the offset that confirms them; the caller saves it and only then
// dispatches, so that no work starts before Telegram is told: each
// update's work is stored once, and done once, even across a crash. An
// update that cannot be stored ends the batch with an error, unconfirmed,
// to be fetched again.
func (b *Bot) receive(raw []json.RawMessage, offset int64) ([]received, int64, error) {
	var batch []received
	next := offset
	waiting := map[int64]int{}
	var err error
	for _, r := range raw {
		var u update
		if derr := json.Unmarshal(r, &u); derr != nil {
			// Skip it, but step past its id so that it is not fetched again.
			var id struct {
				UpdateID int64 `json:"update_id"`
			}
			json.Unmarshal(r, &id)
			b.log.Warn("telegram: skipping an update that does not decode", "update_id", id.UpdateID, "err", derr)
			next = max(next, id.UpdateID+1)
			continue
		}
		v, aerr := b.accept(u, waiting)
		if aerr != nil {
			err = aerr
			break
		}
		batch = append(batch, received{u, v})
		next = max(next, u.UpdateID+1)
	}
	b.syncJournal()
	return batch, next, err
}

// syncJournal makes the batch's new files durable. Each file was fsynced
// before its rename; a failure here is logged and the batch confirmed.
func (b *Bot) syncJournal() {
	if err := b.journal.sync(); err != nil {
		b.log.Error("telegram: sync the queue directory", "err", err)
	}
}

// isWork reports whether u asks for a turn or a decision: such an update
// is stored in the journal before Telegram is told it arrived.
func (b *Bot) isWork(u update) bool {
	switch {
	case u.CallbackQuery != nil:
		return b.allowed[u.CallbackQuery.From.ID]
	case u.Message != nil:
		return b.chatText(u.Message)
	}
	return false
}

// accept decides what becomes of a received update before it is
// confirmed to Telegram: a duplicate is dropped (skip), work is stored in
// the journal, a message for a chat whose queue is full is refused (its
// sender is told at dispatch). An error means it could not be stored:
// it must not be confirmed. waiting counts the messages this batch
// already queued per chat, not yet dispatched.
func (b *Bot) accept(u update, waiting map[int64]int) (v verdict, err error) {
	if b.duplicate(u.UpdateID) || b.journal.has(u.UpdateID) {
		return skip, nil
	}
	if !b.isWork(u) {
		return dispatch, nil
	}
	if m := u.Message; m != nil {
		b.mu.Lock()
		n := waiting[m.Chat.ID]
		if q := b.queues[m.Chat.ID]; q != nil {
			n += len(q.msgs)
		}
		b.mu.Unlock()
		if n >= maxQueued {
			return refuse, nil
		}
		waiting[m.Chat.ID]++
	}
	if err := b.journal.add(u); err != nil {
		b.forget(u.UpdateID)
		return skip, err
	}
	return dispatch, nil
}

// verdict is what accept decided for an update.
type verdict int

const (
	dispatch verdict = iota // handle it
	skip                    // a duplicate
	refuse                  // its chat's queue is full: tell the sender
)

// after carries out accept's verdict once the update is confirmed.
func (b *Bot) after(u update, v verdict) {
	switch v {
	case dispatch:
		b.handle(u)
	case refuse:
		id := u.Message.Chat.ID
		b.spawn(func(ctx context.Context) {
			b.sendHTML(ctx, id, "Too many messages are waiting for this chat; this one was dropped. /cancel stops the running turn.", nil)
		})
	}
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

// saveOffset writes the offset file atomically and durably, mode 0600:
// it must outlive the work it confirms (a lost offset would fetch again
// updates whose work is done and gone from the journal).
func (b *Bot) saveOffset(n int64) {
	if b.opts.OffsetFile == "" {
		return
	}
	dir := filepath.Dir(b.opts.OffsetFile)
	f, err := os.CreateTemp(dir, ".telegram-offset-*")
	if err == nil {
		_, err = f.WriteString(strconv.FormatInt(n, 10) + "\n")
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(f.Name(), 0o600)
		}
		if err == nil {
			err = os.Rename(f.Name(), b.opts.OffsetFile)
		}
		if err == nil {
			err = journal{dir: dir}.sync()
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
		// Stored before it is acknowledged; one at a time, so that a
		// chat's queue limit holds.
		b.acceptMu.Lock()
		v, err := b.accept(u, map[int64]int{})
		if err == nil {
			b.syncJournal()
			b.after(u, v)
		}
		b.acceptMu.Unlock()
		if err != nil {
			b.log.Error("telegram: could not store a webhook update; Telegram sends it again", "update_id", u.UpdateID, "err", err)
			http.Error(w, "not stored", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

func (b *Bot) accepting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ctx != nil && !b.stopping
}
