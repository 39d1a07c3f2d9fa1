package selfcode

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A swap makes another version of a tool live: the staged one (Promote),
// the quarantined one (Restore) or an archived one (Rollback). It takes
// steps that are each one rename:
//
//	journaled  tools/.journal/<name>.json holds the intent (written in
//	           .tmp, synced, renamed in); nothing has moved yet
//	archived   the live version, if any, is renamed to archive/<name>/<v>
//	marked     its manifest says archived
//	stamped    the incoming version's manifest says live (and, promoted,
//	           who approved it and when, from the intent)
//	live       the incoming version is renamed to live/<name>
//	done       the intent is removed
//
// finish skips the steps already taken, so a swap and its recovery are the
// same code: whoever finds an intent (Recover at the daemon's start, or the
// next change to that name) finishes it while the incoming version is where
// the intent says, and otherwise undoes it, putting the old version back.
// Between "archived" and "live" no version of the tool is live: only then,
// and only while an intent says so.

// The steps of a swap, as the fault hook names them.
const (
	stepJournaled = "swap:journaled"
	stepArchived  = "swap:archived"
	stepMarked    = "swap:marked"
	stepStamped   = "swap:stamped"
	stepLive      = "swap:live"
	stepDone      = "swap:done"
)

// swapSteps are the steps in order.
var swapSteps = []string{stepJournaled, stepArchived, stepMarked, stepStamped, stepLive, stepDone}

// Ops of a swap.
const (
	opPromote  = "promote"
	opRestore  = "restore"
	opRollback = "rollback"
)

// intent is the journal record of a swap.
type intent struct {
	Op      string    `json:"op"`
	Name    string    `json:"name"`
	From    string    `json:"from"` // the incoming version's directory, relative to the tools directory
	Version int       `json:"version"`
	Hash    string    `json:"hash"`
	Old     int       `json:"old,omitempty"` // the live version it replaces; 0 if none
	By      string    `json:"by,omitempty"`
	At      time.Time `json:"at"`
}

func (d *Dir) journalPath(name string) string {
	return filepath.Join(d.root, ".journal", name+".json")
}

// hit marks a step of a move for the crash tests; nothing happens outside
// them.
func (d *Dir) hit(step string) {
	if d.fault != nil {
		d.fault(step)
	}
}

// swap makes the version in directory from (which must hash to hash, if
// hash is set) live in name's place, archiving the live one. d.mu is held
// and name settled.
func (d *Dir) swap(op, name, from, hash, by string) (Manifest, error) {
	inc, err := loadDir(from)
	if err != nil {
		return Manifest{}, err
	}
	if hash != "" && inc.Hash != hash {
		return Manifest{}, fmt.Errorf("selfcode: %s %s: %w", op, name, ErrMismatch)
	}
	rel, err := filepath.Rel(d.root, from)
	if err != nil {
		return Manifest{}, fmt.Errorf("selfcode: %s %s: %w", op, name, err)
	}
	in := intent{Op: op, Name: name, From: rel, Version: inc.Version, Hash: inc.Hash, By: by, At: d.now().UTC()}
	if cur, err := readManifest(d.path(StateLive, name)); err == nil {
		in.Old = cur.Version
	} else if !errors.Is(err, ErrNotFound) {
		return Manifest{}, err
	}
	if err := d.writeIntent(in); err != nil {
		return Manifest{}, err
	}
	d.hit(stepJournaled)
	m, err := d.finish(in)
	if err != nil && !errors.Is(err, ErrInterrupted) {
		// Not a crash: put the old version back now rather than at the
		// next start, so that what the caller reports is what is live.
		if uerr := d.undo(in); uerr != nil {
			return Manifest{}, fmt.Errorf("%w (and undoing it: %v)", err, uerr)
		}
	}
	return m, err
}

// ErrInterrupted is returned when a swap found unfinished is undone
// because the version it was making live is no longer where it was.
var ErrInterrupted = errors.New("an interrupted change of the live version was undone")

// Settle finishes the change of name's live version a crash interrupted,
// if there is one (or undoes it, if the version it was making live is
// gone).
func (d *Dir) Settle(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.settle(name)
}

// settle is Settle with d.mu held.
func (d *Dir) settle(name string) error {
	in, ok, err := d.readIntent(name)
	if err != nil || !ok {
		return err
	}
	if _, err := d.finish(in); err != nil && !errors.Is(err, ErrInterrupted) {
		return err
	}
	return nil
}

// finish takes the steps of in not yet taken. If the incoming version is
// neither live nor where in says, it undoes in and returns ErrInterrupted.
func (d *Dir) finish(in intent) (Manifest, error) {
	live := d.path(StateLive, in.Name)
	cur, err := readManifest(live)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Manifest{}, err
	}
	isLive := err == nil && cur.Version == in.Version && cur.Hash == in.Hash
	if !isLive {
		from := filepath.Join(d.root, in.From)
		inc, lerr := loadDir(from)
		if lerr != nil || inc.Version != in.Version || inc.Hash != in.Hash {
			if uerr := d.undo(in); uerr != nil {
				return Manifest{}, uerr
			}
			return Manifest{}, fmt.Errorf("selfcode: %s %s v%d: %w", in.Op, in.Name, in.Version, ErrInterrupted)
		}
		if err == nil {
			if err := d.renameToArchive(live, cur.Version); err != nil {
				return Manifest{}, err
			}
			d.hit(stepArchived)
		}
		if err := d.markArchived(in.Name, in.Old, cur.Version); err != nil {
			return Manifest{}, err
		}
		d.hit(stepMarked)
		m := stamped(inc.Manifest, in)
		if err := rewriteManifest(from, m); err != nil {
			return Manifest{}, err
		}
		d.hit(stepStamped)
		if err := os.Rename(from, live); err != nil {
			return Manifest{}, fmt.Errorf("selfcode: %s %s: %w", in.Op, in.Name, err)
		}
		syncDir(filepath.Dir(live))
		syncDir(filepath.Dir(from))
		d.hit(stepLive)
		cur = m
	} else {
		// Live already; the steps before it may have been cut short only
		// in what the manifests say.
		if err := d.markArchived(in.Name, in.Old); err != nil {
			return Manifest{}, err
		}
		if m := stamped(cur, in); m.State != cur.State || m.ApprovedBy != cur.ApprovedBy || !m.ApprovedAt.Equal(cur.ApprovedAt) {
			if err := rewriteManifest(live, m); err != nil {
				return Manifest{}, err
			}
			cur = m
		}
	}
	if err := d.removeIntent(in.Name); err != nil {
		return Manifest{}, err
	}
	d.hit(stepDone)
	return cur, nil
}

// stamped is m as it is once live by in.
func stamped(m Manifest, in intent) Manifest {
	m.State = StateLive
	if in.Op == opPromote {
		m.ApprovedAt, m.ApprovedBy = in.At, in.By
	}
	return m
}

// undo puts back what in moved: the incoming version, if live, where it
// came from, and the old one live again; then removes the intent.
func (d *Dir) undo(in intent) error {
	live := d.path(StateLive, in.Name)
	from := filepath.Join(d.root, in.From)
	if cur, err := readManifest(live); err == nil && cur.Version == in.Version && cur.Hash == in.Hash {
		if _, err := os.Stat(from); err == nil {
			return fmt.Errorf("selfcode: undo %s %s: %s is taken", in.Op, in.Name, in.From)
		}
		if err := os.MkdirAll(filepath.Dir(from), 0o700); err != nil {
			return fmt.Errorf("selfcode: undo %s %s: %w", in.Op, in.Name, err)
		}
		if err := os.Rename(live, from); err != nil {
			return fmt.Errorf("selfcode: undo %s %s: %w", in.Op, in.Name, err)
		}
		m := cur
		m.State = stateOf(in.Op)
		if in.Op == opPromote {
			m.ApprovedAt, m.ApprovedBy = time.Time{}, ""
		}
		if err := rewriteManifest(from, m); err != nil {
			return err
		}
	}
	if _, err := os.Stat(live); errors.Is(err, os.ErrNotExist) && in.Old > 0 {
		old := d.archiveDir(in.Name, in.Old)
		if m, err := readManifest(old); err == nil {
			if err := os.Rename(old, live); err != nil {
				return fmt.Errorf("selfcode: undo %s %s: %w", in.Op, in.Name, err)
			}
			m.State = StateLive
			if err := rewriteManifest(live, m); err != nil {
				return err
			}
		}
	}
	syncDir(d.LiveDir())
	return d.removeIntent(in.Name)
}

// stateOf is the state a swap's incoming version comes from.
func stateOf(op string) string {
	switch op {
	case opRestore:
		return StateQuarantined
	case opRollback:
		return StateArchived
	}
	return StateStaged
}

// renameToArchive moves the version directory dir (version v) into the
// archive. An archive slot already taken is an error: nothing is deleted.
func (d *Dir) renameToArchive(dir string, v int) error {
	name := filepath.Base(dir)
	dst := d.archiveDir(name, v)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("selfcode: archive %s: %w", name, err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("selfcode: archive %s: version %d is already archived", name, v)
	}
	if err := os.Rename(dir, dst); err != nil {
		return fmt.Errorf("selfcode: archive %s: %w", name, err)
	}
	syncDir(filepath.Dir(dir))
	syncDir(filepath.Dir(dst))
	return nil
}

// markArchived has the manifests of name's archived versions vs say so.
func (d *Dir) markArchived(name string, vs ...int) error {
	for _, v := range vs {
		if v <= 0 {
			continue
		}
		dir := d.archiveDir(name, v)
		m, err := readManifest(dir)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if m.State != StateArchived {
			m.State = StateArchived
			if err := rewriteManifest(dir, m); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *Dir) archiveDir(name string, v int) string {
	return filepath.Join(d.root, "archive", name, fmt.Sprint(v))
}

func (d *Dir) writeIntent(in intent) error {
	data, _ := json.MarshalIndent(in, "", "  ")
	f, err := os.CreateTemp(filepath.Join(d.root, ".tmp"), "journal-")
	if err != nil {
		return fmt.Errorf("selfcode: journal %s: %w", in.Name, err)
	}
	tmp := f.Name()
	f.Close()
	os.Remove(tmp)
	if err := writeSync(tmp, data); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("selfcode: journal %s: %w", in.Name, err)
	}
	if err := os.Rename(tmp, d.journalPath(in.Name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("selfcode: journal %s: %w", in.Name, err)
	}
	syncDir(filepath.Join(d.root, ".journal"))
	return nil
}

func (d *Dir) readIntent(name string) (intent, bool, error) {
	data, err := os.ReadFile(d.journalPath(name))
	if errors.Is(err, os.ErrNotExist) {
		return intent{}, false, nil
	}
	if err != nil {
		return intent{}, false, fmt.Errorf("selfcode: journal %s: %w", name, err)
	}
	var in intent
	if err := json.Unmarshal(data, &in); err != nil || in.Name != name || !filepath.IsLocal(in.From) {
		return intent{}, false, fmt.Errorf("selfcode: journal %s: unreadable", name)
	}
	return in, true, nil
}

func (d *Dir) removeIntent(name string) error {
	if err := os.Remove(d.journalPath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("selfcode: journal %s: %w", name, err)
	}
	syncDir(filepath.Join(d.root, ".journal"))
	return nil
}

// intents lists the names with an unfinished swap.
func (d *Dir) intents() []string {
	entries, _ := os.ReadDir(filepath.Join(d.root, ".journal"))
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok && isIdent(n) {
			names = append(names, n)
		}
	}
	return names
}

// syncDir makes a rename in dir durable, where the system allows it.
func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// readManifest reads a version directory's manifest, without checking its
// source: where a version is, not whether it runs.
func readManifest(dir string) (Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if errors.Is(err, os.ErrNotExist) {
		return Manifest{}, ErrNotFound
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("selfcode: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("selfcode: manifest of %s: %w", dir, err)
	}
	return m, nil
}
