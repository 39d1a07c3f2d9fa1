package pytool

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// python is the interpreter the tests use (PYTOOL_TEST_PYTHON, to try another version);
// they skip without it.
var python = cmp.Or(os.Getenv("PYTOOL_TEST_PYTHON"), "/usr/bin/python3")

func needPython(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		t.Skipf("%s is missing (%v): the Python tool gate cannot be tested here", python, err)
	}
}

func readTestdata(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stage writes a tool and its test into a fresh directory, as the caller would.
func stage(t *testing.T, name, code, test string) string {
	t.Helper()
	dir := t.TempDir()
	for file, src := range map[string]string{name + ".py": code, "test_" + name + ".py": test} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCapWriter(t *testing.T) {
	t.Parallel()
	w := &capWriter{max: 4}
	w.Write([]byte("ab"))
	w.Write([]byte("cdef"))
	w.Write([]byte("gh"))
	if got, want := w.String(), "abcd\n[... 4 more bytes]"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := capString("héllo", 2); got != "h\n[... truncated: 6 bytes in all]" {
		t.Errorf("capString cut a rune: %q", got)
	}
}

// TestProbe: the installed python3 has the run-time guard; a missing one is an error.
func TestProbe(t *testing.T) {
	needPython(t)
	v, err := Probe(context.Background(), python)
	if err != nil || !strings.HasPrefix(v, "3.") {
		t.Fatalf("Probe(%s) = %q, %v", python, v, err)
	}
	if _, err := Probe(context.Background(), "/nonexistent/python3"); err == nil {
		t.Fatal("Probe of a missing python succeeded")
	}
}

// FuzzValidName: the hand-written name check is the regexp it replaced.
func FuzzValidName(f *testing.F) {
	re := regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	for _, s := range []string{"", "a", "word_count", "Word", "1a", "a-b", "é", strings.Repeat("a", 64), strings.Repeat("a", 65), "a\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validName(s), re.MatchString(s); got != want {
			t.Errorf("validName(%q) = %v, the regexp says %v", s, got, want)
		}
	})
}
