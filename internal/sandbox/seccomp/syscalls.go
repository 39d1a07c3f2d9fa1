package seccomp

import "runtime"

// action is what the filter does with one syscall.
type action int

const (
	// denyAlways fails the call with EPERM.
	denyAlways action = iota
	// denyNamespace fails the call with EPERM unless AllowNamespaces: the
	// namespace calls, and the mount family a nested sandbox needs to build
	// its own view.
	denyNamespace
	// denyCloneNamespace fails clone with EPERM when its flags (arg0 on every
	// supported arch) hold a CLONE_NEW* bit, unless AllowNamespaces.
	denyCloneNamespace
	// denyClone3 fails clone3 with ENOSYS unless AllowNamespaces.
	denyClone3
	// denyIoctl fails ioctl with EPERM for TIOCSTI and TIOCLINUX, and with
	// EOPNOTSUPP for the preallocation ioctls (preallocIoctls), which are
	// fallocate by another name.
	denyIoctl
	// denyPersonality fails personality with EPERM except for the personas
	// in safePersonas.
	denyPersonality
	// denySocketFamily fails socket and socketpair with EAFNOSUPPORT unless
	// the family (arg0) is AF_UNIX, or, with AllowInet, AF_INET, AF_INET6
	// or AF_NETLINK with protocol (arg2) NETLINK_ROUTE.
	denySocketFamily
	// denyFaultSignal1 and denyFaultSignal2 fail the call with EPERM when
	// the signal it sends (arg1, arg2) is one of faultSignals.
	denyFaultSignal1
	denyFaultSignal2
	// denySetsigFault fails fcntl F_SETSIG with EPERM when the signal (arg2)
	// is one of faultSignals.
	denySetsigFault
	// denySharedAnon fails mmap (mmap2 on arm) with EPERM when its flags
	// (arg3) ask for memory that is both shared (MAP_SHARED or
	// MAP_SHARED_VALIDATE) and anonymous (MAP_ANONYMOUS).
	denySharedAnon
	// denyNoSys fails the call with ENOSYS, the answer of a kernel built
	// without it, which programs with a fallback check for.
	denyNoSys
	// denyNoSupport fails the call with EOPNOTSUPP, the answer of a file
	// system that does not implement it.
	denyNoSupport
)

// absent marks a syscall that an arch does not have.
const absent = -1

// numbers are one syscall's numbers on each supported arch, from the kernel's
// tables: arch/x86/entry/syscalls/syscall_64.tbl (amd64),
// include/uapi/asm-generic/unistd.h (arm64) and arch/arm/tools/syscall.tbl
// (arm, EABI). sysnum_*_test.go checks them against golang.org/x/sys/unix on
// the arch the tests run on.
type numbers struct{ amd64, arm64, arm int }

// on returns the syscall's number on arch, and false when arch does not have
// it or is not supported.
func (n numbers) on(arch string) (uint32, bool) {
	nr := absent
	switch arch {
	case "amd64":
		nr = n.amd64
	case "arm64":
		nr = n.arm64
	case "arm":
		nr = n.arm
	}
	if nr == absent {
		return 0, false
	}
	return uint32(nr), true
}

// same is a syscall with one number on every arch, as the ones added since
// Linux 5.1 have.
func same(nr int) numbers { return numbers{nr, nr, nr} }

// rule is one syscall the filter acts on.
type rule struct {
	name   string
	action action
	nr     numbers
}

// rules are the filter's syscalls in program order. Since Linux 5.11 the
// kernel caches the verdict of every syscall whose verdict does not depend on
// its arguments, so only the calls with an argument check (mmap, ioctl,
// clone, personality, socket, socketpair, the signal queueing calls and
// fcntl) run the program at all on an allowed call, and the most frequent of
// them come first: mmap (every allocation of a libc or a runtime, every
// library ld.so maps), then ioctl.
func rules() []rule {
	return []rule{
		// Shared anonymous memory: RLIMIT_DATA counts private writable
		// mappings only, so MAP_SHARED|MAP_ANONYMOUS would be memory beyond
		// every limit a sandbox has without a memory cgroup. File-backed
		// shared mappings stay allowed: their files live in the size-bounded
		// tmpfs /tmp and /dev/shm or in the workspace, under the disk floor.
		// arm's old mmap (90) takes its arguments in memory but is in the
		// OABI table only, which a kernel with a seccomp filter does not offer.
		{"mmap", denySharedAnon, numbers{9, 222, absent}},
		{"mmap2", denySharedAnon, numbers{absent, absent, 192}},
		{"ioctl", denyIoctl, numbers{16, 29, 54}},
		{"clone", denyCloneNamespace, numbers{56, 220, 120}},
		{"personality", denyPersonality, numbers{135, 92, 136}},
		{"clone3", denyClone3, same(435)},
		{"unshare", denyNamespace, numbers{272, 97, 337}},
		{"setns", denyNamespace, numbers{308, 268, 375}},

		// Sockets: the families a sandbox needs, by its policy. No socketcall
		// multiplexer exists on these arches: amd64 and arm64 never had one,
		// and arm's (102) is in the OABI table only, which a kernel with a
		// seccomp filter does not offer (OABI_COMPAT excludes it). Denied on
		// arm for completeness, as umount is.
		{"socket", denySocketFamily, numbers{41, 198, 281}},
		{"socketpair", denySocketFamily, numbers{53, 199, 288}},
		{"socketcall", denyAlways, numbers{absent, absent, 102}},

		// Signals with a siginfo the sender makes up. The sandbox helper, PID
		// 1 of the sandbox, is a Go program: it takes a fault signal (SIGSEGV,
		// ...) that kill or tgkill did not send for a real fault of its own
		// and dies of it, leaving no report. kill(2) and tgkill(2) stay
		// allowed: their siginfo says who sent it.
		{"rt_sigqueueinfo", denyFaultSignal1, numbers{129, 138, 178}},
		{"rt_tgsigqueueinfo", denyFaultSignal2, numbers{297, 240, 363}},
		{"pidfd_send_signal", denyFaultSignal1, same(424)},
		{"fcntl", denySetsigFault, numbers{72, 25, 55}},
		{"fcntl64", denySetsigFault, numbers{absent, absent, 221}},

		// Other processes' memory and files.
		{"ptrace", denyAlways, numbers{101, 117, 26}},
		{"process_vm_readv", denyAlways, numbers{310, 270, 376}},
		{"process_vm_writev", denyAlways, numbers{311, 271, 377}},
		{"pidfd_getfd", denyAlways, same(438)},

		// Kernel interfaces with a long record of exploits.
		{"bpf", denyAlways, numbers{321, 280, 386}},
		{"perf_event_open", denyAlways, numbers{298, 241, 364}},
		{"userfaultfd", denyAlways, numbers{323, 282, 388}},
		{"io_uring_setup", denyAlways, same(425)},
		{"io_uring_enter", denyAlways, same(426)},
		{"io_uring_register", denyAlways, same(427)},
		{"keyctl", denyAlways, numbers{250, 219, 311}},
		{"add_key", denyAlways, numbers{248, 217, 309}},
		{"request_key", denyAlways, numbers{249, 218, 310}},
		{"fanotify_init", denyAlways, numbers{300, 262, 367}},

		// The filesystem view.
		{"mount", denyNamespace, numbers{165, 40, 21}},
		{"umount2", denyNamespace, numbers{166, 39, 52}},
		// umount is 22 in arm's OABI table only; EABI has no such call, and
		// a kernel with OABI_COMPAT offers no seccomp filter. Denied for
		// completeness.
		{"umount", denyNamespace, numbers{absent, absent, 22}},
		{"pivot_root", denyNamespace, numbers{155, 41, 218}},
		{"chroot", denyAlways, numbers{161, 51, 61}},
		{"open_tree", denyNamespace, same(428)},
		{"move_mount", denyNamespace, same(429)},
		{"fsopen", denyNamespace, same(430)},
		{"fsconfig", denyNamespace, same(431)},
		{"fsmount", denyNamespace, same(432)},
		{"fspick", denyNamespace, same(433)},
		{"mount_setattr", denyNamespace, same(442)},
		{"open_tree_attr", denyNamespace, same(467)},
		{"open_by_handle_at", denyAlways, numbers{304, 265, 371}},
		{"name_to_handle_at", denyAlways, numbers{303, 264, 370}},

		// Administration of the machine.
		{"kexec_load", denyAlways, numbers{246, 104, 347}},
		{"kexec_file_load", denyAlways, numbers{320, 294, 401}},
		{"init_module", denyAlways, numbers{175, 105, 128}},
		{"finit_module", denyAlways, numbers{313, 273, 379}},
		{"delete_module", denyAlways, numbers{176, 106, 129}},
		{"swapon", denyAlways, numbers{167, 224, 87}},
		{"swapoff", denyAlways, numbers{168, 225, 115}},
		{"reboot", denyAlways, numbers{169, 142, 88}},
		{"acct", denyAlways, numbers{163, 89, 51}},
		{"quotactl", denyAlways, numbers{179, 60, 131}},
		{"quotactl_fd", denyAlways, same(443)},
		{"syslog", denyAlways, numbers{103, 116, 103}},
		{"settimeofday", denyAlways, numbers{164, 170, 79}},
		{"clock_settime", denyAlways, numbers{227, 112, 262}},
		{"clock_settime64", denyAlways, numbers{absent, absent, 404}},
		{"adjtimex", denyAlways, numbers{159, 171, 124}},
		{"clock_adjtime", denyAlways, numbers{305, 266, 372}},
		{"clock_adjtime64", denyAlways, numbers{absent, absent, 405}},
		{"lookup_dcookie", denyAlways, numbers{212, 18, 249}},
		{"vhangup", denyAlways, numbers{153, 58, 111}},
		{"nfsservctl", denyAlways, numbers{180, 42, 169}},
		{"uselib", denyAlways, numbers{134, absent, 86}},

		// Memory outside RLIMIT_DATA: a memfd is shared memory with a file
		// descriptor (its mappings are MAP_SHARED of a file, which the mmap
		// check lets through); memfd_secret is such memory taken out of the
		// kernel's direct map; SysV shared memory segments and message
		// queues are kernel memory of the IPC namespace (a fresh one per
		// sandbox: there is nothing to attach to, so shmat, shmctl and
		// msgsnd need no rule).
		// ENOSYS, as on a kernel built without them: programs that can do
		// without (libffi, Mesa, Wayland clients, PulseAudio, ...) take
		// their fallback on ENOSYS, often on ENOSYS only. ipc, the SysV
		// multiplexer, is in arm's OABI table only; denied for
		// completeness, as socketcall is.
		{"memfd_create", denyNoSys, numbers{319, 279, 385}},
		{"memfd_secret", denyNoSys, numbers{447, 447, absent}},
		{"shmget", denyNoSys, numbers{29, 194, 307}},
		{"msgget", denyNoSys, numbers{68, 186, 303}},
		{"ipc", denyNoSys, numbers{absent, absent, 117}},

		// Disk space without writing it: fallocate reserves gigabytes in a
		// millisecond, before the Runner's disk watch can see it. EOPNOTSUPP,
		// as from a file system without it: glibc's posix_fallocate then
		// writes a byte to every block, which costs real writes and keeps
		// to RLIMIT_FSIZE. The ioctls that do the same (FS_IOC_RESVSP, ...)
		// are in the ioctl rule.
		{"fallocate", denyNoSupport, numbers{285, 47, 352}},

		// NUMA memory placement.
		{"mbind", denyAlways, numbers{237, 235, 319}},
		{"migrate_pages", denyAlways, numbers{256, 238, 400}},
		{"move_pages", denyAlways, numbers{279, 239, 344}},
	}
}

// deniedAs names what the rule denies under opts, or "" when opts allow the
// syscall altogether.
func (r rule) deniedAs(opts Options) string {
	switch r.action {
	case denyNamespace:
		if opts.AllowNamespaces {
			return ""
		}
	case denyCloneNamespace:
		if opts.AllowNamespaces {
			return ""
		}
		return r.name + "(CLONE_NEW*)"
	case denyClone3:
		if opts.AllowNamespaces {
			return ""
		}
		return r.name + "(ENOSYS)"
	case denyIoctl:
		return r.name + "(TIOCSTI, TIOCLINUX; EOPNOTSUPP " + preallocIoctlNames + ")"
	case denyPersonality:
		return r.name + "(except PER_LINUX, PER_LINUX32, UNAME26, query)"
	case denySocketFamily:
		if opts.AllowInet {
			return r.name + "(EAFNOSUPPORT except AF_UNIX, AF_INET, AF_INET6, AF_NETLINK/NETLINK_ROUTE)"
		}
		return r.name + "(EAFNOSUPPORT except AF_UNIX)"
	case denyFaultSignal1, denyFaultSignal2:
		return r.name + "(" + faultSignalNames + ")"
	case denySetsigFault:
		return r.name + "(F_SETSIG " + faultSignalNames + ")"
	case denySharedAnon:
		return r.name + "(MAP_SHARED|MAP_ANONYMOUS)"
	case denyNoSys:
		return r.name + "(ENOSYS)"
	case denyNoSupport:
		return r.name + "(EOPNOTSUPP)"
	}
	return r.name
}

// faultSignals are the signals a Go program takes for a fault of its own
// when their siginfo does not say kill(2) or tgkill(2) sent them: SIGILL,
// SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSTKFLT and SIGSYS (the same numbers on
// amd64, arm64 and arm). No program has a reason to queue one of them to
// another process, or to have the kernel deliver one for I/O (F_SETSIG).
var faultSignals = []uint32{4, 5, 7, 8, 11, 16, 31}

const faultSignalNames = "SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSTKFLT, SIGSYS"

// preallocIoctls are the ioctls that allocate disk space as fallocate does:
// the VFS's FS_IOC_RESVSP, FS_IOC_RESVSP64 and FS_IOC_ZERO_RANGE, which every
// file system with fallocate answers (vfs_fallocate with FALLOC_FL_KEEP_SIZE,
// so not even RLIMIT_FSIZE holds them), and XFS's XFS_IOC_ALLOCSP and
// XFS_IOC_ALLOCSP64 (removed in Linux 5.17). Each is _IOW('X', nr, struct
// space_resv), a 48-byte struct on amd64, arm64 and arm (EABI aligns its
// __s64 fields to 8 bytes), so the numbers are the same on the three; the
// 32-bit compat forms exist for x86 only, whose ABI the filter refuses.
var preallocIoctls = []uint32{
	0x40305828, // FS_IOC_RESVSP: _IOW('X', 40, struct space_resv)
	0x4030582a, // FS_IOC_RESVSP64: _IOW('X', 42, struct space_resv)
	0x40305839, // FS_IOC_ZERO_RANGE: _IOW('X', 57, struct space_resv)
	0x4030580a, // XFS_IOC_ALLOCSP: _IOW('X', 10, struct xfs_flock64)
	0x40305824, // XFS_IOC_ALLOCSP64: _IOW('X', 36, struct xfs_flock64)
}

const preallocIoctlNames = "FS_IOC_RESVSP, FS_IOC_RESVSP64, FS_IOC_ZERO_RANGE, XFS_IOC_ALLOCSP, XFS_IOC_ALLOCSP64"

// Denied returns the syscalls the filter denies on the running arch under
// opts, in filter order, for `shelldon doctor` and docs. A syscall denied only
// for some arguments carries them in parentheses, as "clone(CLONE_NEW*)"; one
// that fails with another error than EPERM carries the error, as
// "clone3(ENOSYS)" or "fallocate(EOPNOTSUPP)". It returns nil where Install
// is not available.
func Denied(opts Options) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	return denied(runtime.GOARCH, opts)
}

// denied is Denied for arch.
func denied(arch string, opts Options) []string {
	var names []string
	for _, r := range rules() {
		if _, ok := r.nr.on(arch); !ok {
			continue
		}
		if name := r.deniedAs(opts); name != "" {
			names = append(names, name)
		}
	}
	return names
}
