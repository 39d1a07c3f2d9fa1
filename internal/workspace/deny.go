package workspace

import (
	"path"
	"strings"
	"unicode"
)

// denyPatterns are the credential names no file tool may reach, as
// path.Match patterns over one path component. They are matched case-folded
// (see fold), because the workspace may live on a case-insensitive file
// system where ".ENV" is ".env".
var denyPatterns = []string{
	// Environment files and per-tool credential stores.
	".env", ".env.*",
	".ssh", ".gnupg", ".aws",
	".netrc", ".git-credentials", ".npmrc", ".pypirc", ".htpasswd",
	// Private keys and key stores.
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	"*.pem", "*.key", "*.p12", "*.pfx", "*.kdbx",
	"credentials*", "secrets*",
	"shadow",
	// shelldon's own state, should a copy land in the workspace.
	".shelldon", "shelldon.db*",
}

// denyPairs are denied two-component suffixes: a parent directory and a name
// inside it.
var denyPairs = [][2]string{
	{".docker", "config.json"},
}

// deniedName reports whether name, a single path component inside a
// directory called parent ("" for the workspace root), is on the deny list.
func deniedName(parent, name string) bool {
	n := fold(name)
	for _, p := range denyPatterns {
		if ok, _ := path.Match(fold(p), n); ok {
			return true
		}
	}
	pa := fold(parent)
	for _, d := range denyPairs {
		if pa == fold(d[0]) && n == fold(d[1]) {
			return true
		}
	}
	return false
}

// fold maps s to a canonical case: every rune becomes the smallest rune of
// its simple case-folding orbit, so "K", "k" and the Kelvin sign all fold
// alike. Two names that differ only in case fold to the same string.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		return min
	}, s)
}

// deniedComponent returns the first denied component of the slash-separated
// components, or "" when none is denied. "." and ".." are skipped.
func deniedComponent(comps []string) string {
	parent := ""
	for _, c := range comps {
		if c == "." || c == ".." {
			parent = ""
			continue
		}
		if deniedName(parent, c) {
			return c
		}
		parent = c
	}
	return ""
}
