//go:build linux

package sandbox

import (
	"fmt"
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

// synthetic files replace their host versions inside the sandbox.
var synthetic = map[string]string{
	"/etc/passwd":      "root:x:0:0:sandbox:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
	"/etc/group":       "root:x:0:\nnogroup:x:65534:\n",
	"/etc/hosts":       "127.0.0.1 localhost\n::1 localhost\n",
	"/etc/hostname":    "sandbox\n",
	"/etc/resolv.conf": "",
}

// shmSize bounds the sandbox's /dev/shm, which only POSIX shared memory and
// semaphores use: it need not be as large as /tmp, and both are RAM.
const shmSize = 16 << 20

// tmpfsOptions are the mount options of a private tmpfs of size bytes: one
// inode per 4 KiB, at least 256.
func tmpfsOptions(size int64) string {
	return fmt.Sprintf("mode=1777,size=%d,nr_inodes=%d", size, max(size/4096, 256))
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
// inside. It returns the options /proc was mounted with: hidepid=2 hides
// the processes the target may not ptrace, the helper among them.
func buildRoot(sp spec) (procOpts string, _ error) {
	// Nothing done here may propagate to the host's mount namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return "", fmt.Errorf("make mounts private: %w", err)
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
			return "", err
		}
	}
	for _, p := range sp.ReadOnly {
		if underSystem(filepath.Clean(p)) {
			continue // already visible, read-only, through a system directory
		}
		if err := add(filepath.Clean(p), false); err != nil {
			return "", err
		}
	}
	if sp.Workspace != "" {
		if err := add(filepath.Clean(sp.Workspace), true); err != nil {
			return "", err
		}
	}

	// The new root is a tmpfs mounted over /tmp of this (private) namespace;
	// the binds reach their sources through the descriptors taken above.
	const root = "/tmp"
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return "", fmt.Errorf("mount the sandbox root: %w", err)
	}
	for _, dir := range []string{"/proc", "/tmp", "/dev/shm", "/etc"} {
		if err := os.MkdirAll(root+dir, 0o755); err != nil {
			return "", fmt.Errorf("create %s: %w", dir, err)
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
			return "", fmt.Errorf("mount %s: %w", m.dir, err)
		}
	}
	for _, b := range binds {
		if err := b.mount(root); err != nil {
			return "", err
		}
	}
	for name, content := range synthetic {
		if err := os.WriteFile(root+name, []byte(content), 0o644); err != nil {
			return "", fmt.Errorf("write %s: %w", name, err)
		}
	}
	for name, target := range map[string]string{"/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0",
		"/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, root+name); err != nil {
			return "", fmt.Errorf("link %s: %w", name, err)
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
	for _, procOpts = range []string{"hidepid=2,gid=65534", "hidepid=2", ""} {
		if err = unix.Mount("proc", root+"/proc", "proc", procFlags, procOpts); err != unix.EINVAL {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("mount /proc: %w", err)
	}

	// Enter the new root; the old one is detached and gone from view.
	if err := unix.Chdir(root); err != nil {
		return "", fmt.Errorf("enter the sandbox root: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return "", fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return "", fmt.Errorf("detach the host's root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return "", fmt.Errorf("chdir /: %w", err)
	}
	// The root itself becomes read-only: only the workspace, /tmp and
	// /dev/shm stay writable.
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return "", fmt.Errorf("make the root read-only: %w", err)
	}
	return procOpts, nil
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
	// Remounting must keep the flags the kernel locked on the source mount
	// (nosuid, nodev, noexec), or it fails in a user namespace.
	var sfs unix.Statfs_t
	if err := unix.Statfs(dst, &sfs); err != nil {
		return fmt.Errorf("statfs %s: %w", b.dst, err)
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_NOSUID)
	if !b.writable {
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
	if !strings.HasPrefix(b.dst, "/dev/") {
		flags |= unix.MS_NODEV
	}
	if err := unix.Mount("", dst, "", flags, ""); err != nil {
		return fmt.Errorf("remount %s read-only: %w", b.dst, err)
	}
	return nil
}
