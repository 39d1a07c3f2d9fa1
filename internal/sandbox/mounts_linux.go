//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// systemDirs are the host directories every sandbox sees, read-only. A
// directory that is a symlink on the host (merged /usr) becomes the same
// symlink inside.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}

// etcFiles are the few host files of /etc a command needs; the rest of /etc
// (shadow, ssh keys, the owner's configuration) stays out of view.
var etcFiles = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
	"/etc/localtime", "/etc/nsswitch.conf", "/etc/ssl", "/etc/ca-certificates",
	"/etc/mime.types", "/etc/protocols", "/etc/services",
}

// devices are the device nodes bound into the sandbox's /dev.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// synthetic files replace their host versions inside the sandbox. A
// sandbox with the network gets the host's resolv.conf instead of an empty
// one (hostResolvConf). Pairs of name and content, a static table, rather
// than a map literal, which every process of the binary would build at
// package init, the idle daemon included (package lazy).
var synthetic = [][2]string{
	{"/etc/passwd", "root:x:0:0:sandbox:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
	{"/etc/group", "root:x:0:\nnogroup:x:65534:\n"},
	{"/etc/hosts", "127.0.0.1 localhost\n::1 localhost\n"},
	{"/etc/hostname", "sandbox\n"},
	{"/etc/resolv.conf", ""},
}

// shmSize bounds the sandbox's /dev/shm, which only POSIX shared memory and
// semaphores use: it need not be as large as /tmp, and both are RAM.
const shmSize = 16 << 20

// tmpfsOptions are the mount options of a private tmpfs of size bytes: one
// inode per 4 KiB, at least 256.
func tmpfsOptions(size int64) string {
	return fmt.Sprintf("mode=1777,size=%d,nr_inodes=%d", size, max(size/4096, 256))
}

// procReadOnly are the parts of /proc through which a process changes
// kernel state of the whole host: the kernel lets a process write them by
// its uid alone (host root: the uid a root daemon's sandbox runs as), not
// by its capabilities, so each is bound read-only over itself, as runc does.
var procReadOnly = []string{"sys", "sysrq-trigger", "irq", "bus", "fs", "asound"}

// procMasked are /proc files and directories a sandbox has no business
// reading (kernel memory and addresses, page, slab and vmalloc state, every
// host task's timers and scheduling, the kernel log, key rings) or writing
// (latency_stats, timer_stats, acpi, scsi). A file is covered by /dev/null,
// a directory by an empty read-only tmpfs. Left alone: what ps, top, free,
// uptime and language runtimes read (meminfo, cpuinfo, stat, uptime,
// loadavg, the sandbox's own processes), sysvipc (the sandbox's own IPC
// namespace) and config.gz (the kernel's build options: nothing secret,
// nothing to write).
var procMasked = []string{"kcore", "kmsg", "keys", "key-users", "latency_stats", "timer_list", "timer_stats",
	"sched_debug", "kpageflags", "kpagecount", "kpagecgroup", "slabinfo", "vmallocinfo", "pagetypeinfo", "kallsyms",
	"acpi", "scsi"}

// nestDir holds, in a sandbox that builds nested sandboxes, a second proc
// of its PID namespace without masks. The kernel lets a user namespace
// mount a proc only when a proc it can see whole is already mounted, and
// mounts inherited from another user namespace are locked: a masked proc
// is not seen whole from the nested sandbox. nestDir is then covered by an
// empty read-only tmpfs, so no path reaches that proc; the kernel still
// counts it.
const nestDir = "/.nest"

// resolvConfMax caps the host's resolv.conf copied into a sandbox.
const resolvConfMax = 64 << 10

// rootInfo is what buildRoot reports about the view it built.
type rootInfo struct {
	procOpts string   // the options /proc was mounted with
	masked   string   // how /proc is masked (LayerProcMasked's detail)
	ipc      string   // the IPC limits set (detail of LayerIPCNS), or ""
	skipped  []string // what could not be put in place, and why
}

// bind is one host path made visible in the sandbox.
type bind struct {
	src, dst string
	fd       int  // O_PATH descriptor of src, taken before anything is hidden
	dir      bool // src is a directory
	link     string
	writable bool
}

// buildRoot builds the sandbox's file system view and pivots into it: a
// tmpfs root holding read-only binds of the system directories and a few
// /etc files, the workspace read-write, a private /tmp and /dev/shm, a fresh
// /proc of the sandbox's PID namespace and a minimal /dev. Nothing else of
// the host (the owner's home, shelldon's home, other processes) exists
// inside. /proc is mounted hidepid=2, which hides the processes the target
// may not ptrace, the helper among them, and its host-wide parts are
// read-only or masked (hardenProc).
func buildRoot(sp spec) (info rootInfo, _ error) {
	fail := func(err error) (rootInfo, error) { return rootInfo{}, err }
	// Nothing done here may propagate to the host's mount namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fail(fmt.Errorf("make mounts private: %w", err))
	}
	// With the network, names resolve as on the host: its resolv.conf
	// (through any symlink, systemd-resolved's stub among them; the
	// sandbox shares the host's network, 127.0.0.53 included). Without, an
	// empty one, and /etc/hosts is always the sandbox's own.
	resolv := ""
	if sp.Network {
		var err error
		if resolv, err = hostResolvConf("/etc/resolv.conf", resolvConfMax); err != nil {
			info.skipped = append(info.skipped, "resolv.conf: the host's is unreadable, so the sandbox's is empty: "+err.Error())
		}
	}
	var binds []bind
	add := func(src string, writable bool) error {
		fi, err := os.Lstat(src)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("stat %s: %w", src, err)
		}
		b := bind{src: src, dst: src, writable: writable, fd: -1}
		if fi.Mode()&os.ModeSymlink != 0 && isSystemPath(src) {
			if b.link, err = os.Readlink(src); err != nil {
				return fmt.Errorf("read link %s: %w", src, err)
			}
			binds = append(binds, b)
			return nil
		}
		fd, err := unix.Open(src, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", src, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return fmt.Errorf("stat %s: %w", src, err)
		}
		b.fd, b.dir = fd, st.Mode&unix.S_IFMT == unix.S_IFDIR
		binds = append(binds, b)
		return nil
	}
	for _, d := range append(append(append([]string{}, systemDirs...), etcFiles...), devices...) {
		if err := add(d, strings.HasPrefix(d, "/dev/")); err != nil {
			return fail(err)
		}
	}
	for _, p := range sp.ReadOnly {
		if underSystem(filepath.Clean(p)) {
			continue // already visible, read-only, through a system directory
		}
		if err := add(filepath.Clean(p), false); err != nil {
			return fail(err)
		}
	}
	if sp.Workspace != "" {
		if err := add(filepath.Clean(sp.Workspace), true); err != nil {
			return fail(err)
		}
	}

	// The new root is a tmpfs mounted over /tmp of this (private) namespace;
	// the binds reach their sources through the descriptors taken above.
	const root = "/tmp"
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fail(fmt.Errorf("mount the sandbox root: %w", err))
	}
	for _, dir := range []string{"/proc", "/tmp", "/dev/shm", "/etc"} {
		if err := os.MkdirAll(root+dir, 0o755); err != nil {
			return fail(fmt.Errorf("create %s: %w", dir, err))
		}
	}
	// The private /tmp comes first, so a workspace below the host's /tmp is
	// bound on top of it rather than hidden by it. Both are memory: each is
	// bounded in bytes and in inodes (empty files and hard links take no
	// bytes, but kernel memory all the same).
	for _, m := range []struct {
		dir  string
		size int64
	}{{"/tmp", sp.TmpSize}, {"/dev/shm", min(sp.TmpSize, shmSize)}} {
		if err := unix.Mount("tmpfs", root+m.dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, tmpfsOptions(m.size)); err != nil {
			return fail(fmt.Errorf("mount %s: %w", m.dir, err))
		}
	}
	for _, b := range binds {
		if err := b.mount(root); err != nil {
			return fail(err)
		}
	}
	if err := mountCovers(root, sp.Covers); err != nil {
		return fail(err)
	}
	for _, f := range synthetic {
		name, content := f[0], f[1]
		if name == "/etc/resolv.conf" && sp.Network {
			content = resolv
		}
		if err := os.WriteFile(root+name, []byte(content), 0o644); err != nil {
			return fail(fmt.Errorf("write %s: %w", name, err))
		}
	}
	for name, target := range map[string]string{"/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0",
		"/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, root+name); err != nil {
			return fail(fmt.Errorf("link %s: %w", name, err))
		}
	}
	// hidepid=2: a process the target may not ptrace (the helper, which is
	// not dumpable) has no /proc entry at all for it. Members of the
	// mount's gid see everything, and it defaults to root's group, which a
	// root daemon's sandbox is in: gid=65534 is not mapped in the sandbox
	// (only its own 0 is), so no process of it is exempt. A kernel that
	// refuses the options gets less; the helper stays unreadable anyway,
	// since it is not dumpable.
	procFlags := uintptr(unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	var err error
	for _, info.procOpts = range []string{"hidepid=2,gid=65534", "hidepid=2", ""} {
		if err = unix.Mount("proc", root+"/proc", "proc", procFlags, info.procOpts); err != unix.EINVAL {
			break
		}
	}
	if err != nil {
		return fail(fmt.Errorf("mount /proc: %w", err))
	}
	// The IPC namespace's own limits, while /proc/sys is still writable.
	info.ipc, err = limitIPC(root + "/proc")
	if err != nil {
		info.skipped = append(info.skipped, "IPC limits: "+err.Error())
	}
	if sp.Nested {
		// Unmasked, for the nested sandboxes' own procs (nestDir), then
		// out of reach of any path.
		if err := os.MkdirAll(root+nestDir+"/proc", 0o755); err != nil {
			return fail(fmt.Errorf("create %s: %w", nestDir, err))
		}
		if err := unix.Mount("proc", root+nestDir+"/proc", "proc", procFlags, info.procOpts); err != nil {
			return fail(fmt.Errorf("mount the nested sandboxes' proc: %w", err))
		}
		if err := unix.Mount("tmpfs", root+nestDir, "tmpfs", emptyTmpfsFlags, emptyTmpfsOptions); err != nil {
			return fail(fmt.Errorf("cover %s: %w", nestDir, err))
		}
	}
	if info.masked, err = hardenProc(root+"/proc", root+"/dev/null"); err != nil {
		return fail(err)
	}

	// Enter the new root; the old one is detached and gone from view.
	if err := unix.Chdir(root); err != nil {
		return fail(fmt.Errorf("enter the sandbox root: %w", err))
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fail(fmt.Errorf("pivot_root: %w", err))
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fail(fmt.Errorf("detach the host's root: %w", err))
	}
	if err := unix.Chdir("/"); err != nil {
		return fail(fmt.Errorf("chdir /: %w", err))
	}
	// The root itself becomes read-only: only the workspace, /tmp and
	// /dev/shm stay writable.
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fail(fmt.Errorf("make the root read-only: %w", err))
	}
	return info, nil
}

// emptyTmpfs* mount an empty, read-only tmpfs: a masked directory.
const (
	emptyTmpfsFlags   = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	emptyTmpfsOptions = "mode=0555,size=4k,nr_inodes=1"
)

// hardenProc makes the host-wide parts of the fresh proc at proc read-only
// (procReadOnly) and masks the others (procMasked), with devNull over
// files. Paths this kernel does not have are left out. It says what it did.
func hardenProc(proc, devNull string) (string, error) {
	var ro, masked []string
	for _, name := range procReadOnly {
		p := proc + "/" + name
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return "", fmt.Errorf("stat /proc/%s: %w", name, err)
		}
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return "", fmt.Errorf("bind /proc/%s: %w", name, err)
		}
		if err := remount(p, false, unix.MS_NOEXEC|unix.MS_NODEV); err != nil {
			return "", fmt.Errorf("make /proc/%s read-only: %w", name, err)
		}
		ro = append(ro, name)
	}
	for _, name := range procMasked {
		p := proc + "/" + name
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return "", fmt.Errorf("stat /proc/%s: %w", name, err)
		}
		if fi.IsDir() {
			err = unix.Mount("tmpfs", p, "tmpfs", emptyTmpfsFlags, emptyTmpfsOptions)
		} else {
			err = unix.Mount(devNull, p, "", unix.MS_BIND, "")
		}
		if err != nil {
			return "", fmt.Errorf("mask /proc/%s: %w", name, err)
		}
		masked = append(masked, name)
	}
	return fmt.Sprintf("read-only: %s; masked: %s", strings.Join(ro, " "), strings.Join(masked, " ")), nil
}

// ipcLimits are System V IPC limits of the sandbox's own IPC namespace:
// shared memory is not bounded by RLIMIT_DATA, message queues are kernel
// memory. At most 16 segments of together 16 MiB (as much as /dev/shm
// holds), and 16 message queues (of 16 KiB each, kernel.msgmnb).
func ipcLimits() [][2]string {
	return [][2]string{
		{"shmmax", strconv.Itoa(shmSize)},
		{"shmall", strconv.Itoa(shmSize / os.Getpagesize())},
		{"shmmni", "16"},
		{"msgmni", "16"},
	}
}

// limitIPC writes ipcLimits through proc's kernel sysctls, which act on the
// writer's IPC namespace. Linux 5.19 and later let the namespace's root
// (the helper) write them; an earlier kernel only the host's root user.
func limitIPC(proc string) (string, error) {
	var set []string
	for _, kv := range ipcLimits() {
		if err := os.WriteFile(proc+"/sys/kernel/"+kv[0], []byte(kv[1]), 0); err != nil {
			if len(set) == 0 {
				return "", fmt.Errorf("kernel.%s not set (%w); System V IPC keeps the kernel's defaults", kv[0], err)
			}
			return strings.Join(set, " "), fmt.Errorf("kernel.%s not set: %w", kv[0], err)
		}
		set = append(set, "kernel."+kv[0]+"="+kv[1])
	}
	return strings.Join(set, " "), nil
}

// hostResolvConf reads the host's resolv.conf at path, following symlinks,
// up to max bytes, cut at the last whole line.
func hostResolvConf(path string, max int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return "", err
	}
	if len(data) > max {
		data = data[:max]
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			data = data[:i+1]
		} else {
			data = nil
		}
	}
	return string(data), nil
}

// underSystem reports whether p lies inside one of the system directories
// every sandbox sees.
func underSystem(p string) bool {
	for _, d := range systemDirs {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

func isSystemPath(p string) bool {
	for _, d := range systemDirs {
		if p == d {
			return true
		}
	}
	return false
}

// mount makes b visible under root, read-only unless writable.
func (b bind) mount(root string) error {
	dst := root + b.dst
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(b.dst), err)
	}
	if b.link != "" {
		if err := os.Symlink(b.link, dst); err != nil {
			return fmt.Errorf("link %s: %w", b.dst, err)
		}
		return nil
	}
	defer unix.Close(b.fd)
	if b.dir {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", b.dst, err)
		}
	} else if err := os.WriteFile(dst, nil, 0o644); err != nil {
		return fmt.Errorf("create %s: %w", b.dst, err)
	}
	src := "/proc/self/fd/" + strconv.Itoa(b.fd)
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", b.src, err)
	}
	extra := uintptr(unix.MS_NODEV)
	if strings.HasPrefix(b.dst, "/dev/") {
		extra = 0
	}
	if err := remount(dst, b.writable, extra); err != nil {
		return fmt.Errorf("remount %s read-only: %w", b.dst, err)
	}
	return nil
}

// remount makes the bind mount at path read-only unless writable, nosuid
// and extra. Remounting must keep the flags the kernel locked on the source
// mount (nosuid, nodev, noexec, the atime ones), or it fails in a user
// namespace.
func remount(path string, writable bool, extra uintptr) error {
	var sfs unix.Statfs_t
	if err := unix.Statfs(path, &sfs); err != nil {
		return fmt.Errorf("statfs: %w", err)
	}
	flags := uintptr(unix.MS_REMOUNT|unix.MS_BIND|unix.MS_NOSUID) | extra
	if !writable {
		flags |= unix.MS_RDONLY
	}
	for _, f := range []struct{ st, ms int64 }{
		{unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if int64(sfs.Flags)&f.st != 0 {
			flags |= uintptr(f.ms)
		}
	}
	return unix.Mount("", path, "", flags, "")
}
