package app

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shelldon/shelldon/internal/core/store"
	"github.com/shelldon/shelldon/internal/selfcode"
)

const backupTestKey = "sk-backup-test-0123456789abcdef"

// backupHomeFixture makes a home with a bit of everything a home holds,
// and what a backup must leave out; its database stays open (as a
// daemon's would) until the test ends.
func backupHomeFixture(t *testing.T) (home string, st *store.Store) {
	t.Helper()
	home = filepath.Join(t.TempDir(), "home")
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(home, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("config.yaml", "provider:\n  kind: openai\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  api_key_env: K\n")
	write("config.local.yaml", "agent:\n  max_tool_calls: 9\n")
	write(".env", "K="+backupTestKey+"\n")
	write("api_token", "0123456789abcdef0123456789abcdef\n")
	write("server.key", "-----BEGIN PRIVATE KEY-----\n")
	write("chat_history", "hello\nwhat is the time\n")
	write("skills/tea/SKILL.md", "---\nname: tea\ndescription: brew tea\n---\nBoil water.\n")
	write("skills/.staged/coffee/SKILL.md", "---\nname: coffee\ndescription: brew coffee\n---\nGrind.\n")
	write("workspace/notes.txt", "water the plants")
	write("workspace/deep/er/file.md", "# deep")
	// What is left out:
	write("cache/pygate/blob", "compiled")
	write("shelldon.db.backup-v3", "an old copy")
	write(".env.tmp-123", "K=half-written-secret")
	if err := os.Symlink("/etc/passwd", filepath.Join(home, "link")); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(home, "d.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })

	tools, err := selfcode.Open(filepath.Join(home, "tools"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tools.Stage("greet", selfcode.Starlark, "def run(args):\n    return 'hi'\n", "def test_a():\n    pass\n", selfcode.Meta{Description: "says hi"}, "passed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tools.Promote("greet", m.Hash, "owner"); err != nil {
		t.Fatal(err)
	}
	write("tools/.tmp/half", "unfinished")

	st, err = store.Open(t.Context(), filepath.Join(home, dbFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, _, err := st.Remember(t.Context(), "c1", 0, "the owner drinks tea at five", time.Now(), 100); err != nil {
		t.Fatal(err)
	}
	return home, st
}

// archiveNames lists the entries of the archive at path.
func archiveNames(t *testing.T, path string) ([]string, manifest) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	var m manifest
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Name == backupManifest {
			if err := json.NewDecoder(tr).Decode(&m); err != nil {
				t.Fatal(err)
			}
		}
	}
	return names, m
}

// TestBackupAndRestore backs up a home whose database is open, and
// restores it: what a home holds comes back, byte for byte; the secrets
// only with Secrets; caches, links, sockets, the database's old copies
// and unfinished writes never, each named in what was left out.
func TestBackupAndRestore(t *testing.T) {
	t.Parallel()
	home, _ := backupHomeFixture(t)
	for _, secrets := range []bool{false, true} {
		out := t.TempDir()
		file := filepath.Join(out, "b.tar.gz")
		res, err := backupHome(t.Context(), backupOptions{Home: home, File: file, Secrets: secrets, Workspace: true, Now: time.Now})
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("archive: %v, mode %v; want 0600", err, fi.Mode())
		}
		if left, _ := os.ReadDir(out); len(left) != 1 {
			t.Errorf("the backup left %d files beside the archive", len(left))
		}
		names, m := archiveNames(t, file)
		if names[len(names)-1] != backupManifest {
			t.Errorf("the manifest is not the last entry: %v", names)
		}
		if m.Format != backupFormat || m.Schema != store.LatestSchema() || m.Secrets != secrets || !m.Workspace || m.Shelldon == "" {
			t.Errorf("manifest = %+v", m)
		}
		for _, want := range []string{"home/config.yaml", "home/config.local.yaml", "home/chat_history", "home/" + dbFile,
			"home/skills/tea/SKILL.md", "home/skills/.staged/coffee/SKILL.md", "home/tools/live/greet/manifest.json",
			"home/workspace/notes.txt", "home/workspace/deep/er/file.md", "home/tools/archive/"} {
			if !slices.Contains(names, want) {
				t.Errorf("the archive lacks %s", want)
			}
		}
		never := []string{"cache", "shelldon.db.backup-v3", ".env.tmp-123", "link", "d.sock", "tools/.tmp", dbFile + "-wal", dbFile + "-shm"}
		secretFiles := []string{".env", "api_token", "server.key"}
		for _, n := range names {
			rel := strings.TrimSuffix(strings.TrimPrefix(n, "home/"), "/")
			for _, bad := range never {
				if rel == bad || strings.HasPrefix(rel, bad+"/") {
					t.Errorf("the archive holds %s", n)
				}
			}
			if !secrets && slices.Contains(secretFiles, rel) {
				t.Errorf("the archive holds the secret %s without Secrets", n)
			}
		}
		leftOut := strings.Join(res.LeftOut, "\n")
		for _, want := range []string{"cache/: a cache", "shelldon.db.backup-v3: the database's copy", ".env.tmp-123: an unfinished write",
			"link: a symbolic link", "d.sock: not a regular file", "tools/.tmp/: an unfinished write"} {
			if !strings.Contains(leftOut, want) {
				t.Errorf("left out does not say %q:\n%s", want, leftOut)
			}
		}
		for _, s := range secretFiles {
			if said := strings.Contains(leftOut, s+": a secret (pass --secrets"); said == secrets {
				t.Errorf("secrets=%v: left out says of %s: %v\n%s", secrets, s, said, leftOut)
			}
		}
		var printed strings.Builder
		res.print(&printed, backupOptions{Home: home, Secrets: secrets})
		if !strings.Contains(printed.String(), ".env: a secret (pass --secrets to include it)") == !secrets {
			t.Errorf("secrets=%v, the command printed:\n%s", secrets, printed.String())
		}

		restored := filepath.Join(t.TempDir(), "restored")
		rr, err := restoreHome(t.Context(), restoreOptions{Home: restored, File: file, MaxBytes: 1 << 30, MaxFiles: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if rr.Files != res.Files || rr.Schema != store.LatestSchema() {
			t.Errorf("restored %d files at schema %d; backed up %d", rr.Files, rr.Schema, res.Files)
		}
		checkModes(t, restored)
		for _, rel := range []string{"config.yaml", "config.local.yaml", "chat_history", "skills/tea/SKILL.md", "skills/.staged/coffee/SKILL.md",
			"workspace/notes.txt", "workspace/deep/er/file.md", "tools/live/greet/manifest.json"} {
			want, _ := os.ReadFile(filepath.Join(home, rel))
			got, err := os.ReadFile(filepath.Join(restored, rel))
			if err != nil || string(got) != string(want) {
				t.Errorf("%s restored as %q (%v), want %q", rel, got, err, want)
			}
		}
		for _, s := range secretFiles {
			_, err := os.Stat(filepath.Join(restored, s))
			if (err == nil) != secrets {
				t.Errorf("secrets=%v: restored %s: %v", secrets, s, err)
			}
		}
		for _, n := range never {
			if _, err := os.Lstat(filepath.Join(restored, n)); err == nil {
				t.Errorf("restored %s", n)
			}
		}
		tools, err := selfcode.Open(filepath.Join(restored, "tools"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if tool, err := tools.Load(selfcode.StateLive, "greet"); err != nil || tool.Meta.Description != "says hi" {
			t.Errorf("the restored tool: %+v, %v", tool, err)
		}
		if probs := selfcode.Check(filepath.Join(restored, "tools"), nil); len(probs) != 0 {
			t.Errorf("the restored tools have problems: %v", probs)
		}
		st, err := store.Open(t.Context(), filepath.Join(restored, dbFile))
		if err != nil {
			t.Fatal(err)
		}
		if n, err := st.CountFacts(t.Context()); err != nil || n != 1 {
			t.Errorf("the restored database holds %d facts (%v), want 1", n, err)
		}
		st.Close()
	}
}

// TestBackupRefuses: an existing FILE without --force, a FILE inside the
// home, a home that is not there.
func TestBackupRefuses(t *testing.T) {
	t.Parallel()
	home, _ := backupHomeFixture(t)
	out := t.TempDir()
	file := filepath.Join(out, "b.tar.gz")
	os.WriteFile(file, []byte("an older backup"), 0o600)
	o := backupOptions{Home: home, File: file, Workspace: true, Now: time.Now}
	if _, err := backupHome(t.Context(), o); err == nil || !strings.Contains(err.Error(), "exists: choose another name, or pass --force") {
		t.Errorf("backup over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "an older backup" {
		t.Errorf("the existing file was changed")
	}
	o.Force = true
	if _, err := backupHome(t.Context(), o); err != nil {
		t.Fatalf("backup --force: %v", err)
	}
	if names, _ := archiveNames(t, file); len(names) < 5 {
		t.Errorf("--force wrote %v", names)
	}
	for _, inside := range []string{filepath.Join(home, "b.tar.gz"), filepath.Join(home, "workspace", "b.tar.gz")} {
		if _, err := backupHome(t.Context(), backupOptions{Home: home, File: inside, Now: time.Now}); err == nil || !strings.Contains(err.Error(), "inside the home") {
			t.Errorf("backup into %s: %v", inside, err)
		}
	}
	if _, err := backupHome(t.Context(), backupOptions{Home: filepath.Join(out, "nohome"), File: filepath.Join(out, "c.tar.gz"), Now: time.Now}); err == nil {
		t.Error("backup of a missing home succeeded")
	}
}

// TestBackupWithoutWorkspace leaves the workspace out, and says so.
func TestBackupWithoutWorkspace(t *testing.T) {
	t.Parallel()
	home, _ := backupHomeFixture(t)
	file := filepath.Join(t.TempDir(), "b.tar.gz")
	res, err := backupHome(t.Context(), backupOptions{Home: home, File: file, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	names, m := archiveNames(t, file)
	for _, n := range names {
		if strings.HasPrefix(n, "home/workspace") {
			t.Errorf("the archive holds %s", n)
		}
	}
	if m.Workspace || !slices.Contains(res.LeftOut, "workspace/: the workspace (--no-workspace)") {
		t.Errorf("manifest workspace=%v, left out %v", m.Workspace, res.LeftOut)
	}
}

// TestBackupCopiesAgainWhenTheStateChanges: a tool promoted while the
// home's files are copied (a move between tools/staged, tools/live and
// tools/archive, as the daemon makes it) makes the backup copy them
// again, so the archive holds the tools as they were at one moment.
func TestBackupCopiesAgainWhenTheStateChanges(t *testing.T) {
	t.Parallel()
	home, _ := backupHomeFixture(t)
	tools, err := selfcode.Open(filepath.Join(home, "tools"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tools.Stage("greet", selfcode.Starlark, "def run(args):\n    return 'hello'\n", "def test_a():\n    pass\n", selfcode.Meta{Description: "says hello"}, "passed")
	if err != nil {
		t.Fatal(err)
	}
	promoted := 0
	file := filepath.Join(t.TempDir(), "b.tar.gz")
	o := backupOptions{Home: home, File: file, Workspace: true, Now: time.Now, afterFile: func(rel string) {
		if promoted == 0 && strings.HasPrefix(rel, "tools/archive") || promoted == 0 && strings.HasPrefix(rel, "skills") {
			promoted++
			if _, err := tools.Promote("greet", m.Hash, "owner"); err != nil {
				t.Error(err)
			}
		}
	}}
	if _, err := backupHome(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	if promoted != 1 {
		t.Fatalf("the promotion ran %d times", promoted)
	}
	restored := filepath.Join(t.TempDir(), "r")
	if _, err := restoreHome(t.Context(), restoreOptions{Home: restored, File: file, MaxBytes: 1 << 30, MaxFiles: 1000}); err != nil {
		t.Fatal(err)
	}
	rt, err := selfcode.Open(filepath.Join(restored, "tools"), nil)
	if err != nil {
		t.Fatal(err)
	}
	live, err := rt.Load(selfcode.StateLive, "greet")
	if err != nil || live.Meta.Description != "says hello" {
		t.Errorf("the restored live tool: %+v, %v; want version 2", live, err)
	}
	vs, err := rt.Versions("greet")
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, v := range vs {
		got = append(got, v.Version)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]int{1, 2}, got); diff != "" {
		t.Errorf("restored versions (-want +got):\n%s", diff)
	}
	if probs := selfcode.Check(filepath.Join(restored, "tools"), nil); len(probs) != 0 {
		t.Errorf("the restored tools have problems: %v", probs)
	}
}
