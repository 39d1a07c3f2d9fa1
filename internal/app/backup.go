package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelldon/shelldon/internal/config"
	"github.com/shelldon/shelldon/internal/core/store"
)

func (e cmdEnv) backupCmd() *cobra.Command {
	var o backupOptions
	var noWorkspace bool
	cmd := &cobra.Command{
		Use:   "backup FILE",
		Short: "Copy the home into one archive, while shelldon runs",
		Long: "Copy the home into FILE, a gzipped tar (mode 0600), while the daemon and its turns may run:\n" +
			"the database is copied as one consistent snapshot (each turn wholly or not at all), and\n" +
			"with it config.yaml, config.local.yaml, the self-coded tools and their versions, the skills\n" +
			"and their drafts, the terminal's chat history and the workspace. The archive lists every\n" +
			"file with its SHA-256; `shelldon restore FILE` checks them all.\n\n" +
			"Left out, and said so: the secrets (.env, api_token, key files) unless --secrets, the\n" +
			"caches (rebuilt on start), the database's own pre-upgrade copies, unfinished temporary\n" +
			"files, links and special files. The workspace is taken unless --no-workspace (or when it is\n" +
			"outside the home). FILE is written whole or not at all, and never over an existing file\n" +
			"without --force.",
		Example: "  shelldon backup ~/shelldon-$(date +%F).tar.gz\n" +
			"  shelldon backup --secrets /media/usb/shelldon.tar.gz   # keep it somewhere safe\n" +
			"  shelldon backup --no-workspace --force /srv/backups/shelldon.tar.gz",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := e.home()
			if err != nil {
				return err
			}
			o.Home, o.File, o.Environ, o.Workspace, o.Now = home, args[0], e.environ, !noWorkspace, timeNow
			res, err := backupHome(cmd.Context(), o)
			if err != nil {
				return err
			}
			res.print(e.stdout, o)
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.Secrets, "secrets", false, "include the secrets: .env, api_token and key files (keep the archive safe)")
	cmd.Flags().BoolVar(&noWorkspace, "no-workspace", false, "leave the workspace out")
	cmd.Flags().BoolVar(&o.Force, "force", false, "replace FILE if it exists")
	return cmd
}

// backupOptions is what backupHome takes.
type backupOptions struct {
	Home, File string
	Secrets    bool
	Workspace  bool
	Force      bool
	Environ    []string
	Now        func() time.Time

	afterFile func(rel string) // the tests' hook: called after each file of the state is copied
}

// backupResult is what backupHome did.
type backupResult struct {
	File    string
	Files   int
	Bytes   int64
	Schema  int
	LeftOut []string
	Torn    []string // workspace files that changed while they were copied
}

func (r backupResult) print(w io.Writer, o backupOptions) {
	fmt.Fprintf(w, "Backed up %s to %s: %s, %s", o.Home, r.File, countText(r.Files, "file"), sizeText(r.Bytes))
	if r.Schema > 0 {
		fmt.Fprintf(w, ", database schema %d", r.Schema)
	}
	fmt.Fprintln(w, ".")
	if len(r.LeftOut) > 0 {
		fmt.Fprintln(w, "Left out:")
		for _, l := range r.LeftOut {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	for _, t := range r.Torn {
		fmt.Fprintf(w, "Warning: %s changed while it was copied; its copy may be part old, part new.\n", t)
	}
	if o.Secrets {
		fmt.Fprintln(w, "The archive holds your secrets: keep it where only you can read it.")
	}
}

// backupAttempts is how often backupHome copies the home's small state
// (config, tools, skills) again when it changed while being copied.
const backupAttempts = 5

// backupHome writes the archive of o.Home to o.File. It never changes the
// home: the database is read through a read-only connection of its own
// (store.Snapshot), every other file is opened for reading.
//
// Order matters for consistency. First the home's files other than the
// database and the workspace: they are listed, copied, and listed again,
// and copied anew until nothing changed meanwhile (every writer of the home
// replaces files by rename, so a file read is whole; a tool's promotion is
// several renames, caught by the second listing). Then the database: a
// snapshot taken after the files is at least as new, so a tool the files
// show staged has its request in it. Then the workspace, file by file; a
// file that changes while copied is reported.
func backupHome(ctx context.Context, o backupOptions) (res backupResult, err error) {
	plan, err := planBackup(o)
	if err != nil {
		return res, err
	}
	res.File = plan.file
	w, err := newArchiveWriter(plan.file)
	if err != nil {
		return res, err
	}
	defer func() {
		if err != nil {
			w.abort()
		}
	}()

	notes := maps.Clone(plan.leftOut)
	for attempt := 1; ; attempt++ {
		changed, err := plan.copyState(ctx, w)
		if err != nil {
			return res, err
		}
		if !changed {
			break
		}
		if attempt == backupAttempts {
			return res, fmt.Errorf("backup: the home's files kept changing while they were copied (%d attempts); try again", attempt)
		}
		if err := w.reset(); err != nil {
			return res, err
		}
		plan.leftOut = maps.Clone(notes)
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}

	res.Schema, err = plan.copyDatabase(ctx, w)
	if err != nil {
		return res, err
	}
	if plan.workspace != "" {
		res.Torn, err = plan.copyTree(ctx, w, plan.workspace)
		if err != nil {
			return res, err
		}
	}
	m := manifest{
		Format: backupFormat, Shelldon: versionString(), Created: o.Now().UTC(), Home: plan.home,
		Schema: res.Schema, Secrets: o.Secrets, Workspace: plan.workspace != "",
		LeftOut: plan.leftOutLines(), Files: w.files,
	}
	if err := w.finish(m, o.Force); err != nil {
		return res, err
	}
	res.Files, res.Bytes, res.LeftOut = w.count, w.bytes, m.LeftOut
	return res, nil
}

// backupPlan is what to take from a home, and what to leave out.
type backupPlan struct {
	home      string // absolute, symlinks resolved
	file      string // the archive, absolute
	secrets   bool
	workspace string          // the workspace's path in the home (slash-separated); "" when not taken
	skipWS    string          // the workspace's path in the home when --no-workspace leaves it out
	keys      map[string]bool // files that are (true) or are not (false) secrets whatever isSecretName says
	leftOut   map[string]string
	afterFile func(rel string)
}

func planBackup(o backupOptions) (*backupPlan, error) {
	home, err := filepath.Abs(o.Home)
	if err == nil {
		home, err = filepath.EvalSymlinks(home)
	}
	if err != nil {
		return nil, fmt.Errorf("backup: the home %s: %w", o.Home, err)
	}
	if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("backup: the home %s is not a directory", home)
	}
	file, err := filepath.Abs(o.File)
	if err != nil {
		return nil, fmt.Errorf("backup: %s: %w", o.File, err)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(file))
	if err != nil {
		return nil, fmt.Errorf("backup: the directory of %s: %w", file, err)
	}
	file = filepath.Join(dir, filepath.Base(file))
	if within(file, home) {
		return nil, fmt.Errorf("backup: %s is inside the home %s: write the archive somewhere else", file, home)
	}
	if fi, err := os.Lstat(file); err == nil {
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("backup: %s exists and is %s", file, fileKind(fi))
		}
		if !o.Force {
			return nil, fmt.Errorf("backup: %s exists: choose another name, or pass --force to replace it", file)
		}
	}
	p := &backupPlan{home: home, file: file, secrets: o.Secrets, keys: map[string]bool{}, leftOut: map[string]string{}, afterFile: o.afterFile}

	// The workspace and the TLS key come from the config; a home whose
	// config does not load is still backed up, with the default workspace.
	ws := filepath.Join(home, workspaceDir)
	if cfg, err := config.Load(home, o.Environ); err == nil {
		ws = cfg.Workspace
		for path, secret := range map[string]bool{cfg.Server.TLSCert: false, cfg.Server.TLSKey: true} {
			if rel, err := filepath.Rel(home, path); path != "" && err == nil && within(path, home) {
				p.keys[filepath.ToSlash(rel)] = secret
			}
		}
	}
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	switch rel, err := filepath.Rel(home, ws); {
	case err != nil || rel == "." || !within(ws, home):
		p.leftOut[ws] = "the workspace is outside the home: back it up on its own"
	case !o.Workspace:
		p.skipWS = filepath.ToSlash(rel)
	default:
		p.workspace = filepath.ToSlash(rel)
	}
	return p, nil
}

func (p *backupPlan) leftOutLines() []string {
	var out []string
	for path, why := range p.leftOut {
		out = append(out, path+": "+why)
	}
	slices.Sort(out)
	return out
}

// Kinds of a path of the home, for the state phase.
const (
	takeIt = iota
	skipIt
	secretIt
	workspaceIt // the workspace: its own phase
	databaseIt  // the database: its own phase
)

// classify says what the state phase does with the home's path rel
// (slash-separated) of type mode, and why it leaves it out.
func (p *backupPlan) classify(rel string, mode fs.FileMode) (int, string) {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	switch {
	case rel == p.workspace:
		return workspaceIt, ""
	case rel == p.skipWS:
		return skipIt, "the workspace (--no-workspace)"
	case mode&fs.ModeSymlink != 0:
		return skipIt, "a symbolic link, not followed"
	case !mode.IsDir() && !mode.IsRegular():
		return skipIt, "not a regular file (a socket, pipe or device)"
	case rel == "cache":
		return skipIt, "a cache, rebuilt when shelldon starts"
	case rel == dbFile:
		return databaseIt, ""
	case rel == dbFile+"-wal" || rel == dbFile+"-shm" || rel == dbFile+"-journal":
		return databaseIt, ""
	case strings.HasPrefix(rel, dbFile+".backup-"):
		return skipIt, "the database's copy from before an upgrade"
	case rel == "tools/.tmp" || strings.Contains(base, ".tmp-"):
		return skipIt, "an unfinished write"
	case mode.IsRegular() && p.isSecret(rel, base):
		if p.secrets {
			return takeIt, ""
		}
		return secretIt, "a secret (pass --secrets to include it)"
	}
	return takeIt, ""
}

// isSecret reports whether the home's file rel holds a secret: the TLS
// key the config names, or a secret by its name (but the TLS certificate).
func (p *backupPlan) isSecret(rel, base string) bool {
	if secret, ok := p.keys[rel]; ok {
		return secret
	}
	return isSecretName(rel, base)
}

// isSecretName reports whether a file of the home (outside the workspace)
// holds a secret by its name: .env, the API token, a key.
func isSecretName(rel, base string) bool {
	return rel == config.FileEnv || rel == tokenFile ||
		strings.HasSuffix(base, ".key") || strings.HasSuffix(base, ".pem")
}

// homeEntry is one path of the home as a listing saw it.
type homeEntry struct {
	rel string // slash-separated, relative to the home
	fi  fs.FileInfo
}

// same reports whether b is the file a listed, unchanged.
func (a homeEntry) same(b fs.FileInfo) bool {
	return os.SameFile(a.fi, b) && a.fi.Mode() == b.Mode() &&
		(a.fi.IsDir() || a.fi.Size() == b.Size() && a.fi.ModTime().Equal(b.ModTime()))
}

// listState lists the home but for the database and the workspace,
// noting what it leaves out.
func (p *backupPlan) listState(ctx context.Context) ([]homeEntry, error) {
	var out []homeEntry
	err := filepath.WalkDir(p.home, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if abs == p.home {
			return nil
		}
		rel, _ := filepath.Rel(p.home, abs)
		rel = filepath.ToSlash(rel)
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone since the directory was read: the second listing tells
		}
		if err != nil {
			return err
		}
		kind, why := p.classify(rel, fi.Mode())
		switch kind {
		case takeIt:
			out = append(out, homeEntry{rel, fi})
			return nil
		case skipIt, secretIt:
			if fi.IsDir() {
				p.leftOut[rel+"/"] = why
				return filepath.SkipDir
			}
			p.leftOut[rel] = why
		}
		if fi.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("backup: list the home: %w", err)
	}
	return out, nil
}

// copyState copies the home's files but the database and the workspace,
// and reports whether any changed meanwhile (the caller starts again).
func (p *backupPlan) copyState(ctx context.Context, w *archiveWriter) (changed bool, err error) {
	first, err := p.listState(ctx)
	if err != nil {
		return false, err
	}
	for _, e := range first {
		if e.fi.IsDir() {
			if err := w.dir(e.rel, e.fi); err != nil {
				return false, err
			}
			continue
		}
		same, _, err := w.copyFile(filepath.Join(p.home, filepath.FromSlash(e.rel)), e.rel, e)
		if err != nil {
			return false, err
		}
		if p.afterFile != nil {
			p.afterFile(e.rel)
		}
		if !same {
			return true, nil
		}
	}
	again, err := p.listState(ctx)
	if err != nil {
		return false, err
	}
	if len(again) != len(first) {
		return true, nil
	}
	for i, e := range again {
		if e.rel != first[i].rel || !first[i].same(e.fi) {
			return true, nil
		}
	}
	return false, nil
}

// copyDatabase snapshots the database into a private directory beside the
// archive (not /tmp, which on a Raspberry Pi may be memory) and copies the
// snapshot in. It returns the database's schema version; 0 with no
// database.
func (p *backupPlan) copyDatabase(ctx context.Context, w *archiveWriter) (int, error) {
	db := filepath.Join(p.home, dbFile)
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		p.leftOut[dbFile] = "there is no database yet"
		return 0, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(p.file), ".shelldon-backup-db-*")
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	defer os.RemoveAll(tmp)
	snap := filepath.Join(tmp, dbFile)
	schema, err := store.Snapshot(ctx, db, snap)
	if err != nil {
		return 0, fmt.Errorf("backup: copy the database: %w", err)
	}
	fi, err := os.Stat(snap)
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	if _, _, err := w.copyFile(snap, dbFile, homeEntry{dbFile, fi}); err != nil {
		return 0, err
	}
	return schema, nil
}

// copyTree copies the directory rel of the home and everything in it, file
// by file, and returns the files that changed while copied.
func (p *backupPlan) copyTree(ctx context.Context, w *archiveWriter, rel string) (torn []string, err error) {
	root := filepath.Join(p.home, filepath.FromSlash(rel))
	err = filepath.WalkDir(root, func(abs string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		r, _ := filepath.Rel(p.home, abs)
		r = filepath.ToSlash(r)
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		switch m := fi.Mode(); {
		case m.IsDir():
			return w.dir(r, fi)
		case m&fs.ModeSymlink != 0:
			p.leftOut[r] = "a symbolic link, not followed"
			return nil
		case !m.IsRegular():
			p.leftOut[r] = "not a regular file (a socket, pipe or device)"
			return nil
		}
		same, gone, err := w.copyFile(abs, r, homeEntry{r, fi})
		switch {
		case err != nil:
			return err
		case gone:
			p.leftOut[r] = "removed while the backup ran"
		case !same:
			torn = append(torn, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("backup: copy %s: %w", rel, err)
	}
	return torn, nil
}
