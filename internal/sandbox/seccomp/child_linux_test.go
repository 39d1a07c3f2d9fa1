//go:build linux && (amd64 || arm64 || arm)

package seccomp

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// childEnv makes the test binary a child that runs the probes in the mode
// named by its value, instead of the tests.
const childEnv = "SHELLDON_SECCOMP_TEST_CHILD"

// Child modes.
const (
	modeNone            = "none"             // no filter: the control
	modeDeny            = "deny"             // Install(Options{})
	modeAllowNamespaces = "allow-namespaces" // Install(Options{AllowNamespaces: true})
	modeAllowInet       = "allow-inet"       // Install(Options{AllowInet: true})
	modeX32             = "x32"              // Install(Options{}), then an x32 syscall
)

func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv(childEnv); ok {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child installs the filter for mode, runs the probes and prints their
// outcomes as a JSON object on stdout: "ok", an errno name such as "EPERM",
// or another error's text.
func child(mode string) int {
	var err error
	switch mode {
	case modeNone:
	case modeDeny, modeX32:
		err = Install(Options{})
	case modeAllowNamespaces:
		err = Install(Options{AllowNamespaces: true})
	case modeAllowInet:
		err = Install(Options{AllowInet: true})
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if mode == modeX32 {
		return x32Child()
	}
	outcomes := map[string]string{}
	for _, p := range probes() {
		outcomes[p.name] = outcome(p.run())
	}
	if err := json.NewEncoder(os.Stdout).Encode(outcomes); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

func outcome(err error) string {
	var errno unix.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

// errnoErr turns a raw syscall's errno into an error, nil for success.
func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// closeFd takes a raw syscall's results and closes the fd it returned, if it
// succeeded.
func closeFd(fd, _ uintptr, e unix.Errno) error {
	if e == 0 {
		unix.Close(int(fd))
	}
	return errnoErr(e)
}

// missing is a path that does not exist: the mount probes fail with ENOENT
// when the kernel gets to look, so they change nothing even unfiltered and as
// root.
const missing = "/nonexistent-shelldon-seccomp-probe/x"

type probe struct {
	name string
	run  func() error
}

// probes try the denied operations with arguments that are harmless when
// they do run (the control runs them unfiltered, as root), then ordinary
// work that must still succeed.
func probes() []probe {
	return []probe{
		{"ptrace", probePtrace},
		{"process_vm_readv", func() error {
			src, dst := []byte("probe"), make([]byte, 5)
			local := unix.Iovec{Base: &dst[0]}
			local.SetLen(len(dst))
			_, err := unix.ProcessVMReadv(os.Getpid(), []unix.Iovec{local},
				[]unix.RemoteIovec{{Base: uintptr(unsafe.Pointer(&src[0])), Len: len(src)}}, 0)
			runtime.KeepAlive(src)
			return err
		}},
		{"bpf", func() error {
			var attr [128]byte // BPF_MAP_CREATE of map type 0: EINVAL
			_, _, e := unix.Syscall(unix.SYS_BPF, unix.BPF_MAP_CREATE, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
			return errnoErr(e)
		}},
		{"perf_event_open", func() error {
			attr := unix.PerfEventAttr{
				Type:   unix.PERF_TYPE_SOFTWARE,
				Config: unix.PERF_COUNT_SW_CPU_CLOCK,
				Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
				Bits:   unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv,
			}
			fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"userfaultfd", func() error {
			const uffdUserModeOnly = 1
			return closeFd(unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|uffdUserModeOnly, 0, 0))
		}},
		{"keyctl", func() error {
			_, err := unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_SESSION_KEYRING, 0, 0, 0)
			return err
		}},
		{"request_key", func() error {
			typ, desc := []byte("user\x00"), []byte("shelldon-seccomp-probe\x00")
			// No callout: the kernel answers ENOKEY without an upcall.
			_, _, e := unix.Syscall6(unix.SYS_REQUEST_KEY, uintptr(unsafe.Pointer(&typ[0])), uintptr(unsafe.Pointer(&desc[0])), 0, 0, 0, 0)
			return errnoErr(e)
		}},
		{"mount", func() error { return unix.Mount("none", missing, "tmpfs", 0, "") }},
		{"umount2", func() error { return unix.Unmount(missing, 0) }},
		{"pivot_root", func() error { return unix.PivotRoot(missing, missing) }},
		{"chroot", func() error { return unix.Chroot(missing) }},
		{"fsopen", func() error {
			fd, err := unix.Fsopen("shelldon-no-such-fs", unix.FSOPEN_CLOEXEC)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"io_uring_setup", func() error {
			var params [120]byte // zero entries: EINVAL
			return closeFd(unix.Syscall(unix.SYS_IO_URING_SETUP, 0, uintptr(unsafe.Pointer(&params)), 0))
		}},
		// The Go runtime is multithreaded, so the kernel itself refuses a
		// new user namespace here with EINVAL; the filter answers first.
		{"unshare", func() error { return unix.Unshare(unix.CLONE_NEWUSER) }},
		{"setns", func() error { return unix.Setns(-1, 0) }},
		{"clone_newuser", func() error {
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
			return cmd.Run()
		}},
		{"clone3", func() error {
			// A size of 0 makes the kernel answer EINVAL before it clones.
			_, _, e := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
			return errnoErr(e)
		}},
		{"unshare_cmd", func() error { return run("unshare", "-U", "true") }},
		{"tiocsti", func() error {
			return withPty(func(_, slave int) error {
				c := byte('#')
				_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(slave), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
				return errnoErr(e)
			})
		}},
		{"tiocsti_master", func() error {
			return withPty(func(master, _ int) error {
				c := byte('#')
				_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(master), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
				return errnoErr(e)
			})
		}},
		{"tioclinux", func() error {
			return withPty(func(_, slave int) error {
				subcode := byte(0) // no such subcode; a pty is no VT anyway
				_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(slave), unix.TIOCLINUX, uintptr(unsafe.Pointer(&subcode)))
				return errnoErr(e)
			})
		}},
		{"personality_aslr", func() error {
			const addrNoRandomize = 0x0040000
			old, _, e := unix.Syscall(unix.SYS_PERSONALITY, addrNoRandomize, 0, 0)
			if e == 0 {
				unix.Syscall(unix.SYS_PERSONALITY, old, 0, 0)
			}
			return errnoErr(e)
		}},

		// Sockets by family.
		{"socket_unix", socketProbe(unix.AF_UNIX, unix.SOCK_STREAM, 0)},
		{"socket_unix_dgram", socketProbe(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)},
		{"socketpair_unix", func() error {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err == nil {
				unix.Close(fds[0])
				unix.Close(fds[1])
			}
			return err
		}},
		{"socket_inet", socketProbe(unix.AF_INET, unix.SOCK_STREAM, 0)},
		{"socket_inet_udp", socketProbe(unix.AF_INET, unix.SOCK_DGRAM, 0)},
		{"socket_inet6", socketProbe(unix.AF_INET6, unix.SOCK_STREAM, 0)},
		{"socket_netlink_route", socketProbe(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)},
		{"socket_netlink_audit", socketProbe(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT)},
		{"socket_vsock", socketProbe(unix.AF_VSOCK, unix.SOCK_STREAM, 0)},
		{"socket_packet", socketProbe(unix.AF_PACKET, unix.SOCK_DGRAM, 0)},

		// Fault signals with a made-up siginfo, sent to a child of ours
		// (unfiltered, the control kills it), and F_SETSIG.
		{"sigqueue_segv", func() error { return toChild(sigqueue(unix.SIGSEGV)) }},
		{"sigqueue_usr1", func() error { return toChild(sigqueue(unix.SIGUSR1)) }},
		{"pidfd_segv", func() error {
			return toChild(func(pid int) error {
				fd, err := unix.PidfdOpen(pid, 0)
				if err != nil {
					return fmt.Errorf("pidfd_open: %v", err)
				}
				defer unix.Close(fd)
				info := unix.Siginfo{Signo: int32(unix.SIGSEGV), Code: siQueue}
				return unix.PidfdSendSignal(fd, unix.SIGSEGV, &info, 0)
			})
		}},
		{"setsig_segv", setsigProbe(unix.SIGSEGV)},
		{"setsig_rt", setsigProbe(40)},

		// Memory beyond RLIMIT_DATA, and the mappings that must stay.
		{"mmap_shared_anon", mmapProbe(-1, unix.MAP_SHARED|unix.MAP_ANONYMOUS)},
		{"mmap_private_anon", mmapProbe(-1, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)},
		// What the vDSO's getrandom asks for its state (the Go runtime's
		// crypto/rand among others); a kernel before 6.11 has no
		// MAP_DROPPABLE and answers EINVAL, which is not the filter's.
		{"mmap_droppable_anon", func() error {
			err := mmapProbe(-1, unix.MAP_DROPPABLE|unix.MAP_ANONYMOUS)()
			if errors.Is(err, unix.EINVAL) {
				return nil
			}
			return err
		}},
		{"mmap_shared_file", withTempFile(func(f *os.File) error {
			if err := f.Truncate(1 << 20); err != nil {
				return err
			}
			return mmapProbe(int(f.Fd()), unix.MAP_SHARED)()
		})},
		{"mremap_grow", func() error {
			b, err := unix.Mmap(-1, 0, 1<<16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
			if err != nil {
				return fmt.Errorf("mmap: %v", err)
			}
			b, err = unix.Mremap(b, 1<<20, unix.MREMAP_MAYMOVE)
			if err == nil {
				b[1<<19] = 1
			}
			unix.Munmap(b)
			return err
		}},
		{"memfd_create", func() error {
			fd, err := unix.MemfdCreate("seccomp-probe", unix.MFD_CLOEXEC)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"shmget", func() error {
			// Unfiltered, the control makes a segment in the host's IPC
			// namespace: remove it at once.
			id, _, e := unix.Syscall(unix.SYS_SHMGET, unix.IPC_PRIVATE, 1<<16, unix.IPC_CREAT|0o600)
			if e == 0 {
				unix.Syscall(unix.SYS_SHMCTL, id, unix.IPC_RMID, 0)
			}
			return errnoErr(e)
		}},
		{"msgget", func() error {
			id, _, e := unix.Syscall(unix.SYS_MSGGET, unix.IPC_PRIVATE, unix.IPC_CREAT|0o600, 0)
			if e == 0 {
				unix.Syscall(unix.SYS_MSGCTL, id, unix.IPC_RMID, 0)
			}
			return errnoErr(e)
		}},

		// Disk space without writes: fallocate and its ioctl twin, on a file
		// in TMPDIR (a disk file system that has fallocate).
		{"fallocate", withTempFile(func(f *os.File) error {
			return unix.Fallocate(int(f.Fd()), 0, 0, 1<<20)
		})},
		{"fallocate_keep_size", withTempFile(func(f *os.File) error {
			return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, 1<<20)
		})},
		{"ioctl_resvsp64", withTempFile(func(f *os.File) error {
			// struct space_resv: l_type, l_whence (SEEK_SET), l_start,
			// l_len, l_sysid, l_pid, l_pad[4]: 48 bytes.
			var sr [48]byte
			binary.NativeEndian.PutUint64(sr[16:], 1<<20)
			_, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), uintptr(preallocIoctls[1]), uintptr(unsafe.Pointer(&sr)))
			return errnoErr(e)
		})},

		// Ordinary work.
		{"ioctl_tiocgwinsz", func() error {
			return withPty(func(_, slave int) error {
				_, err := unix.IoctlGetWinsize(slave, unix.TIOCGWINSZ)
				return err
			})
		}},
		{"personality_query", func() error {
			_, _, e := unix.Syscall(unix.SYS_PERSONALITY, personalityQuery, 0, 0)
			return errnoErr(e)
		}},
		{"personality_linux", func() error {
			_, _, e := unix.Syscall(unix.SYS_PERSONALITY, perLinux, 0, 0)
			return errnoErr(e)
		}},
		{"file", probeFile},
		{"getpid", func() error {
			if pid := unix.Getpid(); pid != os.Getpid() || pid <= 0 {
				return fmt.Errorf("getpid returned %d", pid)
			}
			return nil
		}},
		{"sh", func() error {
			out, err := exec.Command("/bin/sh", "-c", "echo ok").Output()
			if err == nil && string(out) != "ok\n" {
				err = fmt.Errorf("sh printed %q", out)
			}
			return err
		}},
		{"go_runtime", probeGoRuntime},
		{"threads_filtered", probeThreadsFiltered},
	}
}

// mmapProbe maps 1 MiB of fd (-1: none) with flags, writes to it and unmaps
// it.
func mmapProbe(fd, flags int) func() error {
	return func() error {
		b, err := unix.Mmap(fd, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, flags)
		if err != nil {
			return err
		}
		b[0], b[len(b)-1] = 1, 1
		return unix.Munmap(b)
	}
}

// withTempFile runs f on a fresh file in TMPDIR.
func withTempFile(f func(*os.File) error) func() error {
	return func() error {
		file, err := os.CreateTemp("", "seccomp-probe-*")
		if err != nil {
			return fmt.Errorf("create: %v", err)
		}
		defer os.Remove(file.Name())
		defer file.Close()
		return f(file)
	}
}

// socketProbe makes a socket and closes it.
func socketProbe(family, typ, proto int) func() error {
	return func() error {
		fd, err := unix.Socket(family, typ|unix.SOCK_CLOEXEC, proto)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
}

// siQueue is SI_QUEUE, the si_code of sigqueue(3).
const siQueue = -1

// sigqueue queues sig with a sigqueue(3) siginfo.
func sigqueue(sig unix.Signal) func(pid int) error {
	return func(pid int) error {
		info := unix.Siginfo{Signo: int32(sig), Code: siQueue}
		_, _, e := unix.Syscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(sig), uintptr(unsafe.Pointer(&info)))
		return errnoErr(e)
	}
}

// toChild runs send on a sleeping child of ours, then ends it.
func toChild(send func(pid int) error) error {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start sleep: %v", err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	return send(cmd.Process.Pid)
}

// setsigProbe sets sig as the I/O signal of a pipe (nothing is owner, so
// nothing is ever sent).
func setsigProbe(sig unix.Signal) func() error {
	return func() error {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			return fmt.Errorf("pipe: %v", err)
		}
		defer unix.Close(p[0])
		defer unix.Close(p[1])
		_, err := unix.FcntlInt(uintptr(p[0]), unix.F_SETSIG, int(sig))
		return err
	}
}

// run runs a command and reports its stderr with a failure.
func run(name string, args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// probePtrace attaches to a child of its own, which ptrace would allow
// without the filter.
func probePtrace() error {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start sleep: %v", err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	runtime.LockOSThread() // ptrace binds the tracee to this thread
	defer runtime.UnlockOSThread()
	err := unix.PtraceAttach(cmd.Process.Pid)
	if err == nil {
		unix.PtraceDetach(cmd.Process.Pid)
	}
	return err
}

// withPty opens a pseudo-terminal pair from /dev/ptmx for f.
func withPty(f func(master, slave int) error) error {
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /dev/ptmx: %v", err)
	}
	defer unix.Close(master)
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		return fmt.Errorf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(master, unix.TIOCGPTN)
	if err != nil {
		return fmt.Errorf("pty number: %v", err)
	}
	slave, err := unix.Open(fmt.Sprintf("/dev/pts/%d", n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open pty slave: %v", err)
	}
	defer unix.Close(slave)
	return f(master, slave)
}

func probeFile() error {
	f, err := os.CreateTemp("", "seccomp-probe-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.WriteString("hello"); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	b, err := io.ReadAll(f)
	if err == nil && string(b) != "hello" {
		err = fmt.Errorf("read back %q", b)
	}
	return err
}

// probeGoRuntime runs goroutines on fresh OS threads (a goroutine that exits
// locked to its thread takes the thread with it, so the runtime must clone
// new ones under the filter), timers and a ticker.
func probeGoRuntime() error {
	var wg sync.WaitGroup
	done := make(chan int, 16)
	for i := range 16 {
		wg.Go(func() {
			runtime.LockOSThread()
			time.Sleep(time.Millisecond)
			done <- i
		})
	}
	fired := make(chan struct{})
	time.AfterFunc(2*time.Millisecond, func() { close(fired) })
	ticker := time.NewTicker(time.Millisecond)
	defer ticker.Stop()
	for range 3 {
		<-ticker.C
	}
	wg.Wait()
	<-fired
	runtime.GC()
	if len(done) != 16 {
		return fmt.Errorf("%d of 16 goroutines finished", len(done))
	}
	return nil
}

// probeThreadsFiltered checks that every thread runs under the filter with
// no_new_privs (TSYNC), including those created after Install.
func probeThreadsFiltered() error {
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(tasks) == 0 {
		return fmt.Errorf("list threads: %v", err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH) {
			continue // the thread ended between the listing and the read
		}
		if err != nil {
			return err
		}
		s := string(b)
		if !strings.Contains(s, "\nSeccomp:\t2\n") || !strings.Contains(s, "\nNoNewPrivs:\t1\n") {
			return fmt.Errorf("%s: not filtered, or no no_new_privs", task)
		}
	}
	return nil
}

// x32Child makes the no-syscall -1, which must fail with ENOSYS, reports it,
// then an x32 syscall, which must kill the process.
func x32Child() int {
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	_, _, e := unix.Syscall(^uintptr(0), 0, 0, 0)
	fmt.Printf("nr -1: %s\n", outcome(errnoErr(e)))
	_, _, e = unix.Syscall(x32SyscallBit|unix.SYS_GETPID, 0, 0, 0)
	fmt.Printf("x32 getpid survived: %s\n", outcome(errnoErr(e)))
	return 0
}
