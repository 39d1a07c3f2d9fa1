package gitguard

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// prefix is the daemon-owned part of every git command line, between "git"
// and the subcommand. Command-line configuration is read after the
// repository's own (.git/config and whatever it includes), so each -c here
// wins over a value an attacker planted there. See the package doc.
var prefix = []string{
	"--no-pager",          // never start a pager (core.pager, pager.<cmd>)
	"--git-dir=.git",      // the repository is the workspace's .git: no discovery upwards,
	"--work-tree=.",       // no bare repository in the workspace, no core.worktree elsewhere
	"--literal-pathspecs", // a pathspec names exactly one path: no globs, no magic
	"--no-replace-objects",
	"-c", "core.hooksPath=/dev/null", // no hook runs
	"-c", "core.fsmonitor=false",
	"-c", "core.pager=cat",
	"-c", "core.editor=false",
	"-c", "sequence.editor=false",
	"-c", "core.sshCommand=false",
	"-c", "core.askPass=",
	"-c", "credential.helper=", // empties the list of helpers
	"-c", "diff.external=", // an error, never a program (diff also gets --no-ext-diff)
	"-c", "core.attributesFile=/dev/null",
	"-c", "core.excludesFile=~/.config/git/ignore",
	"-c", "protocol.allow=never",
	"-c", "protocol.file.allow=never",
	"-c", "protocol.git.allow=never",
	"-c", "protocol.ssh.allow=never",
	"-c", "protocol.http.allow=never",
	"-c", "protocol.https.allow=never",
	"-c", "protocol.ftp.allow=never",
	"-c", "protocol.ftps.allow=never",
	"-c", "protocol.ext.allow=never",
	"-c", "protocol.fd.allow=never",
	"-c", "http.proxy=",
	"-c", "gpg.program=false",
	"-c", "gpg.openpgp.program=false",
	"-c", "gpg.x509.program=false",
	"-c", "gpg.ssh.program=false",
	"-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false",
	"-c", "tag.forceSignAnnotated=false",
	"-c", "merge.verifySignatures=false",
	"-c", "log.showSignature=false",
	"-c", "submodule.recurse=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "grep.fallbackToNoIndex=false",
	// The repository's configuration is read-only to a guarded git (see
	// ConfigView): never try to record an upstream in it.
	"-c", "branch.autoSetupMerge=false",
}

// Argv returns the full command line to run for cmd, which must come from
// Parse: "git", the daemon-owned prefix, the subcommand, the daemon-owned
// options of that subcommand (--no-ext-diff and --no-textconv where it
// takes them), then cmd.Args. Run it with Env, with the working directory
// at the workspace root (the prefix names the repository relatively).
func Argv(cmd Command) []string {
	argv := append([]string{"git"}, prefix...)
	argv = append(argv, cmd.Sub)
	args := cmd.Args
	sp := specs()[cmd.Sub]
	if cmd.Sub == "stash" && len(args) > 0 {
		argv = append(argv, args[0])
		sp, args = stashSpecs()[args[0]], args[1:]
	}
	if sp != nil {
		argv = append(argv, sp.extra...)
		if cmd.Sub == "stash" && sp == stashSpecs()["show"] && !hasOption(args) {
			// stash show shows a diffstat only when given no option at all;
			// keep that default despite the options above.
			argv = append(argv, "--stat")
		}
	}
	return append(argv, args...)
}

// Env returns the whole environment of a git command: configuration only
// from the repository and the command line, no prompts, no pager, no
// editor, and none of the caller's GIT_* variables (GIT_DIR,
// GIT_CONFIG_PARAMETERS, GIT_EXTERNAL_DIFF, ... would each undo a guard).
// home becomes HOME; a file <home>/.config/git/ignore, if the caller puts
// one there, is the core.excludesFile of every command (see the package
// doc).
func Env(home string) []string {
	return []string{
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"HOME=" + home,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=",
		"SSH_ASKPASS=",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_EDITOR=false",
		"EDITOR=false",
		"VISUAL=false",
		"GIT_OPTIONAL_LOCKS=0",
		"LANG=C.UTF-8",
		"PATH=/usr/bin:/bin",
	}
}

// Render returns the command the owner approves: "git", the subcommand and
// the normalised arguments, each word quoted for a POSIX shell where it
// needs quoting. A word holding a tab, an invisible or non-printing
// character (zero-width, bidirectional controls, non-breaking spaces, ...)
// is shown in $'...' form with that character escaped, so that what the
// owner reads is what runs. The daemon-owned prefix and options of Argv
// are the same for every call and are not shown.
func Render(cmd Command) string {
	words := append([]string{"git", cmd.Sub}, cmd.Args...)
	for i, w := range words {
		words[i] = quote(w)
	}
	return strings.Join(words, " ")
}

// quote quotes one word for display.
func quote(w string) string {
	if w == "" {
		return "''"
	}
	safe, printable := true, utf8.ValidString(w)
	for _, r := range w {
		if !isSafe(r) {
			safe = false
		}
		if r == utf8.RuneError || r == '\t' || !unicode.IsPrint(r) || unicode.Is(unicode.Cf, r) {
			printable = false
		}
	}
	switch {
	case safe:
		return w
	case printable:
		return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(w); {
		r, size := utf8.DecodeRuneInString(w[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, w[i])
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r) || unicode.Is(unicode.Cf, r):
			if r > 0xffff {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
		i += size
	}
	b.WriteString("'")
	return b.String()
}

// isSafe reports whether r needs no quoting in a POSIX shell word.
func isSafe(r rune) bool {
	return r < utf8.RuneSelf && (('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') ||
		('0' <= r && r <= '9') || strings.ContainsRune("-_./=:,+@%^", r))
}
