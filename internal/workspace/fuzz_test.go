package workspace

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve checks that whatever the name, Resolve never panics, and what
// it returns is clean, relative, inside the root and not denied.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"", ".", "..", "../x", "a/../../x", "/etc/passwd", "sub/up/up", "chain1",
		"loop1", ".env", "innocent.txt", "subl/..", "outside-deep/secret.txt",
		"a\x00b", "./sub//deeper/../leaf.txt", ".SSH/config", "sub/up/notes.txt",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	for _, d := range []string{"ws/sub/deeper", "outside"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	ws := filepath.Join(dir, "ws")
	for target, name := range map[string]string{
		"..": "sub/up", "sub": "subl", "../outside": "out", "/etc": "etc",
		"loop2": "loop1", "loop1": "loop2", ".env": "innocent.txt", "sub/deeper/../..": "home",
	} {
		os.Symlink(target, filepath.Join(ws, name))
	}
	os.WriteFile(filepath.Join(ws, "sub/deeper/leaf.txt"), nil, 0o644)
	r, err := Open(ws)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })

	f.Fuzz(func(t *testing.T, name string) {
		rel, err := r.Resolve(name)
		if err != nil {
			if rel != "" {
				t.Fatalf("Resolve(%q) = %q with error %v", name, rel, err)
			}
			return
		}
		if rel == "" || path.IsAbs(rel) || rel != path.Clean(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			t.Fatalf("Resolve(%q) = %q: not a clean relative path", name, rel)
		}
		parent := ""
		for c := range strings.SplitSeq(rel, "/") {
			if deniedName(parent, c) {
				t.Fatalf("Resolve(%q) = %q: denied component %q", name, rel, c)
			}
			parent = c
		}
		// What the kernel makes of it must lie under the root too.
		real, err := filepath.EvalSymlinks(filepath.Join(ws, filepath.Dir(rel)))
		if err != nil {
			return
		}
		if real != r.real && !strings.HasPrefix(real, r.real+"/") {
			t.Fatalf("Resolve(%q) = %q, which the kernel puts at %q", name, rel, real)
		}
	})
}
