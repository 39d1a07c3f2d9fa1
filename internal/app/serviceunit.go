package app

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/config"
)

// unitName is the systemd unit `shelldon service` writes.
const unitName = "shelldon.service"

// unitMarker is the first line of a unit shelldon wrote: uninstall removes
// only a unit that has it (or with --force).
const unitMarker = "# Written by `shelldon service install`."

// defaultMemoryMax is the service's MemoryMax: the daemon stays under about
// 100 MiB whatever it is sent, and each sandboxed command runs in its
// cgroup (the unit's), so the cap bounds them together.
const defaultMemoryMax = 256 << 20

// unitSpec is what a unit is made from.
type unitSpec struct {
	User      bool            // a systemd user service (the owner is not root)
	RunAs     string          // system unit: User=
	Group     string          // system unit: Group=
	Exe       string          // the absolute path of the shelldon binary
	Home      string          // shelldon's home, absolute
	Workspace string          // the workspace when outside the home, else ""
	MemoryMax config.ByteSize // MemoryMax=
}

// renderUnit writes the unit for s. A path systemd cannot carry (a quote,
// a backslash, a control character, invalid UTF-8) is refused.
func renderUnit(s unitSpec) (string, error) {
	exe, err := unitPath("the shelldon binary", s.Exe)
	if err != nil {
		return "", err
	}
	home, err := unitPath("the home", s.Home)
	if err != nil {
		return "", err
	}
	rw := []string{home}
	if s.Workspace != "" {
		ws, err := unitPath("the workspace", s.Workspace)
		if err != nil {
			return "", err
		}
		rw = append(rw, ws)
	}
	if s.MemoryMax < 16<<20 {
		return "", fmt.Errorf("memory max %s is below 16MiB: the daemon alone needs more", s.MemoryMax)
	}
	envHome, err := unitPath("the home", config.EnvHome+"="+s.Home)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line(unitMarker)
	if s.User {
		line("# A systemd user service: it runs as you, with your home for shelldon,")
		line("# so your own `shelldon` commands share it. It starts when you log in;")
		line("# `loginctl enable-linger` starts it at boot and keeps it after you log out.")
	} else {
		line("# A system service that runs as %s, with the home SHELLDON_HOME names", s.RunAs)
		line("# below, so that %s's own `shelldon` commands share it.", s.RunAs)
	}
	line("# Rewrite it with `shelldon service install --force`; local changes belong")
	line("# in a drop-in (systemctl%s edit shelldon), which survives that.", userFlag(s.User))
	line("")
	line("[Unit]")
	line("Description=shelldon, a personal AI agent")
	if !s.User {
		// A user manager has no network-online.target of its own.
		line("Wants=network-online.target")
		line("After=network-online.target")
	}
	line("")
	line("[Service]")
	line("Type=exec")
	if !s.User {
		line("User=%s", s.RunAs)
		line("Group=%s", s.Group)
	}
	line("Environment=%s", envHome)
	line("ExecStart=%s serve", exe)
	line("Restart=on-failure")
	line("RestartSec=5s")
	line("UMask=0077")
	line("")
	line("# Memory. MemoryMax caps the daemon and every command its sandbox runs")
	line("# together (they are in this unit's cgroup); it needs the kernel's memory")
	line("# controller, which `shelldon doctor` checks (stock Raspberry Pi OS boots")
	line("# without it). No GOMEMLIMIT: the daemon sets its own Go memory limit.")
	line("MemoryMax=%d", uint64(s.MemoryMax))
	line("# Delegate: the unit's cgroup subtree is the daemon's, so it can put each")
	line("# sandboxed call in a memory cgroup of its own inside it.")
	line("Delegate=yes")
	line("")
	line("# Hardening. The sandbox builds user, mount, PID, network, IPC and UTS")
	line("# namespaces, mounts a fresh /proc, sets a hostname and installs its own")
	line("# seccomp filter and Landlock rules for each command; what follows keeps")
	line("# all of that possible.")
	line("NoNewPrivileges=yes")
	line("# The system read-only, /home, /root and /run/user read-only, but for the")
	line("# shelldon home (the database, the tools) and the workspace.")
	line("ProtectSystem=strict")
	line("ProtectHome=read-only")
	line("ReadWritePaths=%s", strings.Join(rw, " "))
	line("PrivateTmp=yes")
	line("PrivateDevices=yes")
	line("ProtectKernelModules=yes")
	if !s.User {
		// A user's processes cannot set the clock anyway, and a user
		// manager cannot install the device policy this implies.
		line("ProtectClock=yes")
	}
	line("RestrictRealtime=yes")
	line("RestrictSUIDSGID=yes")
	line("LockPersonality=yes")
	line("# The sandbox's own filter allows these families only, and refuses others.")
	line("RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK")
	line("#")
	line("# Left out on purpose, each because it would break the sandbox:")
	line("# RestrictNamespaces, PrivateUsers: the sandbox needs its namespaces (a user")
	line("#   manager implies PrivateUsers for the settings above; the sandbox's own")
	line("#   namespaces nest inside it).")
	line("# ProtectKernelTunables, ProtectKernelLogs, ProtectProc, ProcSubset: they")
	line("#   mount over parts of /proc, and the kernel then refuses the fresh /proc")
	line("#   each sandbox mounts (\"mount too revealing\").")
	line("# ProtectHostname: forbids sethostname, which names the sandbox's own UTS")
	line("#   namespace.")
	line("# ProtectControlGroups: makes /sys/fs/cgroup read-only, where the per-call")
	line("#   cgroups are made.")
	line("# CapabilityBoundingSet, AmbientCapabilities: the sandbox's helper needs")
	line("#   its capabilities inside its own user namespace (to mount, pivot_root),")
	line("#   and the bounding set would cap those too.")
	line("# SystemCallFilter, MemoryDenyWriteExecute, SystemCallArchitectures: a")
	line("#   filter holds for every command the sandbox runs: @system-service lacks")
	line("#   mount, unshare and pivot_root, W^X breaks JITs (node, Java), and \"native\"")
	line("#   is systemd's architecture, which kills a 32-bit shelldon on a 64-bit")
	line("#   Raspberry Pi OS. The sandbox installs its own filter per command.")
	line("")
	line("[Install]")
	if s.User {
		line("WantedBy=default.target")
	} else {
		line("WantedBy=multi-user.target")
	}
	return b.String(), nil
}

// userFlag is " --user" for a user service's systemctl, else "".
func userFlag(user bool) string {
	if user {
		return " --user"
	}
	return ""
}

// errUnitPath says a path cannot go into a unit file.
var errUnitPath = errors.New("systemd cannot carry it in a unit file")

// unitPath quotes s for a unit file: in double quotes (spaces stay in one
// word), % doubled (systemd's specifiers). systemd refuses quotes and
// backslashes in an executable's name, and a control character or invalid
// UTF-8 would break or hide a line, so those are refused everywhere. $ needs
// nothing: neither the executable's name, nor Environment= nor
// ReadWritePaths= expands variables.
func unitPath(what, s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%s %q is not valid UTF-8: %w", what, s, errUnitPath)
	}
	for _, r := range s {
		if r == '"' || r == '\'' || r == '\\' || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return "", fmt.Errorf("%s %q holds %q: %w; move it to a path without quotes, backslashes or control characters", what, s, r, errUnitPath)
		}
	}
	return `"` + strings.ReplaceAll(s, "%", "%%") + `"`, nil
}
