package skill

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shelldon/shelldon/internal/workspace"
)

// File is a file of a skill: SKILL.md, or one beside it.
type File struct {
	Path string // slash path inside the skill's folder
	Size int64  // bytes
}

// Page is what ReadFile returns for a path of a skill in use: the files
// beneath a folder, or a part of one file, as text.
type Page struct {
	Skill string
	Path  string // as asked, cleaned: "." for the skill's folder
	// Files are the files beneath a folder (for "." SKILL.md first, then
	// the files beside it); nil for a file.
	Files []File
	// Size is the bytes of the file; Text is the part of it from Offset.
	Size   int64
	Offset int64
	Text   string
}

// Folder reports whether the page lists a folder.
func (p Page) Folder() bool { return p.Files != nil }

// Next is the offset of the rest of the file, or 0 when Text reaches its
// end.
func (p Page) Next() int64 {
	if end := p.Offset + int64(len(p.Text)); end < p.Size {
		return end
	}
	return 0
}

// MaxPath bounds a path asked of ReadFile, in bytes.
const MaxPath = 1024

// Errors of ReadFile that callers can tell apart; each is wrapped in a
// message for the model saying what and why.
var (
	ErrBadPath = errors.New("not a path of a file of the skill")
	ErrNotText = errors.New("not a text file")
)

// BodyOffset is where s.Body starts in the SKILL.md ReadFile serves for s
// (its canonical text, Format): the offset of the body's byte n is
// BodyOffset()+n.
func (s Skill) BodyOffset() int64 {
	if s.Body == "" {
		return int64(len(Format(s)))
	}
	return int64(len(Format(s)) - len(s.Body) - 1)
}

// Files returns the skill name in use (the owner's copy, or else the
// bundled one, as Get), the files of its folder with their sizes (SKILL.md
// first, as ReadFile serves it, then the files beside it), and what beside
// SKILL.md was left out and why.
func (l *Library) Files(name string) (Skill, []File, []error, error) {
	s, files, notes, err := l.files(name)
	if err != nil {
		return Skill{}, nil, nil, err
	}
	return s, append([]File{{Path: skillFile, Size: int64(len(Format(s)))}}, files...), notes, nil
}

// files is Files without SKILL.md.
func (l *Library) files(name string) (Skill, []File, []error, error) {
	s, err := l.Get(name)
	if err != nil {
		return Skill{}, nil, nil, err
	}
	var files []File
	var notes []error
	if s.Source == SourceBundled {
		files, notes = listFiles(l.bfs, name, l.lim.file())
	} else {
		r, err := l.root()
		if err != nil {
			return Skill{}, nil, nil, err
		}
		files, notes = listFiles(r.FS(), name, l.lim.file())
		r.Close()
	}
	return s, files, notes, nil
}

// ReadFile reads p in the folder of the skill name in use: "" or "." lists
// its files, a folder in it lists the files beneath that folder, a file is
// read from offset as text, at most limit bytes of it (cut at a character's
// start; Page.Next says where the rest starts). SKILL.md is served as
// shelldon reads it (Format: canonical frontmatter, "\n" line ends, the
// body as use_skill shows it); another file only if it is listed beside it
// (so: a regular file, no link, not hidden, within Limits.FileBytes, at
// most three folders deep) and not on the workspace's credential deny list.
//
// p is a relative slash path inside the folder: absolute paths, "..",
// backslashes, NUL and paths over MaxPath bytes are refused before
// anything is looked up. An owner's file is read through a jail of the
// skill's folder (workspace.Root: every component looked up without
// following a link out of it, the file opened checked to be the one looked
// up); a bundled one from the embedded files. A draft is never read: only
// the skill in use is (Get).
func (l *Library) ReadFile(name, p string, offset int64, limit int) (Page, error) {
	clean, err := checkPath(p)
	if err != nil {
		return Page{}, err
	}
	s, files, notes, err := l.files(name)
	if err != nil {
		return Page{}, err
	}
	page := Page{Skill: s.Name, Path: clean}
	if clean == "." {
		page.Files = append([]File{{Path: skillFile, Size: int64(len(Format(s)))}}, files...)
		return page, nil
	}
	if clean == skillFile {
		return page.cut([]byte(Format(s)), offset, limit)
	}
	var listed *File
	var beneath []File
	for i, f := range files {
		switch {
		case f.Path == clean:
			listed = &files[i]
		case strings.HasPrefix(f.Path, clean+"/"):
			beneath = append(beneath, f)
		}
	}
	switch {
	case listed == nil && beneath != nil:
		page.Files = beneath
		return page, nil
	case listed == nil:
		more := ""
		for _, n := range notes {
			var sk skipped
			switch {
			case !errors.As(n, &sk):
			case sk.rel == "":
				more = fmt.Sprintf(" (only the first %d are listed and read)", MaxFiles)
			case sk.rel == clean || strings.HasPrefix(clean, sk.rel+"/"):
				return Page{}, fmt.Errorf("skill %s: %w (%w)", s.Name, sk, ErrBadPath)
			}
		}
		return Page{}, fmt.Errorf("%s: no such file in skill %s (%w); its files%s: %s", strconv.Quote(clean), s.Name, ErrBadPath, more, fileNames(files))
	}
	lim := l.lim.file()
	var data []byte
	if s.Source == SourceBundled {
		data, err = fs.ReadFile(l.bfs, path.Join(name, clean))
		if err == nil && int64(len(data)) > lim.max {
			err = lim.over(clean, int64(len(data)))
		}
	} else {
		data, err = l.readOwnerFile(name, clean, lim)
	}
	if err != nil {
		return Page{}, fmt.Errorf("skill %s: %w", s.Name, err)
	}
	if err := isText(data); err != nil {
		return Page{}, fmt.Errorf("skill %s: %s: %w", s.Name, clean, err)
	}
	return page.cut(data, offset, limit)
}

// readOwnerFile reads rel in the owner's folder of name, jailed to it.
func (l *Library) readOwnerFile(name, rel string, lim sizeLimit) ([]byte, error) {
	root, err := workspace.Open(filepath.Join(l.dir, name))
	if err != nil {
		return nil, fmt.Errorf("%s: the skill's folder cannot be opened", rel)
	}
	defer root.Close()
	data, size, err := root.ReadFile(rel, lim.max)
	if err != nil {
		return nil, err
	}
	if size > lim.max {
		return nil, lim.over(rel, size)
	}
	return data, nil
}

// checkPath checks p by its text and returns it cleaned ("." for the
// folder itself).
func checkPath(p string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%s: %s (%w); paths are relative to the skill's folder, like reference.md or forms/intake.md",
			shownPath(p), why, ErrBadPath)
	}
	switch {
	case strings.IndexByte(p, 0) >= 0:
		return bad("a NUL byte in a path")
	case len(p) > MaxPath:
		return bad(fmt.Sprintf("the path is %s bytes; at most %s", count(len(p)), count(MaxPath)))
	case !utf8.ValidString(p):
		return bad("the path is not UTF-8")
	case strings.Contains(p, `\`):
		return bad("a backslash; write paths with /")
	case path.IsAbs(p) || filepath.IsAbs(p) || filepath.VolumeName(p) != "":
		return bad("an absolute path")
	}
	if p == "" || p == "." || p == "./" {
		return ".", nil
	}
	for _, c := range strings.Split(p, "/") {
		switch {
		case c == "..":
			return bad(`".." leads out of the folder`)
		case strings.HasPrefix(c, ".") && c != ".":
			return bad("a hidden name; hidden files are not part of a skill")
		}
	}
	clean := path.Clean(p)
	if err := workspace.CheckName(clean); err != nil {
		return "", fmt.Errorf("%s: on the credential deny list, which skills' files share with the workspace: not read (%w)", shownPath(p), ErrBadPath)
	}
	return clean, nil
}

// shownPath quotes a path for an error, cut when long.
func shownPath(p string) string {
	if len(p) > 120 {
		cut := 120
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		return strconv.Quote(p[:cut]) + "..."
	}
	return strconv.Quote(p)
}

// fileNames lists files' paths for a message.
func fileNames(files []File) string {
	if len(files) == 0 {
		return "only SKILL.md"
	}
	names := []string{skillFile}
	for _, f := range files {
		names = append(names, f.Path)
	}
	return strings.Join(names, ", ")
}

// isText refuses what is not text the model and the owner read alike:
// invalid UTF-8, NUL and other control characters (but tab, line feed and
// the carriage return of a CRLF), and the characters that hide text
// (checkText's rules for SKILL.md).
func isText(data []byte) error {
	if i := strings.IndexByte(string(data), 0); i >= 0 {
		return fmt.Errorf("a NUL byte at byte %s: %w (a binary file?); shelldon shows the files of a skill only as text", count(i), ErrNotText)
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("invalid UTF-8: %w; shelldon shows the files of a skill only as text", ErrNotText)
	}
	if err := checkText(strings.ReplaceAll(string(data), "\r\n", "\n"), 1); err != nil {
		return fmt.Errorf("%w (%w)", err, ErrNotText)
	}
	return nil
}

// cut fills p with the part of data from offset of at most limit bytes
// (at least one character), starting and ending at a character's start.
func (p Page) cut(data []byte, offset int64, limit int) (Page, error) {
	p.Size = int64(len(data))
	if offset < 0 || offset > p.Size {
		return Page{}, fmt.Errorf("%s: offset %s is outside the file, which is %s bytes (%w)", strconv.Quote(p.Path), count(offset), count(p.Size), ErrBadPath)
	}
	for offset > 0 && offset < p.Size && !utf8.RuneStart(data[offset]) {
		offset-- // back to the start of the character
	}
	end := min(p.Size, offset+int64(max(limit, utf8.UTFMax)))
	for end < p.Size && end > offset && !utf8.RuneStart(data[end]) {
		end--
	}
	p.Offset, p.Text = offset, string(data[offset:end])
	return p, nil
}
