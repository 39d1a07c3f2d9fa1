//go:build linux

package seccomp

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Offsets into struct seccomp_data (include/uapi/linux/seccomp.h): int nr,
// u32 arch, u64 instruction_pointer, u64 args[6]. An argument's offset
// addresses the low 32 bits of its 64-bit slot, since every arch this package
// supports is little-endian; the calls whose arguments the filter reads take
// them as 32-bit values (ioctl's unsigned int cmd, personality's unsigned int,
// the CLONE_NEW* bits of clone's flags), so the low half is what the kernel
// acts on, or test bits that lie in the low half (mmap's MAP_SHARED and
// MAP_ANONYMOUS: high bits set beside them hide nothing).
const (
	offsetNr   = 0
	offsetArch = 4
	offsetArgs = 16
)

// argLow is the offset of the low 32 bits of argument i.
func argLow(i uint32) uint32 { return offsetArgs + 8*i }

// x32SyscallBit marks a syscall made through the x32 ABI on x86_64
// (__X32_SYSCALL_BIT); such calls share AUDIT_ARCH_X86_64.
const x32SyscallBit = 0x40000000

// namespaceFlags are the clone flags that create namespaces. CLONE_NEWTIME
// (0x80) lies inside CSIGNAL for clone(2), where it would name an exit signal
// above 64 that the kernel rejects anyway; it belongs here for unshare and
// clone3.
const namespaceFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID |
	unix.CLONE_NEWNET | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS |
	unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// Terminal ioctls that the filter denies. Their numbers are the generic ones
// (include/uapi/asm-generic/ioctls.h), shared by amd64, arm64 and arm.
const (
	tiocsti   = 0x5412
	tioclinux = 0x541C
)

// mmap flags (include/uapi/asm-generic/mman-common.h and
// include/uapi/linux/mman.h; amd64, arm64 and arm use the generic values).
// The mapping type is flags&0xf: MAP_SHARED (1) and MAP_SHARED_VALIDATE (3)
// have bit 0 set, MAP_PRIVATE (2) and MAP_DROPPABLE (8, what the vDSO's
// getrandom asks for) do not, and every other type is EINVAL.
const (
	mapShared    = 0x01
	mapAnonymous = 0x20
)

// Personas (include/uapi/linux/personality.h) that personality may set: none
// of them touches ASLR, NX or the address-space layout.
const (
	perLinux         = 0x0000000
	perLinux32       = 0x0000008
	uname26          = 0x0020000
	personalityQuery = 0xffffffff
)

func safePersonas() []uint32 {
	return []uint32{perLinux, perLinux32, uname26, uname26 | perLinux32, personalityQuery}
}

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
)

func retErrno(e unix.Errno) uint32 {
	return unix.SECCOMP_RET_ERRNO | uint32(e)&unix.SECCOMP_RET_DATA
}

// auditArch is the AUDIT_ARCH_* value the kernel reports in seccomp_data for
// a native syscall on arch.
func auditArch(arch string) (uint32, bool) {
	switch arch {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	case "arm":
		return unix.AUDIT_ARCH_ARM, true
	}
	return 0, false
}

// Program returns the filter for arch ("amd64", "arm64" or "arm") under opts.
// Install loads the one for the running arch; the others are for tests and
// inspection.
//
// The program checks seccomp_data.arch first (another arch kills the process),
// on amd64 kills x32 syscalls, then tests the syscall number against each
// rule in turn. A rule is "jeq nr" followed by a short block that always
// returns, so every jump is short and the accumulator holds the number again
// at the next rule. It ends in RET ALLOW.
func Program(arch string, opts Options) ([]unix.SockFilter, error) {
	audit, ok := auditArch(arch)
	if !ok {
		return nil, fmt.Errorf("seccomp: no filter for arch %q", arch)
	}
	prog := []unix.SockFilter{
		load(offsetArch),
		jump(unix.BPF_JEQ, audit, 1, 0),
		ret(retKill),
		load(offsetNr),
	}
	if arch == "amd64" {
		prog = append(prog,
			jump(unix.BPF_JGE, x32SyscallBit, 0, 2),
			// nr -1 is no syscall (a tracer's "skip"): let the kernel
			// answer ENOSYS, as libseccomp does.
			jump(unix.BPF_JEQ, 0xffffffff, 1, 0),
			ret(retKill),
		)
	}
	for _, r := range rules() {
		nr, ok := r.nr.on(arch)
		if !ok {
			continue
		}
		body := r.body(opts)
		if body == nil {
			continue
		}
		if len(body) > 255 {
			return nil, fmt.Errorf("seccomp: rule %s: %d instructions exceed a BPF jump", r.name, len(body))
		}
		prog = append(prog, jump(unix.BPF_JEQ, nr, 0, uint8(len(body))))
		prog = append(prog, body...)
	}
	prog = append(prog, ret(retAllow))
	if len(prog) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp: program of %d instructions exceeds %d", len(prog), unix.BPF_MAXINSNS)
	}
	return prog, nil
}

// body is what the program does once the syscall number matched r, or nil
// when opts allow the syscall outright. It always ends in a return.
func (r rule) body(opts Options) []unix.SockFilter {
	switch r.action {
	case denyAlways:
		return []unix.SockFilter{ret(retErrno(unix.EPERM))}
	case denyNamespace:
		if opts.AllowNamespaces {
			return nil
		}
		return []unix.SockFilter{ret(retErrno(unix.EPERM))}
	case denyCloneNamespace:
		if opts.AllowNamespaces {
			return nil
		}
		return []unix.SockFilter{
			load(argLow(0)),
			jump(unix.BPF_JSET, namespaceFlags, 0, 1),
			ret(retErrno(unix.EPERM)),
			ret(retAllow),
		}
	case denyClone3:
		if opts.AllowNamespaces {
			return nil
		}
		return []unix.SockFilter{ret(retErrno(unix.ENOSYS))}
	case denyIoctl:
		return argCases(1, retAllow,
			argCase{[]uint32{tiocsti, tioclinux}, retErrno(unix.EPERM)},
			argCase{preallocIoctls, retErrno(unix.EOPNOTSUPP)})
	case denyPersonality:
		return argIn(0, safePersonas(), retAllow, retErrno(unix.EPERM))
	case denySocketFamily:
		return socketFamilies(opts)
	case denyFaultSignal1:
		return argIn(1, faultSignals, retErrno(unix.EPERM), retAllow)
	case denyFaultSignal2:
		return argIn(2, faultSignals, retErrno(unix.EPERM), retAllow)
	case denySetsigFault:
		sig := argIn(2, faultSignals, retErrno(unix.EPERM), retAllow)
		// Any other command jumps to sig's "otherwise" return: ALLOW.
		return append([]unix.SockFilter{
			load(argLow(1)),
			jump(unix.BPF_JEQ, unix.F_SETSIG, 0, uint8(len(sig)-2)),
		}, sig...)
	case denySharedAnon:
		// Private mappings, file-backed or not, leave at the first test.
		return []unix.SockFilter{
			load(argLow(3)),
			jump(unix.BPF_JSET, mapShared, 0, 2),    // to ALLOW
			jump(unix.BPF_JSET, mapAnonymous, 0, 1), // to ALLOW
			ret(retErrno(unix.EPERM)),
			ret(retAllow),
		}
	case denyNoSys:
		return []unix.SockFilter{ret(retErrno(unix.ENOSYS))}
	case denyNoSupport:
		return []unix.SockFilter{ret(retErrno(unix.EOPNOTSUPP))}
	}
	panic(fmt.Sprintf("seccomp: rule %s has unknown action %d", r.name, r.action))
}

// socketFamilies is the body of socket and socketpair: AF_UNIX always;
// with opts.AllowInet also AF_INET, AF_INET6 and AF_NETLINK with protocol
// NETLINK_ROUTE; anything else fails with EAFNOSUPPORT, as on a kernel built
// without that family.
func socketFamilies(opts Options) []unix.SockFilter {
	deny, allow := retErrno(unix.EAFNOSUPPORT), ret(retAllow)
	if !opts.AllowInet {
		return []unix.SockFilter{
			load(argLow(0)),
			jump(unix.BPF_JEQ, unix.AF_UNIX, 1, 0),
			ret(deny),
			allow,
		}
	}
	return []unix.SockFilter{
		/* 0 */ load(argLow(0)),
		/* 1 */ jump(unix.BPF_JEQ, unix.AF_UNIX, 7, 0), // to 9
		/* 2 */ jump(unix.BPF_JEQ, unix.AF_INET, 6, 0), // to 9
		/* 3 */ jump(unix.BPF_JEQ, unix.AF_INET6, 5, 0), // to 9
		/* 4 */ jump(unix.BPF_JEQ, unix.AF_NETLINK, 1, 0), // to 6
		/* 5 */ ret(deny),
		/* 6 */ load(argLow(2)),
		/* 7 */ jump(unix.BPF_JEQ, unix.NETLINK_ROUTE, 1, 0), // to 9
		/* 8 */ ret(deny),
		/* 9 */ allow,
	}
}

// argIn returns onMatch when the low 32 bits of argument arg equal one of
// values, else otherwise.
func argIn(arg uint32, values []uint32, onMatch, otherwise uint32) []unix.SockFilter {
	return argCases(arg, otherwise, argCase{values, onMatch})
}

// argCase is a verdict for some values of an argument.
type argCase struct {
	values  []uint32
	verdict uint32
}

// argCases returns the verdict of the first case one of whose values the low
// 32 bits of argument arg equal, else otherwise. The program is a load, one
// comparison per value, the "otherwise" return and one return per case.
func argCases(arg uint32, otherwise uint32, cases ...argCase) []unix.SockFilter {
	n := 0
	for _, c := range cases {
		n += len(c.values)
	}
	body := []unix.SockFilter{load(argLow(arg))}
	for k, c := range cases {
		for _, v := range c.values {
			// The comparison at index p jumps to case k's return, at index
			// n+2+k: over the remaining comparisons, the "otherwise" return
			// and the returns of the cases before k.
			p := len(body)
			body = append(body, jump(unix.BPF_JEQ, v, uint8(n+1+k-p), 0))
		}
	}
	body = append(body, ret(otherwise))
	for _, c := range cases {
		body = append(body, ret(c.verdict))
	}
	return body
}

// load loads the 32-bit word at offset of seccomp_data into the accumulator.
func load(offset uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: offset}
}

// jump compares the accumulator with k and skips jt instructions when the
// comparison holds, jf when it does not.
func jump(op uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, Jt: jt, Jf: jf, K: k}
}

// ret ends the program with verdict.
func ret(verdict uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: verdict}
}
