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
// hash, gate report, who approved it and when). Moves between states are
// renames within the tools directory, so a version is always wholly in one
// place. The content hash covers language, code and test; what the owner
// approved is what runs, and every reader checks it.
package selfcode

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
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

var identRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)

// reserved are names a self-coded tool may not take: the built-in tools of
// the catalogue (contracts.BuiltinTools) and the words of both languages.
var reserved = map[string]bool{}

func init() {
	for _, b := range contracts.BuiltinTools() {
		reserved[b.Name] = true
	}
	for _, w := range strings.Fields(`and as assert async await break class continue def del elif else except false finally for from global if
		import in is lambda load none nonlocal not or pass raise return true try while with yield match case type
		print len str int float bool list dict set tuple range min max sum sorted reversed enumerate zip map filter
		any all abs round repr hash id open exec eval compile input object super fail struct json math http`) {
		reserved[w] = true
	}
}

// Normalize turns a proposed name into a safe identifier: lowercase, with
// spaces, dashes and dots as underscores. It refuses what is left if it is
// not an identifier or is reserved.
func Normalize(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.NewReplacer(" ", "_", "-", "_", ".", "_").Replace(n)
	if !identRe.MatchString(n) {
		return "", fmt.Errorf("%w: %q must be 1-48 letters, digits or _, starting with a letter", ErrBadName, name)
	}
	if reserved[n] {
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

// Dir is a tools directory.
type Dir struct {
	root string
	now  func() time.Time
}

// Open returns the tools directory at root, creating its layout (mode 0700).
func Open(root string, now func() time.Time) (*Dir, error) {
	for _, sub := range []string{"staged", "live", "archive", "quarantine", ".tmp"} {
		if err := os.MkdirAll(filepath.Join(root, sub), 0o700); err != nil {
			return nil, fmt.Errorf("selfcode: %w", err)
		}
	}
	if now == nil {
		now = time.Now
	}
	return &Dir{root: root, now: now}, nil
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
	if len(code) > MaxSource || len(test) > MaxSource {
		return Manifest{}, fmt.Errorf("%w: code and test are limited to %d bytes each", ErrTooLarge, MaxSource)
	}
	if language != Starlark && language != Python {
		return Manifest{}, fmt.Errorf("selfcode: unknown language %q", language)
	}
	m := Manifest{
		Name: name, Version: d.nextVersion(name), Language: language, Meta: meta,
		Hash: Hash(language, code, test), Gate: gate, ProposedAt: d.now().UTC(), State: StateStaged,
	}
	tmp, err := d.writeVersion(m, code, test)
	if err != nil {
		return Manifest{}, err
	}
	dst := d.path(StateStaged, name)
	if err := os.RemoveAll(dst); err != nil {
		os.RemoveAll(tmp)
		return Manifest{}, fmt.Errorf("selfcode: replace staged %s: %w", name, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.RemoveAll(tmp)
		return Manifest{}, fmt.Errorf("selfcode: stage %s: %w", name, err)
	}
	return m, nil
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
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if errors.Is(err, os.ErrNotExist) {
		return Tool{}, ErrNotFound
	}
	if err != nil {
		return Tool{}, fmt.Errorf("selfcode: %w", err)
	}
	var t Tool
	if err := json.Unmarshal(data, &t.Manifest); err != nil {
		return Tool{}, fmt.Errorf("selfcode: manifest of %s: %w", dir, err)
	}
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
// the owner approved; the previous live version is archived. Both moves
// are renames.
func (d *Dir) Promote(name, hash, by string) (Manifest, error) {
	staged, err := d.Load(StateStaged, name)
	if err != nil {
		return Manifest{}, err
	}
	if staged.Hash != hash {
		return Manifest{}, fmt.Errorf("selfcode: promote %s: %w", name, ErrMismatch)
	}
	if err := d.archiveLive(name); err != nil {
		return Manifest{}, err
	}
	m := staged.Manifest
	m.State, m.ApprovedAt, m.ApprovedBy = StateLive, d.now().UTC(), by
	if err := rewriteManifest(staged.Dir, m); err != nil {
		return Manifest{}, err
	}
	if err := os.Rename(staged.Dir, d.path(StateLive, name)); err != nil {
		return Manifest{}, fmt.Errorf("selfcode: promote %s: %w", name, err)
	}
	return m, nil
}

// archiveLive moves the live version of name, if any, to the archive.
func (d *Dir) archiveLive(name string) error {
	live, err := d.Load(StateLive, name)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return d.archive(live)
}

func (d *Dir) archive(t Tool) error {
	m := t.Manifest
	m.State = StateArchived
	if err := rewriteManifest(t.Dir, m); err != nil {
		return err
	}
	dst := filepath.Join(d.root, "archive", t.Name, fmt.Sprint(t.Version))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("selfcode: archive %s: %w", t.Name, err)
	}
	os.RemoveAll(dst)
	if err := os.Rename(t.Dir, dst); err != nil {
		return fmt.Errorf("selfcode: archive %s: %w", t.Name, err)
	}
	return nil
}

func rewriteManifest(dir string, m Manifest) error {
	data, _ := json.MarshalIndent(m, "", "  ")
	tmp := filepath.Join(dir, ".manifest.tmp")
	os.Remove(tmp)
	if err := writeSync(tmp, data); err != nil {
		return fmt.Errorf("selfcode: manifest: %w", err)
	}
	return os.Rename(tmp, filepath.Join(dir, "manifest.json"))
}

// Discard removes the staged version of name (a denied promotion).
func (d *Dir) Discard(name string) error {
	return os.RemoveAll(d.path(StateStaged, name))
}

// Quarantine takes the live version of name out of discovery.
func (d *Dir) Quarantine(name string) error {
	live, err := d.Load(StateLive, name)
	if err != nil {
		return err
	}
	m := live.Manifest
	m.State = StateQuarantined
	if err := rewriteManifest(live.Dir, m); err != nil {
		return err
	}
	dst := d.path(StateQuarantined, name)
	os.RemoveAll(dst)
	return os.Rename(live.Dir, dst)
}

// Restore puts a quarantined version back live (archiving whatever became
// live meanwhile).
func (d *Dir) Restore(name string) error {
	q, err := d.Load(StateQuarantined, name)
	if err != nil {
		return err
	}
	if err := d.archiveLive(name); err != nil {
		return err
	}
	m := q.Manifest
	m.State = StateLive
	if err := rewriteManifest(q.Dir, m); err != nil {
		return err
	}
	return os.Rename(q.Dir, d.path(StateLive, name))
}

// Rollback makes the newest archived version of name live again and
// archives the current one.
func (d *Dir) Rollback(name string) (Manifest, error) {
	versions := d.archived(name)
	if len(versions) == 0 {
		return Manifest{}, fmt.Errorf("selfcode: %s: %w", name, ErrNoVersion)
	}
	prev, err := loadDir(filepath.Join(d.root, "archive", name, fmt.Sprint(versions[len(versions)-1])))
	if err != nil {
		return Manifest{}, err
	}
	if err := d.archiveLive(name); err != nil {
		return Manifest{}, err
	}
	m := prev.Manifest
	m.State = StateLive
	if err := rewriteManifest(prev.Dir, m); err != nil {
		return Manifest{}, err
	}
	if err := os.Rename(prev.Dir, d.path(StateLive, name)); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// Remove takes name out entirely: live, staged and quarantined versions go
// to the archive, never deleted.
func (d *Dir) Remove(name string) error {
	found := false
	for _, st := range []string{StateLive, StateQuarantined, StateStaged} {
		t, err := d.Load(st, name)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		found = true
		if err := d.archive(t); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("selfcode: %s: %w", name, ErrNotFound)
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
