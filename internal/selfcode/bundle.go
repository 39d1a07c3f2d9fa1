package selfcode

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"
)

// A bundle carries a self-coded tool from one machine to another: one JSON
// file (BundleFormat, BundleFormatVersion) with the tool's name, the versions the
// owner approved on the machine that exported it (code, test, content
// hash, manifest, when and by whom each was approved there), which of them
// is the current one, and a hash of all of it.
//
// JSON rather than a tar archive: a tool is text, and JSON has no file
// names, modes or links, so nothing in a bundle can name a place in the
// file system; the name is checked as a proposal's is before anything is
// made of it. A bundle is hostile input: ReadBundle bounds its size
// (MaxBundle, MaxSource, the fields' caps), its nesting (maxBundleDepth)
// and its number of versions, refuses unknown fields and format versions,
// and checks every version's content hash and the bundle's hash.
//
// Importing never makes a version live: the current version is staged
// (StageImported) only after it passed the gate here, for the owner to
// approve like a proposal. The other versions are kept only as a record
// in the staged version's manifest (Manifest.Imported): they are never
// written to the archive, so a rollback, which reaches archived versions
// only, can never make one of them live.

// Bundle format and the version of it this code writes and reads.
const (
	BundleFormat        = "shelldon-tool-bundle"
	BundleFormatVersion = 1
)

// Caps of a bundle.
const (
	MaxBundle         = 2 << 20 // bytes of the whole file
	MaxBundleVersions = 32      // versions in one bundle
	maxBundleDepth    = 32      // nesting of JSON arrays and objects
	maxDescription    = 4 << 10
	maxSchema         = 16 << 10
	maxGate           = 64 << 10
	maxShort          = 256 // approved_by, a capability's name or value
	maxCapabilities   = 16  // capability names, and values of each
)

// Errors of bundles.
var (
	ErrBadBundle      = errors.New("not a valid tool bundle")
	ErrBundleTampered = errors.New("the bundle's content does not match its hash")
	ErrBundleExists   = errors.New("the file exists")
	ErrNoLive         = errors.New("no live version")
)

// Bundle is a tool as it travels.
type Bundle struct {
	Format        string          `json:"format"`
	FormatVersion int             `json:"format_version"`
	Name          string          `json:"name"`
	ExportedAt    time.Time       `json:"exported_at"`
	Current       int             `json:"current"`  // the version an import proposes
	Versions      []BundleVersion `json:"versions"` // oldest first, Current among them
	Hash          string          `json:"hash"`     // sha256 of the bundle without it (bundleHash)
}

// BundleVersion is one version of the tool as it was on the machine that
// exported it.
type BundleVersion struct {
	Version    int       `json:"version"`
	Language   string    `json:"language"`
	Code       string    `json:"code"`
	Test       string    `json:"test"`
	Hash       string    `json:"hash"` // Hash(Language, Code, Test)
	Meta       Meta      `json:"meta"`
	Gate       string    `json:"gate"`
	ProposedAt time.Time `json:"proposed_at,omitzero"`
	ApprovedAt time.Time `json:"approved_at"`
	ApprovedBy string    `json:"approved_by,omitempty"`
}

// Import is where a version that came in a bundle came from, kept in its
// manifest: the bundle (its file's base name as the owner gave it, and its
// hash), the version it was there, and every version of the bundle as a
// record. Nothing of it was approved here but the version itself, once the
// owner approves it.
type Import struct {
	Bundle        string            `json:"bundle"`
	BundleHash    string            `json:"bundle_hash"`
	ExportedAt    time.Time         `json:"exported_at"`
	SourceVersion int               `json:"source_version"`
	History       []ImportedVersion `json:"history"` // oldest first
}

// ImportedVersion is a version of an imported tool as the other machine
// kept it: a record only, never a version here.
type ImportedVersion struct {
	Version    int       `json:"version"`
	Language   string    `json:"language"`
	Hash       string    `json:"hash"`
	ProposedAt time.Time `json:"proposed_at,omitzero"`
	ApprovedAt time.Time `json:"approved_at"`
	ApprovedBy string    `json:"approved_by,omitempty"`
}

// Export returns the bundle of name: its live version as the current one,
// and every earlier version approved here, the newest that fit within
// MaxBundle and MaxBundleVersions; omitted is how many older ones did not.
func (d *Dir) Export(name string) (b Bundle, data []byte, omitted int, err error) {
	all, err := d.Versions(name)
	if err != nil {
		return Bundle{}, nil, 0, err
	}
	var vs []BundleVersion
	current := 0
	for _, t := range all {
		if t.State == StateLive {
			current = t.Version
		}
		if t.ApprovedAt.IsZero() {
			continue // a draft that was never live: not the owner's
		}
		if !utf8.ValidString(t.Code) || !utf8.ValidString(t.Test) {
			return Bundle{}, nil, 0, fmt.Errorf("selfcode: export %s: version %d is not UTF-8 text", name, t.Version)
		}
		vs = append(vs, BundleVersion{Version: t.Version, Language: t.Language, Code: t.Code, Test: t.Test, Hash: t.Hash,
			Meta: t.Meta, Gate: bound(t.Gate, maxGate), ProposedAt: t.ProposedAt.UTC(), ApprovedAt: t.ApprovedAt.UTC(),
			ApprovedBy: bound(t.ApprovedBy, maxShort)})
	}
	if current == 0 {
		return Bundle{}, nil, 0, fmt.Errorf("selfcode: export %s: %w (restore it first)", name, ErrNoLive)
	}
	for len(vs) > MaxBundleVersions {
		vs, omitted = vs[1:], omitted+1
	}
	for {
		b = Bundle{Format: BundleFormat, FormatVersion: BundleFormatVersion, Name: name, ExportedAt: d.now().UTC().Truncate(time.Second),
			Current: current, Versions: vs}
		b.Hash = bundleHash(b)
		data, err = json.MarshalIndent(b, "", "  ")
		if err != nil {
			return Bundle{}, nil, 0, fmt.Errorf("selfcode: export %s: %w", name, err)
		}
		data = append(data, '\n')
		if len(data) <= MaxBundle || len(vs) == 1 {
			break
		}
		vs, omitted = vs[1:], omitted+1
	}
	if len(data) > MaxBundle {
		return Bundle{}, nil, 0, fmt.Errorf("selfcode: export %s: %w: over %d bytes", name, ErrTooLarge, MaxBundle)
	}
	return b, data, omitted, nil
}

// bound cuts s to at most n bytes, on a rune boundary.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// bundleHash is the hash of b without its Hash: of its compact JSON, which
// encoding/json writes the same for the same value.
func bundleHash(b Bundle) string {
	b.Hash = ""
	data, _ := json.Marshal(b)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// WriteBundle writes data to path atomically: a reader sees no file or the
// whole of it. It refuses to replace an existing file unless force.
func WriteBundle(path string, data []byte, force bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("selfcode: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("selfcode: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("selfcode: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("selfcode: write %s: %w", path, err)
	}
	if force {
		err = os.Rename(tmp, path)
	} else {
		// A hard link fails if path exists, with nothing replaced, and
		// leaves no window in which another writer's file is overwritten.
		err = os.Link(tmp, path)
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("selfcode: write %s: %w", path, ErrBundleExists)
		}
	}
	if err != nil {
		return fmt.Errorf("selfcode: write %s: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// ReadBundle reads and checks a bundle from r, which is hostile: see the
// caps above. A bundle it returns is well formed, every version's content
// matches its hash and the bundle matches its own; whether the current
// version passes the gate is for the caller to find out.
func ReadBundle(r io.Reader) (Bundle, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBundle+1))
	if err != nil {
		return Bundle{}, fmt.Errorf("selfcode: read the bundle: %w", err)
	}
	if len(data) > MaxBundle {
		return Bundle{}, fmt.Errorf("%w: larger than %d bytes", ErrBadBundle, MaxBundle)
	}
	if err := checkDepth(data, maxBundleDepth); err != nil {
		return Bundle{}, err
	}
	// The format first, so that a newer bundle is refused for its version
	// rather than for a field this code does not know.
	var head struct {
		Format        string `json:"format"`
		FormatVersion int    `json:"format_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Bundle{}, fmt.Errorf("%w: not JSON: %v", ErrBadBundle, err)
	}
	if head.Format != BundleFormat {
		return Bundle{}, fmt.Errorf("%w: its format is not %q", ErrBadBundle, BundleFormat)
	}
	if head.FormatVersion != BundleFormatVersion {
		return Bundle{}, fmt.Errorf("%w: format version %d is not one this shelldon reads (it reads %d)", ErrBadBundle, head.FormatVersion, BundleFormatVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b Bundle
	if err := dec.Decode(&b); err != nil {
		return Bundle{}, fmt.Errorf("%w: %v", ErrBadBundle, err)
	}
	if dec.More() {
		return Bundle{}, fmt.Errorf("%w: data after the bundle", ErrBadBundle)
	}
	if err := b.check(); err != nil {
		return Bundle{}, err
	}
	return b, nil
}

// check checks a decoded bundle.
func (b Bundle) check() error {
	if n, err := Normalize(b.Name); err != nil || n != b.Name {
		return fmt.Errorf("%w: the tool's name %q is not a valid tool name", ErrBadBundle, bound(b.Name, 64))
	}
	if len(b.Versions) == 0 || len(b.Versions) > MaxBundleVersions {
		return fmt.Errorf("%w: it must hold 1 to %d versions, not %d", ErrBadBundle, MaxBundleVersions, len(b.Versions))
	}
	found := false
	for i, v := range b.Versions {
		if err := v.check(); err != nil {
			return fmt.Errorf("%w: version %d: %w", ErrBadBundle, v.Version, err)
		}
		if i > 0 && v.Version <= b.Versions[i-1].Version {
			return fmt.Errorf("%w: the versions are not in order", ErrBadBundle)
		}
		if Hash(v.Language, v.Code, v.Test) != v.Hash {
			return fmt.Errorf("%w: version %d's code and test do not match its content hash", ErrBundleTampered, v.Version)
		}
		found = found || v.Version == b.Current
	}
	if !found {
		return fmt.Errorf("%w: its current version %d is not in it", ErrBadBundle, b.Current)
	}
	if bundleHash(b) != b.Hash {
		return ErrBundleTampered
	}
	return nil
}

// check checks one version's fields against the caps.
func (v BundleVersion) check() error {
	switch {
	case v.Version <= 0:
		return errors.New("a version is a positive number")
	case v.Language != Starlark && v.Language != Python:
		return fmt.Errorf("unknown language %q", bound(v.Language, 32))
	case len(v.Code) > MaxSource || len(v.Test) > MaxSource:
		return fmt.Errorf("%w: code and test are limited to %d bytes each", ErrTooLarge, MaxSource)
	case len(v.Meta.Description) > maxDescription || len(v.Meta.ParamsSchema) > maxSchema || len(v.Gate) > maxGate || len(v.ApprovedBy) > maxShort:
		return fmt.Errorf("%w: a field of its manifest is too long", ErrTooLarge)
	case len(v.Meta.Capabilities) > maxCapabilities:
		return fmt.Errorf("more than %d capabilities", maxCapabilities)
	}
	for k, vals := range v.Meta.Capabilities {
		if len(k) > maxShort || len(vals) > maxCapabilities {
			return errors.New("a capability is too long")
		}
		for _, s := range vals {
			if len(s) > maxShort {
				return errors.New("a capability is too long")
			}
		}
	}
	return nil
}

// Version returns the bundle's version v.
func (b Bundle) Version(v int) (BundleVersion, bool) {
	for _, bv := range b.Versions {
		if bv.Version == v {
			return bv, true
		}
	}
	return BundleVersion{}, false
}

// Origin is the record an import of b from the file called file keeps in
// the staged version's manifest.
func (b Bundle) Origin(file string) Import {
	imp := Import{Bundle: bound(file, maxShort), BundleHash: b.Hash, ExportedAt: b.ExportedAt, SourceVersion: b.Current}
	for _, v := range b.Versions {
		imp.History = append(imp.History, ImportedVersion{Version: v.Version, Language: v.Language, Hash: v.Hash,
			ProposedAt: v.ProposedAt, ApprovedAt: v.ApprovedAt, ApprovedBy: v.ApprovedBy})
	}
	return imp
}

// checkDepth refuses JSON nested deeper than max arrays and objects, before
// a decoder builds anything of it.
func checkDepth(data []byte, max int) error {
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > max {
				return fmt.Errorf("%w: nested deeper than %d", ErrBadBundle, max)
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return nil
}

// StageImported stages the current version of an imported bundle, whose
// gate passed here, as Stage does a proposal; its manifest keeps imp.
func (d *Dir) StageImported(name, language, code, test string, meta Meta, gate string, imp Import) (Manifest, error) {
	return d.stage(name, language, code, test, meta, gate, &imp)
}
