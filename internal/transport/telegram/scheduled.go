package telegram

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shelldon/shelldon/internal/core"
	"github.com/shelldon/shelldon/internal/inert"
)

// ScheduleLister lists the owner's schedules, for /schedules.
type ScheduleLister interface {
	Schedules(ctx context.Context) ([]core.ScheduleView, error)
}

// DeliverScheduled sends the outcome of a scheduled run, which no message
// asked for, headed by head (the daemon's words: which schedule, when it
// was due, whether it runs late): to origin when that is a Telegram chat
// (the schedule was asked for there), else to the private chat of every
// allowed user. Cards of the requests the run parked come with it. It
// reports whether a chat takes it: false when there is none, or the bot
// is stopping (the caller keeps it in the inbox). Before Run it waits for
// Run.
func (b *Bot) DeliverScheduled(origin, head string, out core.Outcome) bool {
	var ids []int64
	if id, ok := chatID(origin); ok {
		ids = []int64{id}
	} else {
		// A user's private chat with the bot has the user's id.
		ids = append(ids, b.opts.AllowedUsers...)
	}
	if len(ids) == 0 {
		return false
	}
	return b.unasked(func(ctx context.Context) {
		for _, id := range ids {
			b.sendText(ctx, id, head)
			b.deliver(ctx, id, out, nil)
		}
	})
}

// schedulesText is the answer to /schedules: each schedule with its next
// run, the prompt's start, all of it inert.
func (b *Bot) schedulesText(ctx context.Context) string {
	if b.opts.Schedules == nil {
		return "Schedules are not available here."
	}
	list, err := b.opts.Schedules.Schedules(ctx)
	if err != nil {
		b.log.Error("telegram: list schedules", "err", err)
		return "Could not list the schedules: " + err.Error()
	}
	if len(list) == 0 {
		return "No schedules. Ask me to do something at set times, and approve the schedule I propose."
	}
	var s strings.Builder
	s.WriteString("Schedules:\n```\n")
	for _, v := range list {
		next := "paused"
		if v.State == "active" {
			next = "next: none"
			if !v.NextRun.IsZero() {
				next = "next: " + v.NextRun.In(zone(v.Timezone)).Format("Mon 2 Jan 15:04 MST")
			}
		}
		line := fmt.Sprintf("%d %s (%s), %s; %s", v.ID, inert.Line(v.When), inert.Line(v.Timezone), next, inert.Short(v.Prompt, 60))
		s.WriteString(oneLine(line, 200) + "\n")
	}
	s.WriteString("```\nPause, resume or remove one with: shelldon schedules pause|resume|remove ID")
	return s.String()
}

// zone is a schedule's time zone by name ("Local": the system's).
func zone(name string) *time.Location {
	if loc, err := time.LoadLocation(name); err == nil {
		return loc
	}
	return time.Local
}
