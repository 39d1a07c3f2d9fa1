package app

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// The backup archive (shelldon backup, shelldon restore) is a gzipped tar:
//
//	home/<path>      the home's files and directories, as paths relative
//	                 to the home, slash-separated; only regular files and
//	                 directories, never a link or a device
//	manifest.json    the last entry: backupManifest
//
// Every file of the archive is listed in the manifest with its size and
// SHA-256, and nothing else is in it; restore checks all of that before it
// places anything.
const (
	backupFormat   = 1
	backupHomeDir  = "home"
	backupManifest = "manifest.json"
)

// manifest is the manifest.json of a backup.
type manifest struct {
	Format   int       `json:"format"`
	Shelldon string    `json:"shelldon"` // the version that wrote it
	Created  time.Time `json:"created"`
	Home     string    `json:"home"` // where it was taken, for the owner's eyes
	// Schema is the database's schema version; 0 when the home had no
	// database.
	Schema int `json:"schema"`
	// Secrets says whether the secrets (.env, api_token, key files) are
	// in it; Workspace whether the workspace is.
	Secrets   bool `json:"secrets"`
	Workspace bool `json:"workspace"`
	// LeftOut says what the backup did not take and why, one line each.
	LeftOut []string        `json:"left_out,omitempty"`
	Files   []manifestEntry `json:"files"`
}

// manifestEntry is one file or directory of the archive.
type manifestEntry struct {
	Path   string `json:"path"` // the entry's name in the archive, without a trailing slash
	Dir    bool   `json:"dir,omitempty"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// Limits of what an archive name may be.
const (
	maxBackupName      = 4096
	maxBackupComponent = 255
)

// checkArchiveName checks the name of an archive entry (a directory's
// without its trailing slash): manifest.json or home/...,
// relative, slash-separated, already clean (no ".", "..", empty part or
// backslash), valid UTF-8 without control characters, and not too long.
func checkArchiveName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("an entry has no name")
	case len(name) > maxBackupName:
		return fmt.Errorf("an entry's name is longer than %d bytes", maxBackupName)
	case !utf8.ValidString(name):
		return fmt.Errorf("entry %q: the name is not UTF-8", name)
	case strings.HasPrefix(name, "/"):
		return fmt.Errorf("entry %q: an absolute path", name)
	case strings.Contains(name, `\`):
		return fmt.Errorf("entry %q: a backslash in the name", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("entry %q: a control character in the name", name)
		}
	}
	for part := range strings.SplitSeq(name, "/") {
		switch {
		case part == "..":
			return fmt.Errorf("entry %q: a \"..\" in the path", name)
		case part == "" || part == ".":
			return fmt.Errorf("entry %q: the path is not clean", name)
		case len(part) > maxBackupComponent:
			return fmt.Errorf("entry %q: a part of the path is longer than %d bytes", name, maxBackupComponent)
		}
	}
	if path.Clean(name) != name {
		return fmt.Errorf("entry %q: the path is not clean", name)
	}
	if name != backupManifest && !strings.HasPrefix(name, backupHomeDir+"/") {
		return fmt.Errorf("entry %q: outside %s/", name, backupHomeDir)
	}
	return nil
}

// archiveWriter writes the archive to a temporary file beside it, renamed
// into place by finish.
type archiveWriter struct {
	path, tmp string
	f         *os.File
	gz        *gzip.Writer
	tw        *tar.Writer
	files     []manifestEntry
	count     int
	bytes     int64
	buf       []byte
}

func newArchiveWriter(path string) (*archiveWriter, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("backup: %w", err)
	}
	w := &archiveWriter{path: path, tmp: f.Name(), f: f, buf: make([]byte, 64<<10)}
	w.gz = gzip.NewWriter(f)
	w.tw = tar.NewWriter(w.gz)
	return w, nil
}

// reset empties the archive, to start again.
func (w *archiveWriter) reset() error {
	if err := w.f.Truncate(0); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	w.gz.Reset(w.f)
	w.tw = tar.NewWriter(w.gz)
	w.files, w.count, w.bytes = nil, 0, 0
	return nil
}

func (w *archiveWriter) abort() {
	w.f.Close()
	os.Remove(w.tmp)
}

func (w *archiveWriter) dir(rel string, fi fs.FileInfo) error {
	name := backupHomeDir + "/" + rel
	h := &tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o700, ModTime: fi.ModTime(), Format: tar.FormatPAX}
	if err := w.tw.WriteHeader(h); err != nil {
		return fmt.Errorf("backup: write the archive: %w", err)
	}
	w.files = append(w.files, manifestEntry{Path: name, Dir: true})
	return nil
}

// copyFile copies the file at abs, which a listing saw as e, as rel. same
// is false when the file is not e any more (replaced, or changed while it
// was copied); gone when it is no longer there (nothing is written then).
// A file that shrank while copied is padded with zeros to the size its
// header promised; the manifest holds the hash of what was written.
func (w *archiveWriter) copyFile(abs, rel string, e homeEntry) (same, gone bool, err error) {
	f, err := os.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return false, true, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, false, fmt.Errorf("backup: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return false, false, nil
	}
	same = e.same(fi)
	name := backupHomeDir + "/" + rel
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: fi.Size(), ModTime: fi.ModTime(), Format: tar.FormatPAX}
	if err := w.tw.WriteHeader(h); err != nil {
		return false, false, fmt.Errorf("backup: write the archive: %w", err)
	}
	sum := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(w.tw, sum), io.LimitReader(f, fi.Size()), w.buf)
	if err != nil {
		return false, false, fmt.Errorf("backup: copy %s: %w", abs, err)
	}
	if n < fi.Size() {
		same = false
		pad := make([]byte, min(fi.Size()-n, int64(len(w.buf))))
		for left := fi.Size() - n; left > 0; left -= int64(len(pad)) {
			chunk := pad[:min(left, int64(len(pad)))]
			if _, err := io.MultiWriter(w.tw, sum).Write(chunk); err != nil {
				return false, false, fmt.Errorf("backup: write the archive: %w", err)
			}
		}
	}
	if after, err := os.Stat(abs); err != nil || !os.SameFile(after, fi) || after.Size() != fi.Size() || !after.ModTime().Equal(fi.ModTime()) {
		same = false
	}
	w.files = append(w.files, manifestEntry{Path: name, Size: fi.Size(), SHA256: hex.EncodeToString(sum.Sum(nil))})
	w.count++
	w.bytes += fi.Size()
	return same, false, nil
}

// finish writes the manifest, closes the archive, syncs it and renames it
// into place (over an existing file only with force).
func (w *archiveWriter) finish(m manifest, force bool) error {
	body, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	h := &tar.Header{Typeflag: tar.TypeReg, Name: backupManifest, Mode: 0o600, Size: int64(len(body)), ModTime: m.Created, Format: tar.FormatPAX}
	if err := w.tw.WriteHeader(h); err != nil {
		return fmt.Errorf("backup: write the archive: %w", err)
	}
	if _, err := w.tw.Write(body); err != nil {
		return fmt.Errorf("backup: write the archive: %w", err)
	}
	if err := errors.Join(w.tw.Close(), w.gz.Close(), w.f.Sync(), w.f.Close()); err != nil {
		return fmt.Errorf("backup: write the archive: %w", err)
	}
	if !force {
		// Link refuses an existing name, where rename would replace it.
		if err := os.Link(w.tmp, w.path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("backup: %s appeared while the backup ran: pass --force to replace it", w.path)
			}
			if err := os.Rename(w.tmp, w.path); err != nil {
				return fmt.Errorf("backup: %w", err)
			}
		} else {
			os.Remove(w.tmp)
		}
	} else if err := os.Rename(w.tmp, w.path); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	syncDir(filepath.Dir(w.path))
	return nil
}

// syncDir syncs a directory after a rename in it; best effort, as not every
// file system can.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// sizeText writes n bytes for a person: "87 bytes", "1.5 MiB".
func sizeText(n int64) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v, i = v/1024, i+1
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// countText is "1 file", "3 files".
func countText(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
