package workspace

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
)

// denyPatterns are the credential names no file tool may reach, as
// path.Match patterns over one path component. A denied name is denied
// wherever it is and whatever it is: a denied directory denies everything
// beneath it. They are matched on a canonical form of the name (see
// denyKey): case-folded, because the workspace may live on a
// case-insensitive file system where ".ENV" is ".env"; without format
// characters, which HFS+ ignores (".e\u200cnv" is ".env" there); and without
// trailing dots and spaces, which some file systems drop (".env." is
// ".env"). A "*.suffix" pattern matches the suffix only: "*.key" matches
// "server.key" and ".key", never "monkey" or "keyboard.txt".
//
// The list covers what shelldon's predecessors denied (.env, *.env, .env.*,
// the vault/ tree, the key and certificate suffixes .pem, .key, .crt, .cer,
// .p12, .pfx, .htpasswd, .jks, .ppk, SSH private keys) and the usual homes
// of keys, tokens and passwords. Names that are as often code as secrets
// (credentials*, secrets*, kubeconfig*, shadow) are fileRules instead.
//
// Judged and kept, whatever the false positives: *.key is also a Keynote
// deck, but a TLS private key far more often, and a deck is nothing the
// model can read; vault/ is also the usual name of an Obsidian vault, but it
// is where shelldon's predecessors kept their secrets.
var denyPatterns = []string{
	// Environment files (but see denyExceptions).
	".env", ".env.*", "*.env", ".envrc",
	// Private keys, certificates, key stores and keyrings: *.gpg is an
	// exported or secret keyring (secring.gpg) as often as an encrypted file,
	// which the model could not read anyway.
	"*.pem", "*.key", "*.crt", "*.cer", "*.p12", "*.pfx", "*.p8", "*.jks",
	"*.keystore", "*.ppk", "*.kdbx", "*.keytab", "*.gpg", "*.ovpn",
	// SSH private keys, with their variants (id_rsa.pub, id_ed25519_sk,
	// id_rsa-cert.pub, id_rsa_work, ...). Not every id_* name: id_card.png
	// is not a key.
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	// Per-user credential stores and logins: directories, then files.
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".oci",
	".netrc", "_netrc", ".git-credentials", ".npmrc", ".yarnrc.yml", ".pypirc",
	".pgpass", ".my.cnf", ".mylogin.cnf", ".s3cfg", ".boto", ".dockercfg",
	".vault-token", ".terraformrc", "terraform.rc", ".databrickscfg",
	"rclone.conf", "*.htpasswd",
	// Credential and secret files of applications and cloud SDKs.
	"service-account*.json", "service_account*.json", "client_secret*.json",
	"secret.yaml", "secret.yml", "secret.json",
	// Terraform state (and its backups, terraform.tfstate.d/) and variables,
	// which hold secrets in clear.
	"*.tfstate", "*.tfstate.*", "*.tfvars", "*.tfvars.json",
	// A secrets tree (shelldon's predecessors kept theirs in vault/).
	"vault",
	// shelldon's own state, should a copy land in the workspace.
	".shelldon", "shelldon.db*",
}

// denyExceptions are names a pattern of denyPatterns matches that are not
// denied by it. .env.example, .env.sample, .env.template and .env.dist are
// the templates projects commit next to .env, by convention with
// placeholders and never the values: they say which variables a program
// needs, which is what the model reads them for. Any other .env.* (.env.local,
// .env.production, .env.example.local) stays denied. A switch rather than
// a map literal, which every process of the binary would build at package
// init, the idle daemon included (package lazy).
func denyExceptions(pattern string) []string {
	switch pattern {
	case ".env.*":
		return envTemplates
	}
	return nil
}

// envTemplates are the exceptions of .env.* (denyExceptions).
var envTemplates = []string{".env.example", ".env.sample", ".env.template", ".env.dist"}

// denyPairs are denied two-component suffixes: a parent directory and a name
// inside it, matched like denyPatterns. What the name holds is denied with
// it.
var denyPairs = [][2]string{
	{".docker", "config.json"},
	{".config", "gcloud"},
	{"gh", "hosts.yml"}, // the GitHub CLI's tokens, in .config/gh
}

// fileRule is a name denied as a file but not as a directory, for names that
// are as often code as credentials. A file of that name is denied unless it
// has one of the extensions free; with tree, so is every file beneath a
// directory of that name (at any depth) unless it has a source-code
// extension (sourceExts). The directory itself, and those beneath it, can be
// listed: what they hold is judged file by file. A name is a file when it
// is not a directory, or when nothing says which it is (CheckName).
type fileRule struct {
	pattern string
	free    []string
	tree    bool
}

// fileRules: credentials, secrets and kubeconfig files are the usual homes
// of tokens, and so are directories of those names (Docker's and
// Kubernetes' secrets/, Rails' config/credentials/); but credentials.go and
// a Go package internal/credentials/ are code. /etc/shadow is a file; a
// shadow/ directory is not a password file.
var fileRules = []fileRule{
	{"credentials*", codeExts, true},
	{"secrets*", codeExts, true},
	{"kubeconfig*", codeExts, true},
	{"shadow", nil, false},
	{"gshadow", nil, false},
}

// codeExts free a file named like a credential store (credentials.go,
// secrets_test.go, CredentialsProvider.java): the languages where that name
// is the code that handles credentials. Not the others: by convention,
// secrets.py (Django's SECRET_KEY), credentials.js and credentials.ts
// (Node config modules), Secrets.swift, secrets.dart and Arduino's secrets.h
// are where a project keeps its keys out of the rest of its code.
var codeExts = []string{".go", ".rs", ".java", ".scala", ".cs"}

// sourceExts free a file beneath a directory named like a credential store
// (internal/credentials/store.go, src/secrets/manager.py): a package of code.
// What such a directory holds otherwise (tokens, JSON, YAML, keys, notes)
// stays denied. It starts with codeExts (TestSourceExtsHoldCodeExts),
// spelled out: a literal of constants is static data, where an append
// would be init work for every process of the binary (package lazy).
var sourceExts = []string{".go", ".rs", ".java", ".scala", ".cs",
	".kt", ".swift", ".dart", ".c", ".h", ".cc", ".cpp", ".hpp", ".py", ".js",
	".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".rb", ".php"}

// deniedName reports whether name, a single path component inside a
// directory called parent ("" for the workspace root), is on the deny list
// whatever it is: denyPatterns (less denyExceptions) and denyPairs.
func deniedName(parent, name string) bool {
	n := denyKey(name)
	for _, p := range denyPatterns {
		if ok, _ := path.Match(fold(p), n); ok && !excepted(p, n) {
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

// excepted reports whether n, a denyKey, is one of pattern's denyExceptions.
func excepted(pattern, n string) bool {
	for _, e := range denyExceptions(pattern) {
		if n == fold(e) {
			return true
		}
	}
	return false
}

// deniedFile checks leaf, a file (not a directory), against fileRules; dirs
// are the names of the directories above it, or every name met on the way
// to it. It returns the name that denies it, leaf or (beneath) the
// directory it lies beneath, or "".
func deniedFile(dirs []string, leaf string) (c string, beneath bool) {
	n := denyKey(leaf)
	ext := path.Ext(n)
	for _, r := range fileRules {
		if ok, _ := path.Match(fold(r.pattern), n); ok && !hasExt(r.free, ext) {
			return leaf, false
		}
	}
	if hasExt(sourceExts, ext) {
		return "", false
	}
	for _, d := range dirs {
		k := denyKey(d)
		for _, r := range fileRules {
			if ok, _ := path.Match(fold(r.pattern), k); ok && r.tree {
				return d, true
			}
		}
	}
	return "", false
}

// denied is the verdict of deniedFile.
func denied(c string, _ bool) bool { return c != "" }

// hasExt reports whether ext, of a denyKey, is one of exts.
func hasExt(exts []string, ext string) bool {
	return slices.ContainsFunc(exts, func(e string) bool { return fold(e) == ext })
}

// deniedPath returns the first denied component of comps, a path to a file
// (or to what CheckName cannot tell: a file, then), or "" when nothing on
// it is denied: deniedComponent, then deniedFile for its last component.
// beneath is deniedFile's.
func deniedPath(comps []string) (c string, beneath bool) {
	if c := deniedComponent(comps); c != "" {
		return c, false
	}
	n := names(comps)
	if len(n) == 0 || comps[len(comps)-1] == "." || comps[len(comps)-1] == ".." {
		return "", false // a directory
	}
	return deniedFile(n[:len(n)-1], n[len(n)-1])
}

// names are comps without "." and "..": every name on the way, as the deny
// list sees them (".kube/x/../config" holds .kube).
func names(comps []string) []string {
	var out []string
	for _, c := range comps {
		if c != "." && c != ".." {
			out = append(out, c)
		}
	}
	return out
}

// denyNote explains a denial by c, a directory of fileRules that the file
// lies beneath (beneath), whose source files are reachable.
func denyNote(c string, beneath bool) string {
	if !beneath {
		return ""
	}
	return fmt.Sprintf(" (it lies beneath %s: only source files can be reached there)", quote(c))
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
//
// In git the last pattern that matches a path decides, and a directory left
// out hides all beneath it; the order below makes that agree with
// deniedName and deniedFile:
//
//  1. each tree rule: everything beneath a directory of its name, but the
//     directories there and the source files;
//  2. each fileRule: the name, but as a directory, and with a free extension;
//  3. denyPatterns without exceptions, and denyPairs, which nothing after
//     brings back;
//  4. each pattern with exceptions: the pattern, but its exceptions, unless
//     they lie beneath a tree rule's directory (which 1 denies and 4 would
//     bring back).
func gitPatterns() []string {
	var out []string
	for _, r := range fileRules {
		if r.tree {
			t := "**/" + caseless(r.pattern) + "/**"
			out = append(out, t, "!"+t+"/")
			for _, e := range sourceExts {
				out = append(out, "!"+t+"/*"+caseless(e))
			}
		}
	}
	for _, r := range fileRules {
		p := caseless(r.pattern)
		out = append(out, p, "!"+p+"/")
		for _, e := range r.free {
			out = append(out, "!"+p+caseless(e)) // the pattern ends in *: see TestGitPatternsOrder
		}
	}
	for _, p := range denyPatterns {
		if len(denyExceptions(p)) == 0 {
			out = append(out, caseless(p))
		}
	}
	for _, d := range denyPairs {
		out = append(out, "**/"+caseless(d[0])+"/"+caseless(d[1]))
	}
	for _, p := range denyPatterns {
		if len(denyExceptions(p)) == 0 {
			continue
		}
		out = append(out, caseless(p))
		for _, e := range denyExceptions(p) {
			out = append(out, "!"+caseless(e))
		}
		for _, r := range fileRules {
			if r.tree {
				for _, e := range denyExceptions(p) {
					out = append(out, "**/"+caseless(r.pattern)+"/**/"+caseless(e))
				}
			}
		}
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
