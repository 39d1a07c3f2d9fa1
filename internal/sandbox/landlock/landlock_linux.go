//go:build linux

package landlock

import (
	"errors"
	"fmt"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxKnownABI is the newest Landlock ABI whose rights this package knows. A
// newer kernel is used as if it were this one: rights added after it are not
// handled, so they stay unrestricted until they are added here.
const maxKnownABI = 7

// Filesystem access rights, by the ABI that introduced them.
const (
	fsV1 = unix.LANDLOCK_ACCESS_FS_EXECUTE |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	fsV2 = fsV1 | unix.LANDLOCK_ACCESS_FS_REFER
	fsV3 = fsV2 | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	fsV5 = fsV3 | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	// fsRead is what a ReadOnly path grants.
	fsRead = unix.LANDLOCK_ACCESS_FS_EXECUTE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR
	// fsFile are the rights that mean something on a file rather than a
	// directory; the kernel rejects a file rule holding any other.
	fsFile = unix.LANDLOCK_ACCESS_FS_EXECUTE |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	netTCP   = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	scopeAll = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
)

// rulesetAttr is the kernel's struct landlock_ruleset_attr up to ABI 6. The
// struct in x/sys/unix carries later fields; its size is not one every kernel
// accepts.
type rulesetAttr struct {
	handledAccessFS  uint64 // ABI 1
	handledAccessNet uint64 // ABI 4
	scoped           uint64 // ABI 6
}

// pathBeneathAttr is the kernel's packed struct landlock_path_beneath_attr:
// the kernel reads its first 12 bytes, whatever padding Go adds after.
type pathBeneathAttr struct {
	allowedAccess uint64
	parentFD      int32
}

// plan is what RestrictThread asks of a kernel with a given ABI.
type plan struct {
	attr      rulesetAttr
	size      uintptr // bytes of attr passed: only the fields in use
	readOnly  uint64  // rights beneath a ReadOnly directory
	readWrite uint64  // rights beneath a ReadWrite directory
	missing   []string
}

// planFor maps an ABI version and rules to the ruleset to build.
func planFor(abi int, r Rules) plan {
	var p plan
	switch {
	case abi >= 5:
		p.attr.handledAccessFS = fsV5
	case abi >= 3:
		p.attr.handledAccessFS = fsV3
	case abi >= 2:
		p.attr.handledAccessFS = fsV2
	default:
		p.attr.handledAccessFS = fsV1
	}
	p.size = unsafe.Offsetof(p.attr.handledAccessNet)
	if !r.AllowTCP && abi >= 4 {
		p.attr.handledAccessNet = netTCP
		p.size = unsafe.Offsetof(p.attr.scoped)
	}
	if r.Scope && abi >= 6 {
		p.attr.scoped = scopeAll
		p.size = unsafe.Sizeof(p.attr)
	}
	p.readOnly = p.attr.handledAccessFS & fsRead
	p.readWrite = p.attr.handledAccessFS

	if abi < 3 {
		p.missing = append(p.missing, "truncating files is not restricted (needs Landlock ABI 3, Linux 6.2)")
	}
	if abi < 4 && !r.AllowTCP {
		p.missing = append(p.missing, "TCP bind and connect are not restricted (needs Landlock ABI 4, Linux 6.7)")
	}
	if abi < 5 {
		p.missing = append(p.missing, "ioctl on device files is not restricted (needs Landlock ABI 5, Linux 6.10)")
	}
	if abi < 6 && r.Scope {
		p.missing = append(p.missing, "abstract unix sockets and signals are not scoped (needs Landlock ABI 6, Linux 6.12)")
	}
	return p
}

// ABI returns the running kernel's Landlock ABI version (1 or more), or 0 and
// an error saying which part is missing. The errors wrap the errno, so
// errors.Is(err, errors.ErrUnsupported) holds when the kernel lacks Landlock.
func ABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == unix.ENOSYS:
		return 0, fmt.Errorf("landlock: kernel built without Landlock (CONFIG_SECURITY_LANDLOCK): %w", errno)
	case errno == unix.EOPNOTSUPP:
		return 0, fmt.Errorf("landlock: Landlock is disabled at boot (landlock is not in the lsm= list): %w", errno)
	case errno != 0:
		return 0, fmt.Errorf("landlock: probe ABI version: %w", errno)
	case int(v) < 1:
		return 0, fmt.Errorf("landlock: kernel reports ABI version %d", int(v))
	}
	return int(v), nil
}

// RestrictThread confines the calling OS thread to r, for good: a Landlock
// domain can be narrowed further, never lifted.
//
// Landlock applies to the CALLING THREAD ONLY, and to the processes that thread
// forks afterwards; the other threads of a Go process stay unrestricted, and the
// Go scheduler moves goroutines between threads. So the caller must:
//
//  1. call runtime.LockOSThread before RestrictThread, and never
//     runtime.UnlockOSThread after it (when the goroutine returns, the runtime
//     retires the restricted thread instead of reusing it);
//  2. start the code to confine (os/exec's Cmd.Start, or syscall.Exec) from
//     that same locked goroutine: the child inherits the domain, and so do its
//     children;
//  3. open beforehand, or list in the rules, every file the start itself
//     needs: os/exec opens /dev/null for a nil Stdin, Stdout or Stderr.
//
// It handles every access right the running ABI knows (filesystem, TCP when
// !r.AllowTCP, scoping when r.Scope), allows r's paths beneath, sets
// PR_SET_NO_NEW_PRIVS on the thread and enters the domain. A rule path that
// does not exist is skipped and reported in Applied.Missing; one that cannot be
// opened for any other reason is an error, and the thread is left unrestricted.
// When the kernel has no Landlock, RestrictThread returns ABI's error: it never
// pretends.
func RestrictThread(r Rules) (Applied, error) {
	abi, err := ABI()
	if err != nil {
		return Applied{}, err
	}
	p := planFor(min(abi, maxKnownABI), r)
	applied := Applied{
		ABI:     abi,
		FS:      true,
		Net:     p.attr.handledAccessNet != 0,
		Scoped:  p.attr.scoped != 0,
		Missing: p.missing,
	}

	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&p.attr)), p.size, 0)
	if errno != 0 {
		return Applied{}, fmt.Errorf("landlock: create ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)

	for _, set := range []struct {
		kind   string
		paths  []string
		rights uint64
	}{
		{"read-only", r.ReadOnly, p.readOnly},
		{"read-write", r.ReadWrite, p.readWrite},
	} {
		for _, path := range set.paths {
			err := allowBeneath(ruleset, path, set.rights)
			if errors.Is(err, unix.ENOENT) {
				applied.Missing = append(applied.Missing, fmt.Sprintf("%s path %q does not exist (skipped)", set.kind, path))
				continue
			}
			if err != nil {
				return Applied{}, fmt.Errorf("landlock: %s path %q: %w", set.kind, path, err)
			}
		}
	}

	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return Applied{}, fmt.Errorf("landlock: set no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return Applied{}, fmt.Errorf("landlock: restrict self: %w", errno)
	}
	return applied, nil
}

// allowBeneath adds a rule granting rights beneath path, or only the
// file-applicable part of them when path is not a directory.
func allowBeneath(ruleset int, path string, rights uint64) error {
	if !filepath.IsAbs(path) {
		return errors.New("not an absolute path")
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= fsFile
	}
	attr := pathBeneathAttr{allowedAccess: rights, parentFD: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset),
		unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("add rule: %w", errno)
	}
	return nil
}
