package app

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/inert"
)

// Default limits of an archive restore reads; --max-size and --max-files
// raise them.
const (
	defaultRestoreBytes = 16 << 30
	defaultRestoreFiles = 200_000
	maxManifestBytes    = 64 << 20
)

func (e cmdEnv) restoreCmd() *cobra.Command {
	o := restoreOptions{MaxFiles: defaultRestoreFiles}
	maxSize := config.ByteSize(defaultRestoreBytes).String()
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Restore a home from an archive `shelldon backup` wrote",
		Long: "Restore the home from FILE, an archive `shelldon backup` wrote, into an empty or new home\n" +
			"(--home, $SHELLDON_HOME or ~/.shelldon); a home with anything in it is refused.\n\n" +
			"The archive is checked whole before anything is placed: its manifest, every file's size\n" +
			"and SHA-256, and that it holds only plain files and directories with clean relative names,\n" +
			"each once, within --max-size and --max-files. It is unpacked into a new directory beside the\n" +
			"home (mode 0700, files 0600), its database opened and brought to this binary's schema, and\n" +
			"only then renamed into place: a restore that fails leaves nothing behind.\n\n" +
			"A backup taken without --secrets has no .env or api_token: set the secrets again\n" +
			"(shelldon config set-secret NAME) before starting shelldon, then run `shelldon doctor`.",
		Example: "  shelldon restore ~/shelldon-2026-03-01.tar.gz\n" +
			"  shelldon --home /srv/shelldon restore /media/usb/shelldon.tar.gz\n" +
			"  shelldon restore --max-size 64GiB big-workspace.tar.gz",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := e.home()
			if err != nil {
				return err
			}
			n, err := config.ParseByteSize(maxSize)
			if err != nil {
				return exitError{code: exitConfig, msg: "shelldon: --max-size: " + err.Error()}
			}
			o.Home, o.File, o.MaxBytes = home, args[0], int64(n)
			res, err := restoreHome(cmd.Context(), o)
			if err != nil {
				return err
			}
			res.print(e.stdout, o)
			return nil
		},
	}
	cmd.Flags().StringVar(&maxSize, "max-size", maxSize, "refuse an archive whose files add up to more than this")
	cmd.Flags().IntVar(&o.MaxFiles, "max-files", o.MaxFiles, "refuse an archive of more entries than this")
	return cmd
}

// restoreOptions is what restoreHome takes.
type restoreOptions struct {
	Home, File string
	MaxBytes   int64
	MaxFiles   int
}

// restoreResult is what restoreHome did.
type restoreResult struct {
	Home     string
	Manifest manifest
	Files    int
	Bytes    int64
	Schema   int // the database's schema version after the restore
}

func (r restoreResult) print(w io.Writer, o restoreOptions) {
	// The manifest is the archive's word: shown inert.
	m := r.Manifest
	fmt.Fprintf(w, "Restored %s into %s: %s, %s, backed up %s by shelldon %s.\n",
		o.File, r.Home, countText(r.Files, "file"), sizeText(r.Bytes), m.Created.Format(time.RFC3339), inert.Text(m.Shelldon))
	switch {
	case m.Schema == 0:
		fmt.Fprintln(w, "The backup had no database; shelldon makes one when it starts.")
	case m.Schema != r.Schema:
		fmt.Fprintf(w, "The database was brought from schema %d to %d.\n", m.Schema, r.Schema)
	}
	if len(m.LeftOut) > 0 {
		fmt.Fprintln(w, "The backup left out:")
		for _, l := range m.LeftOut {
			fmt.Fprintf(w, "  %s\n", inert.Text(l))
		}
	}
	if !m.Secrets {
		fmt.Fprintln(w, "It holds no secrets: set them again (shelldon config set-secret NAME) before starting shelldon.")
	}
	fmt.Fprintln(w, "Next: shelldon doctor")
}

// restoreHome unpacks the archive o.File into o.Home, which must be empty
// or absent. The archive is taken as hostile until checked: see
// checkArchiveName and extractArchive.
func restoreHome(ctx context.Context, o restoreOptions) (res restoreResult, err error) {
	home, err := filepath.Abs(o.Home)
	if err != nil {
		return res, fmt.Errorf("restore: %s: %w", o.Home, err)
	}
	res.Home = home
	if err := checkEmptyHome(home); err != nil {
		return res, err
	}
	parent := filepath.Dir(home)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(home)+".restore-*")
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o700); err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	f, err := os.Open(o.File)
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return res, fmt.Errorf("restore: %s is not a file", o.File)
	}
	m, n, size, err := extractArchive(ctx, f, tmp, o)
	if err != nil {
		return res, fmt.Errorf("restore %s: %w", o.File, err)
	}
	res.Manifest, res.Files, res.Bytes = m, n, size
	res.Schema, err = openRestoredStore(ctx, filepath.Join(tmp, dbFile), m.Schema)
	if err != nil {
		return res, fmt.Errorf("restore %s: %w", o.File, err)
	}
	// rename(2) replaces an empty directory and refuses one that is not,
	// so a file put in the home meanwhile makes the restore fail, not
	// vanish. (os.Rename refuses any directory, hence syscall.)
	if err := syscall.Rename(tmp, home); err != nil {
		if errors.Is(err, fs.ErrExist) { // ENOTEMPTY is ErrExist too
			return res, fmt.Errorf("restore: %s is no longer empty: restore only into an empty or new home", home)
		}
		return res, fmt.Errorf("restore: move %s into place: %w", tmp, err)
	}
	syncDir(parent)
	return res, nil
}

// checkEmptyHome refuses a home that exists and is not an empty directory,
// saying what is in it.
func checkEmptyHome(home string) error {
	fi, err := os.Lstat(home)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("restore: %s is %s, not a home: restore into an empty or new directory", home, fileKind(fi))
	}
	d, err := os.Open(home)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(6)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("restore: %w", err)
	}
	if len(names) == 0 {
		return nil
	}
	list := strings.Join(names[:min(len(names), 5)], ", ")
	if len(names) > 5 {
		list += ", ..."
	}
	return fmt.Errorf("restore: the home %s is not empty (it holds %s): restore only into an empty or new home, with --home or SHELLDON_HOME pointing at it", home, list)
}

// extractArchive reads the gzipped tar r into dir, checking as it goes that
// each entry is a plain file or directory with a clean name under home/,
// seen once, within the limits; then that the manifest lists exactly the
// entries, with their sizes and hashes. Nothing is written outside dir.
func extractArchive(ctx context.Context, r io.Reader, dir string, o restoreOptions) (m manifest, files int, total int64, err error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return m, 0, 0, fmt.Errorf("not a gzip archive: %w", err)
	}
	tr := tar.NewReader(damageReader{gz})
	type got struct {
		dir  bool
		size int64
		sum  string
	}
	seen := map[string]got{}
	var manifestBody []byte
	buf := make([]byte, 64<<10)
	for entries := 0; ; entries++ {
		if err := ctx.Err(); err != nil {
			return m, 0, 0, err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return m, 0, 0, fmt.Errorf("read the archive: %w", damaged(err))
		}
		if entries >= o.MaxFiles {
			return m, 0, 0, fmt.Errorf("the archive holds more than %d entries: pass --max-files to allow more", o.MaxFiles)
		}
		name := h.Name
		isDir := h.Typeflag == tar.TypeDir
		if isDir {
			name = strings.TrimSuffix(name, "/")
		}
		if err := checkArchiveName(name); err != nil {
			return m, 0, 0, err
		}
		if _, dup := seen[name]; dup || name == backupManifest && manifestBody != nil {
			return m, 0, 0, fmt.Errorf("entry %q is in the archive twice", name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if name == backupManifest {
				return m, 0, 0, fmt.Errorf("entry %q: the manifest is a directory", name)
			}
			if err := os.MkdirAll(filepath.Join(dir, restoredPath(name)), 0o700); err != nil {
				return m, 0, 0, fmt.Errorf("entry %q: %w", name, err)
			}
			seen[name] = got{dir: true}
			continue
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return m, 0, 0, fmt.Errorf("entry %q is a link: a backup holds only files and directories", name)
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			return m, 0, 0, fmt.Errorf("entry %q is a device or pipe: a backup holds only files and directories", name)
		default:
			return m, 0, 0, fmt.Errorf("entry %q is of type %q: a backup holds only files and directories", name, h.Typeflag)
		}
		if name == backupManifest {
			if h.Size > maxManifestBytes {
				return m, 0, 0, fmt.Errorf("the manifest is %d bytes, more than %d", h.Size, maxManifestBytes)
			}
			manifestBody, err = io.ReadAll(io.LimitReader(tr, maxManifestBytes))
			if err != nil {
				return m, 0, 0, fmt.Errorf("the manifest: %w", damaged(err))
			}
			continue
		}
		if total += h.Size; h.Size < 0 || total > o.MaxBytes {
			return m, 0, 0, fmt.Errorf("the archive's files add up to more than %s: pass --max-size to allow more", config.ByteSize(o.MaxBytes))
		}
		sum, err := writeRestored(filepath.Join(dir, restoredPath(name)), tr, h.Size, buf)
		if err != nil {
			return m, 0, 0, fmt.Errorf("entry %q: %w", name, damaged(err))
		}
		seen[name] = got{size: h.Size, sum: sum}
		files++
	}
	if manifestBody == nil {
		return m, 0, 0, errors.New("the archive has no manifest.json: it was not written by shelldon backup")
	}
	if err := json.Unmarshal(manifestBody, &m); err != nil {
		return m, 0, 0, fmt.Errorf("the manifest does not parse: %w", err)
	}
	if m.Format != backupFormat {
		return m, 0, 0, fmt.Errorf("the archive is of format %d; this shelldon reads format %d: restore it with the shelldon that wrote it (%s) or a newer one", m.Format, backupFormat, m.Shelldon)
	}
	listed := make(map[string]bool, len(m.Files))
	for _, e := range m.Files {
		if listed[e.Path] {
			return m, 0, 0, fmt.Errorf("the manifest lists %q twice", e.Path)
		}
		listed[e.Path] = true
		g, ok := seen[e.Path]
		switch {
		case !ok:
			return m, 0, 0, fmt.Errorf("the manifest lists %q, which the archive does not hold", e.Path)
		case g.dir != e.Dir:
			return m, 0, 0, fmt.Errorf("entry %q: the manifest and the archive disagree on whether it is a directory", e.Path)
		case !g.dir && (g.size != e.Size || g.sum != e.SHA256):
			return m, 0, 0, fmt.Errorf("entry %q does not match its SHA-256 in the manifest: the archive was changed or damaged", e.Path)
		}
	}
	for name := range seen {
		if !listed[name] {
			return m, 0, 0, fmt.Errorf("entry %q is not in the manifest", name)
		}
	}
	return m, files, total, nil
}

// restoredPath is where an archive entry home/<p> goes, relative to the
// restored home's directory.
func restoredPath(name string) string {
	return filepath.FromSlash(strings.TrimPrefix(name, backupHomeDir+"/"))
}

// writeRestored writes size bytes of r to a new file at path (mode 0600,
// its directories 0700), syncs it, and returns their SHA-256.
func writeRestored(path string, r io.Reader, size int64, buf []byte) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(f, sum), io.LimitReader(r, size), buf)
	if err == nil && n != size {
		err = io.ErrUnexpectedEOF
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

// openRestoredStore opens the restored database, which brings it to this
// binary's schema, and returns its version; 0 when the backup had none. A
// database newer than this binary is refused before it is touched.
func openRestoredStore(ctx context.Context, path string, schema int) (int, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	v, err := store.SchemaVersionOf(ctx, path)
	if err != nil {
		return 0, fmt.Errorf("the database: %w", err)
	}
	if latest := store.LatestSchema(); v > latest {
		return 0, fmt.Errorf("the database is at schema %d and this shelldon knows up to %d: restore with a newer shelldon", v, latest)
	}
	if v != schema {
		return 0, fmt.Errorf("the database is at schema %d, the manifest says %d", v, schema)
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return 0, fmt.Errorf("the database: %w", err)
	}
	if err := st.Close(); err != nil {
		return 0, fmt.Errorf("the database: %w", err)
	}
	return store.LatestSchema(), nil
}

// damageReader says that an archive it cannot read on is damaged or cut
// short, whatever layer (gzip, tar) found out.
type damageReader struct{ r io.Reader }

func (d damageReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF {
		err = damageError{err}
	}
	return n, err
}

// damaged says an archive that ended too soon (tar's own finding, below
// damageReader) is damaged.
func damaged(err error) error {
	var d damageError
	if errors.Is(err, io.ErrUnexpectedEOF) && !errors.As(err, &d) {
		return damageError{err}
	}
	return err
}

// damageError is a read error of the archive.
type damageError struct{ err error }

func (d damageError) Error() string { return "the archive is damaged or cut short: " + d.err.Error() }
func (d damageError) Unwrap() error { return d.err }
