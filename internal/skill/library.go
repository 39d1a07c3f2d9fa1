package skill

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shelldon/shelldon/internal/workspace"
)

// Folder names inside the skills directory; a leading dot keeps them out
// of the skill names.
const (
	versionsDir = ".versions"
	removedDir  = ".removed"
	skillFile   = "SKILL.md"
)

// Library is the bundled skills and the owner's, in one skills directory.
// Its methods are safe for concurrent use; changes are serialized.
type Library struct {
	dir     string
	bundled map[string]Skill // parsed at Open; never changed
	bfs     fs.FS
	lim     Limits
	now     func() time.Time

	mu sync.Mutex
}

// Open opens the owner's skills directory dir, creating it (0700) if
// needed, and reads the bundled skills from bundled (folders at its root;
// nil for none), with the default Limits. A bundled skill that does not
// parse is an error: it is shelldon's own.
func Open(dir string, bundled fs.FS) (*Library, error) {
	return OpenWith(dir, bundled, Limits{})
}

// OpenWith is Open with the resource limits lim (a zero field takes its
// default), which the app sets from its configuration.
func OpenWith(dir string, bundled fs.FS, lim Limits) (*Library, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("skill: open %s: %w", dir, err)
	}
	l := &Library{dir: dir, bundled: map[string]Skill{}, bfs: bundled, lim: lim.withDefaults(), now: time.Now}
	if bundled == nil {
		return l, nil
	}
	entries, err := fs.ReadDir(bundled, ".")
	if err != nil {
		return nil, fmt.Errorf("skill: bundled skills: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		s, err := loadBundled(bundled, e.Name(), l.lim)
		if err != nil {
			return nil, fmt.Errorf("skill: bundled skill %w", err)
		}
		l.bundled[s.Name] = s
	}
	return l, nil
}

// Limits returns the library's resource limits, defaults filled in.
func (l *Library) Limits() Limits { return l.lim }

func loadBundled(fsys fs.FS, name string, lim Limits) (Skill, error) {
	if err := ValidName(name); err != nil {
		return Skill{}, fmt.Errorf("folder %q: %w", name, err)
	}
	data, err := fs.ReadFile(fsys, path.Join(name, skillFile))
	if err != nil {
		return Skill{}, fmt.Errorf("%s: %w", name, err)
	}
	s, p, err := parse(data, lim)
	if err != nil {
		return Skill{}, fmt.Errorf("%s/%s: %w", name, skillFile, err)
	}
	if s.Name != name {
		return Skill{}, mismatch(name, s.Name, p.nameLine)
	}
	files, _ := listFiles(fsys, name, lim.file())
	s.Files = paths(files)
	s.Source = SourceBundled
	return s, nil
}

func mismatch(folder, name string, line int) error {
	return fmt.Errorf("%s/%s: line %d: name %q does not match its folder %q; %s requires the name to match the folder",
		folder, skillFile, line, name, folder, spec)
}

// root opens the skills directory; every path below is resolved in it, so
// nothing escapes it.
func (l *Library) root() (*os.Root, error) {
	r, err := os.OpenRoot(l.dir)
	if err != nil {
		return nil, fmt.Errorf("skill: %w", err)
	}
	return r, nil
}

// errAbsent says the owner has no folder of that name.
var errAbsent = errors.New("absent")

// readOwner reads the owner's SKILL.md of name, of at most lim bytes,
// without following a link. It returns errAbsent when there is no such
// folder, or the folder holds no SKILL.md (see wrongCase).
func readOwner(r *os.Root, name string, lim sizeLimit) ([]byte, error) {
	fi, err := r.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errAbsent
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s: a symbolic link; skill folders are never followed: skipped", name)
	case !fi.IsDir():
		return nil, errAbsent
	}
	if _, err := r.Lstat(filepath.Join(name, skillFile)); errors.Is(err, fs.ErrNotExist) {
		return nil, errAbsent
	}
	return readFileNoLink(r, filepath.Join(name, skillFile), lim)
}

// skillFileIn returns the name of the file in the folder dir of fsys that
// is SKILL.md but for its case ("skill.md"), or "" when there is none: a
// folder meant as a skill.
func skillFileIn(fsys fs.FS, dir string) string {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if strings.EqualFold(e.Name(), skillFile) {
			return e.Name()
		}
	}
	return ""
}

// wrongCase is the problem of a folder whose SKILL.md is named in another
// case, which the specification does not read.
func wrongCase(dir, file string) error {
	return fmt.Errorf("%s/%s: the file must be named %s (in capitals) for %s to read it as a skill: rename it", dir, file, skillFile, spec)
}

// readFileNoLink reads a regular file within lim in r, refusing a symbolic
// link, and checks that what it opened is what it inspected.
func readFileNoLink(r *os.Root, p string, lim sizeLimit) ([]byte, error) {
	shown := filepath.ToSlash(p)
	fi, err := r.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: missing", shown)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", shown, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s: a symbolic link; never followed: skipped", shown)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file", shown)
	case fi.Size() > lim.max:
		return nil, lim.over(shown, fi.Size())
	}
	f, err := r.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
		return nil, fmt.Errorf("%s: changed while it was read", shown)
	}
	data, err := io.ReadAll(io.LimitReader(f, lim.max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown, err)
	}
	if int64(len(data)) > lim.max {
		return nil, fmt.Errorf("%s grew past the limit (%s) of %s while it was read", shown, lim.key, size(lim.max))
	}
	return data, nil
}

// loadOwner loads the owner's skill name. notes are things skipped beside
// it; err is errAbsent when the owner has no such folder or the folder no
// SKILL.md in any case (one in another case is an error, see wrongCase).
func (l *Library) loadOwner(r *os.Root, name string) (s Skill, notes []error, err error) {
	data, err := readOwner(r, name, l.lim.skill())
	if errors.Is(err, errAbsent) {
		if file := skillFileIn(r.FS(), name); file != "" && file != skillFile {
			return Skill{}, nil, wrongCase(name, file)
		}
	}
	if err != nil {
		return Skill{}, nil, err
	}
	s, p, err := parse(data, l.lim)
	if err != nil {
		return Skill{}, nil, fmt.Errorf("%s/%s: %w", name, skillFile, err)
	}
	if s.Name != name {
		return Skill{}, nil, mismatch(name, s.Name, p.nameLine)
	}
	files, notes := listFiles(r.FS(), name, l.lim.file())
	s.Files = paths(files)
	s.Source = SourceOwner
	s.Version = current(versions(r, name))
	return s, notes, nil
}

// listFiles lists the files beside SKILL.md in dir: regular files within
// lim, at most MaxFiles of them, at most three folders deep; hidden names
// are skipped, and links, names with a control or hidden character, names
// on the workspace's credential deny list and anything else are skipped
// and noted.
func listFiles(fsys fs.FS, dir string, lim sizeLimit) (files []File, notes []error) {
	_ = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if p == dir {
			return err // an unreadable skill folder stops the walk
		}
		rel := strings.TrimPrefix(p, dir+"/")
		note := func(why string) { notes = append(notes, skipped{rel, fmt.Errorf("%s/%s: %s", dir, rel, why)}) }
		if err != nil {
			note(err.Error())
			return nil
		}
		if rel == skillFile || strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			note("a symbolic link; not listed")
			return nil
		case d.IsDir():
			if strings.Count(rel, "/") >= 3 {
				note("nested too deep; not listed")
				return fs.SkipDir
			}
			return nil
		case !d.Type().IsRegular():
			note("not a regular file; not listed")
			return nil
		case strings.ContainsAny(rel, "\n\t") || checkText(rel, 0) != nil:
			note("a name with a control or hidden character; not listed")
			return nil
		case workspace.CheckName(rel) != nil:
			note("on the credential deny list the workspace's files share; not listed")
			return nil
		}
		info, err := d.Info()
		if err != nil {
			note(err.Error() + "; not listed")
			return nil
		}
		if info.Size() > lim.max {
			notes = append(notes, skipped{rel, fmt.Errorf("%w: not listed", lim.over(dir+"/"+rel, info.Size()))})
			return nil
		}
		if len(files) == MaxFiles {
			notes = append(notes, skipped{"", fmt.Errorf("%s: more than %d files; the rest are not listed", dir, MaxFiles)})
			return fs.SkipAll
		}
		files = append(files, File{Path: rel, Size: info.Size()})
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, notes
}

// skipped is a note of listFiles: what was left out beside a SKILL.md
// (rel, its path in the skill's folder; "" for the files past MaxFiles),
// and why.
type skipped struct {
	rel string
	err error
}

func (s skipped) Error() string { return s.err.Error() }
func (s skipped) Unwrap() error { return s.err }

// paths are the paths of files.
func paths(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// versions lists the kept version numbers of name, ascending.
func versions(r *os.Root, name string) []int {
	dir := filepath.Join(versionsDir, name)
	if fi, err := r.Lstat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	f, err := r.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n <= 0 || strconv.Itoa(n) != e.Name() || !e.IsDir() {
			continue
		}
		if fi, err := r.Lstat(filepath.Join(dir, e.Name(), skillFile)); err != nil || !fi.Mode().IsRegular() {
			continue // not a kept version (a rollback took its SKILL.md)
		}
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// current is the number of the current version given the kept ones: the
// smallest positive number not kept. An update keeps the current version
// under its number and the next one is above them all; a rollback swaps
// the current version with the kept one below it. Either way the kept
// numbers and the current one are 1..n with no gap, so the number missing
// is the current one.
func current(kept []int) int {
	n := 1
	for _, k := range kept {
		if k == n {
			n++
		} else if k > n {
			break
		}
	}
	return n
}

// List returns every skill, the owner's copy winning over a bundled skill
// of the same name, sorted by name, and the problems of the folders meant
// as skills, once each: a SKILL.md that does not load (its folder named
// unlike a skill, the name not its folder's, the file or the folder a
// link, a rule broken) or is named in another case ("skill.md"). Such a
// skill of the owner's is left out (the bundled one of that name, if any,
// stands). Anything else in the skills directory is not a skill and not a
// problem: files (README.md, LICENSE), hidden folders (.git and the
// library's own .versions, .removed, .staged), folders without a SKILL.md;
// nor is what was left out beside a SKILL.md (Files says it). The error is
// for a skills directory that cannot be read at all (the bundled skills
// are still returned).
func (l *Library) List() ([]Skill, []error, error) {
	r, err := l.root()
	if err != nil {
		return l.bundledList(), nil, err
	}
	defer r.Close()
	d, err := r.Open(".")
	if err != nil {
		return l.bundledList(), nil, fmt.Errorf("skill: list: %w", err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return l.bundledList(), nil, fmt.Errorf("skill: list: %w", err)
	}
	byName := map[string]Skill{}
	for name, s := range l.bundled {
		byName[name] = s.clone()
	}
	var problems []error
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			// Looked through only to tell whether it was meant as a skill.
			if meantAsSkill(l.dir, name) {
				problems = append(problems, fmt.Errorf("%s: a symbolic link; skill folders are never followed: move the folder itself into the skills folder", name))
			}
			continue
		case !e.IsDir():
			continue
		}
		if err := ValidName(name); err != nil {
			if skillFileIn(r.FS(), name) != "" {
				problems = append(problems, fmt.Errorf("%q: not a skill folder: %w", name, err))
			}
			continue
		}
		s, _, err := l.loadOwner(r, name)
		switch {
		case errors.Is(err, errAbsent):
		case err != nil:
			problems = append(problems, err)
		default:
			byName[name] = s
		}
	}
	out := make([]Skill, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	sortSkills(out)
	return out, problems, nil
}

// meantAsSkill reports whether the link name in dir leads to a folder
// holding a SKILL.md in any case. It only looks: nothing behind a link is
// ever read as a skill.
func meantAsSkill(dir, name string) bool {
	return skillFileIn(os.DirFS(filepath.Join(dir, name)), ".") != ""
}

func (l *Library) bundledList() []Skill {
	out := make([]Skill, 0, len(l.bundled))
	for _, s := range l.bundled {
		out = append(out, s.clone())
	}
	sortSkills(out)
	return out
}

// Get returns the skill name: the owner's copy, or else the bundled one.
// An owner's copy that does not load gives way to the bundled skill of the
// same name, as in List, and is the error when there is none.
func (l *Library) Get(name string) (Skill, error) {
	if err := ValidName(name); err != nil {
		return Skill{}, fmt.Errorf("skill: %w", err)
	}
	r, err := l.root()
	if err != nil {
		return Skill{}, err
	}
	defer r.Close()
	s, _, err := l.loadOwner(r, name)
	if err == nil {
		return s, nil
	}
	if b, ok := l.bundled[name]; ok {
		return b.clone(), nil
	}
	if errors.Is(err, errAbsent) {
		return Skill{}, fmt.Errorf("skill %q: %w", name, ErrNotFound)
	}
	return Skill{}, fmt.Errorf("skill: %w", err)
}

// oneLineText turns any line break, tab or control character into a space.
func oneLineText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
}
