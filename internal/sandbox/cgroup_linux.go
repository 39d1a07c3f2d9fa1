//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"
)

// pidsRoot is the cgroup v1 pids hierarchy. RLIMIT_NPROC does not bind
// processes of the host's root user (the kernel exempts it), so when the
// daemon runs as root a fork bomb in a sandbox would only stop at the
// host's pid limit; a pids cgroup bounds every sandbox whatever the user.
// (cgroup v2 needs a delegated subtree, which shelldon does not set up.)
const pidsRoot = "/sys/fs/cgroup/pids"

var cgroupSeq atomic.Int64

// pidsCgroup is one sandbox's pids cgroup.
type pidsCgroup struct{ dir string }

// pidsAvailable reports whether this process can create pids cgroups.
func pidsAvailable() error {
	base := filepath.Join(pidsRoot, "shelldon")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return fmt.Errorf("no writable cgroup v1 pids hierarchy: %w", err)
	}
	// Remove what processes that are gone left behind (a crash); another
	// shelldon's cgroups stay. rmdir fails anyway on one with processes.
	old, _ := filepath.Glob(filepath.Join(base, "sb-*"))
	for _, d := range old {
		var owner, n int
		if _, err := fmt.Sscanf(filepath.Base(d), "sb-%d-%d", &owner, &n); err != nil {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", owner)); errors.Is(err, os.ErrNotExist) {
			os.Remove(d)
		}
	}
	probe, err := os.MkdirTemp(base, "probe-")
	if err != nil {
		return fmt.Errorf("cannot create a pids cgroup: %w", err)
	}
	defer os.Remove(probe)
	if _, err := os.Stat(filepath.Join(probe, "pids.max")); err != nil {
		return errors.New("the pids controller is not available")
	}
	return nil
}

// newPidsCgroup puts pid (the helper, before it starts anything) in a new
// pids cgroup limited to max tasks; its descendants inherit it.
func newPidsCgroup(pid, max int) (*pidsCgroup, error) {
	dir := filepath.Join(pidsRoot, "shelldon", fmt.Sprintf("sb-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cg := &pidsCgroup{dir: dir}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
		cg.remove()
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		cg.remove()
		return nil, err
	}
	return cg, nil
}

// remove deletes the cgroup once its processes are gone; the last ones
// may still be exiting, so it retries briefly.
func (cg *pidsCgroup) remove() {
	if cg == nil {
		return
	}
	for range 50 {
		if err := os.Remove(cg.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
