package workspace

import (
	"fmt"
	"path"
	"strings"
)

// CheckName checks a name by its text alone, for names that need not exist
// (a git pathspec, a file in an old commit): relative, not climbing out of
// the workspace, and with no component on the credential deny list. With
// nothing to say whether the name is a directory, it is judged as a file:
// "internal/credentials" is refused (as a pathspec it would take in the
// directory's tokens), "internal/credentials/store.go" is not.
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
	if c, beneath := deniedPath(strings.Split(clean, "/")); c != "" {
		return fmt.Errorf("%q: %q is on the credential deny list%s: %w", name, c, denyNote(c, beneath), ErrDenied)
	}
	return nil
}

// DenyPatterns returns the credential deny list as gitignore(5) patterns,
// one a line of git's exclude file, so that git leaves every denied file
// out of 'add -A': each pattern matches a denied name at any depth (a
// denied directory with all beneath it, "gh/hosts.yml" under any
// directory), with ASCII letters in either case, and negations ("!") keep
// what the list leaves reachable (.env.example, credentials.go, the source
// files beneath secrets/); the order matters. CheckName remains the check
// for names; this is the list in git's form.
func DenyPatterns() []string { return gitPatterns() }
