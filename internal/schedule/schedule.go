// Package schedule reads when a scheduled turn runs and computes its run
// times, in a time zone, with quiet hours. It is pure: it has no clock and
// does no I/O (the caller passes every time in), and it imports the
// standard library only, so the worker checks a `when` with the same code
// the daemon runs it with.
//
// The grammar of a `when` (Parse), kept small on purpose:
//
//	30 8 * * 1-5            a cron expression: minute hour day-of-month month day-of-week,
//	                        each field *, N, A-B, */S, A-B/S, N/S or a comma list of them;
//	                        months jan-dec and days sun-sat by name too; day-of-week 0-7 (0 and 7 are Sunday);
//	                        with both day fields restricted, a day matching either runs (as cron does)
//	every 30m, every 2h,    an interval of elapsed time (m, h or d, or a Go duration such as 1h30m;
//	every 90 minutes,       "every hour" is every 1h); the first run is when the schedule is
//	every hour              approved, the next ones follow at whole intervals from it
//	every day at 08:00      a wall-clock time each day; "every weekday at 07:30" is Monday to
//	every monday at 18:00   Friday, "every monday at 18:00" one day of the week (a cron underneath)
//
// Anything else is refused with a message that says what is accepted. Runs
// closer than MinInterval are refused (the budget pays for each run), and
// so is a cron expression that never fires (30 February).
//
// Wall-clock schedules (cron and "every day at") follow the zone's clocks.
// A time the clocks skip (spring forward: 02:30 on the night clocks jump
// from 02:00 to 03:00) runs once, at the instant the clocks jump (03:00 new
// time); a time the clocks pass twice (fall back: 01:30 on the night they
// go from 02:00 back to 01:00) runs once, at its first occurrence. An
// interval counts elapsed time and ignores the clocks.
//
// Quiet hours (ParseQuiet, "22:00-07:00", may wrap midnight) are a
// wall-clock window in the schedules' zone: a run due inside it waits for
// its end and runs then, once (Plan).
package schedule

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MinInterval is the shortest time allowed between two runs of a
// schedule: every run is a turn the budget pays for.
const MinInterval = 5 * time.Minute

// MaxInterval is the longest interval of an "every" schedule.
const MaxInterval = 366 * 24 * time.Hour

// MaxWhen bounds the text of a `when`.
const MaxWhen = 200

// Grammar is what Parse accepts, in the words of its refusals.
const Grammar = `a cron expression "minute hour day-of-month month day-of-week" (e.g. "30 8 * * 1-5"), ` +
	`"every <n>m|h|d" (e.g. "every 30m", "every 2h"; at least every 5m), ` +
	`"every day at HH:MM", "every weekday at HH:MM" or "every <day of the week> at HH:MM"`

// Spec is a parsed `when`.
type Spec struct {
	text  string        // canonical
	every time.Duration // an interval; 0 for a wall-clock schedule
	cron  *cron         // a wall-clock schedule; nil for an interval
}

// ErrBadWhen wraps every refusal of Parse.
var ErrBadWhen = errors.New("bad schedule")

// Parse reads a `when` (see the package doc). Its refusals wrap ErrBadWhen
// and say what is accepted.
func Parse(when string) (Spec, error) {
	s := strings.Join(strings.Fields(strings.ToLower(when)), " ")
	if s == "" {
		return Spec{}, fmt.Errorf("%w: it is empty; use %s", ErrBadWhen, Grammar)
	}
	if len(when) > MaxWhen {
		return Spec{}, fmt.Errorf("%w: it is %d bytes; the limit is %d", ErrBadWhen, len(when), MaxWhen)
	}
	var (
		sp  Spec
		err error
	)
	if rest, ok := strings.CutPrefix(s, "every "); ok {
		sp, err = parseEvery(rest)
	} else if strings.HasPrefix(s, "every") || strings.HasPrefix(s, "@") || len(strings.Fields(s)) != 5 {
		return Spec{}, fmt.Errorf("%w: %q is not a schedule; use %s", ErrBadWhen, when, Grammar)
	} else {
		var c *cron
		c, err = parseCron(s)
		sp = Spec{text: s, cron: c}
	}
	if err != nil {
		return Spec{}, err
	}
	if sp.cron != nil {
		if err := sp.cron.check(); err != nil {
			return Spec{}, fmt.Errorf("%w: %q %v", ErrBadWhen, sp.text, err)
		}
	}
	return sp, nil
}

// String is the canonical form of the `when`: lower case, single spaces.
func (s Spec) String() string { return s.text }

// Interval is the interval of an "every <duration>" schedule, 0 for a
// wall-clock one.
func (s Spec) Interval() time.Duration { return s.every }

// Describe says in words how the schedule counts its runs, for the
// owner's card.
func (s Spec) Describe() string {
	if s.every > 0 {
		return "every " + FormatDuration(s.every) + " of elapsed time, the first run right after you approve it"
	}
	if !strings.HasPrefix(s.text, "every ") {
		return "cron: minute hour day-of-month month day-of-week, on the zone's clock"
	}
	return "on the zone's clock (cron " + s.cron.text + ")"
}

// First is the first run of a schedule created at anchor: the anchor
// itself for an interval, the first wall-clock time after it for the rest.
func (s Spec) First(anchor time.Time, loc *time.Location) time.Time {
	if s.every > 0 {
		return anchor
	}
	return s.Next(anchor, anchor, loc)
}

// Next is the first run strictly after after, of a schedule created at
// anchor, in loc; the zero time when none comes within the horizon (nine
// years: a cron expression that fires at all fires within it).
func (s Spec) Next(after, anchor time.Time, loc *time.Location) time.Time {
	if s.every > 0 {
		if after.Before(anchor) {
			return anchor
		}
		k := after.Sub(anchor)/s.every + 1
		return anchor.Add(k * s.every)
	}
	if s.cron == nil {
		return time.Time{}
	}
	return s.cron.next(after, loc)
}

// Runs is the first n runs from first (included), of a schedule created at
// anchor.
func (s Spec) Runs(first, anchor time.Time, loc *time.Location, n int) []time.Time {
	var out []time.Time
	for t := first; !t.IsZero() && len(out) < n; t = s.Next(t, anchor, loc) {
		out = append(out, t)
	}
	return out
}

// parseEvery reads what follows "every ".
func parseEvery(s string) (Spec, error) {
	if day, at, ok := strings.Cut(s, " at "); ok {
		h, m, err := clock(at)
		if err != nil {
			return Spec{}, fmt.Errorf("%w: %q: %v", ErrBadWhen, "every "+s, err)
		}
		dow, ok := everyDay(day)
		if !ok {
			return Spec{}, fmt.Errorf("%w: %q: say every day, every weekday or every monday ... every sunday before at", ErrBadWhen, "every "+s)
		}
		expr := fmt.Sprintf("%d %d * * %s", m, h, dow)
		c, err := parseCron(expr)
		if err != nil {
			return Spec{}, err
		}
		return Spec{text: fmt.Sprintf("every %s at %02d:%02d", day, h, m), cron: c}, nil
	}
	d, err := interval(s)
	if err != nil {
		return Spec{}, fmt.Errorf("%w: %q: %v; use %s", ErrBadWhen, "every "+s, err, Grammar)
	}
	switch {
	case d < MinInterval:
		return Spec{}, fmt.Errorf("%w: every %s is too often: the shortest interval is %s, since every run is a turn the budget pays for",
			ErrBadWhen, FormatDuration(d), FormatDuration(MinInterval))
	case d > MaxInterval:
		return Spec{}, fmt.Errorf("%w: every %s is longer than the longest interval, %s; use a cron expression", ErrBadWhen, FormatDuration(d), FormatDuration(MaxInterval))
	case d%time.Minute != 0:
		return Spec{}, fmt.Errorf("%w: every %s: an interval is whole minutes", ErrBadWhen, d)
	}
	return Spec{text: "every " + FormatDuration(d), every: d}, nil
}

// everyDay is the day word of "every <day> at HH:MM" as cron's
// day-of-week field. Switches, here and in intervalUnit, rather than map
// literals, which every process of the binary would build at package init.
func everyDay(day string) (string, bool) {
	switch day {
	case "day":
		return "*", true
	case "weekday":
		return "1-5", true
	case "sunday":
		return "0", true
	case "monday":
		return "1", true
	case "tuesday":
		return "2", true
	case "wednesday":
		return "3", true
	case "thursday":
		return "4", true
	case "friday":
		return "5", true
	case "saturday":
		return "6", true
	}
	return "", false
}

// intervalUnit is a unit of an interval without a Go duration's spelling.
func intervalUnit(unit string) (time.Duration, bool) {
	switch unit {
	case "m", "min", "mins", "minute", "minutes":
		return time.Minute, true
	case "h", "hr", "hrs", "hour", "hours":
		return time.Hour, true
	case "d", "day", "days":
		return 24 * time.Hour, true
	}
	return 0, false
}

// interval reads "30m", "2h", "1h30m", "90 minutes", "hour", "2d".
func interval(s string) (time.Duration, error) {
	if s == "hour" {
		return time.Hour, nil
	}
	if s == "day" || s == "week" {
		return 0, fmt.Errorf("say every %s at HH:MM for a time of day, or every %s", s, map[string]string{"day": "24h", "week": "7d"}[s])
	}
	num, unit := s, ""
	if i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); i > 0 {
		num, unit = s[:i], strings.TrimSpace(s[i:])
	}
	if n, err := strconv.Atoi(num); err == nil {
		if u, ok := intervalUnit(unit); ok {
			if n <= 0 || n > 1_000_000 {
				return 0, fmt.Errorf("%d %s is out of range", n, unit)
			}
			return time.Duration(n) * u, nil
		}
	}
	// A Go duration: 1h30m, 1.5h, 300s.
	d, err := time.ParseDuration(strings.ReplaceAll(s, " ", ""))
	if err != nil || d <= 0 {
		return 0, errors.New("not an interval (a number and m, h or d)")
	}
	return d, nil
}

// clock reads HH:MM (24-hour).
func clock(s string) (h, m int, err error) {
	hs, ms, ok := strings.Cut(strings.TrimSpace(s), ":")
	if ok && len(ms) == 2 && len(hs) >= 1 && len(hs) <= 2 {
		h, herr := strconv.Atoi(hs)
		m, merr := strconv.Atoi(ms)
		if herr == nil && merr == nil && h >= 0 && h < 24 && m >= 0 && m < 60 {
			return h, m, nil
		}
	}
	return 0, 0, fmt.Errorf("%q is not a time of day HH:MM (00:00 to 23:59)", s)
}

// FormatDuration writes whole minutes as 45m, 2h, 1h30m, 3d or 1d12h.
func FormatDuration(d time.Duration) string {
	if d <= 0 || d%time.Minute != 0 {
		return d.String()
	}
	days, rest := d/(24*time.Hour), d%(24*time.Hour)
	h, m := rest/time.Hour, (rest%time.Hour)/time.Minute
	var b strings.Builder
	if days > 0 {
		fmt.Fprintf(&b, "%dd", days)
	}
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	return b.String()
}
