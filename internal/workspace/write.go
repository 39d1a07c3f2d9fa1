package workspace

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxWrite is the most content WriteFile writes: 64 KiB. Larger content is
// refused whole; nothing is ever written in part.
const MaxWrite = 64 << 10

// The ways a write can be refused, besides those of Resolve (ErrEscapes,
// ErrDenied, ErrLoop, ...), ErrNotRegular, ErrHardLink, ErrChanged,
// fs.ErrInvalid (a bad name) and fs.ErrPermission (a read-only file).
var (
	ErrTooLarge  = errors.New("content too large")
	ErrProtected = errors.New("protected name")
)

// tempPrefix starts the name of every temporary file WriteFile makes. Such
// names are protected, so the model cannot write or aim at one; ListDir
// shows them, which is the honest view should a crash leave one behind
// (it holds content the model wrote, never the old file's).
const tempPrefix = ".shelldon-tmp-"

// protectedPatterns are the names WriteFile never writes, as path.Match
// patterns over one path component, matched case-folded with trailing dots
// and spaces ignored (".GIT." is ".git" on some file systems). Every
// component of the requested and of the resolved path is checked, so a
// protected directory protects all beneath it. They are the files that make
// a later, innocent action run code or leak data: git, a shell, an editor or
// a REPL starting up, direnv entering the directory. Ordinary project files
// (Makefile, package.json, conftest.py, .gitignore, .editorconfig) are the
// agent's work and not protected: the owner approves each write, and the
// approval shows the resolved path.
var protectedPatterns = []string{
	// Version control: internals (hooks, config, info/attributes, a .git
	// file pointing elsewhere) and the tracked files that configure it.
	".git", ".gitattributes", ".gitmodules", ".gitconfig", ".lfsconfig",
	".hg", ".svn", ".bzr", ".jj",
	// Shell startup files.
	".profile", ".shrc", ".bashrc", ".bashrc.d", ".bash_profile", ".bash_login",
	".bash_logout", ".bash_aliases", ".zshrc", ".zshenv", ".zprofile",
	".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".login", ".logout",
	".kshrc", ".mkshrc", ".inputrc",
	// Per-directory environments and tool startup files that can run
	// commands or redirect a tool's traffic.
	".envrc", ".exrc", ".vimrc", ".gvimrc", ".vim", ".nvimrc", ".nvim.lua",
	".nanorc", ".pythonrc*", ".pythonstartup*", ".pdbrc", ".gdbinit",
	".lldbinit", ".irbrc", ".pryrc", ".psqlrc", ".sqliterc", ".rprofile",
	".ghci", ".screenrc", ".tmux.conf", ".wgetrc", ".curlrc", ".mailcap",
	".lessfilter", ".yarnrc", ".yarnrc.yml",
	".xinitrc", ".xsession", ".xsessionrc", ".xprofile",
	// WriteFile's own temporary files.
	tempPrefix + "*",
}

// protectedPairs are protected two-component suffixes: a parent directory
// and a name inside it (XDG configuration that runs or configures tools).
var protectedPairs = [][2]string{
	{".config", "git"}, {".config", "fish"}, {".config", "nvim"},
	{".config", "direnv"}, {".config", "systemd"}, {".config", "autostart"},
	{".config", "environment.d"},
}

// protectedName reports whether name, a single path component inside a
// directory called parent ("" for the workspace root), is protected.
func protectedName(parent, name string) bool {
	n := strings.TrimRight(fold(name), ". ")
	for _, p := range protectedPatterns {
		if ok, _ := path.Match(fold(p), n); ok {
			return true
		}
	}
	pa := strings.TrimRight(fold(parent), ". ")
	for _, d := range protectedPairs {
		if pa == fold(d[0]) && n == fold(d[1]) {
			return true
		}
	}
	return false
}

// protectedComponent returns the first protected component of the
// slash-separated components, or "" when none is. "." and ".." are skipped.
func protectedComponent(comps []string) string {
	parent := ""
	for _, c := range comps {
		if c == "." || c == ".." {
			parent = ""
			continue
		}
		if protectedName(parent, c) {
			return c
		}
		parent = c
	}
	return ""
}

// protectedError explains a protected name to the model.
func protectedError(name, c string) error {
	return errorf(ErrProtected, "%s: %s is protected (write_file never writes version-control internals or configuration, shell startup files or tool startup files)", quote(name), quote(c))
}

// checkChars refuses s, the requested or the resolved name, unless it is
// valid UTF-8 without control or format characters (NUL, newline, escape,
// zero-width and bidirectional marks): a name written to disk must read the
// same to the owner approving it as to the file system.
func checkChars(name, s string) error {
	for i, c := range s {
		if c == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return errorf(fs.ErrInvalid, "%s: invalid file name (not valid UTF-8)", quote(name))
			}
		}
		if unicode.Is(unicode.Cc, c) || unicode.Is(unicode.Cf, c) {
			return errorf(fs.ErrInvalid, "%s: invalid file name (it contains %U, a control or format character)", quote(name), c)
		}
	}
	return nil
}

// checkResolved checks rel, the path name resolves to, as WriteFile would
// create it.
func checkResolved(name, rel string) error {
	if err := checkChars(name, rel); err != nil {
		return err
	}
	comps := split(rel)
	if c := protectedComponent(comps); c != "" {
		return errorf(ErrProtected, "%s: resolves to %s, and %s is protected (write_file never writes version-control internals or configuration, shell startup files or tool startup files)", quote(name), quote(rel), quote(c))
	}
	if c, beneath := deniedPath(comps); c != "" {
		return errorf(ErrDenied, "%s: resolves to %s, which is on the credential deny list%s", quote(name), quote(rel), denyNote(c, beneath))
	}
	return nil
}

// WriteResult describes a completed write.
type WriteResult struct {
	Path     string // the path written, resolved, relative to the root
	Size     int    // bytes written
	Created  bool   // the file is new
	Replaced bool   // an existing file was replaced
}

// CheckWrite makes every check WriteFile makes, without writing or creating
// anything, and returns the path WriteFile would write, resolved, relative
// to the root. It is what an approval shows; WriteFileExpect binds the
// write to it.
func (r *Root) CheckWrite(name string) (rel string, err error) {
	t, err := r.checkWrite(name, false)
	if err != nil {
		return "", err
	}
	defer t.close()
	return t.rel(), nil
}

// WriteFile replaces the regular file name with content, or creates it and
// any missing parent directories (mode 0755, before umask).
//
// Content over MaxWrite is refused with ErrTooLarge. The name is resolved
// like Resolve (no escape, deny list on the requested and resolved names),
// and refused with ErrProtected when any component of the requested or of
// the resolved path is protected (see protectedPatterns), with fs.ErrInvalid
// when it holds a control or format character or ends in a slash. A
// symlink, last component or not, is followed inside the root and what it
// points at is checked and written: notes.txt -> docs/notes.md writes
// docs/notes.md, and notes.txt -> .git/hooks/pre-commit is refused. An
// existing target must be a regular file with one hard link
// (ErrNotRegular, ErrHardLink; it is looked up with Lstat, never opened, so
// a FIFO cannot block) and not read-only (fs.ErrPermission).
//
// The write is atomic: content goes to a new temporary file in the target's
// directory (O_EXCL, a random name starting ".shelldon-tmp-", mode 0644
// before umask for a new file, the old file's permission bits otherwise),
// is synced, and is renamed over the target; the directory is then synced,
// best effort. On any failure the temporary file is removed, and at every
// moment the target holds either all of the old content or all of the new,
// so a crash leaves the old file intact (and perhaps a temporary file).
// Owner and group are not carried over: the new file is the process's.
// Directories created on the way are not synced, and stay if a later step
// fails.
//
// Every operation goes through directories held open (os.Root), entered one
// component at a time after an Lstat and checked with os.SameFile, and the
// temporary file, the directory creation and the rename each name a single
// component of a held directory. A component swapped for a symlink after
// the check is therefore never followed: the held directory is the one that
// was checked, wherever its path now leads. Right before the rename the
// target is looked up again with Lstat; if it has appeared, gone, or become
// another file, a symlink or not a regular file, the write is refused with
// ErrChanged. The rename itself never follows a symlink at the target; it
// replaces the directory entry, so no other name of the file (hard link) or
// file a symlink points at is written through. What remains open is a
// process that moves a held directory out of the workspace between check and
// rename; only a process that can already write there can do that.
func (r *Root) WriteFile(name string, content []byte) (WriteResult, error) {
	return r.writeFile(name, content, nil, writeHooks{})
}

// WriteFileExpect is WriteFile bound to an earlier CheckWrite: it writes
// only if name still resolves to rel, the path the owner approved, and
// fails with ErrChanged otherwise.
func (r *Root) WriteFileExpect(name, rel string, content []byte) (WriteResult, error) {
	return r.writeFile(name, content, &rel, writeHooks{})
}

// writeHooks let tests act at the racy moments of a write. Each is given
// the held directory, the temporary file's name and the target's name.
type writeHooks struct {
	beforeRecheck func(dir *os.Root, tmp, base string) // the temporary file is complete
	beforeRename  func(dir *os.Root, tmp, base string) // the target was checked again
}

func (r *Root) writeFile(name string, content []byte, want *string, h writeHooks) (WriteResult, error) {
	if len(content) > MaxWrite {
		return WriteResult{}, errorf(ErrTooLarge, "%s: content is %d bytes; write_file writes at most %d (64 KiB)", quote(name), len(content), MaxWrite)
	}
	t, err := r.checkWrite(name, false)
	if err != nil {
		return WriteResult{}, err
	}
	rel := t.rel()
	if want != nil && rel != *want {
		t.close()
		return WriteResult{}, errorf(ErrChanged, "%s: now resolves to %s, not %s as approved", quote(name), quote(rel), quote(*want))
	}
	if len(t.missing) > 0 {
		// Every check passed with the directories absent; now create them,
		// checking each again as it is created and entered.
		t.close()
		if t, err = r.checkWrite(name, true); err != nil {
			return WriteResult{}, err
		}
		if got := t.rel(); got != rel {
			t.close()
			return WriteResult{}, errorf(ErrChanged, "%s: resolved to %s, then to %s", quote(name), quote(rel), quote(got))
		}
	}
	defer t.close()

	dir, base, old := t.top().dir, t.base, t.info
	tmp, err := writeTemp(dir, content, old)
	if err != nil {
		return WriteResult{}, fsError(name, err)
	}
	if h.beforeRecheck != nil {
		h.beforeRecheck(dir, tmp, base)
	}
	if err := recheck(name, dir, base, old); err != nil {
		dir.Remove(tmp)
		return WriteResult{}, err
	}
	if h.beforeRename != nil {
		h.beforeRename(dir, tmp, base)
	}
	if err := dir.Rename(tmp, base); err != nil {
		dir.Remove(tmp)
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return WriteResult{}, &pathError{msg: fmt.Sprintf("%s: replacing the file failed (%v); nothing was written", quote(name), err), kind: err}
	}
	// Make the rename durable; a file system that cannot sync a directory
	// still has the new content in place.
	if d, err := dir.Open("."); err == nil {
		d.Sync()
		d.Close()
	}
	return WriteResult{Path: rel, Size: len(content), Created: old == nil, Replaced: old != nil}, nil
}

// checkWrite makes the checks of CheckWrite and returns the target, which
// the caller must close. With create, missing parent directories are
// created as the walk meets them; without, they are recorded in
// target.missing.
func (r *Root) checkWrite(name string, create bool) (*target, error) {
	if err := checkChars(name, name); err != nil {
		return nil, err
	}
	comps, err := r.relative(name)
	if err != nil {
		return nil, err
	}
	if last := path.Base(name); name == "" || strings.HasSuffix(name, "/") || last == "." || last == ".." {
		return nil, errorf(fs.ErrInvalid, "%s: not a file name (it names a directory)", quote(name))
	}
	if c := protectedComponent(comps); c != "" {
		return nil, protectedError(name, c)
	}
	t, err := r.walkMissing(name, true, parents(name, create))
	if err != nil {
		return nil, err
	}
	if err := checkTarget(name, t); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// checkTarget checks the resolved target of a write.
func checkTarget(name string, t *target) error {
	if t.base == "" {
		return errorf(ErrNotRegular, "%s: not a regular file (directory)", quote(name))
	}
	if err := checkResolved(name, t.rel()); err != nil {
		return err
	}
	fi := t.info
	if fi == nil {
		return nil
	}
	if !fi.Mode().IsRegular() {
		return errorf(ErrNotRegular, "%s: not a regular file (%s)", quote(name), kindOf(fi.Mode()))
	}
	if n := nlink(fi); n > 1 {
		return errorf(ErrHardLink, "%s has %d hard links; refusing files with more than one", quote(name), n)
	}
	if fi.Mode().Perm()&0o222 == 0 {
		return errorf(fs.ErrPermission, "%s is read-only (mode %v); refusing to replace it", quote(name), fi.Mode().Perm())
	}
	return nil
}

// parents returns the missingFunc of a write: directories missing between
// the deepest existing one and the final component are checked as names to
// be written, then created (with create) or recorded in the target.
// Directories are created only for a tail of plain names: a ".." after a
// missing directory is refused, as the kernel would refuse it.
func parents(name string, create bool) missingFunc {
	budget := maxName // bounds the lookups of a directory that keeps vanishing
	return func(t *target, c string, rest []string) (bool, error) {
		dirs := []string{c}
		for _, p := range rest {
			switch p {
			case ".":
			case "..":
				return false, errorf(fs.ErrNotExist, "%s: %s: no such directory (and \"..\" may not follow a directory to be created)", quote(name), quote(t.relPrefix(c)))
			default:
				dirs = append(dirs, p)
			}
		}
		if rest[len(rest)-1] == "." || len(dirs) == 1 {
			return false, errorf(ErrNotRegular, "%s: not a regular file (resolves to the directory %s)", quote(name), quote(t.relPrefix(path.Join(dirs...))))
		}
		if err := checkResolved(name, t.relPrefix(path.Join(dirs...))); err != nil {
			return false, err
		}
		if !create {
			t.missing, t.base = dirs[:len(dirs)-1], dirs[len(dirs)-1]
			return false, nil
		}
		if budget--; budget < 0 {
			return false, errorf(ErrChanged, "%s: %s keeps changing while being created", quote(name), quote(t.relPrefix(c)))
		}
		// Mkdir names one component of a held directory: if c appeared in
		// the meantime (a symlink, say), it fails and the walk looks c up
		// again like any other component.
		if err := t.top().dir.Mkdir(c, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return false, fsError(name, err)
		}
		return true, nil
	}
}

// writeTemp writes content to a new temporary file in dir and returns its
// name. The file gets old's permission bits, or 0644 (before umask) when old
// is nil. On failure nothing is left behind.
func writeTemp(dir *os.Root, content []byte, old fs.FileInfo) (tmp string, err error) {
	perm := fs.FileMode(0o644)
	if old != nil {
		perm = 0o600 // until the chmod below: no window with wider access
	}
	var f *os.File
	for range 10 {
		tmp = tempPrefix + rand.Text()
		f, err = dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			dir.Remove(tmp)
		}
	}()
	if _, err := f.Write(content); err != nil {
		return "", err
	}
	if old != nil {
		if err := f.Chmod(old.Mode().Perm()); err != nil {
			return "", err
		}
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return tmp, nil
}

// recheck looks the target up again right before the rename and refuses
// if it is no longer what was checked: old, or absent when old is nil.
func recheck(name string, dir *os.Root, base string, old fs.FileInfo) error {
	fi, err := dir.Lstat(base)
	changed := func(how string, args ...any) error {
		return errorf(ErrChanged, "%s: changed while it was being written (%s); nothing was written", quote(name), fmt.Sprintf(how, args...))
	}
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fsError(name, err)
	case old == nil && err == nil:
		return changed("a %s appeared", describe(fi))
	case old == nil:
		return nil
	case err != nil:
		return changed("it was removed")
	case !fi.Mode().IsRegular() || nlink(fi) > 1:
		return changed("now a %s", describe(fi))
	case !os.SameFile(old, fi):
		return changed("replaced by another file")
	}
	return nil
}

// describe names what fi is, for an error message.
func describe(fi fs.FileInfo) string {
	if fi.Mode().IsRegular() {
		if n := nlink(fi); n > 1 {
			return fmt.Sprintf("file with %d hard links", n)
		}
		return "file"
	}
	return kindOf(fi.Mode())
}
