package schedule

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// cron is a five-field cron expression as sets of values.
type cron struct {
	text                         string // the expression, canonical
	minute, hour, dom, month, dw uint64 // bit i set: value i matches
	domStar, dowStar             bool   // the field began with *: the other day field alone decides
}

// field is one cron field's range and names.
type field struct {
	name     string
	min, max int
	names    []string // names[i] is value min+i
}

var (
	minuteField = field{name: "minute", min: 0, max: 59}
	hourField   = field{name: "hour", min: 0, max: 23}
	domField    = field{name: "day-of-month", min: 1, max: 31}
	monthField  = field{name: "month", min: 1, max: 12,
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}}
	dowField = field{name: "day-of-week", min: 0, max: 7,
		names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}}
)

// parseCron reads five space-separated fields.
func parseCron(expr string) (*cron, error) {
	f := strings.Fields(expr)
	if len(f) != 5 {
		return nil, fmt.Errorf("%w: %q has %d fields; a cron expression has five: minute hour day-of-month month day-of-week", ErrBadWhen, expr, len(f))
	}
	c := &cron{text: strings.Join(f, " ")}
	var err error
	set := func(dst *uint64, fl field, s string) {
		if err != nil {
			return
		}
		var e error
		if *dst, e = fl.parse(s); e != nil {
			err = fmt.Errorf("%w: %q: %v", ErrBadWhen, expr, e)
		}
	}
	set(&c.minute, minuteField, f[0])
	set(&c.hour, hourField, f[1])
	set(&c.dom, domField, f[2])
	set(&c.month, monthField, f[3])
	set(&c.dw, dowField, f[4])
	if err != nil {
		return nil, err
	}
	if c.dw&(1<<7) != 0 { // 7 is Sunday too
		c.dw = c.dw&^(1<<7) | 1
	}
	c.domStar, c.dowStar = strings.HasPrefix(f[2], "*"), strings.HasPrefix(f[4], "*")
	return c, nil
}

// parse reads a field: a comma list of *, N, A-B, each with an optional /S.
func (fl field) parse(s string) (uint64, error) {
	var set uint64
	for _, part := range strings.Split(s, ",") {
		rng, step, stepped := strings.Cut(part, "/")
		lo, hi := fl.min, fl.max
		switch {
		case rng == "*":
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err error
			if lo, err = fl.value(a); err != nil {
				return 0, err
			}
			if hi, err = fl.value(b); err != nil {
				return 0, err
			}
			if lo > hi {
				return 0, fmt.Errorf("%s range %s runs backwards", fl.name, rng)
			}
		default:
			v, err := fl.value(rng)
			if err != nil {
				return 0, err
			}
			lo = v
			if !stepped {
				hi = v
			}
		}
		n := 1
		if stepped {
			var err error
			n, err = strconv.Atoi(step)
			if err != nil || n <= 0 || n > fl.max {
				return 0, fmt.Errorf("%s step %q is not a number from 1 to %d", fl.name, step, fl.max)
			}
		}
		for v := lo; v <= hi; v += n {
			set |= 1 << v
		}
	}
	return set, nil
}

// value reads one number or name of the field.
func (fl field) value(s string) (int, error) {
	for i, n := range fl.names {
		if s == n {
			return fl.min + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < fl.min || v > fl.max || s == "" || s[0] == '+' || s[0] == '-' {
		what := fmt.Sprintf("a number from %d to %d", fl.min, fl.max)
		if len(fl.names) > 0 {
			what += " or a name (" + fl.names[0] + ", " + fl.names[1] + ", ...)"
		}
		return 0, fmt.Errorf("%s %q is not %s", fl.name, s, what)
	}
	return v, nil
}

// horizonDays is how far next looks: a cron expression that fires at all
// fires within nine years (29 February skips 2100).
const horizonDays = 9 * 366

// dayMatches reports whether the calendar day of d runs, by cron's rule:
// with both day fields restricted, either may match.
func (c *cron) dayMatches(d time.Time) bool {
	if c.month&(1<<uint(d.Month())) == 0 {
		return false
	}
	dom := c.dom&(1<<uint(d.Day())) != 0
	dow := c.dw&(1<<uint(d.Weekday())) != 0
	if c.domStar || c.dowStar {
		return dom && dow
	}
	return dom || dow
}

// next is the first run strictly after after, in loc; zero when none
// comes within horizonDays.
func (c *cron) next(after time.Time, loc *time.Location) time.Time {
	a := after.In(loc)
	y, m, d := a.Date()
	for i := 0; i < horizonDays; i++ {
		// Noon is never in a clock change: the date is the date.
		day := time.Date(y, m, d+i, 12, 0, 0, 0, loc)
		if !c.dayMatches(day) {
			continue
		}
		h0 := 0
		if i == 0 {
			// The hours well before after's cannot follow it, even across
			// a clock change of up to two hours.
			h0 = max(a.Hour()-2, 0)
		}
		for h := h0; h < 24; h++ {
			if c.hour&(1<<h) == 0 {
				continue
			}
			for mi := 0; mi < 60; mi++ {
				if c.minute&(1<<mi) == 0 {
					continue
				}
				if t := Wall(day.Year(), day.Month(), day.Day(), h, mi, loc); t.After(after) {
					return t
				}
			}
		}
	}
	return time.Time{}
}

// checkRuns is how many runs check looks at for the shortest gap.
const checkRuns = 1500

// check refuses an expression that never fires or fires closer than
// MinInterval, looked at on UTC's clock (a clock change is no fault of the
// expression).
func (c *cron) check() error {
	from := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	t := c.next(from, time.UTC)
	if t.IsZero() {
		return errors.New("never fires: no day matches its day-of-month, month and day-of-week")
	}
	if bits.OnesCount64(c.minute) > 12 {
		return fmt.Errorf("fires more often than every %s: the shortest gap between runs is %s, since every run is a turn the budget pays for",
			FormatDuration(MinInterval), FormatDuration(MinInterval))
	}
	for i := 0; i < checkRuns; i++ {
		n := c.next(t, time.UTC)
		if n.IsZero() {
			break
		}
		if gap := n.Sub(t); gap < MinInterval {
			return fmt.Errorf("fires %s apart (at %s and %s): the shortest gap between runs is %s, since every run is a turn the budget pays for",
				FormatDuration(gap), t.Format("15:04"), n.Format("15:04"), FormatDuration(MinInterval))
		}
		t = n
	}
	return nil
}

// Wall is the instant the clocks of loc show y-mo-d h:mi: for a time the
// clocks pass twice (fall back), the first; for a time they skip (spring
// forward), the instant they jump.
func Wall(y int, mo time.Month, d, h, mi int, loc *time.Location) time.Time {
	naive := time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
	if loc == time.UTC {
		return naive
	}
	// The zone's offsets around that time, a day and a half either side
	// (only one change of the clocks fits in such a span).
	var found, past time.Time
	for _, probe := range []time.Duration{-36 * time.Hour, 0, 36 * time.Hour} {
		_, off := naive.Add(probe).In(loc).Zone()
		t := naive.Add(-time.Duration(off) * time.Second)
		l := t.In(loc)
		if l.Year() == y && l.Month() == mo && l.Day() == d && l.Hour() == h && l.Minute() == mi {
			if found.IsZero() || t.Before(found) {
				found = t
			}
		} else if time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), 0, 0, time.UTC).After(naive) {
			past = t
		}
	}
	if !found.IsZero() {
		return found
	}
	// Skipped: a candidate whose clock reads past the time is in the zone
	// period that began with the jump.
	start, _ := past.In(loc).ZoneBounds()
	if past.IsZero() || start.IsZero() {
		return past
	}
	return start
}
