//go:build linux

package sandbox

import (
	"testing"
	"time"
)

// TestDiskWatchPace: the watch polls every DiskPollInterval far from the
// floors, closes in as a run nears one at the fastest rate the run has
// shown, does not slow down again when the run pauses, and never polls more
// often than diskPollMin.
func TestDiskWatchPace(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	const files = 100000 // an inode floor of 2000
	t0 := time.Unix(1000, 0)
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	for _, c := range []struct {
		name  string
		steps []struct {
			ms           int
			avail, ffree uint64
			want         time.Duration
		}
	}{
		{"space", []struct {
			ms           int
			avail, ffree uint64
			want         time.Duration
		}{
			{0, 1512 * mib, 90000, DiskPollInterval},   // the first look
			{50, 1512 * mib, 90000, DiskPollInterval},  // nothing used
			{100, 1412 * mib, 90000, DiskPollInterval}, // 2000 MiB/s, 900 MiB of room: far
			{150, 1262 * mib, 90000, DiskPollInterval}, // 3000 MiB/s, 750 MiB of room
			// 11000 MiB/s, 200 MiB of room: half of it in 9.09 ms.
			{200, 712 * mib, 90000, ms(100.0 / 11000 * 1000)},
			// A pause: the fastest rate still counts.
			{210, 712 * mib, 90000, ms(100.0 / 11000 * 1000)},
			// A slower interval (1000 MiB/s): still the fastest rate.
			{220, 702 * mib, 90000, ms(95.0 / 11000 * 1000)},
			// 1 MiB of room: never sooner than diskPollMin.
			{230, 513 * mib, 90000, diskPollMin},
		}},
		{"inodes", []struct {
			ms           int
			avail, ffree uint64
			want         time.Duration
		}{
			{0, 4096 * mib, 90000, DiskPollInterval},
			{50, 4096 * mib, 80000, DiskPollInterval}, // 200000/s, 78000 of room: far
			// 200000/s, 3000 of room above the floor of 2000: half in 7.5 ms.
			{425, 4096 * mib, 5000, ms(7.5)},
			{430, 4096 * mib, 2100, diskPollMin},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := diskWatch{f: &diskFloor{path: "/ws", bytes: 512 * mib}}
			for _, s := range c.steps {
				got := w.see(diskState{avail: s.avail, ffree: s.ffree, files: files}, t0.Add(time.Duration(s.ms)*time.Millisecond))
				if d := got - s.want; d < -time.Microsecond || d > time.Microsecond {
					t.Errorf("at %d ms, %d MiB and %d inodes free: wait %v, want %v", s.ms, s.avail/mib, s.ffree, got, s.want)
				}
			}
		})
	}
}

// TestDiskFloorBelow: the floors, and what each says when it is crossed.
func TestDiskFloorBelow(t *testing.T) {
	t.Parallel()
	f := &diskFloor{path: "/ws", bytes: 512 << 20}
	for _, c := range []struct {
		s    diskState
		want string
	}{
		{diskState{avail: 512 << 20, ffree: 2000, files: 100000}, ""},
		{diskState{avail: 511 << 20, ffree: 90000, files: 100000}, "free space on /ws is 511 MiB, below the minimum of 512 MiB (sandbox.min_free_disk)"},
		{diskState{avail: 1 << 30, ffree: 1999, files: 100000}, "free inodes on /ws are 1999 of 100000, below the minimum of 2000 (2% of them, kept with sandbox.min_free_disk)"},
		// btrfs and a tmpfs without nr_inodes count no inodes.
		{diskState{avail: 1 << 30, ffree: 0, files: 0}, ""},
	} {
		if got := f.below(c.s); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}
