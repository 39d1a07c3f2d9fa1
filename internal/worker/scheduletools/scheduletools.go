// Package scheduletools offers the schedule tool in the worker. It is
// RISKY: a call parks the turn, and the owner approves it seeing the
// daemon's card (the next three runs, the zone, the quiet hours, the
// prompt in full). The worker checks the call first with the daemon's own
// grammar (package schedule), so a `when` shelldon cannot read or that
// runs too often is refused at once, before the owner is asked. Once
// approved, the call is a request to the daemon (wire.MethodSchedule),
// which keeps the schedules in its store, outside the worker's view.
package scheduletools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/shelldon/shelldon/internal/contracts"
	"github.com/shelldon/shelldon/internal/hidden"
	"github.com/shelldon/shelldon/internal/schedule"
	"github.com/shelldon/shelldon/internal/worker"
)

//go:embed schedule.md
var description string

// Daemon creates an approved schedule.
type Daemon interface {
	Schedule(ctx context.Context, req contracts.ScheduleRequest) (string, error)
}

// Args are the schedule tool's arguments.
type Args struct {
	When   string `json:"when" jsonschema:"when it runs: a cron expression such as 30 8 * * 1-5, or every 30m, every 2h, every day at 08:00, every weekday at 07:30, every monday at 18:00"`
	Prompt string `json:"prompt" jsonschema:"the message each run sends to shelldon as a new turn, written as the owner would ask it, e.g. Summarise the new files in the workspace inbox folder"`
}

// Guard names what Check enforces.
const Guard = "the schedule guard (a when shelldon can read, at most every 5m; a plain prompt)"

// Register adds the schedule tool to reg. d is the turn's daemon; one
// that cannot create schedules makes the approved call fail, not the
// turn.
func Register(reg *worker.Registry, d worker.Daemon) error {
	t, err := worker.NewBuiltin(contracts.ToolSchedule, description,
		func(ctx context.Context, in Args) (string, error) {
			if err := Check(in); err != nil {
				return "", err
			}
			sd, ok := d.(Daemon)
			if !ok {
				return "", errors.New("schedule: not available here")
			}
			return sd.Schedule(ctx, contracts.ScheduleRequest{When: in.When, Prompt: in.Prompt})
		})
	if err != nil {
		return fmt.Errorf("scheduletools: %w", err)
	}
	t.Guard = Guard
	t.Check = func(_ context.Context, raw json.RawMessage) error {
		var in Args
		if err := json.Unmarshal(raw, &in); err != nil {
			return fmt.Errorf("arguments do not fit the schema: %v", err)
		}
		return Check(in)
	}
	return reg.Add(t)
}

// Check refuses a call the daemon would never create: a `when` package
// schedule refuses, an empty or long prompt, or one with characters that
// hide text from the owner who reads it.
func Check(in Args) error {
	if _, err := schedule.Parse(in.When); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	p := strings.TrimSpace(in.Prompt)
	switch {
	case p == "":
		return errors.New("schedule: the prompt is empty; say what each run should do")
	case len(in.Prompt) > contracts.MaxSchedulePrompt:
		return fmt.Errorf("schedule: the prompt is %d bytes; the limit is %d, so that the owner reads it whole", len(in.Prompt), contracts.MaxSchedulePrompt)
	}
	for i, r := range in.Prompt {
		if what := hidden.Describe(r); what != "" {
			return fmt.Errorf("schedule: the prompt holds %s (U+%04X) at byte %d; write it in plain text", what, r, i)
		}
	}
	return nil
}
