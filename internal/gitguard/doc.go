// Package gitguard is the argument guard of the git tool. It turns the one
// string the model passes to git(args) into the exact command line that
// runs, and refuses whatever git could use to run a program, to write
// outside its normal operation, or to read what the file tools would not.
//
// Invariant: the model chooses a subcommand, options from that
// subcommand's allowlist and operands that passed PathCheck; everything
// before the subcommand, and the environment, are shelldon's.
//
// The flow: Split makes words of the string as sh would, but expands
// nothing and refuses shell operators and expansions (no shell is
// involved, so "status; rm -rf ." is refused rather than half-run). Parse
// checks the words and normalises them into a Command; the owner approves
// Render(cmd); Argv(cmd) and Env(home) are what the sandbox runs, with the
// working directory at the workspace root, which is the repository's work
// tree, and with ConfigView(workspace) shown in place of the repository
// configurations it names.
//
// # Subcommands
//
// Offered, for reading: status, log, show, diff, grep, ls-files, blame,
// shortlog, describe, rev-parse; for writing locally: add, rm, mv,
// commit, restore, reset (all modes, with paths: it is local, and each
// call is approved), branch, switch, checkout, tag, stash (push, pop,
// apply, list, show, drop, branch, clear), merge, cherry-pick, revert,
// init. Refused, each with its reason in refusedSubs: whatever talks to
// the network or another repository (clone, fetch, pull, push, remote,
// ls-remote, submodule, archive, bundle, request-pull, send-email,
// daemon), whatever runs programs or needs an editor (rebase, bisect,
// filter-branch, difftool, mergetool, am, notes, help), configuration
// and credentials (config, credential), and the rest (worktree, gc,
// maintenance, fsck, clean, reflog, replace, plumbing).
//
// # Options
//
// Every global option (any word before the subcommand that starts with
// "-": -c, -C, --git-dir, --work-tree, --exec-path, -p, ...) is refused.
// Each subcommand has the list of its options as git 2.39 knows them
// (tables_test.go compares the lists with the installed git), each
// allowed or refused with a reason. Refused are the options that run
// programs (--upload-pack, --receive-pack, --exec, --ext-diff,
// --textconv, grep -O, merge strategies other than the built-in ones,
// commit --trailer, log --alternate-refs), that write files (--output,
// --output-directory, --template, --separate-git-dir), that sign or
// verify (gpg), that need an editor or a terminal (-i, the -p patch
// modes, -e, commit -c), that reach beyond the tracked files (diff and
// grep --no-index, grep --untracked, add -f, stash --all), that read
// pathspecs from a file, and submodule recursion. A file an option reads
// (commit -F, grep -f, blame --contents, log -O, ...) is checked as a
// path.
//
// Abbreviations matter because git's parse-options takes any unique
// prefix of a long option for the option: "--upload-pa" is
// "--upload-pack", "--ext" may be "--ext-diff", "--output-d"
// "--output-directory". A guard that compared whole names would let them
// through. Parse resolves every long option against the subcommand's full
// list, refused options included, refuses an ambiguous prefix, and passes
// git the full name, so git never expands one itself. It splits clusters
// of short options (-am msg) and checks them letter by letter, joins a
// long option's value with "=", and joins to its option a value that
// starts with "-", so that no reader takes the value for an option.
//
// # Paths
//
// PathCheck sees every pathspec and file operand, the path of every
// <rev>:<path> (HEAD:.env, :0:.env, main:secret.pem), and every word git
// may take for a revision or a path; after "--" every word is a path.
// Pathspec magic (":(...)", ":!", ":^", ":/") and names inside .git are
// refused, and the prefix makes git read every pathspec literally, so a
// pathspec means the one path that was checked: no "*env" glob reaches
// .env.
//
// # The daemon-owned prefix
//
// Argv puts these between "git" and the subcommand (prefix in argv.go):
// --no-pager; --git-dir=.git and --work-tree=. (the repository is the
// workspace's own: no discovery upwards, no bare repository planted in
// the workspace, no core.worktree pointing elsewhere);
// --literal-pathspecs; --no-replace-objects (a replace ref would make one
// file show another's content); and -c for each configuration key that
// starts a program or reaches out: core.hooksPath=/dev/null,
// core.fsmonitor, core.pager, core.editor, sequence.editor,
// core.sshCommand, core.askPass, credential.helper, diff.external,
// gpg.program and gpg.<format>.program, commit and tag signing,
// merge.verifySignatures, log.showSignature, protocol.allow and every
// protocol.<name>.allow (never), http.proxy, submodule.recurse, gc.auto
// and maintenance.auto (no background gc), grep.fallbackToNoIndex,
// branch.autoSetupMerge=false (the configuration is read-only, below),
// core.attributesFile=/dev/null and core.excludesFile (below).
// Configuration given with -c is read after the repository's own file and
// every file that file includes, so each of these wins over a value an
// attacker planted in .git/config or in an [include]d file (-c cannot
// remove an include, but nothing an include sets for these keys
// survives). Env adds the rest: no system or global configuration, no
// prompts, pagers or editors, and none of the caller's GIT_* variables.
//
// diff, log, show, stash show and stash list also get --no-ext-diff and
// --no-textconv, which switch off the diff.<driver>.command and
// diff.<driver>.textconv programs that .gitattributes can select; grep
// and blame get --no-textconv. diff gets --dense too: outside a
// repository git diff silently becomes git diff --no-index, which would
// compare two workspace directories in full, denied files included, and
// --no-index refuses --dense.
//
// # The repository's configuration
//
// The prefix overrides the keys it knows, but a repository's configuration
// names programs under names of its own choosing (filter.<name>.clean,
// .smudge and .process, merge.<name>.driver, diff.<name>.command and
// .textconv, which any .gitattributes, .git/info/attributes or attribute
// file selects), can include other files (include.path, includeIf) and can
// gain keys a newer git adds. So git never reads a repository's own
// configuration: ConfigView gives the copy git sees instead, holding only
// allowedConfig (config.go), the variables git needs to read the
// repository and to do the offered work (format and extensions, core
// settings about the index and the work tree, identity, branches and
// their upstreams, remote fetch refspecs, how merge, diff, status, log,
// grep and blame behave), none of which names a program or a file
// whatever its value. Everything else is dropped, includes with it; a
// format extension not known here refuses the call. The sandbox binds
// each copy read-only over its file (sandbox.Cover).
//
// ConfigView covers every file git may read as a repository's
// configuration, not only .git/config: config.worktree, and the
// configurations of submodules and nested repositories, in which git runs
// git (git status asks each submodule whether it is modified, and that git
// reads its own configuration and attributes). It finds them within .git
// directories, and refuses a workspace where a .git entry or a commondir
// file leads elsewhere: a checkout could write a configuration there in
// the middle of a command, after the copies were made. Hooks are the
// prefix's: core.hooksPath=/dev/null, which the copy never overrides.
//
// Git writes its configuration for a few operations; with the copy
// read-only these fail, so branch -m, -M, -c and -C are refused, and
// branch.autoSetupMerge=false keeps branch creation from recording an
// upstream. branch -d still deletes the branch, but warns that it could
// not remove the branch's section; git init in an existing repository
// fails.
//
// # What the guard does not cover
//
//   - Content already in history. PathCheck guards names; a denied file
//     the repository already tracks shows in log -p, show <commit>, grep
//     and diff without being named, and by object id.
//   - Untracked files under a named directory. add -A, add <dir> and
//     stash -u take every file that is not ignored. The prefix makes
//     <home>/.config/git/ignore the ignore file of every command: the
//     caller can put the credential deny patterns there (add -f and stash
//     --all, which take ignored files too, are refused).
//   - A process beside the command. ConfigView looks at the workspace
//     before the sandbox starts; another approved command running at the
//     same time in another chat could change a configuration in between,
//     or unlink or rename a covered file, which detaches its cover (the
//     kernel allows that from another mount namespace). Nothing inside
//     the guarded command's own sandbox can.
//   - Filters git does not run: a repository that relies on one (Git LFS)
//     gets its files added and checked out as they are.
//
// PathCheck must accept names that do not exist, or whose directories do
// not (other commits have other files), and refuse escapes and denied
// names by their text as well as by what they resolve to.
package gitguard
