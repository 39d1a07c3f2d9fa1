package store

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestModelUsageDailySums: ModelUsage, which reads whole UTC days from
// the daily sums and the rest from the ledger's rows, equals a plain sum
// of the rows in [from, to) for ranges that start and end anywhere
// (whole days, zones 5:45 off UTC, inside one day, empty, inverted), and
// stays equal after a row is changed or deleted (the triggers).
func TestModelUsageDailySums(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t)
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 5, 28, 0, 0, 0, 0, time.UTC)
	span := 10 * 24 * time.Hour
	type call struct {
		at     int64
		model  string
		in, ou int64
	}
	var calls []call
	models := []string{"a", "b", "c"}
	for i := range 150 {
		c := call{at: nanos(start.Add(time.Duration(r.Int64N(int64(span))))), model: models[r.IntN(len(models))], in: r.Int64N(1000), ou: r.Int64N(100)}
		switch i {
		case 0:
			c.at = nanos(start.Add(48 * time.Hour)) // on a day's first nanosecond
		case 2:
			c.at = nanos(start.Add(24*time.Hour - 1)) // on a day's last
		}
		if err := s.RecordUsage(ctx, UsageEntry{At: time.Unix(0, c.at), Chat: "c", Model: c.model, Input: c.in, Output: c.ou}); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	naive := func(from, to int64) []UsageRow {
		by := map[string]*UsageRow{}
		for _, c := range calls {
			if c.at < from || c.at >= to {
				continue
			}
			if by[c.model] == nil {
				by[c.model] = &UsageRow{Model: c.model}
			}
			by[c.model].Calls++
			by[c.model].Input += c.in
			by[c.model].Output += c.ou
		}
		var out []UsageRow
		for _, u := range by {
			out = append(out, *u)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Model < out[j].Model })
		return out
	}
	check := func(what string) {
		t.Helper()
		kathmandu := time.FixedZone("+0545", 5*3600+45*60)
		ranges := [][2]time.Time{
			{start, start.Add(span)},                               // whole days only
			{start.Add(48 * time.Hour), start.Add(72 * time.Hour)}, // one whole day
			{time.Date(2026, 6, 1, 0, 0, 0, 0, kathmandu), time.Date(2026, 7, 1, 0, 0, 0, 0, kathmandu)},
			{time.Date(2026, 6, 3, 0, 0, 0, 0, kathmandu), time.Date(2026, 6, 4, 0, 0, 0, 0, kathmandu)},
			{start.Add(5 * time.Hour), start.Add(9 * time.Hour)}, // inside a day
			{start.Add(48*time.Hour - 1), start.Add(48*time.Hour + 1)},
			{start.Add(time.Hour), start.Add(73 * time.Hour)},  // a head, two whole days, a tail
			{start.Add(time.Hour), start.Add(time.Hour)},       // empty
			{start.Add(5 * 24 * time.Hour), start},             // inverted
			{time.Unix(0, 0), start.Add(100 * 24 * time.Hour)}, // from 1970
		}
		for range 40 {
			a := start.Add(time.Duration(r.Int64N(int64(span))))
			ranges = append(ranges, [2]time.Time{a, a.Add(time.Duration(r.Int64N(int64(4 * 24 * time.Hour))))})
		}
		for _, rg := range ranges {
			got, err := s.Ledger().ModelUsage(ctx, rg[0], rg[1])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(naive(nanos(rg[0]), nanos(rg[1])), got); diff != "" {
				t.Errorf("%s: ModelUsage(%s, %s) (-plain sum +got):\n%s", what, rg[0], rg[1], diff)
			}
		}
	}
	check("as recorded")

	// By hand: a call moved to another day and model, one deleted.
	moved := calls[0]
	if _, err := s.db.ExecContext(ctx, `UPDATE usage SET at = ?, model = ?, input_tokens = 7 WHERE at = ? AND model = ?`,
		moved.at+int64(3*24*time.Hour), "d", moved.at, moved.model); err != nil {
		t.Fatal(err)
	}
	calls[0] = call{at: moved.at + int64(3*24*time.Hour), model: "d", in: 7, ou: moved.ou}
	gone := calls[1]
	if _, err := s.db.ExecContext(ctx, `DELETE FROM usage WHERE at = ? AND model = ?`, gone.at, gone.model); err != nil {
		t.Fatal(err)
	}
	calls = calls[:1+copy(calls[1:], calls[2:])]
	check("after an update and a delete")
}

// TestWholeDays: the whole UTC days of a range of unix nanoseconds, never
// day 0.
func TestWholeDays(t *testing.T) {
	t.Parallel()
	d := nanosPerDay
	for _, tt := range []struct{ lo, hi, d0, d1 int64 }{
		{3 * d, 5 * d, 3, 5},
		{3*d + 1, 5 * d, 4, 5},
		{3*d - 1, 5*d + 1, 3, 5},
		{3*d + 1, 4*d + 1, 0, 0},
		{0, 3 * d, 1, 3},
		{-5 * d, 3 * d, 1, 3},
		{-5 * d, -d, 0, 0},
		{5 * d, 3 * d, 0, 0},
		{1, d, 0, 0},
	} {
		if d0, d1 := wholeDays(tt.lo, tt.hi); d0 != tt.d0 || d1 != tt.d1 {
			t.Errorf("wholeDays(%d, %d) = %d, %d; want %d, %d", tt.lo, tt.hi, d0, d1, tt.d0, tt.d1)
		}
	}
}
