package selfcode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Problem is something wrong with a tool in the tools directory, or
// something Recover set right.
type Problem struct {
	Tool string
	What string
}

func (p Problem) String() string { return p.Tool + ": " + p.What }

// tmpAge is how old a leftover in .tmp must be before Recover deletes it:
// another process (a command run beside the daemon) may be writing a
// younger one.
const tmpAge = time.Hour

// Recover finishes, or undoes, every change of a live version that a crash
// interrupted (an intent in .journal), has every manifest say the state its
// version is in, and empties .tmp of old leftovers. It returns what it set
// right. The daemon calls it once at start, before it resumes decisions
// (toolbox.Toolbox.Recover); a change to a tool finishes that tool's
// interrupted change first anyway.
func (d *Dir) Recover() ([]Problem, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var done []Problem
	var errs []error
	for _, name := range d.intents() {
		in, ok, err := d.readIntent(name)
		if err != nil || !ok {
			errs = append(errs, err)
			continue
		}
		m, err := d.finish(in)
		switch {
		case errors.Is(err, ErrInterrupted):
			what := fmt.Sprintf("an interrupted %s of version %d was undone (it is no longer %s)", in.Op, in.Version, stateOf(in.Op))
			if in.Old > 0 {
				what += fmt.Sprintf("; version %d is live", in.Old)
			}
			done = append(done, Problem{name, what})
		case err != nil:
			errs = append(errs, err)
		default:
			done = append(done, Problem{name, fmt.Sprintf("an interrupted %s was finished: version %d is live", in.Op, m.Version)})
		}
	}
	for _, v := range d.versions() {
		os.Remove(filepath.Join(v.dir, ".manifest.tmp"))
		m, err := readManifest(v.dir)
		if err != nil || m.State == v.state {
			continue
		}
		was := m.State
		m.State = v.state
		if err := rewriteManifest(v.dir, m); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, Problem{v.name, fmt.Sprintf("version %d is %s; its manifest said %s", m.Version, v.state, was)})
	}
	tmp := filepath.Join(d.root, ".tmp")
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(d.now().Add(-tmpAge)) {
			os.RemoveAll(filepath.Join(tmp, e.Name()))
		}
	}
	return done, errors.Join(errs...)
}

// Check reports what is wrong in the tools directory at root, changing
// nothing (it need not exist): an interrupted change of a live version
// not yet finished, a tool with archived versions and none live that the
// owner did not remove or quarantine, a version that does not load (half
// written, or changed since it was hashed), a manifest whose state is not
// where its version is, and, when requested is given, a staged version
// with no request the owner can still decide (requested(name, hash) says
// whether there is one).
func Check(root string, requested func(name, hash string) bool) []Problem {
	d := &Dir{root: root}
	var out []Problem
	add := func(tool, format string, args ...any) {
		out = append(out, Problem{tool, fmt.Sprintf(format, args...)})
	}
	journaled := map[string]bool{}
	for _, name := range d.intents() {
		journaled[name] = true
		in, _, err := d.readIntent(name)
		if err != nil {
			add(name, "an interrupted change of its live version left a journal that cannot be read: %v", err)
			continue
		}
		add(name, "an interrupted %s of version %d is unfinished; the daemon finishes or undoes it when it starts", in.Op, in.Version)
	}
	live, quarantined := map[string]bool{}, map[string]bool{}
	archived := map[string][]int{}
	for _, v := range d.versions() {
		t, err := loadDir(v.dir)
		if err != nil {
			add(v.name, "the %s version in %s does not load: %v", v.state, v.dir, err)
			continue
		}
		if t.Name != v.name {
			add(v.name, "%s holds a version of %q", v.dir, t.Name)
		}
		if t.State != v.state {
			add(v.name, "version %d is %s but its manifest says %s (left by an interrupted move)", t.Version, v.state, t.State)
		}
		if _, err := os.Lstat(filepath.Join(v.dir, ".manifest.tmp")); err == nil {
			add(v.name, "version %d holds a half-written manifest (.manifest.tmp)", t.Version)
		}
		switch v.state {
		case StateLive:
			live[v.name] = true
		case StateQuarantined:
			quarantined[v.name] = true
		case StateArchived:
			archived[v.name] = append(archived[v.name], t.Version)
		case StateStaged:
			if requested != nil && !requested(t.Name, t.Hash) {
				add(v.name, "version %d is staged but no request for it is open, so the owner cannot approve it: propose it again, or `shelldon tools remove %s`", t.Version, v.name)
			}
		}
	}
	for name, vs := range archived {
		if live[name] || quarantined[name] || journaled[name] {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, "archive", name, removedMark)); err == nil {
			continue
		}
		slices.Sort(vs)
		add(name, "no version is live, though versions %v are archived and it was not removed: `shelldon tools rollback %s` makes version %d live", vs, name, vs[len(vs)-1])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}

// Check reports what is wrong in d (see the function Check).
func (d *Dir) Check(requested func(name, hash string) bool) []Problem {
	return Check(d.root, requested)
}

// version is one version directory and the state its place means.
type version struct {
	name, state, dir string
}

// versions lists every version directory: live, staged, quarantined and
// archived.
func (d *Dir) versions() []version {
	var out []version
	for _, st := range []string{StateLive, StateStaged, StateQuarantined} {
		parent := filepath.Dir(d.path(st, "x"))
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			if e.IsDir() {
				out = append(out, version{e.Name(), st, filepath.Join(parent, e.Name())})
			}
		}
	}
	names, _ := os.ReadDir(filepath.Join(d.root, "archive"))
	for _, n := range names {
		if !n.IsDir() {
			continue
		}
		vs, _ := os.ReadDir(filepath.Join(d.root, "archive", n.Name()))
		for _, v := range vs {
			if v.IsDir() && strings.Trim(v.Name(), "0123456789") == "" {
				out = append(out, version{n.Name(), StateArchived, filepath.Join(d.root, "archive", n.Name(), v.Name())})
			}
		}
	}
	return out
}
