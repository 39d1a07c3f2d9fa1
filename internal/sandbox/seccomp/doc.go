// Package seccomp is the syscall filter every sandboxed process runs under: a
// seccomp-BPF program, assembled here by hand, that denies the system calls a
// tool never needs and that widen the kernel surface a contained process can
// attack. Everything not listed is allowed: the filter is a deny list that
// complements namespaces, Landlock and rlimits rather than replacing them.
//
// What it denies, and why (Denied returns the list for the running arch):
//
//   - another process's memory and files: ptrace, process_vm_readv,
//     process_vm_writev, pidfd_getfd;
//   - the kernel's most attacked interfaces, which a tool has no use for: bpf,
//     perf_event_open, userfaultfd, io_uring_setup, io_uring_enter,
//     io_uring_register, the key retention service (keyctl, add_key,
//     request_key) and fanotify_init;
//   - the filesystem view: chroot, open_by_handle_at and name_to_handle_at
//     (which bypass path lookup); and, unless Options.AllowNamespaces, mount,
//     umount2 (and the old OABI umount on arm), pivot_root and the new mount
//     API (open_tree, open_tree_attr, move_mount, fsopen, fsconfig, fsmount,
//     fspick, mount_setattr);
//   - namespaces, unless Options.AllowNamespaces: unshare, setns, clone with
//     any CLONE_NEW* flag, and clone3 (see below);
//   - the machine's administration: kernel modules, kexec, swap, reboot, acct,
//     quotas, syslog, setting the clock (settimeofday, clock_settime,
//     adjtimex, clock_adjtime and their time64 forms on arm), vhangup,
//     nfsservctl, uselib, lookup_dcookie; most need a capability the sandbox
//     drops anyway, and denying them removes code paths from reach;
//   - NUMA memory placement (mbind, migrate_pages, move_pages);
//   - memory that RLIMIT_DATA does not count, which counts only private
//     writable mappings: mmap (mmap2 on arm) whose flags ask for shared
//     anonymous memory (MAP_SHARED or MAP_SHARED_VALIDATE with
//     MAP_ANONYMOUS), memfd_create, memfd_secret, SysV shared memory
//     (shmget) and message queues (msgget), and on arm the OABI multiplexer
//     ipc. Private mappings, with or without a file, and shared mappings of
//     files stay allowed: the files a sandbox can write live in the
//     size-bounded tmpfs /tmp and /dev/shm or in the workspace, under the
//     disk floor. A writable shared mapping of /dev/zero is shared
//     anonymous memory too, but the filter cannot tell its descriptor from a
//     file's: Landlock, which keeps /dev/zero read-only, closes it (a
//     read-only mapping allocates nothing), and where Landlock is not (an
//     older kernel, a nested sandbox's builder) only a memory cgroup bounds
//     it. mremap needs no rule: it cannot turn a private mapping shared, and
//     growing a shared one past its object's size gives SIGBUS on access,
//     not memory;
//   - disk space reserved without writing it, which the Runner's disk watch
//     would see too late: fallocate, and the ioctls that do the same
//     (FS_IOC_RESVSP, FS_IOC_RESVSP64 and FS_IOC_ZERO_RANGE, which every file
//     system with fallocate answers, and XFS's old XFS_IOC_ALLOCSP and
//     XFS_IOC_ALLOCSP64);
//   - injecting input into a terminal: ioctl TIOCSTI and TIOCLINUX (a
//     contained process that shares the owner's terminal could otherwise type
//     commands into it);
//   - sockets of any family but AF_UNIX, unless Options.AllowInet, which adds
//     AF_INET, AF_INET6 and AF_NETLINK with protocol NETLINK_ROUTE (glibc's
//     getaddrinfo with AI_ADDRCONFIG reads the addresses through it; it cannot
//     change the network without CAP_NET_ADMIN over the namespace, which a
//     sandbox never has). AF_VSOCK, AF_PACKET, AF_BLUETOOTH, AF_ALG, AF_KEY,
//     AF_XDP, the other netlink protocols and the rest fail with EAFNOSUPPORT,
//     the error of a kernel built without the family, which programs already
//     handle as "not available" (EPERM would suggest a permission they could
//     ask for). socket and socketpair are the only ways to make a socket on
//     these arches: amd64 and arm64 have no socketcall, arm's is OABI only
//     (denied anyway), and io_uring, whose IORING_OP_SOCKET would be another,
//     is denied;
//   - a fault signal (SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSTKFLT,
//     SIGSYS) sent with a siginfo the sender chose (rt_sigqueueinfo,
//     rt_tgsigqueueinfo, pidfd_send_signal) or set as the I/O signal of a
//     file (fcntl F_SETSIG): a Go runtime takes such a signal for a fault of
//     its own and dies, and the sandbox helper, PID 1 of the sandbox, is a Go
//     program. kill, tgkill and the other signals stay allowed;
//   - personality, except the harmless personas PER_LINUX (0), PER_LINUX32,
//     UNAME26 and the query 0xffffffff: flags such as ADDR_NO_RANDOMIZE or
//     READ_IMPLIES_EXEC would turn off ASLR or NX for the programs it then
//     executes (the same rule as Docker's default profile).
//
// A denied call fails with EPERM, a socket of a denied family with
// EAFNOSUPPORT. clone3 fails with ENOSYS instead: its flags live in memory
// that BPF cannot read, and ENOSYS makes glibc (posix_spawn, pthread_create)
// fall back to clone, whose flags the filter checks. Go's os/exec uses clone
// already; it uses clone3 only for SysProcAttr.UseCgroupFD or CLONE_NEWTIME,
// which therefore fail under the default filter. memfd_create, memfd_secret,
// shmget, msgget and ipc fail with ENOSYS too, as on a kernel built without
// them: the programs that can do without them (libffi's closures, Mesa,
// Wayland clients, PulseAudio, ...) take their fallback on ENOSYS, often on
// ENOSYS only, where EPERM would make them fail. fallocate and the
// preallocation ioctls fail with EOPNOTSUPP, the answer of a file system
// without them: glibc's posix_fallocate then falls back to writing a byte to
// every block, which costs real writes (so the disk watch sees them coming)
// and stops at RLIMIT_FSIZE; fallocate(1) and other direct callers report
// "Operation not supported". A shared anonymous mmap fails with EPERM: there
// is no fallback to steer programs to, and EPERM says plainly that it is
// refused, where ENOMEM would read as a machine out of memory.
//
// The argument checks cost time: since Linux 5.11 the kernel caches the
// verdict of every syscall whose verdict does not depend on its arguments
// and skips the program for it, but mmap now runs the program on every call.
// Its check comes first after the arch check and leaves private mappings at
// the first test (about eight instructions in all).
//
// A syscall made through another ABI than the one the filter was built for
// kills the process: i386 int 0x80 or x32 on amd64, AArch32 on arm64, and on
// arm the syscalls of a 64-bit program it executes on an arm64 kernel. Those
// are the classic ways around a filter written for one syscall table.
//
// The filter is installed for every thread of the process (TSYNC) with
// no_new_privs set, and the kernel keeps it across fork, clone and execve, so
// it binds every descendant. It cannot be removed, only narrowed by a further
// filter. It is built for linux/amd64, linux/arm64 and linux/arm; elsewhere
// Install and Supported report that seccomp is not available.
package seccomp

// Options adjust the filter.
type Options struct {
	// AllowNamespaces permits unshare, setns, clone with namespace flags,
	// clone3 and the mount family: for a worker that itself starts nested
	// sandboxes, which build their own mount view inside their own user
	// namespace (mounts there never reach the host's). The rest of the
	// filter still applies. Default false.
	AllowNamespaces bool
	// AllowInet permits AF_INET and AF_INET6 sockets, and AF_NETLINK
	// sockets of protocol NETLINK_ROUTE: for a sandbox granted the network.
	// Without it only AF_UNIX sockets can be made. Default false.
	AllowInet bool
}
