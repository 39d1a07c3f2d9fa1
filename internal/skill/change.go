package skill

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// compose merges the parts a caller gives into base and returns the
// SKILL.md it makes; an empty part keeps base's, unless create. A part
// given is checked by the rules of what the library writes, tighter than
// what it reads since the owner reads a draft whole before approving it:
// the description on one line, the body at most MaxDraftBody bytes, and a
// new skill needs both. Errors point at the part given. The SKILL.md must
// parse within the library's limits.
func (l *Library) compose(base Skill, create bool, description, body string) ([]byte, error) {
	if err := ValidName(base.Name); err != nil {
		return nil, err
	}
	if create || description != "" {
		d := strings.TrimSpace(description)
		if d == "" {
			return nil, errors.New("the description is empty; say in one line what the skill does and when to use it")
		}
		if err := checkText(d, 0); err != nil {
			return nil, fmt.Errorf("description: %w", err)
		}
		if err := oneLine(d, "the description"); err != nil {
			return nil, err
		}
		if err := chars(d, "the description", MaxDescription); err != nil {
			return nil, err
		}
		base.Description = d
	}
	if create || body != "" {
		b := normalizeBody(strings.ReplaceAll(body, "\r\n", "\n"))
		if b == "" {
			return nil, errors.New("the body is empty; write the skill's instructions")
		}
		if err := checkText(b, 1); err != nil {
			return nil, fmt.Errorf("body %w", err)
		}
		if len(b) > MaxDraftBody {
			return nil, fmt.Errorf("the body is %s bytes; a body written through shelldon is at most %s (%s), "+
				"since the owner reads it whole before approving it (%s recommends under 5,000 tokens and 500 lines): "+
				"keep the playbook short", count(len(b)), count(MaxDraftBody), size(MaxDraftBody), spec)
		}
		base.Body = b
	}
	data := Format(base)
	if _, _, err := parse(data, l.lim); err != nil {
		return nil, err
	}
	return data, nil
}

// parse parses data within the library's limits.
func (l *Library) parse(data []byte) (Skill, error) {
	s, _, err := parse(data, l.lim)
	return s, err
}

// Create writes a new skill of the owner's at once: the owner's own
// change. A name taken by the owner or by a bundled skill is ErrExists
// (update_skill changes it). The agent's changes are drafts (Stage) that
// only the owner's approval makes live (Promote); Create is both in one.
func (l *Library) Create(name, description, body string) (Skill, error) {
	return l.direct(true, name, description, body)
}

// direct stages a change and promotes it at once, under one lock.
func (l *Library) direct(create bool, name, description, body string) (Skill, error) {
	return withRoot(l, name, func(r *os.Root) (Skill, error) {
		d, err := l.stage(r, create, name, description, body)
		if err != nil {
			return Skill{}, err
		}
		return l.promote(r, name, d.Hash)
	})
}

// Update replaces the description and body of a skill at once, keeping its
// other frontmatter; an empty description or body keeps the current one.
// For a bundled skill it writes the owner's copy (with the bundled files
// beside it), leaving the bundled one untouched. For the owner's copy it
// first keeps the current SKILL.md as a version. An update that changes
// nothing writes nothing. Like Create, it is the owner's own change.
func (l *Library) Update(name, description, body string) (Skill, error) {
	s, err := l.direct(false, name, description, body)
	if errors.Is(err, ErrUnchanged) {
		return l.Get(name)
	}
	return s, err
}

// fileMissing reports that the folder name exists without a SKILL.md.
func fileMissing(r *os.Root, name string) bool {
	_, err := r.Lstat(filepath.Join(name, skillFile))
	return errors.Is(err, fs.ErrNotExist)
}

// Versions lists the kept earlier versions of the owner's skill name,
// ascending; nil when there are none or the name is invalid.
func (l *Library) Versions(name string) []int {
	if ValidName(name) != nil {
		return nil
	}
	r, err := l.root()
	if err != nil {
		return nil
	}
	defer r.Close()
	return versions(r, name)
}

// Rollback makes the kept version just below the current one current
// again; the current one is kept as a version, so nothing is lost and a
// second rollback goes one further back.
func (l *Library) Rollback(name string) (Skill, error) {
	if err := ValidName(name); err != nil {
		return Skill{}, fmt.Errorf("skill: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r, err := l.root()
	if err != nil {
		return Skill{}, err
	}
	defer r.Close()
	old, err := readOwner(r, name, l.lim.skill())
	if errors.Is(err, errAbsent) {
		if _, ok := l.bundled[name]; ok {
			return Skill{}, fmt.Errorf("skill %q: %w: the bundled version is the only one", name, ErrNoVersion)
		}
		return Skill{}, fmt.Errorf("skill %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Skill{}, fmt.Errorf("skill %q: %w", name, err)
	}
	kept := versions(r, name)
	cur := current(kept)
	prev := 0
	for _, k := range kept {
		if k < cur {
			prev = k
		}
	}
	if prev == 0 {
		return Skill{}, fmt.Errorf("skill %q: %w before version %d", name, ErrNoVersion, cur)
	}
	prevDir := filepath.Join(versionsDir, name, strconv.Itoa(prev))
	prevFile := filepath.Join(prevDir, skillFile)
	data, err := readFileNoLink(r, prevFile, l.lim.skill())
	if err != nil {
		return Skill{}, fmt.Errorf("skill %q: version %d: %w", name, prev, err)
	}
	if s, err := l.parse(data); err != nil {
		return Skill{}, fmt.Errorf("skill %q: version %d does not parse: %w", name, prev, err)
	} else if s.Name != name {
		return Skill{}, fmt.Errorf("skill %q: version %d is named %q", name, prev, s.Name)
	}
	if err := keepVersion(r, name, old, cur); err != nil {
		return Skill{}, fmt.Errorf("skill %q: keep the current version: %w", name, err)
	}
	if err := r.Rename(prevFile, filepath.Join(name, skillFile)); err != nil {
		return Skill{}, fmt.Errorf("skill %q: restore version %d: %w", name, prev, err)
	}
	_ = r.Remove(prevDir)
	syncDir(r, name)
	out, _, err := l.loadOwner(r, name)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %q: read back: %w", name, err)
	}
	return out, nil
}

// Remove moves the owner's copy of name and its versions to
// .removed/<name>-<unix>/ (as <name>/ and versions/); a bundled skill of
// that name is offered again. A bundled skill itself cannot be removed.
func (l *Library) Remove(name string) error {
	_, err := withRoot(l, name, func(r *os.Root) (struct{}, error) { return struct{}{}, l.remove(r, name) })
	return err
}

// remove is Remove with the lock held.
func (l *Library) remove(r *os.Root, name string) error {
	fi, err := r.Lstat(name)
	if err != nil || fi.Mode().IsRegular() {
		if _, ok := l.bundled[name]; ok {
			return fmt.Errorf("skill %q: %w: it cannot be removed", name, ErrBundled)
		}
		return fmt.Errorf("skill %q: %w", name, ErrNotFound)
	}
	if err := ensureDir(r, removedDir); err != nil {
		return fmt.Errorf("skill %q: remove: %w", name, err)
	}
	stamp := strconv.FormatInt(l.now().Unix(), 10)
	dest := ""
	for i := 1; ; i++ {
		dest = filepath.Join(removedDir, name+"-"+stamp)
		if i > 1 {
			dest += "-" + strconv.Itoa(i)
		}
		err := r.Mkdir(dest, 0o700)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return fmt.Errorf("skill %q: remove: %w", name, err)
		}
	}
	if err := r.Rename(name, filepath.Join(dest, name)); err != nil {
		return fmt.Errorf("skill %q: remove: %w", name, err)
	}
	vdir := filepath.Join(versionsDir, name)
	if fi, err := r.Lstat(vdir); err == nil && fi.IsDir() {
		if err := r.Rename(vdir, filepath.Join(dest, "versions")); err != nil {
			return fmt.Errorf("skill %q: move its versions: %w", name, err)
		}
	}
	syncDir(r, ".")
	return nil
}

// keepVersion stores data as version n of name, through a temporary folder
// renamed into place; an existing version is never overwritten.
func keepVersion(r *os.Root, name string, data []byte, n int) error {
	if err := ensureDir(r, versionsDir); err != nil {
		return err
	}
	parent := filepath.Join(versionsDir, name)
	if err := ensureDir(r, parent); err != nil {
		return err
	}
	dest := filepath.Join(parent, strconv.Itoa(n))
	if fi, err := r.Lstat(dest); err == nil && fi.IsDir() && fileMissing(r, dest) {
		// A folder left by a rollback that took its SKILL.md (something
		// else was in it): the version goes back in.
		return replaceFile(r, filepath.Join(dest, skillFile), data)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("version %d is already kept", n)
	}
	tmp := filepath.Join(parent, tempName())
	if err := r.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	if err := writeNew(r, filepath.Join(tmp, skillFile), data); err != nil {
		_ = r.RemoveAll(tmp)
		return err
	}
	if err := r.Rename(tmp, dest); err != nil {
		_ = r.RemoveAll(tmp)
		return err
	}
	syncDir(r, parent)
	return nil
}

// placeFolder builds the folder name (SKILL.md and files beside it) under a
// temporary name and renames it into place.
func placeFolder(r *os.Root, name string, data []byte, names []string, contents [][]byte) error {
	tmp := tempName()
	if err := r.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	err := writeNew(r, filepath.Join(tmp, skillFile), data)
	for i := 0; err == nil && i < len(names); i++ {
		p := filepath.Join(tmp, filepath.FromSlash(names[i]))
		if err = r.MkdirAll(filepath.Dir(p), 0o700); err == nil {
			err = writeNew(r, p, contents[i])
		}
	}
	if err == nil {
		err = r.Rename(tmp, name)
	}
	if err != nil {
		_ = r.RemoveAll(tmp)
		return err
	}
	syncDir(r, ".")
	return nil
}

// readFiles reads the listed files of a bundled skill, each within lim.
func readFiles(fsys fs.FS, name string, names []string, lim sizeLimit) ([][]byte, error) {
	out := make([][]byte, len(names))
	for i, n := range names {
		data, err := fs.ReadFile(fsys, path.Join(name, n))
		if err != nil {
			return nil, err
		}
		if int64(len(data)) > lim.max {
			return nil, lim.over(n, int64(len(data)))
		}
		out[i] = data
	}
	return out, nil
}

// replaceFile writes data beside p and renames it over p.
func replaceFile(r *os.Root, p string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(p), tempName())
	if err := writeNew(r, tmp, data); err != nil {
		_ = r.Remove(tmp)
		return err
	}
	if err := r.Rename(tmp, p); err != nil {
		_ = r.Remove(tmp)
		return err
	}
	syncDir(r, filepath.Dir(p))
	return nil
}

// writeNew creates p (0600, which must not exist) with data, synced.
func writeNew(r *os.Root, p string, data []byte) error {
	f, err := r.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ensureDir makes p a real directory (0700), refusing a link or a file.
func ensureDir(r *os.Root, p string) error {
	fi, err := r.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := r.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
		return fmt.Errorf("%s is not a directory (a link or a file); move it away", filepath.ToSlash(p))
	}
	return nil
}

// syncDir flushes a directory's entries after a rename (best effort).
func syncDir(r *os.Root, p string) {
	if d, err := r.Open(p); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// tempName is a hidden name for a file or folder being built.
func tempName() string {
	return ".tmp-" + strings.ToLower(rand.Text()[:16])
}
