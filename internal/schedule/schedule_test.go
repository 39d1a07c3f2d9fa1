package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no time zone data for %s: %v", name, err)
	}
	return loc
}

// at is a wall-clock time in loc, written "2006-01-02 15:04" (only times
// that exist once).
func at(t *testing.T, loc *time.Location, s string) time.Time {
	t.Helper()
	v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParse(t *testing.T) {
	t.Parallel()
	good := []struct{ in, canon string }{
		{"30 8 * * 1-5", "30 8 * * 1-5"},
		{"  0   */2 * *  *  ", "0 */2 * * *"},
		{"0 9 1,15 * *", "0 9 1,15 * *"},
		{"15 6 * JAN-mar Mon,Wed,FRI", "15 6 * jan-mar mon,wed,fri"},
		{"0 12 * * 7", "0 12 * * 7"},
		{"*/5 * * * *", "*/5 * * * *"},
		{"0 0 29 2 *", "0 0 29 2 *"},
		{"5-55/10 1-23/2 * * *", "5-55/10 1-23/2 * * *"},
		{"every 30m", "every 30m"},
		{"Every 2h", "every 2h"},
		{"every 90 minutes", "every 1h30m"},
		{"every 1h30m", "every 1h30m"},
		{"every hour", "every 1h"},
		{"every 5 min", "every 5m"},
		{"every 300s", "every 5m"},
		{"every 7d", "every 7d"},
		{"every day at 08:00", "every day at 08:00"},
		{"every day at 8:05", "every day at 08:05"},
		{"every weekday at 07:30", "every weekday at 07:30"},
		{"every Sunday at 18:00", "every sunday at 18:00"},
	}
	for _, tc := range good {
		s, err := Parse(tc.in)
		if err != nil || s.String() != tc.canon {
			t.Errorf("Parse(%q) = %q, %v; want %q", tc.in, s.String(), err, tc.canon)
		}
	}
	bad := []struct{ in, why string }{
		{"", "empty"},
		{"tomorrow", "is not a schedule"},
		{"@daily", "is not a schedule"},
		{"* * * *", "is not a schedule"},
		{"* * * * * *", "is not a schedule"},
		{"* * * * *", "more often than every 5m"},
		{"*/2 * * * *", "more often"},
		{"0,3 * * * *", "fires 3m apart"},
		{"58,59 23 * * *", "fires 1m apart"},
		{"60 * * * *", `minute "60" is not a number from 0 to 59`},
		{"0 24 * * *", "hour"},
		{"0 0 0 * *", "day-of-month"},
		{"0 0 * 13 *", "month"},
		{"0 0 * * 8", "day-of-week"},
		{"0 0 * foo *", "or a name (jan, feb, ...)"},
		{"0 0 5-1 * *", "runs backwards"},
		{"*/0 * * * *", "step"},
		{"-1 * * * *", "minute"},
		{"0 0 30 2 *", "never fires"},
		{"0 0 31 apr,jun *", "never fires"},
		{"every 1m", "too often: the shortest interval is 5m"},
		{"every 4m59s", "too often"},
		{"every 0m", "out of range"},
		{"every 400d", "longer than the longest interval"},
		{"every 5m30s", "whole minutes"},
		{"every day", "every day at HH:MM"},
		{"every fortnight", "not an interval"},
		{"every day at 25:00", "is not a time of day"},
		{"every day at 8", "is not a time of day"},
		{"every someday at 08:00", "every weekday"},
		{"every", "is not a schedule"},
		{strings.Repeat("1", 300), "the limit is 200"},
	}
	for _, tc := range bad {
		_, err := Parse(tc.in)
		if err == nil || !errors.Is(err, ErrBadWhen) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("Parse(%q) = %v; want an ErrBadWhen saying %q", tc.in, err, tc.why)
		}
	}
}

// TestNextAcrossClockChanges: wall-clock schedules follow the zone's
// clocks; a skipped time runs once at the jump, a doubled time once at
// its first occurrence; intervals count elapsed time.
func TestNextAcrossClockChanges(t *testing.T) {
	t.Parallel()
	ny, berlin := zone(t, "America/New_York"), zone(t, "Europe/Berlin")
	utc := func(s string) time.Time { v, _ := time.Parse("2006-01-02 15:04", s); return v }
	cases := []struct {
		name  string
		when  string
		loc   *time.Location
		after time.Time
		want  []time.Time // in UTC
	}{
		{"ny daily 02:30 over spring forward", "30 2 * * *", ny, utc("2025-03-08 12:00"),
			// 9 March 2025: 02:00 EST jumps to 03:00 EDT (07:00 UTC): 02:30 runs at the jump.
			[]time.Time{utc("2025-03-09 07:00"), utc("2025-03-10 06:30"), utc("2025-03-11 06:30")}},
		{"ny daily 01:30 over fall back", "30 1 * * *", ny, utc("2025-11-01 12:00"),
			// 2 November 2025: 01:30 EDT (05:30 UTC) and 01:30 EST (06:30 UTC): once, the first.
			[]time.Time{utc("2025-11-02 05:30"), utc("2025-11-03 06:30"), utc("2025-11-04 06:30")}},
		{"ny hourly at :30 over fall back", "30 * * * *", ny, utc("2025-11-02 04:00"),
			// 00:30 EDT, 01:30 EDT, (01:30 EST skipped: already run), 02:30 EST.
			[]time.Time{utc("2025-11-02 04:30"), utc("2025-11-02 05:30"), utc("2025-11-02 07:30")}},
		{"ny every 30 minutes over spring forward", "0,30 * * * *", ny, utc("2025-03-09 06:00"),
			// 01:30 EST, then 02:00 and 02:30 do not exist: 03:00 EDT once, then 03:30.
			[]time.Time{utc("2025-03-09 06:30"), utc("2025-03-09 07:00"), utc("2025-03-09 07:30")}},
		{"berlin daily 02:30 over spring forward", "every day at 02:30", berlin, utc("2025-03-29 12:00"),
			// 30 March 2025: 02:00 CET jumps to 03:00 CEST (01:00 UTC).
			[]time.Time{utc("2025-03-30 01:00"), utc("2025-03-31 00:30"), utc("2025-04-01 00:30")}},
		{"berlin daily 02:30 over fall back", "every day at 02:30", berlin, utc("2025-10-25 12:00"),
			// 26 October 2025: 02:30 CEST (00:30 UTC) and 02:30 CET (01:30 UTC): the first.
			[]time.Time{utc("2025-10-26 00:30"), utc("2025-10-27 01:30"), utc("2025-10-28 01:30")}},
		{"berlin weekdays 08:00 over a weekend", "every weekday at 08:00", berlin, utc("2025-06-06 07:00"),
			// Friday 6 June 08:00 CEST is 06:00 UTC, already past: Monday, Tuesday, Wednesday.
			[]time.Time{utc("2025-06-09 06:00"), utc("2025-06-10 06:00"), utc("2025-06-11 06:00")}},
		{"either day field", "0 12 13 * fri", time.UTC, utc("2025-06-01 00:00"),
			// The 13th or a Friday: Fri 6, Fri 13 (both), Fri 20.
			[]time.Time{utc("2025-06-06 12:00"), utc("2025-06-13 12:00"), utc("2025-06-20 12:00")}},
		{"29 february", "0 0 29 feb *", time.UTC, utc("2025-01-01 00:00"),
			[]time.Time{utc("2028-02-29 00:00"), utc("2032-02-29 00:00"), utc("2036-02-29 00:00")}},
		{"sunday as 7", "0 9 * * 7", time.UTC, utc("2025-06-01 10:00"),
			[]time.Time{utc("2025-06-08 09:00"), utc("2025-06-15 09:00"), utc("2025-06-22 09:00")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.when)
			if err != nil {
				t.Fatal(err)
			}
			first := s.Next(tc.after, tc.after, tc.loc)
			got := s.Runs(first, tc.after, tc.loc, 3)
			for i := range got {
				got[i] = got[i].UTC()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("runs of %q after %s (-want +got):\n%s", tc.when, tc.after, diff)
			}
		})
	}
	// An interval is elapsed time: across the spring-forward night in New
	// York, every 2h stays two real hours apart, whatever the clocks say.
	s, _ := Parse("every 2h")
	anchor := at(t, ny, "2025-03-09 00:00")
	got := s.Runs(s.First(anchor, ny), anchor, ny, 3)
	for i := 1; i < len(got); i++ {
		if d := got[i].Sub(got[i-1]); d != 2*time.Hour {
			t.Errorf("every 2h: runs %s apart", d)
		}
	}
	if got[2].In(ny).Hour() != 5 { // 00:00 EST, 02:00 EST = 03:00 EDT... 05:00 EDT
		t.Errorf("every 2h from midnight: third run at %s", got[2].In(ny))
	}
}

func TestIntervalFirstAndNext(t *testing.T) {
	t.Parallel()
	s, _ := Parse("every 30m")
	anchor := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
	if got := s.First(anchor, time.UTC); !got.Equal(anchor) {
		t.Errorf("First = %s, want the anchor", got)
	}
	for _, tc := range []struct{ after, want string }{
		{"09:00", "10:00"}, {"10:00", "10:30"}, {"10:29", "10:30"}, {"10:30", "11:00"}, {"13:17", "13:30"},
	} {
		a, _ := time.Parse("15:04", tc.after)
		w, _ := time.Parse("15:04", tc.want)
		after := anchor.Add(a.Sub(time.Date(0, 1, 1, 10, 0, 0, 0, time.UTC)))
		want := anchor.Add(w.Sub(time.Date(0, 1, 1, 10, 0, 0, 0, time.UTC)))
		if got := s.Next(after, anchor, time.UTC); !got.Equal(want) {
			t.Errorf("Next(%s) = %s, want %s", tc.after, got, want)
		}
	}
}

func TestQuietHours(t *testing.T) {
	t.Parallel()
	berlin := zone(t, "Europe/Berlin")
	q, err := ParseQuiet("22:00-07:00")
	if err != nil || q.String() != "22:00-07:00" || q.Until() != "07:00" {
		t.Fatalf("ParseQuiet = %v, %v", q, err)
	}
	cases := []struct {
		at   string
		in   bool
		ends string
	}{
		{"2025-06-02 21:59", false, "2025-06-02 21:59"},
		{"2025-06-02 22:00", true, "2025-06-03 07:00"},
		{"2025-06-02 23:30", true, "2025-06-03 07:00"},
		{"2025-06-03 00:00", true, "2025-06-03 07:00"},
		{"2025-06-03 06:59", true, "2025-06-03 07:00"},
		{"2025-06-03 07:00", false, "2025-06-03 07:00"},
		{"2025-06-03 12:00", false, "2025-06-03 12:00"},
	}
	for _, tc := range cases {
		tt := at(t, berlin, tc.at)
		if got := q.Contains(tt, berlin); got != tc.in {
			t.Errorf("Contains(%s) = %v", tc.at, got)
		}
		if got, want := q.End(tt, berlin), at(t, berlin, tc.ends); !got.Equal(want) {
			t.Errorf("End(%s) = %s, want %s", tc.at, got.In(berlin), tc.ends)
		}
	}
	// Not wrapping.
	day, _ := ParseQuiet("12:00-14:00")
	if !day.Contains(at(t, berlin, "2025-06-03 13:00"), berlin) || day.Contains(at(t, berlin, "2025-06-03 14:00"), berlin) ||
		day.Contains(at(t, berlin, "2025-06-03 11:59"), berlin) {
		t.Error("12:00-14:00 holds the wrong minutes")
	}
	// An end the clocks skip: the window ends at the jump.
	ny := zone(t, "America/New_York")
	early, _ := ParseQuiet("01:00-02:30")
	if got, want := early.End(at(t, ny, "2025-03-09 01:15"), ny), time.Date(2025, 3, 9, 7, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("End over spring forward = %s, want %s", got.UTC(), want)
	}
	// The zone counts: 23:00 in Berlin is 22:00 in UTC in winter.
	if !q.Contains(time.Date(2025, 1, 10, 22, 30, 0, 0, time.UTC), berlin) || q.Contains(time.Date(2025, 1, 10, 20, 30, 0, 0, time.UTC), berlin) {
		t.Error("the window is not on Berlin's clock")
	}
	for _, bad := range []string{"22:00", "22:00-22:00", "25:00-07:00", "22-07", "22:00-7:0"} {
		if _, err := ParseQuiet(bad); err == nil {
			t.Errorf("ParseQuiet(%q) accepted", bad)
		}
	}
	if q, err := ParseQuiet(""); err != nil || !q.IsZero() || q.Contains(time.Now(), time.UTC) {
		t.Errorf("ParseQuiet(\"\") = %v, %v", q, err)
	}
}

// TestPlanRun: on time, late after downtime (once, with what it folds
// in), and deferred by quiet hours to their end.
func TestPlanRun(t *testing.T) {
	t.Parallel()
	berlin := zone(t, "Europe/Berlin")
	q, _ := ParseQuiet("22:00-07:00")
	hourly, _ := Parse("0 * * * *")
	anchor := at(t, berlin, "2025-06-01 00:00")
	cases := []struct {
		name           string
		due, now       string
		quiet          Quiet
		at             string
		late, deferred bool
		missed         int
	}{
		{"on time", "2025-06-02 12:00", "2025-06-02 11:00", q, "2025-06-02 12:00", false, false, 0},
		{"a little late is on time", "2025-06-02 12:00", "2025-06-02 12:00", q, "2025-06-02 12:00", false, false, 0},
		{"late after downtime", "2025-06-02 12:00", "2025-06-02 15:20", q, "2025-06-02 15:20", true, false, 3},
		{"due in quiet hours", "2025-06-02 23:00", "2025-06-02 20:00", q, "2025-06-03 07:00", false, true, 8},
		{"due in quiet hours, planned at their end", "2025-06-02 23:00", "2025-06-03 07:00", q, "2025-06-03 07:00", false, true, 8},
		{"late into quiet hours", "2025-06-02 18:00", "2025-06-02 23:10", q, "2025-06-03 07:00", true, true, 13},
		{"late, quiet hours long over", "2025-06-02 23:00", "2025-06-03 09:30", q, "2025-06-03 09:30", true, false, 10},
		{"no quiet hours", "2025-06-02 23:00", "2025-06-02 20:00", Quiet{}, "2025-06-02 23:00", false, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := PlanRun(at(t, berlin, tc.due), at(t, berlin, tc.now), tc.quiet, berlin)
			if !p.At.Equal(at(t, berlin, tc.at)) || p.Late != tc.late || p.Quiet != tc.deferred {
				t.Errorf("PlanRun = at %s late %v quiet %v; want at %s late %v quiet %v", p.At.In(berlin), p.Late, p.Quiet, tc.at, tc.late, tc.deferred)
			}
			// Catch-up once: the runs due between are folded into this one.
			if n := hourly.Missed(p.Due, p.At, anchor, berlin, 1000); n != tc.missed {
				t.Errorf("Missed = %d, want %d", n, tc.missed)
			}
		})
	}
}

func TestWallIsExact(t *testing.T) {
	t.Parallel()
	// Every wall-clock minute of a year in two zones with clock changes
	// either reads back as itself or is skipped to the jump.
	for _, name := range []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe"} {
		loc := zone(t, name)
		for d := time.Date(2025, 1, 1, 12, 0, 0, 0, loc); d.Year() == 2025; d = d.AddDate(0, 0, 1) {
			for _, hm := range [][2]int{{0, 0}, {1, 30}, {2, 0}, {2, 15}, {2, 30}, {3, 0}, {23, 59}} {
				w := Wall(d.Year(), d.Month(), d.Day(), hm[0], hm[1], loc)
				l := w.In(loc)
				if l.Hour() == hm[0] && l.Minute() == hm[1] && l.Day() == d.Day() {
					// It exists: the first instant showing it.
					if e := w.Add(-time.Hour).In(loc); e.Hour() == hm[0] && e.Minute() == hm[1] && e.Day() == d.Day() {
						t.Errorf("%s %s %02d:%02d: %s is the second occurrence", name, d.Format("2006-01-02"), hm[0], hm[1], w)
					}
					continue
				}
				// Skipped: the instant just before reads earlier.
				if b := w.Add(-time.Minute).In(loc); b.Hour()*60+b.Minute() >= hm[0]*60+hm[1] {
					t.Errorf("%s %s %02d:%02d: %s (%s) is not the jump", name, d.Format("2006-01-02"), hm[0], hm[1], w, l)
				}
			}
		}
	}
}

// TestEveryDayWords: each day word of "every <day> at HH:MM" reads as its
// cron day-of-week field, and each unit word of an interval as its
// duration (switches rather than maps built at package init).
func TestEveryDayWords(t *testing.T) {
	t.Parallel()
	days := map[string]string{"day": "*", "weekday": "1-5", "sunday": "0", "monday": "1", "tuesday": "2",
		"wednesday": "3", "thursday": "4", "friday": "5", "saturday": "6"}
	for day, dow := range days {
		if got, ok := everyDay(day); !ok || got != dow {
			t.Errorf("everyDay(%q) = %q, %v; want %q", day, got, ok, dow)
		}
		if _, err := Parse("every " + day + " at 07:30"); err != nil {
			t.Errorf("every %s at 07:30: %v", day, err)
		}
	}
	if _, ok := everyDay("fortnight"); ok {
		t.Error("everyDay took fortnight")
	}
	units := map[string]time.Duration{"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute,
		"minutes": time.Minute, "h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
		"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour}
	for unit, d := range units {
		if got, ok := intervalUnit(unit); !ok || got != d {
			t.Errorf("intervalUnit(%q) = %v, %v; want %v", unit, got, ok, d)
		}
	}
	if _, ok := intervalUnit("s"); ok {
		t.Error("intervalUnit took s (a Go duration's spelling)")
	}
}
