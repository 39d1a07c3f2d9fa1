package workspace

import (
	"container/heap"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ReadFile reads at most limit bytes of the regular file name and returns them
// with the file's full size, so the caller can tell the model it was cut.
//
// Only a regular file with a single hard link is read. The file is looked up
// with Lstat first, so a FIFO, socket, device or directory is refused without
// being opened; the open itself is non-blocking and the opened file is
// checked to be the one looked up (os.SameFile), which defeats a swap in
// between. The file is streamed: memory is bounded by limit, not by the size.
func (r *Root) ReadFile(name string, limit int64) (data []byte, size int64, err error) {
	t, err := r.walk(name, false)
	if err != nil {
		return nil, 0, err
	}
	defer t.close()
	fi := t.info
	if t.base == "" || !fi.Mode().IsRegular() {
		return nil, 0, errorf(ErrNotRegular, "%s: not a regular file (%s)", quote(name), kindOf(fi.Mode()))
	}
	if n := nlink(fi); n > 1 {
		return nil, 0, errorf(ErrHardLink, "%s has %d hard links; refusing files with more than one", quote(name), n)
	}
	f, err := t.top().dir.OpenFile(t.base, openFlags, 0)
	if err != nil {
		return nil, 0, fsError(name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, fsError(name, err)
	}
	if !os.SameFile(fi, st) || !st.Mode().IsRegular() || nlink(st) > 1 {
		return nil, 0, errorf(ErrChanged, "%s: %v", quote(name), ErrChanged)
	}
	size = st.Size()
	// Read what the stat promised, up to limit; a file that shrank since
	// gives less, one that grew is cut at its size when opened.
	buf := make([]byte, min(size, max(limit, 0)))
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, 0, fsError(name, err)
	}
	return buf[:n], size, nil
}

// Entry is one name in a directory listing.
type Entry struct {
	Name string
	Kind string // "file", "dir", "symlink" or "other"
	Size int64  // for files; 0 otherwise
}

// ListDir lists the directory name, sorted by name, at most maxEntries
// entries (the first ones in sorted order); truncated says there were more.
// Names on the credential deny list are omitted: a file by the fileRules too
// (in a directory called secrets, only the source files are shown). Symlinks
// are listed as such, not followed.
func (r *Root) ListDir(name string, maxEntries int) (entries []Entry, truncated bool, err error) {
	t, err := r.walk(name, false)
	if err != nil {
		return nil, false, err
	}
	defer t.close()
	dir, dirName := t.top().dir, t.top().name
	if t.base != "" {
		if !t.info.IsDir() {
			return nil, false, errorf(syscall.ENOTDIR, "%s: not a directory", quote(name))
		}
		sub, err := openDir(dir, t.base, t.info)
		if err != nil {
			return nil, false, &pathError{msg: quote(name) + ": " + err.Error(), kind: err}
		}
		defer sub.Close()
		dir, dirName = sub, t.base
	}
	d, err := dir.Open(".")
	if err != nil {
		return nil, false, fsError(name, err)
	}
	defer d.Close()

	// Keep the maxEntries smallest names while scanning, so a huge
	// directory costs time but not memory.
	maxEntries = max(maxEntries, 0)
	h := &nameHeap{}
	for {
		batch, err := d.ReadDir(256)
		for _, e := range batch {
			if deniedName(dirName, e.Name()) || !e.IsDir() && denied(deniedFile(t.met, e.Name())) {
				continue
			}
			if h.Len() < maxEntries {
				heap.Push(h, e)
				continue
			}
			truncated = true
			if h.Len() > 0 && e.Name() < (*h)[0].Name() {
				(*h)[0] = e
				heap.Fix(h, 0)
			}
		}
		if err == io.EOF || len(batch) == 0 {
			break
		}
		if err != nil {
			return nil, false, fsError(name, err)
		}
	}
	entries = make([]Entry, h.Len())
	for i := len(entries) - 1; i >= 0; i-- {
		e := heap.Pop(h).(fs.DirEntry)
		entries[i] = entry(dir, e)
	}
	return entries, truncated, nil
}

// entry describes e, a name in dir, without following symlinks.
func entry(dir *os.Root, e fs.DirEntry) Entry {
	out := Entry{Name: e.Name(), Kind: "other"}
	switch typ := e.Type(); {
	case typ.IsDir():
		out.Kind = "dir"
	case typ&fs.ModeSymlink != 0:
		out.Kind = "symlink"
	case typ.IsRegular():
		out.Kind = "file"
		if fi, err := dir.Lstat(e.Name()); err == nil && fi.Mode().IsRegular() {
			out.Size = fi.Size()
		}
	}
	return out
}

// nameHeap is a max-heap of directory entries by name.
type nameHeap []fs.DirEntry

func (h nameHeap) Len() int           { return len(h) }
func (h nameHeap) Less(i, j int) bool { return h[i].Name() > h[j].Name() }
func (h nameHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *nameHeap) Push(x any)        { *h = append(*h, x.(fs.DirEntry)) }
func (h *nameHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
