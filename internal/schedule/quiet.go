package schedule

import (
	"fmt"
	"strings"
	"time"
)

// Quiet is a daily window of quiet hours on the wall clock, from its start
// (included) to its end (excluded); it may wrap midnight. The zero Quiet
// has no hours.
type Quiet struct {
	from, to int // minutes after midnight; from == to: none
}

// ParseQuiet reads "HH:MM-HH:MM" ("22:00-07:00" wraps midnight); "" is
// none.
func ParseQuiet(s string) (Quiet, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Quiet{}, nil
	}
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return Quiet{}, fmt.Errorf("quiet hours %q: want HH:MM-HH:MM, e.g. 22:00-07:00", s)
	}
	h1, m1, err := clock(a)
	if err != nil {
		return Quiet{}, fmt.Errorf("quiet hours %q: %v", s, err)
	}
	h2, m2, err := clock(b)
	if err != nil {
		return Quiet{}, fmt.Errorf("quiet hours %q: %v", s, err)
	}
	q := Quiet{from: h1*60 + m1, to: h2*60 + m2}
	if q.from == q.to {
		return Quiet{}, fmt.Errorf("quiet hours %q: the window starts where it ends; leave the key empty for none", s)
	}
	return q, nil
}

// IsZero reports whether q has no hours.
func (q Quiet) IsZero() bool { return q.from == q.to }

// String is "HH:MM-HH:MM", or "" for none.
func (q Quiet) String() string {
	if q.IsZero() {
		return ""
	}
	return fmt.Sprintf("%02d:%02d-%02d:%02d", q.from/60, q.from%60, q.to/60, q.to%60)
}

// Until is the end of the window as HH:MM.
func (q Quiet) Until() string { return fmt.Sprintf("%02d:%02d", q.to/60, q.to%60) }

// Contains reports whether loc's clock shows a time inside the window at t.
func (q Quiet) Contains(t time.Time, loc *time.Location) bool {
	if q.IsZero() {
		return false
	}
	l := t.In(loc)
	m := l.Hour()*60 + l.Minute()
	if q.from < q.to {
		return m >= q.from && m < q.to
	}
	return m >= q.from || m < q.to
}

// End is the first instant at or after t outside the window: t itself
// when t is outside, else the instant the window ends (at a whole minute;
// an end the clocks skip is the instant they jump).
func (q Quiet) End(t time.Time, loc *time.Location) time.Time {
	if !q.Contains(t, loc) {
		return t
	}
	// Minute by minute on the real time line, so that a clock change
	// inside the window counts as the clocks say; a window is shorter than
	// a day and a half.
	u := t.Truncate(time.Minute)
	for range 36 * 60 {
		u = u.Add(time.Minute)
		if !q.Contains(u, loc) {
			return u
		}
	}
	return u
}

// Plan is when a run falls due and why it runs when it does.
type Plan struct {
	Due time.Time // when the schedule said
	At  time.Time // when it runs
	// Late: it was due longer than Grace before it was planned (shelldon
	// was not running, or was busy).
	Late bool
	// Quiet: it waits for the end of the quiet hours.
	Quiet bool
}

// Grace is how late a run may start before it counts as late: a turn may
// wait for a worker slot.
const Grace = time.Minute

// PlanRun is when a run due at due runs, planned at now: at due, or now if
// that has passed (late), and, when that falls in the quiet hours q (on
// loc's clock), at their end.
func PlanRun(due, now time.Time, q Quiet, loc *time.Location) Plan {
	p := Plan{Due: due, At: due}
	if now.After(due) {
		p.At = now
		p.Late = now.Sub(due) > Grace
	}
	if end := q.End(p.At, loc); !end.Equal(p.At) {
		p.At, p.Quiet = end, true
	}
	if p.Late && q.Contains(due, loc) && !now.After(q.End(due, loc).Add(Grace)) {
		// Due in the quiet hours and run at their end: on time, as quiet
		// hours go.
		p.Late, p.Quiet = false, true
	}
	return p
}

// Missed counts the runs of s after due up to and including at (the ones
// a late run folds in), at most limit.
func (s Spec) Missed(due, at, anchor time.Time, loc *time.Location, limit int) int {
	n := 0
	for t := s.Next(due, anchor, loc); !t.IsZero() && !t.After(at) && n < limit; t = s.Next(t, anchor, loc) {
		n++
	}
	return n
}
