// Package contracts is shelldon's shared vocabulary: the messages, tool calls,
// tool results, model requests and turn results that the core, the broker and
// the worker exchange. It depends on the standard library only, so every other
// package may import it without pulling in anything else (see repo_test.go).
package contracts

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Role says who wrote a Message.
type Role string

// The roles of a conversation. RoleTool carries the results of the tool calls
// in the assistant message right before it.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation, in shelldon's provider-neutral form.
// Adapters translate it to and from each wire format.
type Message struct {
	Role        Role         `json:"role"`
	Text        string       `json:"text,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`   // RoleAssistant only
	ToolResults []ToolResult `json:"tool_results,omitempty"` // RoleTool only
}

// ToolCall is a model's request to run one tool.
//
// Arguments is the text the model sent, verbatim: it may not be JSON at all,
// and the worker's loop (not the adapter) turns that into a failed result.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolResult answers one ToolCall. A tool that failed, timed out, was unknown
// or got bad arguments is OK=false with the reason in Content; that is a
// normal outcome for the model, not a Go error.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Content string `json:"content"`
}

// Tier says whether a tool runs inline (FREE) or only after the owner approves
// the exact call (RISKY).
type Tier string

// The tool tiers of DESIGN section 3.
const (
	TierFree  Tier = "free"
	TierRisky Tier = "risky"
)

// ToolSpec is what the model is told about a tool. Parameters is a JSON Schema
// object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	// Digest, in a worker's model request, names a spec the daemon holds
	// (Job.Specs) in place of its description and parameters, which the
	// daemon puts back before the call: a turn's specs are most of a
	// request and rarely change from one turn to the next. SpecDigest
	// makes it.
	Digest string `json:"digest,omitempty"`
}

// SpecDigest names spec by its name, description and parameters (a
// SHA-256, cut to 128 bits, in base64url).
func SpecDigest(spec ToolSpec) string {
	h := sha256.New()
	h.Write([]byte(spec.Name))
	h.Write([]byte{0})
	h.Write([]byte(spec.Description))
	h.Write([]byte{0})
	h.Write(spec.Parameters)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

// Request is one model call: the system prompt, the conversation so far and
// the tools on offer. An empty Tools list asks for a plain text answer.
type Request struct {
	System string `json:"system,omitempty"`
	// History, from a worker, is how many messages of its job's history
	// come before Messages: it names them rather than sending back what
	// the daemon sent it, and the daemon puts them back before the call.
	// 0 means Messages is the whole conversation.
	History   int        `json:"history,omitempty"`
	Messages  []Message  `json:"messages"`
	Tools     []ToolSpec `json:"tools,omitempty"`
	MaxTokens int        `json:"max_tokens,omitempty"`
}

// Note is a message from shelldon itself in a conversation: a user-role
// message labelled as shelldon's ("[shelldon: ...]"), never an assistant
// message, which the model would read in later turns as its own words.
// Anthropic's adapter merges it with the user text or tool results beside
// it; OpenAI-compatible APIs take consecutive user messages as they are.
func Note(text string) Message {
	return Message{Role: RoleUser, Text: "[shelldon: " + text + "]"}
}

// StoppedNote closes, in the history, a turn the model did not answer
// (cancelled, out of time, failed), saying why no answer followed, so
// that a later turn neither takes the stop for the model's words nor the
// request for one still open.
func StoppedNote(reason string) Message {
	why := "this request stopped on an error before it was answered."
	switch reason {
	case StopCancelled:
		why = "the owner cancelled this request before it was answered."
	case StopDeadline:
		why = "this request ran out of time before it was answered."
	}
	return Note(why)
}

// Usage counts the tokens of one or more model calls.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens}
}

// Completion is a model's answer to a Request, normalized: Message has
// RoleAssistant and holds the text and the tool calls in the order the model
// gave them.
type Completion struct {
	Message    Message `json:"message"`
	StopReason string  `json:"stop_reason,omitempty"`
	Usage      Usage   `json:"usage"`
	Provider   string  `json:"provider,omitempty"`
	Model      string  `json:"model,omitempty"`
}

// Pending is a RISKY tool call a turn stopped at, waiting for the owner.
// Messages are the turn's messages so far, starting with the user's; when
// earlier calls of the same assistant message ran, the last message holds
// their results, and Call's result is appended to it on resume. Call's
// Arguments are already filtered and validated, in canonical form: what
// the owner sees is what runs.
type Pending struct {
	Messages  []Message `json:"messages"`
	Call      ToolCall  `json:"call"`
	ModelText string    `json:"model_text,omitempty"` // the model's own words beside the call
	// Binding is what the call resolved to when it was checked (for
	// write_file, the resolved path); it is part of the approval's hash,
	// and the call runs only if it still resolves to it.
	Binding string `json:"binding,omitempty"`
}

// Resume continues a parked turn after the owner decided.
type Resume struct {
	Messages []Message `json:"messages"`
	Call     ToolCall  `json:"call"`
	Approved bool      `json:"approved"`
	ArgsHash string    `json:"args_hash"` // what the owner approved; re-checked before the call runs
	Binding  string    `json:"binding,omitempty"`
	// Note, for a call that did not run, is its result for the model
	// instead of DeniedByOwner (an expired or interrupted request).
	Note string `json:"note,omitempty"`
}

// DeniedByOwner is the result content of a call the owner denied.
const DeniedByOwner = "denied by owner"

// CanonicalArgs returns a JSON object in canonical form: keys sorted, no
// insignificant space. It fails for anything but a JSON object.
func CanonicalArgs(args string) (string, error) {
	var v map[string]any
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("arguments are not a JSON object: %w", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// ArgsHash binds an approval to exactly one call: the SHA-256 of the tool's
// name, its canonical arguments and what the call resolved to when it was
// checked (Pending.Binding, "" when the tool has none).
func ArgsHash(tool, args, binding string) (string, error) {
	canon, err := CanonicalArgs(args)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(tool + "\x00" + canon + "\x00" + binding))
	return hex.EncodeToString(sum[:]), nil
}

// SelfTool is a live self-coded tool as a worker offers it (FREE, each call
// in a sandboxed child).
type SelfTool struct {
	Name         string              `json:"name"`
	Version      int                 `json:"version"`
	Language     string              `json:"language"`
	Hash         string              `json:"hash"`
	Description  string              `json:"description"`
	Parameters   json.RawMessage     `json:"parameters"`
	Capabilities map[string][]string `json:"capabilities,omitempty"`
	Dir          string              `json:"dir"` // read-only in the worker's view
}

// FindTools is find_tools' request of the daemon: the live self-coded
// tools most relevant to Query that the turn does not offer yet.
type FindTools struct {
	Query string `json:"query"`
}

// Proposal is a tool whose gate passed, sent by the worker for the daemon
// to stage and put before the owner.
type Proposal struct {
	Name         string              `json:"name"`
	Language     string              `json:"language"`
	Code         string              `json:"code"`
	Test         string              `json:"test"`
	Description  string              `json:"description"`
	Parameters   json.RawMessage     `json:"parameters"`
	Capabilities map[string][]string `json:"capabilities,omitempty"`
	Gate         string              `json:"gate"` // the gate report
}

// Proposed is the daemon's answer to a Proposal.
type Proposed struct {
	ApprovalID string `json:"approval_id"`
	Version    int    `json:"version"`
	Hash       string `json:"hash"`
}

// The operations of a SkillRequest, one per skills tool.
const (
	SkillList   = "list"   // list_skills
	SkillUse    = "use"    // use_skill
	SkillRead   = "read"   // read_skill_file
	SkillCreate = "create" // create_skill: a draft for the owner
	SkillUpdate = "update" // update_skill: a draft for the owner
)

// SkillRequest is a skills tool's request to the daemon, which keeps the
// skills (outside the worker's view).
type SkillRequest struct {
	Op          string `json:"op"` // one of Skill*
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Body        string `json:"body,omitempty"`
	// Path and Offset are read_skill_file's: a file in the skill's folder
	// and the byte to read it from.
	Path   string `json:"path,omitempty"`
	Offset int64  `json:"offset,omitempty"`
	// Max is the most bytes the answer may hold: the worker's cap on a
	// tool's result, so what the daemon sends is never cut there but
	// paged, saying where the rest starts. 0: the daemon's default.
	Max int `json:"max,omitempty"`
}

// Limits bound one turn.
type Limits struct {
	MaxToolCalls int           `json:"max_tool_calls"` // tool executions per turn
	Budget       time.Duration `json:"budget"`         // wall time of the whole turn
	Reserve      time.Duration `json:"reserve"`        // under this much left, stop and answer
	MaxTokens    int           `json:"max_tokens"`     // per model call
}

// Job is what the core hands a worker for one turn.
type Job struct {
	Chat   string `json:"chat"`
	Turn   int64  `json:"turn"`
	System string `json:"system"`
	// History is the chat's earlier messages. The daemon holds them and
	// puts them into each of the turn's model requests; they are not sent
	// to the worker, which gets only their number (HistoryLen) and names
	// them in its requests (Request.History). A worker thus never decodes
	// the history, and holds no more of the chat than the turn itself.
	History []Message `json:"-"`
	// HistoryLen is len(History): what the worker knows of the history.
	HistoryLen int       `json:"history_len,omitempty"`
	Input      string    `json:"input"`
	Workspace  string    `json:"workspace"`
	Limits     Limits    `json:"limits"`
	Deadline   time.Time `json:"deadline"`
	Resume     *Resume   `json:"resume,omitempty"` // continue a parked turn instead of starting from Input
	// AllowDegraded is the owner's sandbox.allow_degraded: sandboxed tools
	// may run on a kernel that lacks a required layer.
	AllowDegraded bool `json:"allow_degraded,omitempty"`
	// MinFreeDisk is the owner's sandbox.min_free_disk in bytes: a
	// sandboxed command is not started, or is stopped, when the
	// workspace's file system has less free space. 0 means no check.
	MinFreeDisk uint64 `json:"min_free_disk,omitempty"`
	// SelfTools are the live self-coded tools this turn offers.
	SelfTools []SelfTool `json:"self_tools,omitempty"`
	// ToolSearch is set when SelfTools are only the most relevant of a
	// larger toolbox: the turn offers find_tools for the rest.
	ToolSearch bool `json:"tool_search,omitempty"`
	// Specs are the digests of the tool specs the daemon holds (from
	// earlier turns' requests): the worker's requests name these by
	// digest rather than send them (ToolSpec.Digest).
	Specs []string `json:"specs,omitempty"`
	// SandboxLayers are the sandbox layers the daemon's probe found in
	// place, so the worker's sandboxed tools need not probe again.
	SandboxLayers []string `json:"sandbox_layers,omitempty"`
	// PyGateCache is the directory of the Python gate's compiled scripts
	// (pytool.BuildGateCache), which the daemon writes and the worker's
	// sandbox shows read-only; "" when there is none (a gate then compiles
	// them itself).
	PyGateCache string `json:"py_gate_cache,omitempty"`
	// SkillCatalog lists the skills in use ("- name: \"description\"" lines) for the
	// system prompt.
	SkillCatalog string `json:"skill_catalog,omitempty"`
	// Memory are the remembered facts the daemon selected for this turn
	// (the most relevant to its input and the latest, within
	// memory.context_bytes), for the system prompt as quoted data.
	Memory []Fact `json:"memory,omitempty"`
	// Providers are the names of the providers the owner configured:
	// update_config may choose only among them, and is refused before the
	// owner is asked otherwise.
	Providers []string `json:"providers,omitempty"`
	// LANHosts are the owner's http.allow_hosts: the hosts of the owner's
	// network that http_get and the self-coded tools granted them may
	// reach (lan.go).
	LANHosts []LANHost `json:"lan_hosts,omitempty"`
	// GitRemotes are the owner's git.remotes (names, schemes, hosts, allow
	// flags; never a credential), for the git tool's check of fetch, pull
	// and push (gitremotes.go).
	GitRemotes []GitRemote `json:"git_remotes,omitempty"`
}

// ToolEvent reports one tool execution as it happens, for display and audit.
// Arguments are already redacted.
type ToolEvent struct {
	Phase     string        `json:"phase"` // "start" or "end"
	CallID    string        `json:"call_id"`
	Tool      string        `json:"tool"`
	Arguments string        `json:"arguments"`
	OK        bool          `json:"ok,omitempty"`
	Summary   string        `json:"summary,omitempty"`
	Duration  time.Duration `json:"duration,omitempty"`
	// Guard, on an end event, names the guard that refused a RISKY call
	// before the owner was asked (the call never ran; Summary is the
	// reason).
	Guard string `json:"guard,omitempty"`
}

// Tool event phases.
const (
	PhaseStart = "start"
	PhaseEnd   = "end"
)

// Stop reasons of a turn that ended before the model gave its own answer.
const (
	StopToolLimit = "tool_limit"
	StopDeadline  = "deadline"
	StopCancelled = "cancelled"
	StopError     = "error"
	StopApproval  = "approval" // parked: a RISKY call waits for the owner (Result.Pending)
)

// Result is what a worker returns at the end of a turn.
//
// Messages are the turn's new messages, starting with the user's input, in
// the order they happened; the core appends them to the chat's history.
type Result struct {
	Reply     string    `json:"reply"`
	Messages  []Message `json:"messages"`
	ToolCalls int       `json:"tool_calls"`
	Usage     Usage     `json:"usage"`
	Stopped   string    `json:"stopped,omitempty"`
	Provider  string    `json:"provider,omitempty"`
	Model     string    `json:"model,omitempty"`
	Pending   *Pending  `json:"pending,omitempty"`
	// Profile is where the worker's time went: each mark names a step
	// that had just ended, with the time since the worker read its job.
	// The daemon logs it with its own marks (docs/PERFORMANCE.md).
	Profile []Mark `json:"profile,omitempty"`
	// ProfileAt is when the worker read its job, in microseconds since
	// the Unix epoch: where the daemon places Profile in its own time.
	ProfileAt int64 `json:"profile_at,omitempty"`
}

// Mark is one point of a turn's profile: the step that had just ended,
// and when, in microseconds since the profile's start.
type Mark struct {
	Step   string `json:"step"`
	Micros int64  `json:"us"`
}
