package sandbox

import (
	"fmt"
	"strings"
)

// The layers of the sandbox, as Probe and `shelldon doctor` name them.
const (
	LayerUserNS   = "user-ns"
	LayerMountNS  = "mount-ns"
	LayerPIDNS    = "pid-ns"
	LayerNetNS    = "net-ns"
	LayerIPCNS    = "ipc-uts-ns"
	LayerRlimits  = "rlimits"
	LayerSeccomp  = "seccomp"
	LayerLandlock = "landlock"
	LayerCgroup   = "cgroup"
	// LayerMemCgroup: each sandbox is in a memory cgroup (v1) bounding
	// all its processes together, shared memory, memfd and tmpfs included,
	// which RLIMIT_DATA does not.
	LayerMemCgroup = "memory-cgroup"
	LayerNoCaps    = "no-capabilities"
	// LayerProcMasked: the sandbox's /proc has its host-wide parts
	// read-only (/proc/sys, sysrq-trigger, irq, bus, fs, asound), which the
	// kernel lets host root's uid write whatever its capabilities, and
	// kernel state masked (kcore, kpageflags, slabinfo, timer_list, ...).
	LayerProcMasked = "proc-masked"
	// LayerSockets: seccomp lets the target make AF_UNIX sockets only, and
	// AF_INET, AF_INET6 and NETLINK_ROUTE ones when the policy grants the
	// network or a loopback of its own (Policy.Loopback); any other family
	// fails with EAFNOSUPPORT.
	LayerSockets = "socket-families"
	// LayerFDsClosed: the target starts with descriptors 0, 1 and 2 only;
	// every other one of the helper's is close-on-exec (close_range, or
	// one by one from /proc/self/fd before Linux 5.11).
	LayerFDsClosed = "fds-closed"
	// LayerHelperHidden: the helper (PID 1) is not dumpable, so the target
	// can neither trace it nor open its /proc/1/mem, environ, maps, fd,
	// fdinfo, root or cwd; the sandbox's /proc (hidepid=2) does not even
	// list it.
	LayerHelperHidden = "helper-hidden"
	// LayerHelperSignals: the helper catches every signal the target can
	// send it (SIGKILL and SIGSTOP never reach a PID namespace's init from
	// inside) and seccomp refuses fault signals with a made-up siginfo, so
	// the target cannot end the helper or cut its report short.
	LayerHelperSignals = "helper-signals"
)

// required are the layers a stock Raspberry Pi OS kernel offers (Linux 5.x
// and later: close_range, 5.9, is not needed); without any of them the
// sandbox is degraded.
var required = []string{LayerUserNS, LayerMountNS, LayerPIDNS, LayerNetNS, LayerIPCNS, LayerProcMasked, LayerRlimits,
	LayerSeccomp, LayerSockets, LayerFDsClosed, LayerHelperHidden, LayerHelperSignals}

// Layer is one containment layer and whether this kernel has it.
type Layer struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
	OK       bool   `json:"ok"`
	Detail   string `json:"detail,omitempty"`
}

// Tier is what Probe found: every layer, required or added.
type Tier struct {
	Layers []Layer `json:"layers"`
}

// Full reports whether every required layer is in place.
func (t Tier) Full() bool { return t.Missing() == "" }

// Missing names the required layers that are not in place, or "".
func (t Tier) Missing() string {
	var out []string
	for _, l := range t.Layers {
		if l.Required && !l.OK {
			out = append(out, l.Name)
		}
	}
	if len(t.Layers) == 0 {
		return "the sandbox was not probed"
	}
	if len(out) == 0 {
		return ""
	}
	return "missing " + strings.Join(out, ", ")
}

func (t Tier) has(name string) bool {
	for _, l := range t.Layers {
		if l.Name == name {
			return l.OK
		}
	}
	return false
}

// String is a one-line summary for logs: "full (user-ns, ..., landlock v7)".
func (t Tier) String() string {
	var on []string
	for _, l := range t.Layers {
		if l.OK {
			name := l.Name
			if l.Detail != "" && l.Name == LayerLandlock {
				name += " " + l.Detail
			}
			on = append(on, name)
		}
	}
	state := "full"
	if !t.Full() {
		state = "DEGRADED, " + t.Missing()
	}
	return fmt.Sprintf("%s (%s)", state, strings.Join(on, ", "))
}

// InPlace names the layers of t that are in place.
func (t Tier) InPlace() []string {
	var out []string
	for _, l := range t.Layers {
		if l.OK {
			out = append(out, l.Name)
		}
	}
	return out
}

// TierOf rebuilds a Tier from the names of the layers in place (InPlace),
// as a worker gets them from the daemon.
func TierOf(inPlace []string) Tier {
	on := map[string]bool{}
	for _, n := range inPlace {
		on[n] = true
	}
	var t Tier
	for _, name := range required {
		t.Layers = append(t.Layers, Layer{Name: name, Required: true, OK: on[name]})
	}
	t.Layers = append(t.Layers, Layer{Name: LayerLandlock, OK: on[LayerLandlock]}, Layer{Name: LayerCgroup, OK: on[LayerCgroup]},
		Layer{Name: LayerMemCgroup, OK: on[LayerMemCgroup]})
	return t
}
