package skill

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// stagedDir holds the agent's drafts, one per name, apart from the skills
// in use: .staged/<name>/SKILL.md. A draft is in no prompt and use_skill
// cannot load it; only Promote, after the owner's approval, makes it live.
const stagedDir = ".staged"

// Errors of the drafts.
var (
	ErrNoDraft      = errors.New("no draft of that skill is waiting")
	ErrDraftChanged = errors.New("the draft changed since it was shown")
	ErrUnchanged    = errors.New("the change leaves the skill as it is")
)

// Draft is a change of a skill the agent asked for, staged until the owner
// decides.
type Draft struct {
	Name string
	New  bool   // it creates the skill: there is no owner's copy and no bundled one
	Data []byte // the SKILL.md it makes
	Live []byte // the SKILL.md in use it replaces (the owner's or the bundled one); nil when New
	Hash string // hex SHA-256 of Data: what the owner approves
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Stage validates a new skill (create) or a change of one as Create and
// Update would, and keeps the SKILL.md it would make as name's draft,
// replacing an earlier draft of that name. Nothing in use changes. An
// update builds on the skill in use, or on the waiting draft of a skill
// that is not yet in use; one that changes nothing is ErrUnchanged.
func (l *Library) Stage(create bool, name, description, body string) (Draft, error) {
	return withRoot(l, name, func(r *os.Root) (Draft, error) { return l.stage(r, create, name, description, body) })
}

// stage is Stage with the lock held.
func (l *Library) stage(r *os.Root, create bool, name, description, body string) (Draft, error) {
	live, err := l.liveData(r, name)
	if err != nil {
		return Draft{}, err
	}
	_, isBundled := l.bundled[name]
	d := Draft{Name: name, Live: live, New: live == nil}
	var base Skill
	switch {
	case create && live != nil && isBundled && !l.ownerFolder(r, name):
		return Draft{}, fmt.Errorf("skill %q: %w: a bundled skill has that name; update it instead (that makes the owner's copy)", name, ErrExists)
	case create && live != nil:
		return Draft{}, fmt.Errorf("skill %q: %w; update it instead", name, ErrExists)
	case create:
		base = Skill{Name: name}
	default:
		if description == "" && body == "" {
			return Draft{}, fmt.Errorf("skill %q: nothing to change: give a description, a body or both", name)
		}
		from := live
		if from == nil && !l.ownerFolder(r, name) {
			if from, err = readDraft(r, name, l.lim.skill()); err != nil {
				return Draft{}, fmt.Errorf("skill %q: %w; create it instead", name, ErrNotFound)
			}
		}
		if cur, err := l.parse(from); from != nil && err == nil {
			base = cur
		} else if isBundled {
			base = l.bundled[name].clone() // the owner's copy is broken: start again from the bundled one
		}
		base.Name = name
	}
	if d.Data, err = l.compose(base, create, description, body); err != nil {
		return Draft{}, fmt.Errorf("skill %q: %w", name, err)
	}
	if live != nil && string(live) == string(d.Data) {
		return Draft{}, fmt.Errorf("skill %q: %w", name, ErrUnchanged)
	}
	d.Hash = hashOf(d.Data)
	if err := l.writeDraft(r, name, d.Data); err != nil {
		return Draft{}, fmt.Errorf("skill %q: stage: %w", name, err)
	}
	return d, nil
}

// ownerFolder reports a real folder of the owner's called name.
func (l *Library) ownerFolder(r *os.Root, name string) bool {
	fi, err := r.Lstat(name)
	return err == nil && fi.IsDir()
}

// liveData is the SKILL.md in use for name: the owner's copy if there is
// one, else the bundled one, else nil.
func (l *Library) liveData(r *os.Root, name string) ([]byte, error) {
	if fi, err := r.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("skill %q: the folder is a symbolic link, never followed; replace it by hand", name)
	} else if err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("skill %q: not a folder; move it away", name)
	}
	data, err := readOwner(r, name, l.lim.skill())
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, errAbsent), bareFolder(r, name):
	default:
		return nil, fmt.Errorf("skill %q: %w; replace it by hand", name, err)
	}
	if b, ok := l.bundled[name]; ok {
		return Format(b), nil
	}
	return nil, nil
}

// writeDraft puts data as the draft of name, replacing an earlier one.
func (l *Library) writeDraft(r *os.Root, name string, data []byte) error {
	if err := ensureDir(r, stagedDir); err != nil {
		return err
	}
	dir := filepath.Join(stagedDir, name)
	if err := ensureDir(r, dir); err != nil {
		return err
	}
	return replaceFile(r, filepath.Join(dir, skillFile), data)
}

// bareFolder reports a real folder name (not a link) without a SKILL.md.
func bareFolder(r *os.Root, name string) bool {
	fi, err := r.Lstat(name)
	return err == nil && fi.IsDir() && fileMissing(r, name)
}

// readDraft reads the draft of name within lim; ErrNoDraft when there is
// none.
func readDraft(r *os.Root, name string, lim sizeLimit) ([]byte, error) {
	p := filepath.Join(stagedDir, name, skillFile)
	if _, err := r.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoDraft
	}
	data, err := readFileNoLink(r, p, lim)
	if err != nil {
		return nil, fmt.Errorf("draft: %w", err)
	}
	return data, nil
}

// Drafts lists the names with a waiting draft, sorted.
func (l *Library) Drafts() []string {
	r, err := l.root()
	if err != nil {
		return nil
	}
	defer r.Close()
	if fi, err := r.Lstat(stagedDir); err != nil || !fi.IsDir() {
		return nil
	}
	d, err := r.Open(stagedDir)
	if err != nil {
		return nil
	}
	entries, _ := d.ReadDir(-1)
	d.Close()
	var out []string
	for _, e := range entries {
		if e.IsDir() && ValidName(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// Drafted returns the waiting draft of name.
func (l *Library) Drafted(name string) (Draft, error) {
	return withRoot(l, name, func(r *os.Root) (Draft, error) {
		data, err := readDraft(r, name, l.lim.skill())
		if err != nil {
			return Draft{}, fmt.Errorf("skill %q: %w", name, err)
		}
		live, err := l.liveData(r, name)
		if err != nil {
			return Draft{}, err
		}
		return Draft{Name: name, New: live == nil, Data: data, Live: live, Hash: hashOf(data)}, nil
	})
}

// Promote makes the draft of name the skill in use, if its content is
// still hash (the one the owner approved): the owner's copy is updated
// (its current version kept), or a bundled skill's copy made (with the
// bundled files beside it), or the skill created. The draft is then gone.
func (l *Library) Promote(name, hash string) (Skill, error) {
	return withRoot(l, name, func(r *os.Root) (Skill, error) { return l.promote(r, name, hash) })
}

// promote is Promote with the lock held.
func (l *Library) promote(r *os.Root, name, hash string) (Skill, error) {
	data, err := readDraft(r, name, l.lim.skill())
	if err != nil {
		return Skill{}, fmt.Errorf("skill %q: %w", name, err)
	}
	if hashOf(data) != hash {
		return Skill{}, fmt.Errorf("skill %q: %w", name, ErrDraftChanged)
	}
	if s, err := l.parse(data); err != nil || s.Name != name {
		return Skill{}, fmt.Errorf("skill %q: the draft does not parse as that skill (%v)", name, err)
	}
	old, err := readOwner(r, name, l.lim.skill())
	switch {
	case err != nil && bareFolder(r, name):
		// A folder without SKILL.md: the draft fills it.
		if err := replaceFile(r, filepath.Join(name, skillFile), data); err != nil {
			return Skill{}, fmt.Errorf("skill %q: update: %w", name, err)
		}
	case err == nil:
		if string(old) != string(data) {
			if err := keepVersion(r, name, old, current(versions(r, name))); err != nil {
				return Skill{}, fmt.Errorf("skill %q: keep the current version: %w", name, err)
			}
			if err := replaceFile(r, filepath.Join(name, skillFile), data); err != nil {
				return Skill{}, fmt.Errorf("skill %q: update: %w", name, err)
			}
		}
	case !errors.Is(err, errAbsent):
		return Skill{}, fmt.Errorf("skill %q: %w; replace it by hand", name, err)
	default:
		var names []string
		var files [][]byte
		if b, ok := l.bundled[name]; ok {
			names = b.Files
			if files, err = readFiles(l.bfs, name, names, l.lim.file()); err != nil {
				return Skill{}, fmt.Errorf("skill %q: copy the bundled files: %w", name, err)
			}
		}
		if err := placeFolder(r, name, data, names, files); err != nil {
			return Skill{}, fmt.Errorf("skill %q: create: %w", name, err)
		}
	}
	if err := clearDraft(r, name); err != nil {
		return Skill{}, err
	}
	out, _, err := l.loadOwner(r, name)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %q: read back: %w", name, err)
	}
	return out, nil
}

// Discard drops the waiting draft of name, if any.
func (l *Library) Discard(name string) error {
	_, err := withRoot(l, name, func(r *os.Root) (struct{}, error) {
		return struct{}{}, clearDraft(r, name)
	})
	return err
}

// clearDraft removes the draft of name, and the drafts folder when no
// other draft waits.
func clearDraft(r *os.Root, name string) error {
	if err := r.RemoveAll(filepath.Join(stagedDir, name)); err != nil {
		return fmt.Errorf("skill %q: clear the draft: %w", name, err)
	}
	_ = r.Remove(stagedDir) // fails while another draft waits
	return nil
}

// InUse reports whether the owner's copy of name is the SKILL.md of hash:
// for a promotion a crash interrupted, whether it happened.
func (l *Library) InUse(name, hash string) bool {
	if ValidName(name) != nil {
		return false
	}
	r, err := l.root()
	if err != nil {
		return false
	}
	defer r.Close()
	data, err := readOwner(r, name, l.lim.skill())
	return err == nil && hashOf(data) == hash
}

// Withhold takes the owner's copy of name out of use and makes it a draft
// again, for the owner to approve once: for a skill the agent wrote before
// its drafts needed approval. The copy and its versions are moved aside to
// .removed as Remove does (a bundled skill of that name is offered again).
func (l *Library) Withhold(name string) (Draft, error) {
	return withRoot(l, name, func(r *os.Root) (Draft, error) {
		data, err := readOwner(r, name, l.lim.skill())
		if errors.Is(err, errAbsent) {
			return Draft{}, fmt.Errorf("skill %q: %w", name, ErrNotFound)
		} else if err != nil {
			return Draft{}, fmt.Errorf("skill %q: %w", name, err)
		}
		if err := l.writeDraft(r, name, data); err != nil {
			return Draft{}, fmt.Errorf("skill %q: stage: %w", name, err)
		}
		if err := l.remove(r, name); err != nil {
			return Draft{}, err
		}
		d := Draft{Name: name, New: true, Data: data, Hash: hashOf(data)}
		if b, ok := l.bundled[name]; ok {
			d.New, d.Live = false, Format(b)
		}
		return d, nil
	})
}

// withRoot runs f for a valid name with the library's lock held and the
// skills folder open: every change and every read of a draft goes through
// it, so they are serialized and resolved inside the folder.
func withRoot[T any](l *Library, name string, f func(r *os.Root) (T, error)) (T, error) {
	var zero T
	if err := ValidName(name); err != nil {
		return zero, fmt.Errorf("skill: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r, err := l.root()
	if err != nil {
		return zero, err
	}
	defer r.Close()
	return f(r)
}
