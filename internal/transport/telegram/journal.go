package telegram

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// journal is the bot's durable list of work to do: every update that asks
// for a turn (an allowed sender's chat text) or a decision (an allowed
// sender's button press) is a file in dir, written and fsynced before the
// update is confirmed to Telegram. Its name is the update id and its state:
//
//	<id>.json  received, its work not started
//	<id>.run   its work started and not finished
//
// A finished piece of work is removed. At start the bot reads the
// directory back: what was not started runs, in update order (so in order
// per chat); a message whose turn was started is taken up again too, and
// the core runs it once (see Bot.work); a press is decided again, which
// the store refuses if the first decision was committed. A journal with no
// dir keeps nothing (work lives in memory only).
type journal struct {
	dir string
}

const (
	queuedExt  = ".json"
	startedExt = ".run"
	tmpPrefix  = ".tmp-"
)

// entry is one piece of work read back at start.
type entry struct {
	u       update
	started bool
}

func (j journal) path(id int64, ext string) string {
	return filepath.Join(j.dir, fmt.Sprintf("%020d%s", id, ext))
}

// open creates the directory, mode 0700.
func (j journal) open() error {
	if j.dir == "" {
		return nil
	}
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return fmt.Errorf("telegram: create the queue directory: %w", err)
	}
	return nil
}

// add writes u as queued work: a temporary file, fsynced, renamed into
// place. The rename is durable once sync has run.
func (j journal) add(u update) error {
	if j.dir == "" {
		return nil
	}
	raw, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("telegram: queue update %d: %w", u.UpdateID, err)
	}
	f, err := os.CreateTemp(j.dir, tmpPrefix+"*")
	if err != nil {
		return fmt.Errorf("telegram: queue update %d: %w", u.UpdateID, err)
	}
	_, err = f.Write(raw)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), j.path(u.UpdateID, queuedExt))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("telegram: queue update %d: %w", u.UpdateID, err)
	}
	return nil
}

// has reports whether update id is in the journal, in either state.
func (j journal) has(id int64) bool {
	if j.dir == "" {
		return false
	}
	for _, ext := range []string{queuedExt, startedExt} {
		if _, err := os.Stat(j.path(id, ext)); err == nil {
			return true
		}
	}
	return false
}

// start marks update id's work as started, durably, before it runs.
func (j journal) start(id int64) error {
	if j.dir == "" {
		return nil
	}
	err := os.Rename(j.path(id, queuedExt), j.path(id, startedExt))
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(j.path(id, startedExt)); serr == nil {
			return nil // started before a restart (a press decided again)
		}
	}
	if err == nil {
		err = j.sync()
	}
	if err != nil {
		return fmt.Errorf("telegram: mark update %d started: %w", id, err)
	}
	return nil
}

// done removes update id's work: it finished.
func (j journal) done(id int64) error {
	if j.dir == "" {
		return nil
	}
	var errs []error
	for _, ext := range []string{startedExt, queuedExt} {
		if err := os.Remove(j.path(id, ext)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(append(errs, j.sync())...); err != nil {
		return fmt.Errorf("telegram: mark update %d done: %w", id, err)
	}
	return nil
}

// sync makes the directory's renames and removals durable.
func (j journal) sync() error {
	if j.dir == "" {
		return nil
	}
	d, err := os.Open(j.dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// load reads the work a previous run left, in update order. A leftover
// temporary file (a crash while writing, so never confirmed to Telegram,
// which sends that update again) is removed; a file that does not decode
// is logged by the caller through bad and removed.
func (j journal) load(bad func(name string, err error)) ([]entry, error) {
	if j.dir == "" {
		return nil, nil
	}
	list, err := os.ReadDir(j.dir)
	if err != nil {
		return nil, fmt.Errorf("telegram: read the queue directory: %w", err)
	}
	var out []entry
	for _, de := range list {
		name := de.Name()
		p := filepath.Join(j.dir, name)
		if strings.HasPrefix(name, tmpPrefix) {
			os.Remove(p)
			continue
		}
		ext := filepath.Ext(name)
		if ext != queuedExt && ext != startedExt {
			continue
		}
		id, err := strconv.ParseInt(strings.TrimSuffix(name, ext), 10, 64)
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(p)
		var u update
		if err == nil {
			err = json.Unmarshal(raw, &u)
		}
		if err == nil && u.UpdateID != id {
			err = fmt.Errorf("the file holds update %d", u.UpdateID)
		}
		if err != nil {
			bad(name, err)
			os.Remove(p)
			continue
		}
		out = append(out, entry{u: u, started: ext == startedExt})
	}
	slices.SortFunc(out, func(a, b entry) int { return cmp.Compare(a.u.UpdateID, b.u.UpdateID) })
	return out, nil
}
