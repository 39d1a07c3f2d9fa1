// Package landlock confines a thread, and every process it then starts, with
// the Linux Landlock LSM, written directly on the kernel ABI.
//
// What it enforces, by the kernel's Landlock ABI version:
//
//   - ABI 1 (Linux 5.13), the filesystem: reads and executes only beneath
//     Rules.ReadOnly; writes, creates, removes and makes directories, fifos,
//     sockets, devices and symlinks only beneath Rules.ReadWrite; everything
//     else (the owner's home, shelldon's home, /etc, ...) is denied with
//     EACCES. Renaming or linking a file into another directory is always
//     denied (EXDEV);
//   - ABI 2 (5.19): such renames and links are allowed within ReadWrite;
//   - ABI 3 (6.2): truncate only beneath ReadWrite;
//   - ABI 4 (6.7): TCP bind and connect denied unless Rules.AllowTCP;
//   - ABI 5 (6.10): ioctl on device files only beneath ReadWrite;
//   - ABI 6 (6.12): with Rules.Scope, no connecting to an abstract unix socket
//     and no signal to a process created outside the domain (EPERM);
//   - ABI 7 (6.15) adds only audit logging: nothing more to enforce.
//
// It does not cover UDP, raw or pathname unix sockets, stat, chmod, chown or
// files already open before the restriction; the other sandbox layers do.
//
// Rules hold on inodes, judged along the path walked. A rule on a directory
// covers every path through it, so a hard link placed beneath an allowed
// directory before the restriction exposes its file (the restricted code
// cannot make one to a file outside: link fails with EXDEV). A rule on a file
// covers all of that file's hard links, wherever they are. A symlink is
// followed to its target, which must itself be allowed.
//
// The ABI is checked explicitly: ABI reports the kernel's version or why there
// is none, and RestrictThread fails when Landlock is missing and lists in
// Applied.Missing what an older ABI cannot enforce. This package is never a
// silent best-effort no-op.
//
// Landlock restricts the calling thread only (and the processes it forks).
// See RestrictThread for what that demands of a Go caller.
package landlock

// Rules is what a restricted thread may reach. Paths are absolute; a symlink
// among them is resolved when the rules are applied, and the rule then covers
// its target.
type Rules struct {
	// ReadOnly are paths (files or directories) the thread may read and
	// execute beneath.
	ReadOnly []string
	// ReadWrite are paths it may also write, create, remove, rename and link
	// within, truncate, make directories, fifos and sockets in, and use
	// device ioctls beneath.
	ReadWrite []string
	// AllowTCP, when false, denies TCP bind and connect entirely (ABI >= 4).
	AllowTCP bool
	// Scope confines abstract unix sockets and signals to the domain: the
	// thread can neither connect to an abstract socket nor signal a process
	// created outside it (ABI >= 6). Processes outside may still signal in.
	// An ABI 6 kernel without Landlock erratum 2 also blocks signals from the
	// restricted thread to the other threads of its own process.
	Scope bool
}

// Applied reports what RestrictThread enforced.
type Applied struct {
	ABI    int  // the kernel's Landlock ABI version
	FS     bool // filesystem access is restricted to the rules
	Net    bool // TCP bind and connect are denied
	Scoped bool // abstract unix sockets and signals are scoped to the domain
	// Missing lists, in human words, what was asked but could not be
	// enforced: a right this ABI lacks, or a rule path that does not exist.
	Missing []string
}
