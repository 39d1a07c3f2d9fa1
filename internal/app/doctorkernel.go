package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/shelldon/shelldon/internal/sandbox"
)

// layerLoss is what a command run in the sandbox may do, or what goes
// unbounded, when a layer is missing.
var layerLoss = map[string]string{
	sandbox.LayerUserNS:        "commands run with the daemon's own identity, not an unprivileged one of their own",
	sandbox.LayerMountNS:       "commands see the host's whole file system, the owner's files and shelldon's home included",
	sandbox.LayerPIDNS:         "commands see the host's processes and may signal the daemon's",
	sandbox.LayerNetNS:         "commands reach the network without being granted it",
	sandbox.LayerIPCNS:         "commands share the host's IPC objects and hostname",
	sandbox.LayerProcMasked:    "commands read kernel state in /proc and may write its host-wide parts",
	sandbox.LayerRlimits:       "no bound on a command's memory, files or processes",
	sandbox.LayerSeccomp:       "no system call filter: the whole kernel interface is open to commands",
	sandbox.LayerSockets:       "commands may open any kind of socket",
	sandbox.LayerFDsClosed:     "commands may inherit the daemon's open files",
	sandbox.LayerHelperHidden:  "commands may trace the sandbox's helper or read its memory",
	sandbox.LayerHelperSignals: "commands may kill the sandbox's helper and cut its report short",
	sandbox.LayerLandlock:      "no Landlock: the mount namespace alone decides what files a command reaches",
	sandbox.LayerCgroup:        "no pids cgroup per call: rlimits bound the processes of each user, not of each call",
	sandbox.LayerMemCgroup:     "no memory cgroup per call: RLIMIT_DATA bounds each process, not a call's processes together, nor its tmpfs",
}

// checkMemoryController says whether the kernel's memory controller is on:
// without it, a service's MemoryMax (and any memory cgroup) does nothing.
// Stock Raspberry Pi OS kernels boot with cgroup_disable=memory. root is
// where /sys, /proc and /boot are: "/" but in tests.
func (d *doctor) checkMemoryController(root string) {
	var on bool
	how := ""
	if data, err := os.ReadFile(filepath.Join(root, "sys/fs/cgroup/cgroup.controllers")); err == nil {
		on, how = hasField(string(data), "memory"), "cgroup v2"
	} else if data, err := os.ReadFile(filepath.Join(root, "proc/cgroups")); err == nil {
		// subsys_name hierarchy num_cgroups enabled
		for _, l := range strings.Split(string(data), "\n") {
			if f := strings.Fields(l); len(f) == 4 && f[0] == "memory" {
				on = f[3] == "1"
			}
		}
		how = "cgroup v1"
	} else {
		fmt.Fprintf(d.w, "- %-10s no cgroup file system found: whether the kernel enforces a memory cap is unknown\n", "memory")
		return
	}
	if on {
		d.ok("memory", "the kernel's memory controller is on ("+how+"): a service's MemoryMax holds")
		return
	}
	cmdline, _ := os.ReadFile(filepath.Join(root, "proc/cmdline"))
	why := ""
	if hasField(string(cmdline), "cgroup_disable=memory") {
		why = " (the kernel command line has cgroup_disable=memory)"
	}
	fix := "add cgroup_enable=memory to the kernel command line and reboot"
	for _, f := range []string{"boot/firmware/cmdline.txt", "boot/cmdline.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			fix = "add cgroup_enable=memory cgroup_memory=1 to the end of the one line of /" + f + " and reboot"
			break
		}
	}
	d.warn("memory", "the kernel's memory controller is off"+why+": a service's MemoryMax does nothing, and the "+
		"sandbox makes no memory cgroup per call; "+fix)
}

// hasField reports whether the whitespace-separated s has f.
func hasField(s, f string) bool {
	for _, x := range strings.Fields(s) {
		if x == f {
			return true
		}
	}
	return false
}
