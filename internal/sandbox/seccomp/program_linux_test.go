//go:build linux

package seccomp

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

var (
	allOptions = []Options{{}, {AllowNamespaces: true}, {AllowInet: true}, {AllowNamespaces: true, AllowInet: true}}
	allArches  = []string{"amd64", "arm64", "arm"}
)

const (
	ePERM        = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	eNOSYS       = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	eAFNOSUPPORT = unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT)
	eOPNOTSUPP   = unix.SECCOMP_RET_ERRNO | uint32(unix.EOPNOTSUPP)
)

func verdictName(v uint32) string {
	switch v {
	case retAllow:
		return "ALLOW"
	case retKill:
		return "KILL_PROCESS"
	case ePERM:
		return "ERRNO(EPERM)"
	case eNOSYS:
		return "ERRNO(ENOSYS)"
	case eAFNOSUPPORT:
		return "ERRNO(EAFNOSUPPORT)"
	case eOPNOTSUPP:
		return "ERRNO(EOPNOTSUPP)"
	}
	return fmt.Sprintf("%#x", v)
}

func TestProgramStructure(t *testing.T) {
	t.Parallel()
	for _, arch := range allArches {
		for _, opts := range allOptions {
			t.Run(fmt.Sprintf("%s/%+v", arch, opts), func(t *testing.T) {
				t.Parallel()
				prog, err := Program(arch, opts)
				if err != nil {
					t.Fatal(err)
				}
				audit, _ := auditArch(arch)
				head := []unix.SockFilter{
					{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 4},
					{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 1, Jf: 0, K: audit},
					{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_KILL_PROCESS},
				}
				if diff := cmp.Diff(head, prog[:3]); diff != "" {
					t.Errorf("program does not begin with the arch check (-want +got):\n%s", diff)
				}
				if last := prog[len(prog)-1]; last != (unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW}) {
					t.Errorf("program ends in %+v, want RET ALLOW", last)
				}
				if len(prog) > unix.BPF_MAXINSNS {
					t.Errorf("program has %d instructions, the kernel takes %d", len(prog), unix.BPF_MAXINSNS)
				}
				for pc, ins := range prog {
					switch ins.Code &^ 0xf8 { // BPF_CLASS
					case unix.BPF_JMP:
						for _, off := range []uint8{ins.Jt, ins.Jf} {
							if pc+1+int(off) >= len(prog) {
								t.Errorf("pc %d: jump by %d leaves the %d-instruction program", pc, off, len(prog))
							}
						}
					case unix.BPF_LD:
						if ins.K%4 != 0 || ins.K >= 64 {
							t.Errorf("pc %d: load at %d is outside seccomp_data or unaligned", pc, ins.K)
						}
					}
				}
				t.Logf("%d instructions", len(prog))
			})
		}
	}
}

func TestProgramUnknownArch(t *testing.T) {
	t.Parallel()
	for _, arch := range []string{"386", "riscv64", ""} {
		if _, err := Program(arch, Options{}); err == nil {
			t.Errorf("Program(%q) succeeded, want an error", arch)
		}
	}
}

// call is a syscall for the interpreter.
func call(nr uint32, args ...uint64) seccompData {
	d := seccompData{nr: int32(nr)}
	copy(d.args[:], args)
	return d
}

// archNumbers are a few syscall numbers per arch, written out here rather
// than taken from rules(), so the verdicts below check the table too.
type archNumbers struct {
	audit, foreign                                   uint32
	read, write, openat, execve, getpid, futex, mmap uint32
	ptrace, mount, bpf, unshare, setns, clone, ioctl uint32
	personality, socket, socketpair, fcntl           uint32
	sigqueue, tgsigqueue                             uint32
	mremap, fallocate, memfdCreate, shmget, msgget   uint32
	shmat, ftruncate, brk                            uint32
}

var numbersFor = map[string]archNumbers{
	"amd64": {
		audit: unix.AUDIT_ARCH_X86_64, foreign: unix.AUDIT_ARCH_I386,
		read: 0, write: 1, openat: 257, execve: 59, getpid: 39, futex: 202, mmap: 9,
		ptrace: 101, mount: 165, bpf: 321, unshare: 272, setns: 308, clone: 56, ioctl: 16,
		personality: 135, socket: 41, socketpair: 53, fcntl: 72, sigqueue: 129, tgsigqueue: 297,
		mremap: 25, fallocate: 285, memfdCreate: 319, shmget: 29, msgget: 68, shmat: 30, ftruncate: 77, brk: 12,
	},
	"arm64": {
		audit: unix.AUDIT_ARCH_AARCH64, foreign: unix.AUDIT_ARCH_ARM,
		read: 63, write: 64, openat: 56, execve: 221, getpid: 172, futex: 98, mmap: 222,
		ptrace: 117, mount: 40, bpf: 280, unshare: 97, setns: 268, clone: 220, ioctl: 29,
		personality: 92, socket: 198, socketpair: 199, fcntl: 25, sigqueue: 138, tgsigqueue: 240,
		mremap: 216, fallocate: 47, memfdCreate: 279, shmget: 194, msgget: 186, shmat: 196, ftruncate: 46, brk: 214,
	},
	"arm": {
		audit: unix.AUDIT_ARCH_ARM, foreign: unix.AUDIT_ARCH_AARCH64,
		read: 3, write: 4, openat: 322, execve: 11, getpid: 20, futex: 240, mmap: 192,
		ptrace: 26, mount: 21, bpf: 386, unshare: 337, setns: 375, clone: 120, ioctl: 54,
		personality: 136, socket: 281, socketpair: 288, fcntl: 55, sigqueue: 178, tgsigqueue: 363,
		mremap: 163, fallocate: 352, memfdCreate: 385, shmget: 307, msgget: 303, shmat: 305, ftruncate: 93, brk: 45,
	},
}

func TestProgramVerdicts(t *testing.T) {
	t.Parallel()
	for _, arch := range allArches {
		for _, opts := range allOptions {
			t.Run(fmt.Sprintf("%s/%+v", arch, opts), func(t *testing.T) {
				t.Parallel()
				prog, err := Program(arch, opts)
				if err != nil {
					t.Fatal(err)
				}
				n := numbersFor[arch]
				nsVerdict := func(v uint32) uint32 {
					if opts.AllowNamespaces {
						return retAllow
					}
					return v
				}
				inetVerdict := func() uint32 {
					if opts.AllowInet {
						return retAllow
					}
					return eAFNOSUPPORT
				}
				cases := []struct {
					name string
					data seccompData
					want uint32
				}{
					{"read", call(n.read, 0, 0, 4096), retAllow},
					{"write", call(n.write, 1, 0, 10), retAllow},
					{"openat", call(n.openat, 0, 0, unix.O_RDONLY), retAllow},
					{"execve", call(n.execve), retAllow},
					{"getpid", call(n.getpid), retAllow},
					{"futex", call(n.futex), retAllow},
					{"mmap", call(n.mmap), retAllow},
					{"ptrace", call(n.ptrace, unix.PTRACE_TRACEME), ePERM},
					{"mount", call(n.mount), nsVerdict(ePERM)},
					{"bpf", call(n.bpf), ePERM},
					{"io_uring_setup", call(425, 8), ePERM},
					{"fsopen", call(430), nsVerdict(ePERM)},
					{"open_tree_attr", call(467), nsVerdict(ePERM)},
					{"unshare CLONE_NEWUSER", call(n.unshare, unix.CLONE_NEWUSER), nsVerdict(ePERM)},
					{"unshare CLONE_FILES", call(n.unshare, unix.CLONE_FILES), nsVerdict(ePERM)},
					{"setns", call(n.setns, 3, 0), nsVerdict(ePERM)},
					{"clone thread", call(n.clone, unix.CLONE_VM|unix.CLONE_FS|unix.CLONE_FILES|unix.CLONE_SIGHAND|unix.CLONE_THREAD|unix.CLONE_SYSVSEM), retAllow},
					{"clone fork", call(n.clone, uint64(unix.SIGCHLD)), retAllow},
					{"clone vfork", call(n.clone, unix.CLONE_VM|unix.CLONE_VFORK|uint64(unix.SIGCHLD)), retAllow},
					{"clone CLONE_NEWUSER", call(n.clone, unix.CLONE_NEWUSER|uint64(unix.SIGCHLD)), nsVerdict(ePERM)},
					{"clone CLONE_NEWNS", call(n.clone, unix.CLONE_NEWNS), nsVerdict(ePERM)},
					{"clone CLONE_NEWPID", call(n.clone, unix.CLONE_NEWPID), nsVerdict(ePERM)},
					{"clone CLONE_NEWNET", call(n.clone, unix.CLONE_NEWNET), nsVerdict(ePERM)},
					{"clone CLONE_NEWIPC", call(n.clone, unix.CLONE_NEWIPC), nsVerdict(ePERM)},
					{"clone CLONE_NEWUTS", call(n.clone, unix.CLONE_NEWUTS), nsVerdict(ePERM)},
					{"clone CLONE_NEWCGROUP", call(n.clone, unix.CLONE_NEWCGROUP), nsVerdict(ePERM)},
					{"clone CLONE_NEWTIME", call(n.clone, unix.CLONE_NEWTIME), nsVerdict(ePERM)},
					{"clone3", call(435, 0, 88), nsVerdict(eNOSYS)},
					{"ioctl TIOCSTI", call(n.ioctl, 0, 0x5412), ePERM},
					{"ioctl TIOCSTI, high bits set", call(n.ioctl, 0, 1<<32|0x5412), ePERM},
					{"ioctl TIOCLINUX", call(n.ioctl, 0, 0x541C), ePERM},
					{"ioctl TIOCGWINSZ", call(n.ioctl, 0, 0x5413), retAllow},
					{"ioctl FIONREAD", call(n.ioctl, 0, 0x541B), retAllow},
					{"ioctl TCGETS", call(n.ioctl, 0, 0x5401), retAllow},
					{"ioctl FS_IOC_RESVSP", call(n.ioctl, 3, 0x40305828, 0x1000), eOPNOTSUPP},
					{"ioctl FS_IOC_RESVSP64", call(n.ioctl, 3, 0x4030582a, 0x1000), eOPNOTSUPP},
					{"ioctl FS_IOC_RESVSP64, high bits set", call(n.ioctl, 3, 0xffffffff00000000|0x4030582a, 0x1000), eOPNOTSUPP},
					{"ioctl FS_IOC_ZERO_RANGE", call(n.ioctl, 3, 0x40305839, 0x1000), eOPNOTSUPP},
					{"ioctl XFS_IOC_ALLOCSP", call(n.ioctl, 3, 0x4030580a, 0x1000), eOPNOTSUPP},
					{"ioctl XFS_IOC_ALLOCSP64", call(n.ioctl, 3, 0x40305824, 0x1000), eOPNOTSUPP},
					{"ioctl FS_IOC_UNRESVSP64 (frees)", call(n.ioctl, 3, 0x4030582b, 0x1000), retAllow},
					{"ioctl FICLONE", call(n.ioctl, 3, 0x40049409, 4), retAllow},
					{"ioctl FS_IOC_GETFLAGS", call(n.ioctl, 3, 0x80086601, 0x1000), retAllow},

					// Shared anonymous memory, and everything around it that
					// must stay allowed.
					{"mmap private anonymous", call(n.mmap, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, 0xffffffff, 0), retAllow},
					{"mmap private anonymous, Go heap", call(n.mmap, 0xc000000000, 64<<20, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE|unix.MAP_FIXED, 0xffffffff, 0), retAllow},
					{"mmap private anonymous stack", call(n.mmap, 0, 8<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_STACK|unix.MAP_GROWSDOWN, 0xffffffff, 0), retAllow},
					{"mmap droppable anonymous (vDSO getrandom)", call(n.mmap, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_DROPPABLE|unix.MAP_ANONYMOUS, 0xffffffff, 0), retAllow},
					{"mmap private file", call(n.mmap, 0, 1<<20, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_DENYWRITE, 3, 0), retAllow},
					{"mmap shared file", call(n.mmap, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED, 3, 0), retAllow},
					{"mmap shared_validate file", call(n.mmap, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED_VALIDATE|unix.MAP_SYNC, 3, 0), retAllow},
					{"mmap shared anonymous", call(n.mmap, 0, 4<<30, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS, 0xffffffff, 0), ePERM},
					// The kernel refuses this one with EINVAL anyway.
					{"mmap shared_validate anonymous", call(n.mmap, 0, 4<<30, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED_VALIDATE|unix.MAP_ANONYMOUS, 0xffffffff, 0), ePERM},
					{"mmap shared anonymous hugetlb", call(n.mmap, 0, 1<<30, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS|unix.MAP_HUGETLB|unix.MAP_NORESERVE, 0xffffffff, 0), ePERM},
					{"mmap shared anonymous, fd 3", call(n.mmap, 0, 1<<30, unix.PROT_READ, unix.MAP_SHARED|unix.MAP_ANONYMOUS, 3, 0), ePERM},
					{"mmap shared anonymous, high bits set", call(n.mmap, 0, 1<<30, unix.PROT_READ, 0xffffffff00000000|unix.MAP_SHARED|unix.MAP_ANONYMOUS, 0xffffffff, 0), ePERM},
					{"mmap private, MAP_SHARED|MAP_ANONYMOUS in the high bits", call(n.mmap, 0, 1<<30, unix.PROT_READ, (unix.MAP_SHARED|unix.MAP_ANONYMOUS)<<32|unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, 0xffffffff, 0), retAllow},
					{"mmap, MAP_SHARED|MAP_ANONYMOUS as prot", call(n.mmap, 0, 1<<30, unix.MAP_SHARED|unix.MAP_ANONYMOUS, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, 0xffffffff, 0), retAllow},
					{"mremap", call(n.mremap, 0x10000, 4096, 1<<30, unix.MREMAP_MAYMOVE), retAllow},
					{"brk", call(n.brk, 0x1000000), retAllow},
					{"memfd_create", call(n.memfdCreate, 0x1000, unix.MFD_CLOEXEC), eNOSYS},
					{"shmget", call(n.shmget, unix.IPC_PRIVATE, 1<<30, unix.IPC_CREAT|0o600), eNOSYS},
					{"shmat", call(n.shmat, 0, 0, 0), retAllow},
					{"msgget", call(n.msgget, unix.IPC_PRIVATE, unix.IPC_CREAT|0o600), eNOSYS},
					{"memfd_secret", call(447, 0), map[string]uint32{"amd64": eNOSYS, "arm64": eNOSYS, "arm": retAllow}[arch]},

					// Disk space without writes.
					{"fallocate", call(n.fallocate, 3, 0, 0, 60<<20), eOPNOTSUPP},
					{"fallocate KEEP_SIZE", call(n.fallocate, 3, unix.FALLOC_FL_KEEP_SIZE, 0, 60<<20), eOPNOTSUPP},
					{"ftruncate", call(n.ftruncate, 3, 60<<20), retAllow},
					{"personality query", call(n.personality, 0xffffffff), retAllow},
					{"personality PER_LINUX", call(n.personality, 0), retAllow},
					{"personality PER_LINUX32", call(n.personality, 0x8), retAllow},
					{"personality UNAME26", call(n.personality, 0x20000), retAllow},
					{"personality ADDR_NO_RANDOMIZE", call(n.personality, 0x0040000), ePERM},
					{"personality READ_IMPLIES_EXEC", call(n.personality, 0x0400000), ePERM},
					{"personality PER_BSD", call(n.personality, 0x6), ePERM},
					{"nr -1", call(0xffffffff), retAllow},

					{"socket AF_UNIX", call(n.socket, unix.AF_UNIX, unix.SOCK_STREAM), retAllow},
					{"socket AF_UNIX, high bits set", call(n.socket, 1<<32|unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC), retAllow},
					{"socketpair AF_UNIX", call(n.socketpair, unix.AF_UNIX, unix.SOCK_STREAM, 0, 0x1000), retAllow},
					{"socket AF_INET", call(n.socket, unix.AF_INET, unix.SOCK_STREAM), inetVerdict()},
					{"socket AF_INET UDP", call(n.socket, unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_UDP), inetVerdict()},
					{"socket AF_INET6", call(n.socket, unix.AF_INET6, unix.SOCK_STREAM), inetVerdict()},
					{"socketpair AF_INET", call(n.socketpair, unix.AF_INET, unix.SOCK_STREAM), inetVerdict()},
					{"socket AF_NETLINK NETLINK_ROUTE", call(n.socket, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE), inetVerdict()},
					{"socket AF_NETLINK NETLINK_AUDIT", call(n.socket, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT), eAFNOSUPPORT},
					{"socket AF_NETLINK NETLINK_KOBJECT_UEVENT", call(n.socket, unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_KOBJECT_UEVENT), eAFNOSUPPORT},
					{"socket AF_NETLINK NETLINK_SOCK_DIAG", call(n.socket, unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_SOCK_DIAG), eAFNOSUPPORT},
					{"socket AF_VSOCK", call(n.socket, unix.AF_VSOCK, unix.SOCK_STREAM), eAFNOSUPPORT},
					{"socket AF_PACKET", call(n.socket, unix.AF_PACKET, unix.SOCK_RAW), eAFNOSUPPORT},
					{"socket AF_BLUETOOTH", call(n.socket, unix.AF_BLUETOOTH, unix.SOCK_STREAM), eAFNOSUPPORT},
					{"socket AF_ALG", call(n.socket, unix.AF_ALG, unix.SOCK_SEQPACKET), eAFNOSUPPORT},
					{"socket AF_KEY", call(n.socket, unix.AF_KEY, unix.SOCK_RAW), eAFNOSUPPORT},
					{"socket AF_XDP", call(n.socket, unix.AF_XDP, unix.SOCK_RAW), eAFNOSUPPORT},
					{"socket AF_UNSPEC", call(n.socket, unix.AF_UNSPEC, unix.SOCK_STREAM), eAFNOSUPPORT},
					{"socket AF_VSOCK, AF_UNIX in the high bits", call(n.socket, uint64(unix.AF_UNIX)<<32|unix.AF_VSOCK, unix.SOCK_STREAM), eAFNOSUPPORT},
					{"socketpair AF_VSOCK", call(n.socketpair, unix.AF_VSOCK, unix.SOCK_STREAM), eAFNOSUPPORT},

					{"rt_sigqueueinfo SIGSEGV", call(n.sigqueue, 1, uint64(unix.SIGSEGV), 0x1000), ePERM},
					{"rt_sigqueueinfo SIGBUS", call(n.sigqueue, 1, uint64(unix.SIGBUS), 0x1000), ePERM},
					{"rt_sigqueueinfo SIGILL", call(n.sigqueue, 1, uint64(unix.SIGILL), 0x1000), ePERM},
					{"rt_sigqueueinfo SIGTRAP", call(n.sigqueue, 1, uint64(unix.SIGTRAP), 0x1000), ePERM},
					{"rt_sigqueueinfo SIGFPE", call(n.sigqueue, 1, uint64(unix.SIGFPE), 0x1000), ePERM},
					{"rt_sigqueueinfo SIGSTKFLT", call(n.sigqueue, 1, uint64(unix.SIGSTKFLT), 0x1000), ePERM},
					{"rt_sigqueueinfo SIGSYS", call(n.sigqueue, 1, uint64(unix.SIGSYS), 0x1000), ePERM},
					{"rt_sigqueueinfo SIGUSR1", call(n.sigqueue, 1, uint64(unix.SIGUSR1), 0x1000), retAllow},
					{"rt_sigqueueinfo SIGRTMIN+1", call(n.sigqueue, 7, 35, 0x1000), retAllow},
					{"rt_tgsigqueueinfo SIGSEGV", call(n.tgsigqueue, 1, 3, uint64(unix.SIGSEGV), 0x1000), ePERM},
					{"rt_tgsigqueueinfo SIGTERM", call(n.tgsigqueue, 1, 3, uint64(unix.SIGTERM), 0x1000), retAllow},
					{"rt_tgsigqueueinfo, SIGSEGV as the tid", call(n.tgsigqueue, 1, uint64(unix.SIGSEGV), uint64(unix.SIGTERM), 0x1000), retAllow},
					{"pidfd_send_signal SIGSEGV", call(424, 3, uint64(unix.SIGSEGV), 0x1000), ePERM},
					{"pidfd_send_signal SIGSEGV without siginfo", call(424, 3, uint64(unix.SIGSEGV), 0), ePERM},
					{"pidfd_send_signal SIGTERM", call(424, 3, uint64(unix.SIGTERM), 0x1000), retAllow},
					{"fcntl F_SETSIG SIGSEGV", call(n.fcntl, 3, unix.F_SETSIG, uint64(unix.SIGSEGV)), ePERM},
					{"fcntl F_SETSIG SIGSYS", call(n.fcntl, 3, unix.F_SETSIG, uint64(unix.SIGSYS)), ePERM},
					{"fcntl F_SETSIG 0", call(n.fcntl, 3, unix.F_SETSIG, 0), retAllow},
					{"fcntl F_SETSIG SIGRTMIN+2", call(n.fcntl, 3, unix.F_SETSIG, 36), retAllow},
					{"fcntl F_SETSIG SIGIO", call(n.fcntl, 3, unix.F_SETSIG, uint64(unix.SIGIO)), retAllow},
					{"fcntl F_SETFD", call(n.fcntl, 3, unix.F_SETFD, unix.FD_CLOEXEC), retAllow},
					{"fcntl F_GETFL", call(n.fcntl, 3, unix.F_GETFL), retAllow},
					{"fcntl F_SETOWN 1", call(n.fcntl, 3, unix.F_SETOWN, 1), retAllow},
					{"fcntl F_DUPFD 11", call(n.fcntl, 3, unix.F_DUPFD, 11), retAllow},
				}
				for i := range cases {
					cases[i].data.arch = n.audit
				}
				foreign := call(n.getpid)
				foreign.arch = n.foreign
				cases = append(cases, struct {
					name string
					data seccompData
					want uint32
				}{"getpid from a foreign arch", foreign, retKill})
				switch arch {
				case "amd64":
					for _, nr := range []uint32{39, 101, 0x200} {
						x32 := call(x32SyscallBit | nr)
						x32.arch = n.audit
						cases = append(cases, struct {
							name string
							data seccompData
							want uint32
						}{fmt.Sprintf("x32 syscall %d", nr), x32, retKill})
					}
				case "arm":
					for _, c := range []struct {
						name string
						data seccompData
						want uint32
					}{
						{"fcntl64 F_SETSIG SIGSEGV", call(221, 3, unix.F_SETSIG, uint64(unix.SIGSEGV)), ePERM},
						{"fcntl64 F_SETFL", call(221, 3, unix.F_SETFL, unix.O_NONBLOCK), retAllow},
						{"socketcall (OABI)", call(102, 1), ePERM},
						{"ipc (OABI)", call(117, 23), eNOSYS},
					} {
						c.data.arch = n.audit
						cases = append(cases, c)
					}
					// ARM private syscalls (cacheflush, set_tls, ...) that
					// the Go runtime and libc use.
					for _, nr := range []uint32{0xf0002, 0xf0005} {
						private := call(nr)
						private.arch = n.audit
						cases = append(cases, struct {
							name string
							data seccompData
							want uint32
						}{fmt.Sprintf("ARM private syscall %#x", nr), private, retAllow})
					}
				}
				for _, c := range cases {
					got, err := runBPF(prog, c.data)
					if err != nil {
						t.Errorf("%s: %v", c.name, err)
						continue
					}
					if got != c.want {
						t.Errorf("%s: verdict %s, want %s", c.name, verdictName(got), verdictName(c.want))
					}
				}
			})
		}
	}
}

// TestProgramMatchesRules sweeps the syscall numbers: every number that no
// rule names is allowed, every rule acts on its own number.
func TestProgramMatchesRules(t *testing.T) {
	t.Parallel()
	for _, arch := range allArches {
		for _, opts := range allOptions {
			t.Run(fmt.Sprintf("%s/%+v", arch, opts), func(t *testing.T) {
				t.Parallel()
				prog, err := Program(arch, opts)
				if err != nil {
					t.Fatal(err)
				}
				audit, _ := auditArch(arch)
				want := map[uint32]uint32{}
				for _, r := range rules() {
					nr, ok := r.nr.on(arch)
					if !ok {
						continue
					}
					if _, dup := want[nr]; dup {
						t.Errorf("syscall %d appears twice in the rules", nr)
					}
					// The verdict for all-zero arguments.
					switch {
					case r.action == denyAlways:
						want[nr] = ePERM
					case r.action == denyNamespace && !opts.AllowNamespaces:
						want[nr] = ePERM
					case r.action == denyClone3 && !opts.AllowNamespaces:
						want[nr] = eNOSYS
					case r.action == denySocketFamily:
						// Family 0 (AF_UNSPEC) is no family a sandbox gets.
						want[nr] = eAFNOSUPPORT
					case r.action == denyNoSys:
						want[nr] = eNOSYS
					case r.action == denyNoSupport:
						want[nr] = eOPNOTSUPP
					default:
						want[nr] = retAllow
					}
				}
				for nr := uint32(0); nr < 1024; nr++ {
					d := call(nr)
					d.arch = audit
					got, err := runBPF(prog, d)
					if err != nil {
						t.Fatalf("syscall %d: %v", nr, err)
					}
					w, ok := want[nr]
					if !ok {
						w = retAllow
					}
					if got != w {
						t.Errorf("syscall %d: verdict %s, want %s", nr, verdictName(got), verdictName(w))
					}
				}
			})
		}
	}
}

func faultSignalRule(name string) string {
	if name == "fcntl" || name == "fcntl64" {
		return name + "(F_SETSIG SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSTKFLT, SIGSYS)"
	}
	return name + "(SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSTKFLT, SIGSYS)"
}

func TestDenied(t *testing.T) {
	t.Parallel()
	always := []string{
		"ptrace", "process_vm_readv", "process_vm_writev", "bpf", "perf_event_open",
		"userfaultfd", "keyctl", "add_key", "request_key", "chroot", "io_uring_setup",
		"io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load",
		"init_module", "finit_module", "delete_module", "open_by_handle_at",
		"name_to_handle_at", "swapon", "swapoff", "reboot", "acct", "quotactl",
		"syslog", "settimeofday", "clock_settime", "adjtimex", "clock_adjtime",
		"lookup_dcookie", "vhangup", "nfsservctl", "fanotify_init",
		"ioctl(TIOCSTI, TIOCLINUX; EOPNOTSUPP FS_IOC_RESVSP, FS_IOC_RESVSP64, FS_IOC_ZERO_RANGE, XFS_IOC_ALLOCSP, XFS_IOC_ALLOCSP64)",
		"memfd_create(ENOSYS)", "shmget(ENOSYS)", "msgget(ENOSYS)", "fallocate(EOPNOTSUPP)",
		"personality(except PER_LINUX, PER_LINUX32, UNAME26, query)",
	}
	namespaces := []string{"unshare", "setns", "clone(CLONE_NEW*)", "clone3(ENOSYS)", "mount", "umount2",
		"pivot_root", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr"}
	perArch := map[string][]string{
		"amd64": {"uselib", "mmap(MAP_SHARED|MAP_ANONYMOUS)", "memfd_secret(ENOSYS)"},
		"arm64": {"mmap(MAP_SHARED|MAP_ANONYMOUS)", "memfd_secret(ENOSYS)"},
		"arm": {"uselib", "clock_settime64", "clock_adjtime64", "socketcall", faultSignalRule("fcntl64"),
			"mmap2(MAP_SHARED|MAP_ANONYMOUS)", "ipc(ENOSYS)"},
	}
	always = append(always, faultSignalRule("rt_sigqueueinfo"), faultSignalRule("rt_tgsigqueueinfo"),
		faultSignalRule("pidfd_send_signal"), faultSignalRule("fcntl"))
	for _, arch := range allArches {
		for _, opts := range allOptions {
			got := denied(arch, opts)
			want := append(slices.Clone(always), perArch[arch]...)
			for _, name := range want {
				if !slices.Contains(got, name) {
					t.Errorf("%s %+v: %q not denied", arch, opts, name)
				}
			}
			for _, name := range namespaces {
				if slices.Contains(got, name) == opts.AllowNamespaces {
					t.Errorf("%s %+v: %q denied = %v", arch, opts, name, !opts.AllowNamespaces)
				}
			}
			sockets := "(EAFNOSUPPORT except AF_UNIX)"
			if opts.AllowInet {
				sockets = "(EAFNOSUPPORT except AF_UNIX, AF_INET, AF_INET6, AF_NETLINK/NETLINK_ROUTE)"
			}
			for _, name := range []string{"socket" + sockets, "socketpair" + sockets} {
				if !slices.Contains(got, name) {
					t.Errorf("%s %+v: %q not listed in %q", arch, opts, name, got)
				}
			}
		}
	}
	for _, opts := range allOptions {
		if diff := cmp.Diff(denied(runtime.GOARCH, opts), Denied(opts)); diff != "" {
			t.Errorf("Denied(%+v) is not the list for %s (-want +got):\n%s", opts, runtime.GOARCH, diff)
		}
	}
}
