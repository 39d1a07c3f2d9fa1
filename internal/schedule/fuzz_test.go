package schedule

import (
	"testing"
	"time"
)

// FuzzParse: whatever the model writes, Parse neither panics nor accepts
// what runs too often; what it accepts reads the same again and runs
// forward in time.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"30 8 * * 1-5", "every 30m", "every day at 08:00", "*/5 * * * *", "0 0 29 feb *",
		"every weekday at 7:30", "1-59/7 */3 1,15 jan-dec mon-fri", "every 1h30m", "every 300s", "0,3 * * * *"} {
		f.Add(s)
	}
	from := time.Date(2025, 3, 29, 22, 0, 0, 0, time.UTC)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		berlin = time.UTC
	}
	f.Fuzz(func(t *testing.T, when string) {
		s, err := Parse(when)
		if err != nil {
			return
		}
		again, err := Parse(s.String())
		if err != nil || again.String() != s.String() {
			t.Fatalf("Parse(%q) = %q, which reads back as %q, %v", when, s.String(), again.String(), err)
		}
		if iv := s.Interval(); iv != 0 && iv < MinInterval {
			t.Fatalf("Parse(%q) accepted every %s", when, iv)
		}
		prev := from
		for _, r := range s.Runs(s.First(from, berlin), from, berlin, 4) {
			if !r.After(prev) && !(r.Equal(from) && s.Interval() > 0) {
				t.Fatalf("%q: run %s does not follow %s", when, r, prev)
			}
			prev = r
		}
	})
}
