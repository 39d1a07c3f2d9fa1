package contracts

// The names of the built-in tools (DESIGN section 3). A name is spelled
// here once; the worker's registry, the owner's lists, the reserved names
// of self-coded tools and the docs all take it from here.
const (
	ToolGetTime      = "get_time"
	ToolReadFile     = "read_file"
	ToolListDir      = "list_dir"
	ToolEval         = "eval"
	ToolAbout        = "about"
	ToolProposeTool  = "propose_tool"
	ToolFindTools    = "find_tools"
	ToolListSkills   = "list_skills"
	ToolUseSkill     = "use_skill"
	ToolReadSkill    = "read_skill_file"
	ToolCreateSkill  = "create_skill"
	ToolUpdateSkill  = "update_skill"
	ToolRemember     = "remember"
	ToolRecall       = "recall"
	ToolWriteFile    = "write_file"
	ToolRunShell     = "run_shell"
	ToolHTTPGet      = "http_get"
	ToolGit          = "git"
	ToolUpdateConfig = "update_config"
	ToolSchedule     = "schedule"
)

// Runs says where a tool's work is done.
type Runs string

// Where a tool runs. The worker is itself sandboxed; RunsSandbox means a
// sandbox of the call's own, for code shelldon did not write.
const (
	RunsWorker  Runs = "worker"  // in the worker's process
	RunsChild   Runs = "child"   // in a memory-limited child of the worker, without its network
	RunsSandbox Runs = "sandbox" // in a fresh sandbox of its own (namespaces, seccomp, no network)
	RunsDaemon  Runs = "daemon"  // a request the worker makes of the daemon
)

// BuiltinTool is one entry of the catalogue of built-in tools.
type BuiltinTool struct {
	Name    string
	Tier    Tier
	Runs    Runs
	Summary string   // one line, for the owner's lists and the README
	Params  []string // the parameter names, in the order the docs show them
	// DescriptionFile is the model's description of the tool: the .md file
	// beside its Go code, embedded there, relative to the module's root.
	DescriptionFile string
}

// BuiltinTools returns the catalogue of the built-in tools, FREE ones
// first, in the order the owner's lists show them. Each call returns a
// fresh copy.
func BuiltinTools() []BuiltinTool {
	const (
		builtin = "internal/worker/builtin/"
		risky   = "internal/worker/risky/"
		self    = "internal/worker/selftools/"
		skills  = "internal/worker/skilltools/"
		sched   = "internal/worker/scheduletools/"
		memory  = "internal/worker/memorytools/"
	)
	return []BuiltinTool{
		{ToolGetTime, TierFree, RunsWorker, "the current local time and UTC",
			nil, builtin + "get_time.md"},
		{ToolReadFile, TierFree, RunsWorker, "a text file in the workspace (first 64 KiB)",
			[]string{"path"}, builtin + "read_file.md"},
		{ToolListDir, TierFree, RunsWorker, "a directory of the workspace (up to 500 entries)",
			[]string{"path"}, builtin + "list_dir.md"},
		{ToolEval, TierFree, RunsChild, "one Starlark expression, step-, time- and memory-bounded, no I/O",
			[]string{"code"}, builtin + "eval.md"},
		{ToolAbout, TierFree, RunsWorker, "answers questions about shelldon itself",
			[]string{"topic"}, builtin + "about_tool.md"},
		{ToolProposeTool, TierFree, RunsSandbox, "write a new tool and its test; the gate runs the test in the sandbox; you approve",
			[]string{"name", "code", "test", "language"}, self + "propose_tool.md"},
		{ToolFindTools, TierFree, RunsDaemon, "search the self-coded tools a turn was not offered and add the matches to it (offered when there are more than 24)",
			[]string{"query"}, self + "find_tools.md"},
		{ToolListSkills, TierFree, RunsDaemon, "list the skills: written procedures over the tools",
			nil, skills + "list_skills.md"},
		{ToolUseSkill, TierFree, RunsDaemon, "load a skill's procedure into the conversation",
			[]string{"name"}, skills + "use_skill.md"},
		{ToolReadSkill, TierFree, RunsDaemon, "read a file of a skill in use (reference, forms, scripts) as text, in pages; never runs it",
			[]string{"skill", "path", "offset"}, skills + "read_skill_file.md"},
		{ToolCreateSkill, TierFree, RunsDaemon, "draft a new skill for the owner to approve",
			[]string{"name", "description", "body"}, skills + "create_skill.md"},
		{ToolUpdateSkill, TierFree, RunsDaemon, "draft a change of a skill for the owner to approve",
			[]string{"name", "description", "body"}, skills + "update_skill.md"},
		{ToolRemember, TierFree, RunsDaemon, "remember a fact for later turns; you can list, edit and forget it (shelldon memory)",
			[]string{"fact"}, memory + "remember.md"},
		{ToolRecall, TierFree, RunsDaemon, "search the remembered facts",
			[]string{"query", "limit"}, memory + "recall.md"},
		{ToolWriteFile, TierRisky, RunsWorker, "write a text file in the workspace (atomic, at most 64 KiB)",
			[]string{"path", "content"}, risky + "write_file.md"},
		{ToolRunShell, TierRisky, RunsSandbox, "run `/bin/sh -c command` in the sandbox, in the workspace, without network",
			[]string{"command"}, risky + "run_shell.md"},
		{ToolHTTPGet, TierRisky, RunsWorker, "fetch a public http(s) URL, or a host of your network the owner listed (http.allow_hosts)",
			[]string{"url"}, risky + "http_get.md"},
		{ToolGit, TierRisky, RunsSandbox, "git in the workspace, and fetch, pull and push with the remotes the owner listed (git.remotes): one string, split without a shell, checked option by option",
			[]string{"args"}, risky + "git.md"},
		{ToolUpdateConfig, TierRisky, RunsDaemon, "change the provider, model, limits...; you see the diff and approve",
			[]string{"changes"}, risky + "update_config.md"},
		{ToolSchedule, TierRisky, RunsDaemon, "run a prompt as a turn at set times (cron, or every 30m); you see the next runs and approve",
			[]string{"when", "prompt"}, sched + "schedule.md"},
	}
}

// Builtin returns the catalogue's entry for name, and whether there is one.
func Builtin(name string) (BuiltinTool, bool) {
	for _, t := range BuiltinTools() {
		if t.Name == name {
			return t, true
		}
	}
	return BuiltinTool{}, false
}
