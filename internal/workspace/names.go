package workspace

import (
	"fmt"
	"path"
	"strings"
)

// CheckName checks a name by its text alone, for names that need not exist
// (a git pathspec, a file in an old commit): relative, not climbing out of
// the workspace, and with no component on the credential deny list.
func CheckName(name string) error {
	if name == "" {
		return nil
	}
	if strings.ContainsRune(name, 0) {
		return fmt.Errorf("%q: %w", name, ErrEscapes)
	}
	if path.IsAbs(name) {
		return fmt.Errorf("%q: absolute paths are not allowed; paths are relative to the workspace: %w", name, ErrEscapes)
	}
	clean := path.Clean(name)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("%q: path escapes the workspace: %w", name, ErrEscapes)
	}
	if c := deniedComponent(strings.Split(clean, "/")); c != "" {
		return fmt.Errorf("%q: %q is on the credential deny list: %w", name, c, ErrDenied)
	}
	return nil
}

// DenyPatterns returns the credential deny list as gitignore(5) patterns,
// one a line of git's exclude file, so that git leaves every denied file
// out of 'add -A': each pattern matches a denied name at any depth (a
// denied directory with all beneath it, ".kube/config" under any
// directory), with ASCII letters in either case. CheckName remains the
// check for names; this is the list in git's form.
func DenyPatterns() []string { return gitPatterns() }
