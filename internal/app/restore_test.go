package app

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelldon/shelldon/internal/core/store"
)

// tarEntry is one entry of a hand-made archive.
type tarEntry struct {
	name string
	typ  byte // tar.TypeReg when 0
	body string
	link string
}

// listed is the manifest a faithful backup would write for entries.
func listed(entries []tarEntry) manifest {
	m := manifest{Format: backupFormat, Shelldon: "test", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	for _, e := range entries {
		name := strings.TrimSuffix(e.name, "/")
		switch e.typ {
		case tar.TypeDir:
			m.Files = append(m.Files, manifestEntry{Path: name, Dir: true})
		case 0, tar.TypeReg:
			sum := sha256.Sum256([]byte(e.body))
			m.Files = append(m.Files, manifestEntry{Path: name, Size: int64(len(e.body)), SHA256: hex.EncodeToString(sum[:])})
		default:
			m.Files = append(m.Files, manifestEntry{Path: name})
		}
	}
	return m
}

// archiveBytes writes entries and then, unless m is nil, the manifest m
// as a gzipped tar.
func archiveBytes(t *testing.T, entries []tarEntry, m *manifest) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	add := func(e tarEntry) {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o600, Linkname: e.link, Format: tar.FormatPAX}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, e := range entries {
		add(e)
	}
	if m != nil {
		body, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		add(tarEntry{name: backupManifest, body: string(body)})
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var goodEntries = []tarEntry{
	{name: "home/config.yaml", body: "provider:\n  kind: openai\n"},
	{name: "home/tools/", typ: tar.TypeDir},
	{name: "home/tools/live/", typ: tar.TypeDir},
	{name: "home/skills/tea/SKILL.md", body: "---\nname: tea\n---\nbrew it\n"},
}

// TestRestoreRefusesHostileArchives feeds restore archives an attacker (or
// a damaged disk) could make: each is refused with a reason, and nothing
// is left behind, beside the home or outside it.
func TestRestoreRefusesHostileArchives(t *testing.T) {
	t.Parallel()
	with := func(extra ...tarEntry) []tarEntry { return append(slices.Clone(goodEntries), extra...) }
	listedOf := func(es []tarEntry) *manifest { m := listed(es); return &m }
	cases := []struct {
		name     string
		archive  func(t *testing.T) []byte
		maxBytes int64
		maxFiles int
		want     string
	}{
		{name: "dot-dot path", want: `".." in the path`, archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/../evil", body: "x"})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "dot-dot at the top", want: `".." in the path`, archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "../evil", body: "x"})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "absolute path", want: "an absolute path", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "/tmp/evil", body: "x"})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "outside home/", want: "outside home/", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "other/evil", body: "x"})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "unclean path", want: "not clean", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home//x", body: "x"})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "dot component", want: "not clean", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/./x", body: "x"})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "backslash", want: "backslash", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: `home/..\evil`, body: "x"})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "control character", want: "control character", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/a\nb", body: "x"})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "symlink", want: "is a link", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/workspace", typ: tar.TypeSymlink, link: "/etc"})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "hardlink", want: "is a link", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/passwd", typ: tar.TypeLink, link: "/etc/passwd"})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "character device", want: "device or pipe", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/null", typ: tar.TypeChar})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "fifo", want: "device or pipe", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/pipe", typ: tar.TypeFifo})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "duplicate entry", want: "in the archive twice", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/config.yaml", body: "provider: {}\n"})
			return archiveBytes(t, es, listedOf(goodEntries))
		}},
		{name: "file over a directory", want: "in the archive twice", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/tools", body: "x"})
			return archiveBytes(t, es, listedOf(goodEntries))
		}},
		{name: "two manifests", want: "twice", archive: func(t *testing.T) []byte {
			m := listed(goodEntries)
			body, _ := json.Marshal(m)
			es := with(tarEntry{name: backupManifest, body: string(body)})
			return archiveBytes(t, es, &m)
		}},
		{name: "hash mismatch", want: "does not match its SHA-256", archive: func(t *testing.T) []byte {
			m := listed(goodEntries)
			es := slices.Clone(goodEntries)
			es[0].body = strings.Replace(es[0].body, "openai", "evilai", 1) // same size
			return archiveBytes(t, es, &m)
		}},
		{name: "missing manifest", want: "no manifest.json", archive: func(t *testing.T) []byte {
			return archiveBytes(t, goodEntries, nil)
		}},
		{name: "manifest not JSON", want: "does not parse", archive: func(t *testing.T) []byte {
			return archiveBytes(t, with(tarEntry{name: backupManifest, body: "{"}), nil)
		}},
		{name: "newer format", want: "format 99", archive: func(t *testing.T) []byte {
			m := listed(goodEntries)
			m.Format = 99
			return archiveBytes(t, goodEntries, &m)
		}},
		{name: "entry not in the manifest", want: `"home/.ssh/authorized_keys" is not in the manifest`, archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/.ssh/authorized_keys", body: "ssh-ed25519 AAAA evil"})
			return archiveBytes(t, es, listedOf(goodEntries))
		}},
		{name: "manifest lists a missing file", want: "which the archive does not hold", archive: func(t *testing.T) []byte {
			m := listed(with(tarEntry{name: "home/gone", body: "x"}))
			return archiveBytes(t, goodEntries, &m)
		}},
		{name: "manifest lists a file twice", want: "lists \"home/config.yaml\" twice", archive: func(t *testing.T) []byte {
			m := listed(with(goodEntries[0]))
			return archiveBytes(t, goodEntries, &m)
		}},
		{name: "truncated gzip", want: "damaged or cut short", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/big", body: strings.Repeat("0123456789abcdef", 4096)})
			b := archiveBytes(t, es, listedOf(es))
			return b[:len(b)/2]
		}},
		{name: "truncated tar in a whole gzip", want: "damaged or cut short", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/big", body: strings.Repeat("0123456789abcdef", 4096)})
			zr, err := gzip.NewReader(bytes.NewReader(archiveBytes(t, es, listedOf(es))))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(zr)
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(raw[:len(raw)/2])
			zw.Close()
			return buf.Bytes()
		}},
		{name: "not gzip", want: "not a gzip archive", archive: func(t *testing.T) []byte {
			return []byte("PK\x03\x04 this is a zip, or nothing")
		}},
		{name: "too big", maxBytes: 1000, want: "add up to more than", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/big", body: strings.Repeat("x", 2000)})
			return archiveBytes(t, es, listedOf(es))
		}},
		{name: "too many entries", maxFiles: 3, want: "more than 3 entries", archive: func(t *testing.T) []byte {
			return archiveBytes(t, goodEntries, listedOf(goodEntries))
		}},
		{name: "database newer than this binary", want: "restore with a newer shelldon", archive: func(t *testing.T) []byte {
			db := dbAtSchema(t, store.LatestSchema()+1)
			es := with(tarEntry{name: "home/" + dbFile, body: db})
			m := listed(es)
			m.Schema = store.LatestSchema() + 1
			return archiveBytes(t, es, &m)
		}},
		{name: "database that is not one", want: "the database", archive: func(t *testing.T) []byte {
			es := with(tarEntry{name: "home/" + dbFile, body: strings.Repeat("not sqlite ", 500)})
			m := listed(es)
			m.Schema = 3
			return archiveBytes(t, es, &m)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			file := filepath.Join(parent, "backup.tar.gz")
			if err := os.WriteFile(file, tc.archive(t), 0o600); err != nil {
				t.Fatal(err)
			}
			o := restoreOptions{Home: filepath.Join(parent, "home"), File: file, MaxBytes: 1 << 30, MaxFiles: 1000}
			if tc.maxBytes > 0 {
				o.MaxBytes = tc.maxBytes
			}
			if tc.maxFiles > 0 {
				o.MaxFiles = tc.maxFiles
			}
			_, err := restoreHome(t.Context(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("restore: %v, want an error saying %q", err, tc.want)
			}
			left, _ := os.ReadDir(parent)
			if len(left) != 1 || left[0].Name() != "backup.tar.gz" {
				var names []string
				for _, e := range left {
					names = append(names, e.Name())
				}
				t.Errorf("a refused restore left %v beside the archive", names)
			}
			if _, err := os.Lstat(filepath.Join(os.TempDir(), "evil")); err == nil {
				t.Error("the archive wrote outside the home")
			}
		})
	}
}

// dbAtSchema is a database file whose schema_migrations claims version v.
func dbAtSchema(t *testing.T, v int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
		`INSERT INTO schema_migrations VALUES (?, 'from_the_future', 1)`,
	} {
		var args []any
		if strings.Contains(q, "?") {
			args = append(args, v)
		}
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRestoreOnlyIntoAnEmptyHome refuses a home with anything in it,
// naming what is there, and changes nothing in it; an empty directory
// and a missing one are restored into.
func TestRestoreOnlyIntoAnEmptyHome(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	file := filepath.Join(parent, "backup.tar.gz")
	if err := os.WriteFile(file, archiveBytes(t, goodEntries, func() *manifest { m := listed(goodEntries); return &m }()), 0o600); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(parent, "full")
	os.MkdirAll(full, 0o700)
	os.WriteFile(filepath.Join(full, "shelldon.db"), []byte("precious"), 0o600)
	_, err := restoreHome(t.Context(), restoreOptions{Home: full, File: file, MaxBytes: 1 << 20, MaxFiles: 100})
	if err == nil || !strings.Contains(err.Error(), "is not empty (it holds shelldon.db)") {
		t.Fatalf("restore into a home with a database: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(full, "shelldon.db")); string(b) != "precious" {
		t.Errorf("the refused restore changed the home: %q", b)
	}
	notDir := filepath.Join(parent, "notdir")
	os.WriteFile(notDir, nil, 0o600)
	if _, err := restoreHome(t.Context(), restoreOptions{Home: notDir, File: file, MaxBytes: 1 << 20, MaxFiles: 100}); err == nil || !strings.Contains(err.Error(), "not a home") {
		t.Errorf("restore onto a file: %v", err)
	}

	for _, home := range []string{filepath.Join(parent, "empty"), filepath.Join(parent, "new", "deeper")} {
		if strings.HasSuffix(home, "empty") {
			os.Mkdir(home, 0o755)
		}
		res, err := restoreHome(t.Context(), restoreOptions{Home: home, File: file, MaxBytes: 1 << 20, MaxFiles: 100})
		if err != nil {
			t.Fatalf("restore into %s: %v", home, err)
		}
		if res.Files != 2 {
			t.Errorf("restored %d files, want 2", res.Files)
		}
		if b, _ := os.ReadFile(filepath.Join(home, "skills", "tea", "SKILL.md")); string(b) != goodEntries[3].body {
			t.Errorf("skill restored as %q", b)
		}
		checkModes(t, home)
		if fi, err := os.Stat(filepath.Join(home, "tools", "live")); err != nil || !fi.IsDir() {
			t.Errorf("the empty directory tools/live was not restored: %v", err)
		}
	}
}

// checkModes wants every directory under root 0700 and every file 0600.
func checkModes(t *testing.T, root string) {
	t.Helper()
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s is mode %04o, want %04o", p, fi.Mode().Perm(), want)
		}
		return nil
	})
}

// TestCheckArchiveName is the name rule alone, accepting what backup
// writes.
func TestCheckArchiveName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"manifest.json", "home/config.yaml", "home/tools/archive/x/3/manifest.json", "home/workspace/é ü.txt", "home/.env"} {
		if err := checkArchiveName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "home", "home/", "/home/x", "home/../x", "home/a/..", "./home/x", "home/a//b", `home\x`, "home/\x00", "home/" + strings.Repeat("a", 256), "home/" + strings.Repeat("a/", 2100), "home/\xff"} {
		if err := checkArchiveName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzCheckArchiveName(f *testing.F) {
	for _, s := range []string{"home/a", "../x", "home/./a", "manifest.json", "home/a/../../b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if checkArchiveName(name) != nil {
			return
		}
		// An accepted name stays inside the restored home.
		p := filepath.Join("/restore", restoredPath(name))
		if name != backupManifest && !strings.HasPrefix(p, "/restore/") {
			t.Fatalf("%q restores to %q", name, p)
		}
	})
}

// TestRestorePrintsTheManifestInert: what the archive says of itself
// (version, left-out lines) reaches the terminal without its escapes.
func TestRestorePrintsTheManifestInert(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	m := listed(goodEntries)
	m.Shelldon = "v1\x1b]0;owned\x07"
	m.LeftOut = []string{"x: \x1b[2Jcleared"}
	file := filepath.Join(parent, "b.tar.gz")
	if err := os.WriteFile(file, archiveBytes(t, goodEntries, &m), 0o600); err != nil {
		t.Fatal(err)
	}
	o := restoreOptions{Home: filepath.Join(parent, "home"), File: file, MaxBytes: 1 << 20, MaxFiles: 100}
	res, err := restoreHome(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res.print(&out, o)
	if strings.ContainsRune(out.String(), 0x1b) || strings.ContainsRune(out.String(), 0x07) {
		t.Errorf("restore printed the archive's escapes: %q", out.String())
	}
}

// TestRestoreMigratesAnOlderDatabase restores a backup taken of a home an
// older shelldon left (its database at schema 1): the restore brings the
// database to this binary's schema, rows and all, and says so.
func TestRestoreMigratesAnOlderDatabase(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "old")
	os.MkdirAll(home, 0o700)
	first, err := os.ReadFile(filepath.Join("..", "core", "store", "migrations", "0001_init.sql"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(home, dbFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
		string(first),
		`INSERT INTO schema_migrations VALUES (1, 'init', 1)`,
		`INSERT INTO turns (id, chat, input, status, started_at, ended_at, reply) VALUES (1, 'c1', 'hello', 'ok', 1000, 2000, 'hi there')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	db.Close()
	file := filepath.Join(t.TempDir(), "b.tar.gz")
	res, err := backupHome(t.Context(), backupOptions{Home: home, File: file, Workspace: true, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	if res.Schema != 1 {
		t.Fatalf("backed up schema %d, want 1", res.Schema)
	}
	restored := filepath.Join(t.TempDir(), "new")
	o := restoreOptions{Home: restored, File: file, MaxBytes: 1 << 20, MaxFiles: 100}
	rr, err := restoreHome(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rr.print(&out, o)
	if want := fmt.Sprintf("brought from schema 1 to %d", store.LatestSchema()); !strings.Contains(out.String(), want) {
		t.Errorf("restore does not say %q:\n%s", want, out.String())
	}
	st, err := store.Open(t.Context(), filepath.Join(restored, dbFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ti, err := st.Turn(t.Context(), 1); err != nil || ti.Reply != "hi there" {
		t.Errorf("the migrated turn: %+v, %v", ti, err)
	}
}
