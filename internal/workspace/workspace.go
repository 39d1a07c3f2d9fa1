// Package workspace is the jail of the file tools.
//
// Invariant: every path the model names is resolved beneath the workspace
// root through a held directory (os.Root), one component at a time, and is
// checked against the credential deny list on the requested name and on the
// resolved name, case-folded. Nothing outside the root is ever opened.
//
// Resolution follows the file system, not the text: each component is
// looked up with Lstat in a directory this package holds open; a directory
// is entered by opening it as a new os.Root and checking it is the one just
// looked up (os.SameFile), so a component swapped for a symlink mid-walk is
// caught; a symlink is read with Readlink and its target resolved the same
// way. A symlink with an absolute target, or a ".." that would climb above
// the root, fails with ErrEscapes; more than 40 symlinks fail with ErrLoop.
//
// Names are slash-separated and relative to the root. An absolute name is
// accepted only when it lies under the root (as opened, or after resolving
// the root's own symlinks); the rest is then resolved like a relative name.
// Any other absolute name fails with ErrEscapes.
//
// The deny list (see deny.go: .env, *.env, .ssh, private keys and
// certificates, credential stores, vault/, shelldon's own files, ...) is
// matched on every component: a name is
// refused when any component of what was asked for, or of anything met
// while resolving it (symlink names and targets included), is denied.
// Its fileRules (credentials*, secrets*, kubeconfig*, shadow) judge files
// only: such a file is refused unless it is code (credentials.go), and so is
// every file beneath a directory of such a name unless it is source code
// (internal/credentials/store.go); the directories themselves can be
// listed. ListDir omits denied names rather than showing them.
//
// ReadFile opens regular files only, with a single hard link (another link
// may alias a denied file under an innocent name); it never blocks on a FIFO
// or device and never reads more than asked.
//
// WriteFile (see write.go) resolves the same way, creating missing parent
// directories through the held ones, refuses protected names (git internals
// and configuration, shell and tool startup files) besides denied ones, and
// replaces a file atomically: a temporary file in the same directory,
// renamed over the target.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Root is an open workspace. It holds the root directory open; Close
// releases it. A Root is safe for concurrent use.
type Root struct {
	root *os.Root
	path string // absolute, clean, as given
	real string // path with its symlinks resolved
}

// Open opens the workspace at root, which must be an existing directory.
// It creates nothing.
func Open(root string) (*Root, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace: %s is not a directory", abs)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return &Root{root: r, path: abs, real: real}, nil
}

// Close releases the root directory.
func (r *Root) Close() error { return r.root.Close() }

// Path returns the absolute path of the root, as given to Open.
func (r *Root) Path() string { return r.path }

// Resolve returns the clean, slash-separated path of name relative to the
// root after following symlinks ("." for the root itself). The last
// component need not exist, so a name about to be created resolves too;
// every other component must. It fails when name escapes the root, touches
// a denied name, or loops.
func (r *Root) Resolve(name string) (rel string, err error) {
	t, err := r.walk(name, true)
	if err != nil {
		return "", err
	}
	defer t.close()
	return t.rel(), nil
}

// frame is one directory held open while resolving.
type frame struct {
	name string   // the component, "" for the root
	dir  *os.Root // owned, except frames[0] which is the Root's own
	info fs.FileInfo
}

// target is a resolved name: the directories held from the root down, and
// the final component inside the last one.
type target struct {
	frames []frame
	base   string      // the final component; "" when the target is the last frame
	info   fs.FileInfo // Lstat of base or of the last frame; nil if base does not exist
	// missing are directories, not yet created, between the last frame and
	// base (see walkMissing); nil for every walk that creates nothing.
	missing []string
	// met are the names met on the way, in order: the components asked for
	// and those of symlink targets, base last; asked are the components
	// asked for, relative to the root (see walkMissing).
	met, asked []string
}

func (t *target) top() *frame { return &t.frames[len(t.frames)-1] }

func (t *target) pop() {
	t.top().dir.Close()
	t.frames = t.frames[:len(t.frames)-1]
}

func (t *target) close() {
	for len(t.frames) > 1 {
		t.pop()
	}
}

// rel returns the path of the target relative to the root.
func (t *target) rel() string {
	if len(t.missing) > 0 {
		return t.relPrefix(path.Join(path.Join(t.missing...), t.base))
	}
	return t.relPrefix(t.base)
}

// relPrefix returns the path of the last held directory, relative to the
// root, with c appended (unless c is "").
func (t *target) relPrefix(c string) string {
	parts := make([]string, 0, len(t.frames))
	for _, f := range t.frames[1:] {
		parts = append(parts, f.name)
	}
	if c != "" {
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return "."
	}
	return path.Join(parts...)
}

// split splits a slash-separated name into its components, dropping empty
// ones (repeated and trailing slashes).
func split(name string) []string {
	var out []string
	for c := range strings.SplitSeq(name, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// relative checks name and returns its components relative to the root.
func (r *Root) relative(name string) ([]string, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return nil, errorf(fs.ErrInvalid, "%s: invalid path (it contains a NUL byte)", quote(name))
	}
	if len(name) > maxName {
		return nil, errorf(syscall.ENAMETOOLONG, "%s: path too long (%d bytes; the limit is %d)", quote(name), len(name), maxName)
	}
	comps := split(name)
	if !strings.HasPrefix(name, "/") {
		return comps, nil
	}
	for _, base := range []string{r.path, r.real} {
		if rest, ok := under(comps, split(base)); ok {
			return rest, nil
		}
	}
	return nil, errorf(ErrEscapes, "%s: absolute path outside the workspace; paths are relative to the workspace", quote(name))
}

// under returns comps without the leading components base, if comps starts
// with them ("." components in comps are skipped while matching).
func under(comps, base []string) ([]string, bool) {
	i := 0
	for _, b := range base {
		for i < len(comps) && comps[i] == "." {
			i++
		}
		if i == len(comps) || comps[i] != b {
			return nil, false
		}
		i++
	}
	return comps[i:], true
}

// walk resolves name beneath the root. With allowMissing, the final
// component may be missing (target.info is then nil). The caller must close
// the returned target.
func (r *Root) walk(name string, allowMissing bool) (*target, error) {
	return r.walkMissing(name, allowMissing, nil)
}

// missingFunc decides what walkMissing does when the component c of the
// last held directory (t.top()) does not exist and the components rest
// follow it. It returns retry after creating c, which is then looked up
// again like any other component; otherwise it has set t.missing and
// t.base and the walk ends there.
type missingFunc func(t *target, c string, rest []string) (retry bool, err error)

// walkMissing is walk with a say over missing directories: with a nil
// missing it is walk exactly. A target that is not a directory (a file, or
// a name about to be created) is checked against fileRules too, as the name
// asked for and as the name it resolved to, beneath every name met on the
// way; a directory is not (what it holds is, when it is listed or reached).
func (r *Root) walkMissing(name string, allowMissing bool, missing missingFunc) (*target, error) {
	t, err := r.resolve(name, allowMissing, missing)
	if err != nil {
		return nil, err
	}
	if t.base == "" || len(t.missing) > 0 || t.info != nil && t.info.IsDir() {
		return t, nil
	}
	c, beneath := deniedFile(t.met[:len(t.met)-1], t.base)
	if asked := names(t.asked); c == "" && len(asked) > 0 {
		c, beneath = deniedFile(asked[:len(asked)-1], asked[len(asked)-1])
	}
	if c != "" {
		t.close()
		return nil, errorf(ErrDenied, "%s: resolves to %s, which is on the credential deny list%s", quote(name), quote(t.rel()), denyNote(c, beneath))
	}
	return t, nil
}

// resolve is walkMissing without the fileRules.
func (r *Root) resolve(name string, allowMissing bool, missing missingFunc) (_ *target, err error) {
	comps, err := r.relative(name)
	if err != nil {
		return nil, err
	}
	// A name that climbs out on its face is refused before any lookup, even
	// if symlinks would have brought it back: the answer is clearer, and
	// such a name is never needed.
	if clean := path.Clean(strings.Join(comps, "/")); clean == ".." || strings.HasPrefix(clean, "../") {
		return nil, errorf(ErrEscapes, "%s: path escapes the workspace", quote(name))
	}
	if c := deniedComponent(comps); c != "" {
		if len(comps) == 1 {
			return nil, errorf(ErrDenied, "%s is on the credential deny list", quote(name))
		}
		return nil, errorf(ErrDenied, "%s: %s is on the credential deny list", quote(name), quote(c))
	}

	t := &target{frames: []frame{{dir: r.root}}, asked: comps}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	queue := comps
	links := 0
	lastLink := ""
	escapes := func() error {
		if lastLink != "" {
			return errorf(ErrEscapes, "%s: path escapes the workspace (through the symlink %s)", quote(name), lastLink)
		}
		return errorf(ErrEscapes, "%s: path escapes the workspace", quote(name))
	}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		switch c {
		case ".":
			continue
		case "..":
			if len(t.frames) == 1 {
				return nil, escapes()
			}
			t.pop()
			continue
		}
		cur := t.top()
		t.met = append(t.met, c)
		if deniedName(cur.name, c) {
			return nil, errorf(ErrDenied, "%s: resolves to %s, which is on the credential deny list", quote(name), quote(t.relPrefix(c)))
		}
		fi, err := cur.dir.Lstat(c)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && allowMissing && len(queue) == 0 {
				t.base = c
				return t, nil
			}
			if errors.Is(err, fs.ErrNotExist) && missing != nil && len(queue) > 0 {
				retry, err := missing(t, c, queue)
				if err != nil {
					return nil, err
				}
				if !retry {
					return t, nil
				}
				queue = append([]string{c}, queue...)
				continue
			}
			return nil, fsError(name, err)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			links++
			if links > maxLinks {
				return nil, errorf(ErrLoop, "%s: %v", quote(name), ErrLoop)
			}
			dest, err := cur.dir.Readlink(c)
			if err != nil {
				return nil, fsError(name, err)
			}
			lastLink = fmt.Sprintf("%s -> %s", quote(t.relPrefix(c)), quote(dest))
			if dest == "" || strings.IndexByte(dest, 0) >= 0 {
				return nil, errorf(fs.ErrInvalid, "%s: invalid symlink %s", quote(name), lastLink)
			}
			if strings.HasPrefix(dest, "/") {
				return nil, escapes()
			}
			queue = append(split(dest), queue...)
		case fi.IsDir():
			if len(queue) == 0 {
				t.base, t.info = c, fi
				return t, nil
			}
			sub, err := openDir(cur.dir, c, fi)
			if err != nil {
				return nil, &pathError{msg: quote(name) + ": " + err.Error(), kind: err}
			}
			t.frames = append(t.frames, frame{name: c, dir: sub, info: fi})
		default:
			if len(queue) > 0 {
				return nil, errorf(syscall.ENOTDIR, "%s: %s is not a directory", quote(name), quote(t.relPrefix(c)))
			}
			t.base, t.info = c, fi
			return t, nil
		}
	}
	// The target is the last directory entered (or the root).
	if len(t.frames) == 1 {
		fi, err := r.root.Stat(".")
		if err != nil {
			return nil, fsError(name, err)
		}
		t.frames[0].info = fi
	}
	t.info = t.top().info
	return t, nil
}

// openDir opens the directory c of parent, which Lstat reported as fi, and
// checks that what was opened is that directory.
func openDir(parent *os.Root, c string, fi fs.FileInfo) (*os.Root, error) {
	sub, err := parent.OpenRoot(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", quote(c), unwrapPath(err))
	}
	st, err := sub.Stat(".")
	if err != nil || !os.SameFile(fi, st) {
		sub.Close()
		return nil, fmt.Errorf("%s %w", quote(c), ErrChanged)
	}
	return sub, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
