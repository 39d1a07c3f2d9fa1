//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// pidsRoot is the cgroup v1 pids hierarchy. RLIMIT_NPROC does not bind
// processes of the host's root user (the kernel exempts it), so when the
// daemon runs as root a fork bomb in a sandbox would only stop at the
// host's pid limit; a pids cgroup bounds every sandbox whatever the user.
// (cgroup v2 needs a delegated subtree, which shelldon does not set up.)
const pidsRoot = "/sys/fs/cgroup/pids"

// memSlack is what a sandbox's memory cgroup allows beyond its data limit
// and its two tmpfs (which are memory, charged to it): stacks, page
// tables, the text of the programs it runs, a working set of page cache.
const memSlack = 32 << 20

// memCgroupPrefix names a sandbox's memory cgroup, in the daemon's own.
const memCgroupPrefix = "shelldon-sb-"

var cgroupSeq atomic.Int64

// sandboxCgroups are one sandbox's cgroups, removed when it ends.
type sandboxCgroups struct{ dirs []string }

// pidsAvailable reports whether this process can create pids cgroups.
func pidsAvailable() error {
	base := filepath.Join(pidsRoot, "shelldon")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return fmt.Errorf("no writable cgroup v1 pids hierarchy: %w", err)
	}
	removeStale(filepath.Join(base, "sb-*"), "sb-")
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

// removeStale removes the cgroups matching glob (named prefix<pid>-<n>)
// that processes now gone left behind (a crash); another shelldon's stay.
// rmdir fails anyway on a cgroup with processes.
func removeStale(glob, prefix string) {
	old, _ := filepath.Glob(glob)
	for _, d := range old {
		var owner, n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(filepath.Base(d), prefix), "%d-%d", &owner, &n); err != nil {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", owner)); errors.Is(err, os.ErrNotExist) {
			os.Remove(d)
		}
	}
}

// memoryAvailable returns this process's own cgroup directory in the
// cgroup v1 memory hierarchy, where it can create memory cgroups for its
// sandboxes. They are made inside the daemon's own, so a limit the
// daemon is under (a systemd MemoryLimit) still holds for them.
//
// cgroup v2 is not used: the daemon would have to move itself into a leaf
// of a delegated subtree before it could enable the memory controller for
// its children.
func memoryAvailable() (string, error) {
	own, err := ownMemoryCgroup()
	if err != nil {
		return "", err
	}
	removeStale(filepath.Join(own, memCgroupPrefix+"*"), memCgroupPrefix)
	probe := filepath.Join(own, fmt.Sprintf("shelldon-probe-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return "", fmt.Errorf("cannot create a memory cgroup in %s: %w", own, err)
	}
	defer os.Remove(probe)
	if err := os.WriteFile(filepath.Join(probe, "memory.limit_in_bytes"), []byte(strconv.Itoa(64<<20)), 0); err != nil {
		return "", fmt.Errorf("cannot limit a memory cgroup: %w", err)
	}
	return own, nil
}

// ownMemoryCgroup finds the directory of this process's cgroup in the v1
// memory hierarchy, from /proc/self/mountinfo and /proc/self/cgroup.
func ownMemoryCgroup() (string, error) {
	mount, root, err := memoryMount()
	if err != nil {
		return "", err
	}
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 || !hasWord(parts[1], "memory") {
			continue
		}
		rel := parts[2]
		if root != "/" {
			if rel != root && !strings.HasPrefix(rel, root+"/") {
				return "", fmt.Errorf("this process's memory cgroup %s is outside the mounted hierarchy (%s)", parts[2], root)
			}
			rel = strings.TrimPrefix(rel, root)
		}
		return filepath.Join(mount, rel), nil
	}
	return "", errors.New("this process is in no cgroup v1 memory hierarchy")
}

// memoryMount finds where the cgroup v1 memory hierarchy is mounted, and
// which of its cgroups is the mount's root.
func memoryMount() (mount, root string, _ error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	unescape := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	v2 := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source super-options
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || len(fields) < sep+4 {
			continue
		}
		switch fields[sep+1] {
		case "cgroup2":
			v2 = true
		case "cgroup":
			if hasWord(fields[sep+3], "memory") {
				return unescape.Replace(fields[4]), unescape.Replace(fields[3]), nil
			}
		}
	}
	if v2 {
		return "", "", errors.New("no cgroup v1 memory hierarchy (cgroup v2 only, which needs a delegated subtree)")
	}
	return "", "", errors.New("no memory cgroup hierarchy is mounted (a kernel booted without the memory controller, as Raspberry Pi OS's is unless cgroup_enable=memory)")
}

// hasWord reports whether the comma-separated list has w.
func hasWord(list, w string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == w {
			return true
		}
	}
	return false
}

// memoryLimit is the memory cgroup limit of a sandbox: its data limit,
// its /tmp and /dev/shm, and memSlack.
func memoryLimit(sp spec) uint64 {
	const most = 1 << 62
	limit := min(sp.Limits.DataBytes, most)
	for _, n := range []int64{sp.TmpSize, min(sp.TmpSize, shmSize), memSlack} {
		limit = min(limit+uint64(max(n, 0)), most)
	}
	return limit
}

// joinCgroups puts pid (the helper, before it starts anything) in the
// cgroups of its own that this Runner makes: a pids cgroup limited to the
// policy's processes (and threads: hence the margin), a memory cgroup
// limited to memoryLimit, with no swap. Its descendants inherit them. It
// returns nil when the Runner makes none.
func (r *Runner) joinCgroups(pid int, sp spec) (*sandboxCgroups, error) {
	if !r.cgroups && r.memcg == "" {
		return nil, nil
	}
	cg := &sandboxCgroups{}
	name := fmt.Sprintf("%d-%d", os.Getpid(), cgroupSeq.Add(1))
	if r.cgroups {
		dir := filepath.Join(pidsRoot, "shelldon", "sb-"+name)
		if err := cg.join(dir, pid, [][2]string{{"pids.max", strconv.FormatUint(sp.Limits.Processes+16, 10)}}, nil); err != nil {
			cg.remove()
			return nil, fmt.Errorf("pids cgroup: %w", err)
		}
	}
	if r.memcg != "" {
		limit := strconv.FormatUint(memoryLimit(sp), 10)
		dir := filepath.Join(r.memcg, memCgroupPrefix+name)
		// memsw (memory and swap) exists where swap is accounted; without
		// it, swappiness 0 keeps the cgroup's memory out of swap.
		if err := cg.join(dir, pid, [][2]string{{"memory.limit_in_bytes", limit}},
			[][2]string{{"memory.memsw.limit_in_bytes", limit}, {"memory.swappiness", "0"}}); err != nil {
			cg.remove()
			return nil, fmt.Errorf("memory cgroup: %w", err)
		}
	}
	return cg, nil
}

// join creates the cgroup dir, writes its limits (each must hold) and its
// extra settings (where the kernel has them), then moves pid into it.
func (cg *sandboxCgroups) join(dir string, pid int, limits, extra [][2]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cg.dirs = append(cg.dirs, dir)
	for _, kv := range limits {
		if err := os.WriteFile(filepath.Join(dir, kv[0]), []byte(kv[1]), 0); err != nil {
			return err
		}
	}
	for _, kv := range extra {
		os.WriteFile(filepath.Join(dir, kv[0]), []byte(kv[1]), 0)
	}
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// remove deletes the cgroups once their processes are gone; the last ones
// may still be exiting, so it retries briefly.
func (cg *sandboxCgroups) remove() {
	if cg == nil {
		return
	}
	for _, dir := range cg.dirs {
		for range 50 {
			if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
