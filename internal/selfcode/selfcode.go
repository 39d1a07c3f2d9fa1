// Package selfcode keeps the tools the agent wrote for itself, in
// $SHELLDON_HOME/tools, outside the workspace the file tools can reach:
//
//	tools/staged/<name>/   a proposal whose gate passed, waiting for the owner
//	tools/live/<name>/     the version the worker offers, one per name
//	tools/archive/<name>/<version>/  every version that was live before
//	tools/quarantine/<name>/         a live version taken out after strikes
//
// Each version directory holds the source, the test and manifest.json
// (name, version, language, description, schema, capabilities, content
// hash, gate report, who approved it and when; for a version imported
// from another machine's bundle, where it came from: see bundle.go). Moves
// between states are renames within the tools directory, so a version is
// always wholly in one place. The content hash covers language, code and test; what the owner
// approved is what runs, and every reader checks it.
//
// A change of a tool's live version (promote, restore, rollback) takes
// more than one rename; an intent record in tools/.journal makes it crash
// safe: whatever a crash interrupts is finished, or undone, by Recover or
// the next change to that tool (see swap.go), so a tool that had a live
// version has one, the old or the new, and never a half-written one.
package selfcode

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shelldon/shelldon/internal/contracts"
)

// Languages a tool may be written in.
const (
	Starlark = "starlark"
	Python   = "python"
)

// States of a tool version.
const (
	StateStaged      = "staged"
	StateLive        = "live"
	StateArchived    = "archived"
	StateQuarantined = "quarantined"
)

// MaxSource caps the code and the test, each.
const MaxSource = 64 << 10

// Errors.
var (
	ErrNotFound  = errors.New("no such tool")
	ErrBadName   = errors.New("bad tool name")
	ErrMismatch  = errors.New("the tool changed since it was approved")
	ErrTooLarge  = errors.New("tool source too large")
	ErrNoVersion = errors.New("no earlier version to roll back to")
)

// Meta is what a tool declares about itself.
type Meta struct {
	Description  string              `json:"description"`
	ParamsSchema json.RawMessage     `json:"params_schema"`
	Capabilities map[string][]string `json:"capabilities,omitempty"`
}

// Manifest describes one version of a tool.
type Manifest struct {
	Name       string    `json:"name"`
	Version    int       `json:"version"`
	Language   string    `json:"language"`
	Meta       Meta      `json:"meta"`
	Hash       string    `json:"hash"`
	Gate       string    `json:"gate"` // the gate report, as the model and owner saw it
	ProposedAt time.Time `json:"proposed_at"`
	ApprovedAt time.Time `json:"approved_at,omitzero"`
	ApprovedBy string    `json:"approved_by,omitempty"`
	State      string    `json:"state"`
	// Imported is where a version that came in a bundle came from (see
	// bundle.go); nil for a version proposed here.
	Imported *Import `json:"imported,omitempty"`
}

// Tool is a version with its source.
type Tool struct {
	Manifest
	Code string
	Test string
	Dir  string
}

// Hash is the content hash of a tool version.
func Hash(language, code, test string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%d\x00%s", language, len(code), code, len(test), test)
	return hex.EncodeToString(h.Sum(nil))
}

// isIdent reports whether n is a name of at most 48 bytes: a lowercase
// letter, then lowercase letters, digits and _. By hand rather than a
// regexp: a package-level regexp (and table) is built at every start of the
// binary, every sandbox helper's included.
func isIdent(n string) bool {
	if n == "" || len(n) > 48 || n[0] < 'a' || n[0] > 'z' {
		return false
	}
	for i := 1; i < len(n); i++ {
		if c := n[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// reserved are names a self-coded tool may not take: the built-in tools of
// the catalogue (contracts.BuiltinTools) and the words of both languages.
// Made when first needed, not at every start of the binary.
var reserved = sync.OnceValue(func() map[string]bool {
	r := map[string]bool{}
	for _, b := range contracts.BuiltinTools() {
		r[b.Name] = true
	}
	for _, w := range strings.Fields(`and as assert async await break class continue def del elif else except false finally for from global if
		import in is lambda load none nonlocal not or pass raise return true try while with yield match case type
		print len str int float bool list dict set tuple range min max sum sorted reversed enumerate zip map filter
		any all abs round repr hash id open exec eval compile input object super fail struct json math http`) {
		r[w] = true
	}
	return r
})

// Normalize turns a proposed name into a safe identifier: lowercase, with
// spaces, dashes and dots as underscores. It refuses what is left if it is
// not an identifier or is reserved.
func Normalize(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.NewReplacer(" ", "_", "-", "_", ".", "_").Replace(n)
	if !isIdent(n) {
		return "", fmt.Errorf("%w: %q must be 1-48 letters, digits or _, starting with a letter", ErrBadName, name)
	}
	if reserved()[n] {
		return "", fmt.Errorf("%w: %q is a built-in tool or a language keyword", ErrBadName, n)
	}
	return n, nil
}

// sourceNames are the file names of a version's code and test.
func sourceNames(language, name string) (code, test string) {
	if language == Python {
		return name + ".py", "test_" + name + ".py"
	}
	return "tool.star", "tool_test.star"
}

// Dir is a tools directory. Its changes are serialized within a process.
type Dir struct {
	root  string
	now   func() time.Time
	mu    sync.Mutex        // held by every change
	fault func(step string) // the crash tests' hook; nil otherwise
}

// Open returns the tools directory at root, creating its layout (mode
// 0700). It changes nothing else: a command may open the directory while
// the daemon runs; the daemon's Recover finishes interrupted changes.
func Open(root string, now func() time.Time) (*Dir, error) {
	for _, sub := range []string{"staged", "live", "archive", "quarantine", ".tmp", ".journal"} {
		if err := os.MkdirAll(filepath.Join(root, sub), 0o700); err != nil {
			return nil, fmt.Errorf("selfcode: %w", err)
		}
	}
	if now == nil {
		now = time.Now
	}
	return &Dir{root: root, now: now}, nil
}

// begin locks d for a change to name and first finishes an interrupted
// change of name's live version, if any.
func (d *Dir) begin(name string) (unlock func(), err error) {
	d.mu.Lock()
	if err := d.settle(name); err != nil {
		d.mu.Unlock()
		return nil, err
	}
	return d.mu.Unlock, nil
}

// LiveDir is where the live versions are, for the worker's read-only view.
func (d *Dir) LiveDir() string { return filepath.Join(d.root, "live") }

func (d *Dir) path(state, name string) string {
	switch state {
	case StateStaged:
		return filepath.Join(d.root, "staged", name)
	case StateQuarantined:
		return filepath.Join(d.root, "quarantine", name)
	default:
		return filepath.Join(d.root, "live", name)
	}
}

// Stage writes a proposal whose gate passed into staged/<name>, replacing a
// stale staged copy of the same name. The version is one more than any
// version of that name so far.
func (d *Dir) Stage(name, language, code, test string, meta Meta, gate string) (Manifest, error) {
	return d.stage(name, language, code, test, meta, gate, nil)
}

// stage is Stage, and StageImported with the import's record imp.
func (d *Dir) stage(name, language, code, test string, meta Meta, gate string, imp *Import) (Manifest, error) {
	if !isIdent(name) {
		return Manifest{}, fmt.Errorf("selfcode: stage %q: %w", name, ErrBadName)
	}
	if len(code) > MaxSource || len(test) > MaxSource {
		return Manifest{}, fmt.Errorf("%w: code and test are limited to %d bytes each", ErrTooLarge, MaxSource)
	}
	if language != Starlark && language != Python {
		return Manifest{}, fmt.Errorf("selfcode: unknown language %q", language)
	}
	unlock, err := d.begin(name)
	if err != nil {
		return Manifest{}, err
	}
	defer unlock()
	m := Manifest{
		Name: name, Version: d.nextVersion(name), Language: language, Meta: meta,
		Hash: Hash(language, code, test), Gate: gate, ProposedAt: d.now().UTC(), State: StateStaged, Imported: imp,
	}
	tmp, err := d.writeVersion(m, code, test)
	if err != nil {
		return Manifest{}, err
	}
	dst := d.path(StateStaged, name)
	if err := d.drop(dst); err != nil {
		os.RemoveAll(tmp)
		return Manifest{}, fmt.Errorf("selfcode: replace staged %s: %w", name, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.RemoveAll(tmp)
		return Manifest{}, fmt.Errorf("selfcode: stage %s: %w", name, err)
	}
	syncDir(filepath.Dir(dst))
	return m, nil
}

// drop takes the version directory dir away in one rename (into .tmp,
// which Recover empties) and then deletes it: a crash never leaves a
// half-deleted version where a reader looks.
func (d *Dir) drop(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	aside, err := os.MkdirTemp(filepath.Join(d.root, ".tmp"), "drop-")
	if err != nil {
		return err
	}
	if err := os.Rename(dir, filepath.Join(aside, "v")); err != nil {
		os.Remove(aside)
		return err
	}
	syncDir(filepath.Dir(dir))
	return os.RemoveAll(aside)
}

// writeVersion writes a version into a fresh directory under .tmp.
func (d *Dir) writeVersion(m Manifest, code, test string) (string, error) {
	tmp, err := os.MkdirTemp(filepath.Join(d.root, ".tmp"), m.Name+"-")
	if err != nil {
		return "", fmt.Errorf("selfcode: %w", err)
	}
	codeName, testName := sourceNames(m.Language, m.Name)
	manifest, _ := json.MarshalIndent(m, "", "  ")
	for name, data := range map[string]string{codeName: code, testName: test, "manifest.json": string(manifest)} {
		if err := writeSync(filepath.Join(tmp, name), []byte(data)); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("selfcode: write %s: %w", name, err)
		}
	}
	return tmp, nil
}

func writeSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Load reads the version of name in the given state and checks its hash.
func (d *Dir) Load(state, name string) (Tool, error) {
	return loadDir(d.path(state, name))
}

func loadDir(dir string) (Tool, error) {
	m, err := readManifest(dir)
	if err != nil {
		return Tool{}, err
	}
	t := Tool{Manifest: m}
	codeName, testName := sourceNames(t.Language, t.Name)
	code, err := os.ReadFile(filepath.Join(dir, codeName))
	if err != nil {
		return Tool{}, fmt.Errorf("selfcode: %w", err)
	}
	test, err := os.ReadFile(filepath.Join(dir, testName))
	if err != nil {
		return Tool{}, fmt.Errorf("selfcode: %w", err)
	}
	t.Code, t.Test, t.Dir = string(code), string(test), dir
	if Hash(t.Language, t.Code, t.Test) != t.Hash {
		return Tool{}, fmt.Errorf("selfcode: %s: %w", dir, ErrMismatch)
	}
	return t, nil
}

// Promote makes the staged version of name live, if its hash is the one
// the owner approved; the previous live version is archived. It is a swap
// (swap.go): a crash at any step leaves the old version or the new one
// live once recovered.
func (d *Dir) Promote(name, hash, by string) (Manifest, error) {
	unlock, err := d.begin(name)
	if err != nil {
		return Manifest{}, err
	}
	defer unlock()
	m, err := d.swap(opPromote, name, d.path(StateStaged, name), hash, by)
	if err != nil {
		return Manifest{}, fmt.Errorf("selfcode: promote %s: %w", name, err)
	}
	return m, nil
}

// archive moves a version into the archive, then has its manifest say so.
func (d *Dir) archive(t Tool) error {
	if err := d.renameToArchive(t.Dir, t.Version); err != nil {
		return err
	}
	return d.markArchived(t.Name, t.Version)
}

func rewriteManifest(dir string, m Manifest) error {
	data, _ := json.MarshalIndent(m, "", "  ")
	tmp := filepath.Join(dir, ".manifest.tmp")
	os.Remove(tmp)
	if err := writeSync(tmp, data); err != nil {
		return fmt.Errorf("selfcode: manifest: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "manifest.json")); err != nil {
		return fmt.Errorf("selfcode: manifest: %w", err)
	}
	syncDir(dir)
	return nil
}

// Discard removes the staged version of name (a denied promotion).
func (d *Dir) Discard(name string) error {
	unlock, err := d.begin(name)
	if err != nil {
		return err
	}
	defer unlock()
	return d.drop(d.path(StateStaged, name))
}

// Quarantine takes the live version of name out of discovery, in one
// rename; a version quarantined before is archived first.
func (d *Dir) Quarantine(name string) error {
	unlock, err := d.begin(name)
	if err != nil {
		return err
	}
	defer unlock()
	live := d.path(StateLive, name)
	m, err := readManifest(live)
	if err != nil {
		return err
	}
	dst := d.path(StateQuarantined, name)
	if old, err := readManifest(dst); err == nil {
		if err := d.renameToArchive(dst, old.Version); err != nil {
			return err
		}
		if err := d.markArchived(name, old.Version); err != nil {
			return err
		}
	}
	if err := os.Rename(live, dst); err != nil {
		return fmt.Errorf("selfcode: quarantine %s: %w", name, err)
	}
	syncDir(d.LiveDir())
	m.State = StateQuarantined
	return rewriteManifest(dst, m)
}

// Restore puts a quarantined version back live (archiving whatever became
// live meanwhile), as a swap.
func (d *Dir) Restore(name string) error {
	unlock, err := d.begin(name)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := d.swap(opRestore, name, d.path(StateQuarantined, name), "", ""); err != nil {
		return fmt.Errorf("selfcode: restore %s: %w", name, err)
	}
	return nil
}

// Rollback makes the newest archived version of name live again and
// archives the current one, as a swap.
func (d *Dir) Rollback(name string) (Manifest, error) {
	unlock, err := d.begin(name)
	if err != nil {
		return Manifest{}, err
	}
	defer unlock()
	// Only the archive: the versions an import brought are a record in a
	// manifest (Manifest.Imported), never approved here, never archived.
	versions := d.archived(name)
	if len(versions) == 0 {
		if live, err := readManifest(d.path(StateLive, name)); err == nil && live.Imported != nil {
			return Manifest{}, fmt.Errorf("selfcode: %s: %w (the versions it was imported with were approved on another machine, not here)", name, ErrNoVersion)
		}
		return Manifest{}, fmt.Errorf("selfcode: %s: %w", name, ErrNoVersion)
	}
	m, err := d.swap(opRollback, name, d.archiveDir(name, versions[len(versions)-1]), "", "")
	if err != nil {
		return Manifest{}, fmt.Errorf("selfcode: rollback %s: %w", name, err)
	}
	return m, nil
}

// Versions returns every version of name the directory keeps, oldest
// first: the archived ones, then the live or quarantined one (a staged
// proposal is not a version yet). A name that is not a plain file name
// (a path, "..") has none.
func (d *Dir) Versions(name string) ([]Tool, error) {
	if !filepath.IsLocal(name) || filepath.Base(name) != name || strings.HasPrefix(name, ".") {
		return nil, fmt.Errorf("selfcode: %q: %w", name, ErrNotFound)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Tool
	for _, v := range d.archived(name) {
		t, err := loadDir(d.archiveDir(name, v))
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("selfcode: %s version %d: %w", name, v, err)
		}
		out = append(out, t)
	}
	for _, st := range []string{StateLive, StateQuarantined} {
		t, err := d.Load(st, name)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("selfcode: %s: %w", name, ErrNotFound)
	}
	return out, nil
}

// removedMark, in a tool's archive directory, says the owner removed the
// tool: no live version is then what the owner wanted (Check).
const removedMark = "removed"

// Remove takes name out entirely: live, staged and quarantined versions go
// to the archive, each in one rename, never deleted.
func (d *Dir) Remove(name string) error {
	unlock, err := d.begin(name)
	if err != nil {
		return err
	}
	defer unlock()
	found := false
	for _, st := range []string{StateLive, StateQuarantined, StateStaged} {
		dir := d.path(st, name)
		m, err := readManifest(dir)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		found = true
		if err := d.archive(Tool{Manifest: m, Dir: dir}); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("selfcode: %s: %w", name, ErrNotFound)
	}
	mark := filepath.Join(d.root, "archive", name, removedMark)
	os.Remove(mark)
	if err := writeSync(mark, []byte(d.now().UTC().Format(time.RFC3339)+"\n")); err != nil {
		return fmt.Errorf("selfcode: remove %s: %w", name, err)
	}
	return nil
}

func (d *Dir) archived(name string) []int {
	entries, _ := os.ReadDir(filepath.Join(d.root, "archive", name))
	var vs []int
	for _, e := range entries {
		var v int
		if _, err := fmt.Sscan(e.Name(), &v); err == nil {
			vs = append(vs, v)
		}
	}
	sort.Ints(vs)
	return vs
}

func (d *Dir) nextVersion(name string) int {
	v := 0
	for _, a := range d.archived(name) {
		v = max(v, a)
	}
	// A staged copy is replaced by the next proposal, so it does not count.
	for _, st := range []string{StateLive, StateQuarantined} {
		if data, err := os.ReadFile(filepath.Join(d.path(st, name), "manifest.json")); err == nil {
			var m Manifest
			if json.Unmarshal(data, &m) == nil {
				v = max(v, m.Version)
			}
		}
	}
	return v + 1
}

// List returns every tool's manifests in the given state, by name.
func (d *Dir) List(state string) ([]Manifest, error) {
	var dir string
	switch state {
	case StateStaged:
		dir = filepath.Join(d.root, "staged")
	case StateQuarantined:
		dir = filepath.Join(d.root, "quarantine")
	default:
		dir = filepath.Join(d.root, "live")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("selfcode: %w", err)
	}
	var out []Manifest
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "manifest.json"))
		if err != nil {
			continue
		}
		var m Manifest
		if json.Unmarshal(data, &m) == nil {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// VersionDir is the directory of name's version in a state.
func (d *Dir) VersionDir(state, name string) string { return d.path(state, name) }

// Stamp changes whenever a tool enters or leaves the live directory (every
// move is a rename there), for callers that cache discovery.
func (d *Dir) Stamp() string {
	fi, err := os.Stat(d.LiveDir())
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d", fi.ModTime().UnixNano())
}
