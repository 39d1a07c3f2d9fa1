//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelldon/shelldon/internal/sandbox"
)

// TestCovers: a covered workspace file reads as the cover's data inside the
// sandbox and cannot be written, replaced or uncovered there; the file
// itself is untouched; a cover reached through a symbolic link, or of
// something other than a regular file, fails the run before anything runs.
func TestCovers(t *testing.T) {
	t.Parallel()
	b := newBox(t)
	dir := filepath.Join(b.workspace, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "config")
	if err := os.WriteFile(file, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cover := func(p *sandbox.Policy) { p.Covers = []sandbox.Cover{{Path: file, Data: []byte("covered\n")}} }
	script := `cat d/config
{ echo w >> d/config; } 2>/dev/null && echo APPENDED
echo x > d/new && mv d/new d/config 2>/dev/null && echo RENAMED
rm d/config 2>/dev/null && echo REMOVED
umount d/config 2>/dev/null && echo UNMOUNTED
ls -a / | grep -q covers && echo SEEN
cat d/config`
	res := b.sh(script, cover)
	if got := out(res); got != "covered\ncovered\n" {
		t.Errorf("inside the sandbox:\n%s", got)
	}
	if data, err := os.ReadFile(file); err != nil || string(data) != "original\n" {
		t.Errorf("the covered file is now %q (%v)", data, err)
	}

	// A symbolic link on the way, or at the end, is never followed.
	if err := os.Symlink("d", filepath.Join(b.workspace, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("config", filepath.Join(dir, "flink")); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		filepath.Join(b.workspace, "link", "config"), filepath.Join(dir, "flink"),
		dir, filepath.Join(dir, "missing"),
	} {
		_, err := b.r.Run(context.Background(), sandbox.Policy{
			Argv: []string{"/bin/true"}, Workspace: b.workspace,
			Covers: []sandbox.Cover{{Path: path, Data: []byte("x")}},
		})
		if err == nil || !strings.Contains(err.Error(), "cover") {
			t.Errorf("cover of %s: err %v, want a setup failure", path, err)
		}
	}
	// Outside the workspace, or not clean: a bad policy.
	for _, path := range []string{b.ownerHome + "/diary.txt", b.workspace, b.workspace + "/d/../d/config", "d/config"} {
		_, err := b.r.Run(context.Background(), sandbox.Policy{
			Argv: []string{"/bin/true"}, Workspace: b.workspace,
			Covers: []sandbox.Cover{{Path: path, Data: []byte("x")}},
		})
		if !errors.Is(err, sandbox.ErrBadPolicy) {
			t.Errorf("cover of %s: err %v, want ErrBadPolicy", path, err)
		}
	}
}
