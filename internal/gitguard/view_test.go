package gitguard

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// gitdirAt makes the shape of a git directory (HEAD, objects, refs) with
// the given config at dir.
func gitdirAt(t *testing.T, dir, config string) {
	t.Helper()
	mkdir(t, filepath.Join(dir, "objects"))
	mkdir(t, filepath.Join(dir, "refs"))
	put(t, filepath.Join(dir, "HEAD"), "ref: refs/heads/main\n", 0o644)
	if config != "" {
		put(t, filepath.Join(dir, "config"), config, 0o644)
	}
}

// put writes a file, making its directory.
func put(t *testing.T, name, data string, mode os.FileMode) {
	t.Helper()
	mkdir(t, filepath.Dir(name))
	write(t, name, data, mode)
}

const hostileConfig = "[core]\n\tbare = false\n\tfsmonitor = /x\n[filter \"e\"]\n\tclean = /x\n"

// TestConfigView: every configuration git may read as a repository's is
// covered with its sanitized copy, wherever the .git entries lead within
// .git directories; configurations that are only content are left alone.
func TestConfigView(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	gitdirAt(t, filepath.Join(ws, ".git"), hostileConfig)
	put(t, filepath.Join(ws, ".git", "config.worktree"), "[diff]\n\texternal = /x\n", 0o644)
	// A submodule, its git directory absorbed into .git/modules.
	gitdirAt(t, filepath.Join(ws, ".git", "modules", "sub"), hostileConfig)
	put(t, filepath.Join(ws, "sub", ".git"), "gitdir: ../.git/modules/sub\r\n", 0o644)
	// A linked worktree's git directory, its configuration in the common one.
	wt := filepath.Join(ws, ".git", "worktrees", "w")
	mkdir(t, wt)
	put(t, filepath.Join(wt, "HEAD"), "ref: refs/heads/w\n", 0o644)
	put(t, filepath.Join(wt, "commondir"), "../..\n", 0o644)
	put(t, filepath.Join(wt, "config.worktree"), hostileConfig, 0o644)
	put(t, filepath.Join(ws, "w", ".git"), "gitdir: "+wt+"\n", 0o644)
	// A nested repository whose .git is a symbolic link into another .git,
	// whose config is a symbolic link within it.
	gitdirAt(t, filepath.Join(ws, "vendor", "lib", ".git"), "")
	put(t, filepath.Join(ws, "vendor", "lib", ".git", "real.cfg"), hostileConfig, 0o644)
	if err := os.Symlink("real.cfg", filepath.Join(ws, "vendor", "lib", ".git", "config")); err != nil {
		t.Fatal(err)
	}
	mkdir(t, filepath.Join(ws, "nested"))
	if err := os.Symlink("../vendor/lib/.git", filepath.Join(ws, "nested", ".git")); err != nil {
		t.Fatal(err)
	}
	// Content that only looks like a repository, led to by nothing.
	gitdirAt(t, filepath.Join(ws, "fixtures", "bare"), "not a config [\n")
	// A config in .git that is a directory: git cannot read it.
	mkdir(t, filepath.Join(ws, ".git", "modules", "odd", "config"))
	put(t, filepath.Join(ws, ".git", "modules", "odd", "HEAD"), "x", 0o644)

	files, err := ConfigView(ws)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		rel, _ := filepath.Rel(ws, f.Path)
		paths = append(paths, rel)
		if strings.Contains(string(f.Data), "/x") {
			t.Errorf("the copy of %s names a program:\n%s", rel, f.Data)
		}
	}
	want := []string{".git/config", ".git/config.worktree", ".git/modules/sub/config",
		".git/worktrees/w/config.worktree", "vendor/lib/.git/real.cfg"}
	slices.Sort(paths)
	if !slices.Equal(paths, want) {
		t.Errorf("covered %q, want %q", paths, want)
	}
}

// TestConfigViewRefuses: what ConfigView cannot vouch for refuses the call.
func TestConfigViewRefuses(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	gitdirAt(t, filepath.Join(outside, ".git"), hostileConfig)
	cases := map[string]struct {
		plant func(t *testing.T, ws string)
		msg   string
	}{
		"gitfile to a directory a checkout writes": {func(t *testing.T, ws string) {
			gitdirAt(t, filepath.Join(ws, "fixtures", "bare"), hostileConfig)
			put(t, filepath.Join(ws, "sub", ".git"), "gitdir: ../fixtures/bare\n", 0o644)
		}, "not within a .git directory"},
		"gitfile case-folded out": {func(t *testing.T, ws string) {
			gitdirAt(t, filepath.Join(ws, "x.git"), hostileConfig)
			put(t, filepath.Join(ws, "sub", ".git"), "gitdir: ../x.git\n", 0o644)
		}, "not within a .git directory"},
		"gitfile out of the workspace": {func(t *testing.T, ws string) {
			put(t, filepath.Join(ws, ".git"), "gitdir: "+filepath.Join(outside, ".git")+"\n", 0o644)
		}, "outside the workspace"},
		"symbolic link out of the workspace": {func(t *testing.T, ws string) {
			if err := os.Symlink(filepath.Join(outside, ".git"), filepath.Join(ws, ".git")); err != nil {
				t.Fatal(err)
			}
		}, "outside the workspace"},
		"symbolic link through .git out": {func(t *testing.T, ws string) {
			gitdirAt(t, filepath.Join(ws, "fixtures", "bare"), hostileConfig)
			mkdir(t, filepath.Join(ws, ".git"))
			if err := os.Symlink("../fixtures/bare", filepath.Join(ws, ".git", "modules")); err != nil {
				t.Fatal(err)
			}
			put(t, filepath.Join(ws, "sub", ".git"), "gitdir: ../.git/modules\n", 0o644)
		}, "not within a .git directory"},
		"commondir out": {func(t *testing.T, ws string) {
			gitdirAt(t, filepath.Join(ws, ".git"), "")
			gitdirAt(t, filepath.Join(ws, "fixtures", "bare"), hostileConfig)
			put(t, filepath.Join(ws, ".git", "commondir"), "../fixtures/bare\n", 0o644)
		}, "common directory"},
		"config linked out of .git": {func(t *testing.T, ws string) {
			gitdirAt(t, filepath.Join(ws, ".git"), "")
			put(t, filepath.Join(ws, "project.cfg"), hostileConfig, 0o644)
			if err := os.Symlink("../project.cfg", filepath.Join(ws, ".git", "config")); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		"config a FIFO": {func(t *testing.T, ws string) {
			gitdirAt(t, filepath.Join(ws, ".git"), "")
			if err := syscall.Mkfifo(filepath.Join(ws, ".git", "config"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		"gitfile with a NUL": {func(t *testing.T, ws string) {
			put(t, filepath.Join(ws, ".git"), "gitdir: .git2\x00/x\n", 0o644)
		}, "NUL"},
		"unknown extension": {func(t *testing.T, ws string) {
			gitdirAt(t, filepath.Join(ws, ".git"), "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tfuture = 1\n")
		}, "extensions.future"},
		"bad syntax": {func(t *testing.T, ws string) {
			gitdirAt(t, filepath.Join(ws, ".git"), "[core\n")
		}, "syntax"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			tc.plant(t, ws)
			files, err := ConfigView(ws)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("ConfigView = %d files, %v; want an error about %q", len(files), err, tc.msg)
			}
		})
	}
}

// TestConfigViewEmpty: a workspace without a repository has nothing to
// cover (git init makes one).
func TestConfigViewEmpty(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	put(t, filepath.Join(ws, "a.txt"), "a", 0o644)
	if files, err := ConfigView(ws); err != nil || len(files) != 0 {
		t.Errorf("ConfigView = %v, %v", files, err)
	}
}
