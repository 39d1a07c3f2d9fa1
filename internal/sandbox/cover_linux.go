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

// coverDir is where the helper keeps the content of Policy.Covers while it
// builds the view: a tmpfs of its own, made read-only before any cover is
// bound, and detached once they all are, so that no path of the sandbox
// leads to it and nothing can write to a cover's content.
const coverDir = "/.covers"

// checkCovers refuses covers that are not absolute paths strictly inside
// the workspace, or that exceed the limits.
func checkCovers(p Policy) error {
	if len(p.Covers) == 0 {
		return nil
	}
	if p.Workspace == "" {
		return fmt.Errorf("%w: covers need a workspace", ErrBadPolicy)
	}
	if len(p.Covers) > MaxCovers {
		return fmt.Errorf("%w: %d covers, more than %d", ErrBadPolicy, len(p.Covers), MaxCovers)
	}
	ws := filepath.Clean(p.Workspace)
	total := 0
	for _, c := range p.Covers {
		if !filepath.IsAbs(c.Path) || filepath.Clean(c.Path) != c.Path || !strings.HasPrefix(c.Path, ws+"/") {
			return fmt.Errorf("%w: cover %q is not a clean absolute path inside the workspace", ErrBadPolicy, c.Path)
		}
		if len(c.Data) > MaxCoverBytes {
			return fmt.Errorf("%w: cover %q holds %d bytes, more than %d", ErrBadPolicy, c.Path, len(c.Data), MaxCoverBytes)
		}
		total += len(c.Data)
	}
	if total > MaxCoverTotal {
		return fmt.Errorf("%w: covers hold %d bytes, more than %d", ErrBadPolicy, total, MaxCoverTotal)
	}
	return nil
}

// mountCovers shows each cover's data, read-only, over its file in the
// view being built at root (the workspace is already bound there). The
// data goes into a private tmpfs that is then made read-only; each target
// is reached one component at a time without following symbolic links
// (O_PATH|O_NOFOLLOW), must be a regular file, and gets a bind of its
// cover through that descriptor, so what is covered is the file that was
// checked, not whatever a path resolves to later.
func mountCovers(root string, covers []Cover) error {
	if len(covers) == 0 {
		return nil
	}
	dir := root + coverDir
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", coverDir, err)
	}
	size := 0
	for _, c := range covers {
		size += len(c.Data) + 4096 // a page at least per file
	}
	opts := fmt.Sprintf("mode=0755,size=%d,nr_inodes=%d", size, len(covers)+16)
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, opts); err != nil {
		return fmt.Errorf("mount %s: %w", coverDir, err)
	}
	for i, c := range covers {
		if err := os.WriteFile(dir+"/"+strconv.Itoa(i), c.Data, 0o444); err != nil {
			return fmt.Errorf("write cover of %s: %w", c.Path, err)
		}
	}
	// Read-only for good: the superblock, not only a mount of it.
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, opts); err != nil {
		return fmt.Errorf("make %s read-only: %w", coverDir, err)
	}
	for i, c := range covers {
		if err := coverFile(root, c.Path, dir+"/"+strconv.Itoa(i)); err != nil {
			return fmt.Errorf("cover %s: %w", c.Path, err)
		}
	}
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach %s: %w", coverDir, err)
	}
	return os.Remove(dir)
}

// coverFile binds src over the regular file at path (absolute, clean)
// under root, reached without following symbolic links.
func coverFile(root, path, src string) error {
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the sandbox root: %w", err)
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, name := range parts {
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("open %s: %w", name, err)
		}
		fd = next
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return fmt.Errorf("stat %s: %w", name, err)
		}
		want, what := uint32(unix.S_IFDIR), "a directory"
		if i == len(parts)-1 {
			want, what = unix.S_IFREG, "a regular file"
		}
		if st.Mode&unix.S_IFMT != want {
			unix.Close(fd)
			return fmt.Errorf("%s is not %s (a symbolic link is never followed)", "/"+strings.Join(parts[:i+1], "/"), what)
		}
	}
	defer unix.Close(fd)
	if err := unix.Mount(src, "/proc/self/fd/"+strconv.Itoa(fd), "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	return nil
}
