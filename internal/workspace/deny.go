package workspace

import (
	"path"
	"strings"
	"unicode"
)

// denyPatterns are the credential names no file tool may reach, as
// path.Match patterns over one path component. A denied directory denies
// everything beneath it. They are matched on a canonical form of the name
// (see denyKey): case-folded, because the workspace may live on a
// case-insensitive file system where ".ENV" is ".env"; without format
// characters, which HFS+ ignores (".e\u200cnv" is ".env" there); and without
// trailing dots and spaces, which some file systems drop (".env." is
// ".env"). A "*.suffix" pattern matches the suffix only: "*.key" matches
// "server.key" and ".key", never "monkey" or "keyboard.txt".
//
// The list covers what shelldon's predecessors denied (.env, *.env, .env.*,
// the vault/ tree, the key and certificate suffixes .pem, .key, .crt, .cer,
// .p12, .pfx, .htpasswd, .jks, .ppk, SSH private keys) and the usual homes
// of keys, tokens and passwords.
var denyPatterns = []string{
	// Environment files.
	".env", ".env.*", "*.env", ".envrc",
	// Private keys, certificates and key stores.
	"*.pem", "*.key", "*.crt", "*.cer", "*.p12", "*.pfx", "*.jks",
	"*.keystore", "*.ppk", "*.kdbx",
	// SSH private keys, with their variants (id_rsa.pub, id_ed25519_sk,
	// id_rsa-cert.pub, id_rsa_work, ...). Not every id_* name: id_card.png
	// is not a key.
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	// Per-user credential stores and logins.
	".ssh", ".gnupg", ".aws", ".azure",
	".netrc", ".git-credentials", ".npmrc", ".pypirc", ".pgpass",
	"*.htpasswd",
	// Credential and secret files of applications and cloud SDKs.
	"credentials*", "secrets*", "service-account*.json", "service_account*.json",
	// Terraform state and variables, which hold secrets in clear.
	"terraform.tfstate*", "*.tfvars", "*.tfvars.json",
	// A secrets tree (shelldon's predecessors kept theirs in vault/).
	"vault",
	"shadow",
	// shelldon's own state, should a copy land in the workspace.
	".shelldon", "shelldon.db*",
}

// denyPairs are denied two-component suffixes: a parent directory and a name
// inside it, matched like denyPatterns. What the name holds is denied with
// it.
var denyPairs = [][2]string{
	{".docker", "config.json"},
	{".kube", "config"},
	{".config", "gcloud"},
}

// deniedName reports whether name, a single path component inside a
// directory called parent ("" for the workspace root), is on the deny list.
func deniedName(parent, name string) bool {
	n := denyKey(name)
	for _, p := range denyPatterns {
		if ok, _ := path.Match(fold(p), n); ok {
			return true
		}
	}
	pa := denyKey(parent)
	for _, d := range denyPairs {
		if pa == fold(d[0]) && n == fold(d[1]) {
			return true
		}
	}
	return false
}

// denyKey is the canonical form of a name that denyPatterns and denyPairs
// are matched against: format characters (zero-width and bidirectional
// marks, byte order marks) dropped, then case-folded, then trailing dots and
// spaces trimmed.
func denyKey(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	return strings.TrimRight(fold(s), ". ")
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
// components, or "" when none is denied. "." is skipped; ".." goes back to
// the parent's parent, so ".kube/x/../config" is seen as ".kube/config".
func deniedComponent(comps []string) string {
	var dirs []string // the directories above the current component
	for _, c := range comps {
		switch c {
		case ".":
			continue
		case "..":
			if len(dirs) > 0 {
				dirs = dirs[:len(dirs)-1]
			}
			continue
		}
		parent := ""
		if len(dirs) > 0 {
			parent = dirs[len(dirs)-1]
		}
		if deniedName(parent, c) {
			return c
		}
		dirs = append(dirs, c)
	}
	return ""
}

// gitPatterns returns the deny list as gitignore(5) patterns: each matches
// a denied name at any depth, a denied directory with all beneath it, and
// ASCII letters in either case (git matches case-sensitively). Other case
// foldings (the Kelvin sign), format characters and trailing dots are not
// expressed: git's matching is bytewise, and on the case-sensitive file
// systems where git runs they name other files.
func gitPatterns() []string {
	out := make([]string, 0, len(denyPatterns)+len(denyPairs))
	for _, p := range denyPatterns {
		out = append(out, caseless(p))
	}
	for _, d := range denyPairs {
		out = append(out, "**/"+caseless(d[0])+"/"+caseless(d[1]))
	}
	return out
}

// caseless rewrites a pattern so that each ASCII letter matches in either
// case: "*.pem" becomes "*.[pP][eE][mM]". The patterns hold no brackets or
// escapes of their own.
func caseless(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch {
		case 'a' <= r && r <= 'z':
			b.WriteString("[" + string(r) + string(r-'a'+'A') + "]")
		case 'A' <= r && r <= 'Z':
			b.WriteString("[" + string(r-'A'+'a') + string(r) + "]")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
