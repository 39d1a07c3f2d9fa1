package contracts

// GitRemote is one remote of the owner's git.remotes, as a turn's job
// carries it to the worker: its name, scheme, host and what a push may
// do there, never its URL's path or its credential. The worker's git
// tool checks fetch, pull and push against these (gitguard.ParseNet)
// before the owner is asked; the daemon checks the approved call again
// against its own configuration before it reaches the remote.
type GitRemote struct {
	Name        string `json:"name"`
	Scheme      string `json:"scheme"`
	Host        string `json:"host"`
	AllowForce  bool   `json:"allow_force,omitempty"`
	AllowDelete bool   `json:"allow_delete,omitempty"`
}

// GitFetch asks the daemon to carry out the network half of an approved
// git fetch or pull: Args are the git tool's arguments exactly as the
// owner approved them (the daemon parses them itself).
type GitFetch struct {
	Args string `json:"args"`
}

// GitFetched is the daemon's answer: the bare mirror (a directory the
// daemon owns, outside the workspace, visible read-only in the worker's
// sandbox) now holding the refs the call named, for the sandboxed git to
// fetch from with no network.
type GitFetched struct {
	Mirror string `json:"mirror"`
}

// GitPush asks the daemon to carry out an approved git push: Args are the
// git tool's arguments exactly as the owner approved them. What leaves is
// the commits the approval is bound to (Resume.Binding, GitPushBinding),
// never what the worker says now.
type GitPush struct {
	Args string `json:"args"`
}

// GitPushed is the daemon's answer: git's report of the push.
type GitPushed struct {
	Output string `json:"output"`
}

// GitPushPrefix starts the binding of a git push: "push:" and, per
// refspec in order, the commit it pushes (40 or 64 hex digits) or "-" for
// a deletion, comma-separated.
const GitPushPrefix = "push:"
