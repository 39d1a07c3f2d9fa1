//go:build linux

package sandbox

import "time"

// SetDiskPoll sets the disk watch's longest interval until the returned
// function restores it. Only a test that does not run in parallel may call
// it: every run polls with it.
func SetDiskPoll(d time.Duration) (restore func()) {
	old := diskPollNs.Swap(int64(d))
	return func() { diskPollNs.Store(old) }
}

// InodeFloor is inodeFloor, for tests.
func InodeFloor(files uint64) uint64 { return inodeFloor(files) }
