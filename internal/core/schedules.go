package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/wire"
)

// Schedules keeps the owner's schedules. The app implements it: it knows
// the schedules' zone and quiet hours and wakes the daemon's scheduler.
type Schedules interface {
	// Create makes the schedule of a schedule call the owner approved,
	// once per approval, and returns what to tell the model.
	Create(ctx context.Context, s NewSchedule) (string, error)
}

// NewSchedule is an approved schedule call, as core hands it to
// Schedules.Create.
type NewSchedule struct {
	When   string // as the model wrote it (package schedule parses it)
	Prompt string
	// Chat and Turn are where it was asked for.
	Chat string
	Turn int64
	// Approval is the request the owner approved; ApprovedBy who did.
	Approval   string
	ApprovedBy string
}

// ScheduleView is a schedule as the owner's commands, the API and Telegram
// show it. Prompt is the model's words the owner approved: a presenter
// shows it inert.
type ScheduleView struct {
	ID          int64     `json:"id"`
	When        string    `json:"when"`
	Timezone    string    `json:"timezone"`
	Prompt      string    `json:"prompt"`
	Chat        string    `json:"chat"`    // where it was asked for
	RunsIn      string    `json:"runs_in"` // the chat of its turns
	State       string    `json:"state"`   // active, paused or removed
	CreatedAt   time.Time `json:"created_at"`
	ApprovedBy  string    `json:"approved_by"`
	NextRun     time.Time `json:"next_run,omitzero"` // when the next run starts, quiet hours counted; none when paused
	LastRunAt   time.Time `json:"last_run_at,omitzero"`
	LastOutcome string    `json:"last_outcome"`
}

// InboxItem is what a scheduled run said, kept for the owner when no
// Telegram chat took it. Text is the turn's reply: a presenter shows it
// inert.
type InboxItem struct {
	ID        int64     `json:"id"`
	Schedule  int64     `json:"schedule"`
	Turn      int64     `json:"turn"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
	Read      bool      `json:"read"`
}

// ScheduleChat is the chat the runs of schedule id are turns of: each
// schedule its own conversation, apart from the owner's.
func ScheduleChat(id int64) string { return fmt.Sprintf("sched:%d", id) }

// KindSchedule is the kind of self-driven turn a scheduled run is
// (SendSelf), and of the budget weight it is counted with.
const KindSchedule = "schedule"

// auditScheduleCreated is the audit kind of a schedule an approved call
// created.
const auditScheduleCreated = "schedule_created"

// schedule carries out a schedule call, only as the approved call this
// worker was resumed to run: the request must be exactly the approved
// arguments, and it applies once.
func (c *Core) schedule(ctx context.Context, job contracts.Job, req contracts.ScheduleRequest, ev Events, done *bool) (string, error) {
	r := job.Resume
	if r == nil || !r.Approved || r.Call.Name != contracts.ToolSchedule || *done || ev.exchange == nil {
		return "", errors.New("schedule runs only as the call the owner approved")
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	if got, err := contracts.CanonicalArgs(string(raw)); err != nil || got != r.Call.Arguments {
		return "", errors.New("the schedule is not the one the owner approved")
	}
	if c.opts.Schedules == nil {
		return "", errors.New("schedules are not available")
	}
	*done = true
	id, by := ev.exchange.Request()
	msg, err := c.opts.Schedules.Create(ctx, NewSchedule{When: req.When, Prompt: req.Prompt, Chat: job.Chat, Turn: job.Turn,
		Approval: id, ApprovedBy: by})
	c.audit(ctx, job.Chat, job.Turn, auditScheduleCreated, contracts.ToolSchedule, r.Call.Arguments, firstLine(msg, err), err == nil, 0)
	if err != nil {
		return "", err
	}
	return msg, nil
}

// firstLine is what the audit row of a result says: its first line, or
// the error.
func firstLine(msg string, err error) string {
	if err != nil {
		return "refused: " + err.Error()
	}
	for i, r := range msg {
		if r == '\n' {
			return msg[:i]
		}
	}
	return msg
}

// scheduleHandler serves wire.MethodSchedule for the turn of job: an
// approved schedule call creates its schedule once.
func (c *Core) scheduleHandler(job contracts.Job, ev Events) wire.Handler {
	done := false
	return wire.Handle(func(ctx context.Context, req contracts.ScheduleRequest) (string, error) {
		return c.schedule(ctx, job, req, ev, &done)
	})
}
